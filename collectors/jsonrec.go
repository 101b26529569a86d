package collectors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadJSONRecords reads r as one of the JSON shapes logs come in and calls
// fn with each top-level record:
//   - NDJSON (one value per line): pos.Line is the line;
//   - a JSON array of records: pos.Index is the 1-based element;
//   - a stream of (pretty-printed) values: pos.Index is the 1-based value.
//
// pos carries File = name, so a parser reports a bad record by setting
// pos.Reason and passing pos to bad. NDJSON lines are passed on unchecked
// (fn reports those it cannot decode, see [JSONReason]); in array and stream
// form a syntax error is reported here and ends the file, since the rest
// cannot be re-synchronized.
// Errors from fn and bad are returned unchanged.
func ReadJSONRecords(ctx context.Context, name string, r io.Reader, fn func(rec []byte, pos BadRecord) error, bad func(BadRecord) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	peek, err := br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	trimmed := bytes.TrimLeft(peek, " \t\r\n\ufeff")
	trimmed = bytes.TrimPrefix(trimmed, []byte("\ufeff"))
	if len(trimmed) == 0 {
		return nil
	}
	if trimmed[0] == '[' {
		return readJSONStream(ctx, name, br, true, fn, bad)
	}
	first := trimmed
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	first = bytes.TrimSpace(first)
	if trimmed[0] == '{' && len(first) > 0 && first[len(first)-1] != '}' && bytes.IndexByte(trimmed, '\n') >= 0 {
		return readJSONStream(ctx, name, br, false, fn, bad)
	}
	lr := NewLineReader(br)
	for {
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := fn(line, BadRecord{File: name, Line: n}); err != nil {
			return err
		}
	}
}

func readJSONStream(ctx context.Context, name string, r io.Reader, array bool, fn func([]byte, BadRecord) error, bad func(BadRecord) error) error {
	dec := json.NewDecoder(r)
	if array {
		if _, err := dec.Token(); err != nil {
			return bad(BadRecord{File: name, Index: 1, Reason: fmt.Sprintf("invalid JSON array: %v", err)})
		}
	}
	for i := 1; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if array && !dec.More() {
			if _, err := dec.Token(); err != nil {
				return bad(BadRecord{File: name, Index: i, Reason: fmt.Sprintf("invalid JSON array end: %v", err)})
			}
			return nil
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if !array && errors.Is(err, io.EOF) {
			return nil
		}
		pos := BadRecord{File: name, Index: i}
		if err != nil {
			pos.Reason = fmt.Sprintf("invalid JSON: %v", err)
			return bad(pos)
		}
		if err := fn(raw, pos); err != nil {
			return err
		}
	}
}

// JSONReason is a BadRecord reason for a record that failed to decode.
func JSONReason(rec []byte, err error) string {
	return fmt.Sprintf("invalid JSON: %v%s", err, snippet(rec))
}

// snippet quotes the start of a bad record for a BadRecord reason.
func snippet(b []byte) string {
	const max = 60
	if len(b) > max {
		return fmt.Sprintf(" (starts %q…)", b[:max])
	}
	return fmt.Sprintf(" (%q)", b)
}
