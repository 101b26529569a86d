package snowflake

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/floe-project/floe/collectors"
)

// row is one exported row: upper-cased column name to cell text. JSON
// strings are unquoted, null is "", other JSON values are their text.
type row map[string]string

func (r row) has(col string) bool {
	_, ok := r[col]
	return ok
}

// readRows calls fn for every row of r, in whichever of the export
// formats r is.
func readRows(ctx context.Context, name string, r io.Reader, fn func(row, collectors.BadRecord) error, bad func(collectors.BadRecord) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	peek, err := br.Peek(4 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	h := trimHead(peek)
	if len(h) == 0 {
		return nil
	}
	if h[0] == '{' || h[0] == '[' {
		return collectors.ReadJSONRecords(ctx, name, br, func(rec []byte, pos collectors.BadRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(rec, &m); err != nil {
				pos.Reason = collectors.JSONReason(rec, err)
				return bad(pos)
			}
			rw := make(row, len(m))
			for k, v := range m {
				rw[strings.ToUpper(strings.TrimSpace(k))] = jsonText(v)
			}
			return fn(rw, pos)
		}, bad)
	}
	first, _, _ := bytes.Cut(h, []byte("\n"))
	cr := csv.NewReader(br)
	if bytes.Count(first, []byte("\t")) > bytes.Count(first, []byte(",")) {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return bad(collectors.BadRecord{File: name, Line: 1, Reason: "read header: " + pe.Err.Error()})
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	cols := make([]string, len(header))
	for i, c := range header {
		cols[i] = strings.ToUpper(strings.Trim(strings.TrimSpace(strings.TrimPrefix(c, "\ufeff")), `"`))
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("read %s: %w", name, err)
			}
			if err := bad(collectors.BadRecord{File: name, Line: pe.StartLine, Reason: pe.Err.Error()}); err != nil {
				return err
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		pos := collectors.BadRecord{File: name, Line: line}
		if len(rec) != len(cols) {
			pos.Reason = fmt.Sprintf("row has %d fields, header has %d", len(rec), len(cols))
			if err := bad(pos); err != nil {
				return err
			}
			continue
		}
		rw := make(row, len(cols))
		for i, c := range cols {
			rw[c] = rec[i]
		}
		if err := fn(rw, pos); err != nil {
			return err
		}
	}
}

func jsonText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s
		}
	}
	if bytes.Equal(v, []byte("null")) {
		return ""
	}
	return string(v)
}

func trimHead(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	return bytes.TrimLeft(b, " \t\r\n")
}
