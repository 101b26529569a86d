package jsonenc

import (
	"bytes"
	"encoding/json"
)

// Marshal is [json.Marshal] without HTML escaping: <, > and & stay as they
// are. Like json.Marshal, it ends with no newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
