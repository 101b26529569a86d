package collectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/floe-project/floe/internal/jsonenc"
)

// MarshalJSON writes the access with its snapshot id as a string, as every
// floe output writes snapshot ids (docs/json.md): a 64-bit id is past what
// a JSON number holds exactly in JavaScript or jq.
func (t TableAccess) MarshalJSON() ([]byte, error) {
	type plain TableAccess
	out := struct {
		plain
		SnapshotID *string `json:"snapshot_id,omitempty"`
	}{plain: plain(t)}
	if t.SnapshotID != nil {
		s := strconv.FormatInt(*t.SnapshotID, 10)
		out.SnapshotID = &s
	}
	return jsonenc.Marshal(out)
}

// UnmarshalJSON reads an access whose snapshot id is a string or, as
// events stored before ids were strings hold it, a number.
func (t *TableAccess) UnmarshalJSON(data []byte) error {
	type plain TableAccess
	in := struct {
		*plain
		SnapshotID json.RawMessage `json:"snapshot_id,omitempty"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	t.SnapshotID = nil
	raw := bytes.TrimSpace(in.SnapshotID)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	s := string(raw)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("snapshot_id %s: not a snapshot id", raw)
	}
	t.SnapshotID = &id
	return nil
}
