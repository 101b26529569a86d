package trino

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/floe-project/floe/collectors"
)

// SourceRuntime is the source name of [RuntimeParser].
const SourceRuntime = "trino-runtime"

// RuntimeParser reads exports of Trino's system.runtime.queries table: CSV
// or TSV with a header row (the CLI's CSV_HEADER / TSV_HEADER), or JSON
// objects keyed by column name (the CLI's JSON output, or an array). Rows
// have no tables or bytes; only the SQL is analyzed later.
type RuntimeParser struct{}

// Source returns "trino-runtime".
func (RuntimeParser) Source() string { return SourceRuntime }

// Detect accepts a header or JSON keys naming query_id, state, query and
// created, as the table's columns are spelled (lower case).
func (RuntimeParser) Detect(_ string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(h) == 0 {
		return false
	}
	if h[0] == '{' || h[0] == '[' {
		return bytes.Contains(h, []byte(`"query_id"`)) && bytes.Contains(h, []byte(`"state"`)) &&
			bytes.Contains(h, []byte(`"created"`)) && !bytes.Contains(h, []byte(`"metadata"`))
	}
	first, _, _ := bytes.Cut(h, []byte("\n"))
	cols := headerColumns(string(first))
	return cols["query_id"] && cols["state"] && cols["query"] && cols["created"]
}

func headerColumns(line string) map[string]bool {
	sep := ","
	if strings.Count(line, "\t") > strings.Count(line, ",") {
		sep = "\t"
	}
	out := map[string]bool{}
	for f := range strings.SplitSeq(strings.TrimSpace(line), sep) {
		out[strings.Trim(strings.TrimSpace(f), `"`)] = true
	}
	return out
}

// Parse reads the export and emits one event per row.
func (p RuntimeParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	br := newPeekReader(r)
	h := bytes.TrimLeft(br.peek, " \t\r\n\ufeff")
	if len(h) > 0 && (h[0] == '{' || h[0] == '[') {
		return collectors.ReadJSONRecords(ctx, name, br, func(rec []byte, pos collectors.BadRecord) error {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(rec, &m); err != nil {
				pos.Reason = collectors.JSONReason(rec, err)
				return bad(pos)
			}
			row := make(map[string]string, len(m))
			for k, v := range m {
				row[strings.ToLower(k)] = jsonText(v)
			}
			return p.row(row, pos, emit, bad)
		}, bad)
	}
	return p.parseCSV(ctx, name, br, emit, bad)
}

func jsonText(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s
	}
	t := string(bytes.TrimSpace(v))
	if t == "null" {
		return ""
	}
	return t
}

func (p RuntimeParser) parseCSV(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	pr := newPeekReader(r)
	first, _, _ := bytes.Cut(pr.peek, []byte("\n"))
	cr := csv.NewReader(pr)
	if bytes.Count(first, []byte("\t")) > bytes.Count(first, []byte(",")) {
		cr.Comma = '\t'
	}
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return bad(collectors.BadRecord{File: name, Line: 1, Reason: fmt.Sprintf("read header: %v", err)})
	}
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
	}
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := cr.Read()
		line, _ := cr.FieldPos(0)
		if errors.Is(err, io.EOF) {
			return nil
		}
		pos := collectors.BadRecord{File: name, Line: line}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				pos.Line = pe.StartLine
				pos.Reason = pe.Err.Error()
				if err := bad(pos); err != nil {
					return err
				}
				continue
			}
			return err
		}
		row := make(map[string]string, len(cols))
		for i, v := range rec {
			if i < len(cols) {
				row[cols[i]] = v
			}
		}
		if err := p.row(row, pos, emit, bad); err != nil {
			return err
		}
	}
}

func (RuntimeParser) row(row map[string]string, pos collectors.BadRecord, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	id := strings.TrimSpace(row["query_id"])
	if id == "" {
		pos.Reason = "no query_id"
		return bad(pos)
	}
	created, err := collectors.ParseTime(row["created"])
	if err != nil {
		pos.Reason = fmt.Sprintf("query %s: created: %v", id, err)
		return bad(pos)
	}
	ev := collectors.QueryEvent{
		Source:    SourceRuntime,
		Engine:    collectors.EngineTrino,
		QueryID:   id,
		User:      row["user"],
		StartTime: created,
		SQL:       row["query"],
	}
	if s := strings.TrimSpace(row["end"]); s != "" && s != "NULL" {
		end, err := collectors.ParseTime(s)
		if err != nil {
			pos.Reason = fmt.Sprintf("query %s: end: %v", id, err)
			return bad(pos)
		}
		ev.EndTime = end
		ev.Metrics.ElapsedMs = end.Sub(created).Milliseconds()
	}
	if q, err := strconv.ParseInt(strings.TrimSpace(row["queued_time_ms"]), 10, 64); err == nil {
		ev.Metrics.QueuedMs = q
	}
	code := strings.TrimSpace(row["error_code"])
	var fail *wireFailure
	if code != "" && code != "NULL" {
		fail = &wireFailure{}
		fail.ErrorCode = &struct {
			Code int    `json:"code"`
			Name string `json:"name"`
			Type string `json:"type"`
		}{Name: code, Type: row["error_type"]}
		ev.Error = failureText(fail)
	}
	ev.State = mapState(row["state"], fail)
	ev.StatementType = collectors.ClassifyStatement(ev.SQL)
	return emit(ev)
}

// peekReader exposes the first bytes of a reader without consuming them.
type peekReader struct {
	peek []byte
	r    io.Reader
}

func newPeekReader(r io.Reader) *peekReader {
	if pr, ok := r.(*peekReader); ok {
		return pr
	}
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(r, buf) // short or failed reads surface on the next Read
	buf = buf[:n]
	return &peekReader{peek: buf, r: io.MultiReader(bytes.NewReader(buf), r)}
}

func (p *peekReader) Read(b []byte) (int, error) { return p.r.Read(b) }
