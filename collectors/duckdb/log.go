package duckdb

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// Source names of the DuckDB parsers.
const (
	SourceLog     = "duckdb-log"
	SourceProfile = "duckdb-profile"
	SourceHistory = "duckdb-history"
	SourceDB      = "duckdb-db"
)

// Header lines of the CSV files DuckDB's file log storage writes.
const (
	entriesHeader  = "context_id,timestamp,type,log_level,message"
	contextsHeader = "context_id,scope,connection_id,transaction_id,query_id,thread_id"
	denormHeader   = "context_id,scope,connection_id,transaction_id,query_id,thread_id,timestamp,type,log_level,message"
	// ContextsFile is the file the normalized log storage writes next to
	// duckdb_log_entries.csv.
	ContextsFile = "duckdb_log_contexts.csv"
)

// LogParser reads DuckDB's QueryLog (enable_logging('QueryLog')) as
// written by file storage: the normalized duckdb_log_entries.csv (joined
// with the duckdb_log_contexts.csv beside it), the denormalized single CSV
// (storage_normalize=false, or COPY duckdb_logs TO …), and the
// header-less tab-separated lines of storage='stdout'. Entries of other log
// types are skipped. The contexts file alone yields no events: it is read
// with its entries file.
type LogParser struct{}

// Source returns "duckdb-log".
func (LogParser) Source() string { return SourceLog }

// Detect accepts the three CSV headers and stdout TSV lines.
func (LogParser) Detect(_ string, head []byte) bool {
	first := firstLine(head)
	switch first {
	case entriesHeader, contextsHeader, denormHeader:
		return true
	}
	f := strings.Split(first, "\t")
	return len(f) >= 10 && isUpperWord(f[1]) && isDigits(f[0]) && looksLikeTimestamp(f[6])
}

func firstLine(head []byte) string {
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	l, _, _ := bytes.Cut(head, []byte("\n"))
	return strings.TrimSpace(string(l))
}

func isUpperWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func looksLikeTimestamp(s string) bool {
	return len(s) >= 19 && s[4] == '-' && s[7] == '-' && s[10] == ' ' && s[13] == ':'
}

// logRow is one QueryLog entry, from any of the storages.
type logRow struct {
	contextID, connectionID, queryID string
	timestamp                        time.Time
	typ, message                     string
	pos                              collectors.BadRecord
}

type logCtx struct{ connectionID, queryID string }

// Parse reads one log file.
func (LogParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	br := newPeek(r)
	first := firstLine(br.peek)
	var contexts map[string]logCtx
	comma := ','
	header := true
	switch first {
	case contextsHeader:
		return nil // read together with its entries file
	case entriesHeader:
		var err error
		contexts, err = readContexts(filepath.Join(filepath.Dir(name), ContextsFile))
		if err != nil {
			return err
		}
	case denormHeader:
	default:
		comma, header = '\t', false
	}
	cr := csv.NewReader(br)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	idx := map[string]int{}
	if header {
		h, err := cr.Read()
		if err != nil {
			return bad(collectors.BadRecord{File: name, Line: 1, Reason: fmt.Sprintf("read header: %v", err)})
		}
		for i, c := range h {
			idx[strings.TrimPrefix(strings.TrimSpace(c), "\ufeff")] = i
		}
	} else {
		for i, c := range strings.Split(denormHeader, ",") {
			idx[c] = i
		}
	}
	d := &deduper{}
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		pos := collectors.BadRecord{File: name, Line: line}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return err
			}
			pos.Line, pos.Reason = pe.StartLine, pe.Err.Error()
			if err := bad(pos); err != nil {
				return err
			}
			continue
		}
		get := func(col string) string {
			if i, ok := idx[col]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		if len(rec) < len(idx) {
			pos.Reason = fmt.Sprintf("%d fields, want %d", len(rec), len(idx))
			if err := bad(pos); err != nil {
				return err
			}
			continue
		}
		row := logRow{contextID: get("context_id"), connectionID: get("connection_id"), queryID: get("query_id"),
			typ: get("type"), message: get("message"), pos: pos}
		if c, ok := contexts[row.contextID]; ok {
			row.connectionID, row.queryID = c.connectionID, c.queryID
		}
		ts, err := collectors.ParseTime(get("timestamp"))
		if err != nil {
			pos.Reason = err.Error()
			if err := bad(pos); err != nil {
				return err
			}
			continue
		}
		row.timestamp = ts
		if err := d.emit(SourceLog, row, emit, bad); err != nil {
			return err
		}
	}
}

// readContexts reads duckdb_log_contexts.csv; a missing file gives no
// contexts (events then lack connection ids), a damaged row is skipped.
func readContexts(path string) (map[string]logCtx, error) {
	out := map[string]logCtx{}
	in := collectors.Input{Name: path, Parts: []string{path}}
	rc, err := in.Open()
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read log contexts: %w", err)
	}
	cr := csv.NewReader(rc)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				continue
			}
			return nil, errors.Join(fmt.Errorf("read log contexts %s: %w", path, err), rc.Close())
		}
		if len(rec) >= 5 && rec[0] != "context_id" {
			out[rec[0]] = logCtx{connectionID: rec[2], queryID: rec[4]}
		}
	}
	return out, rc.Close()
}

// deduper assigns QueryIDs and recognizes DuckDB 2.0's doubled entries:
// the same message on the same connection, the next query id, within a
// millisecond. The second entry gets the first one's QueryID, so
// [collectors.Collect] keeps one.
type deduper struct {
	prev   logRow
	prevID string
}

func (d *deduper) emit(source string, row logRow, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	if row.typ != "" && row.typ != "QueryLog" {
		return nil
	}
	if strings.TrimSpace(row.message) == "" {
		row.pos.Reason = "QueryLog entry without a statement"
		return bad(row.pos)
	}
	id := collectors.StableID(source, row.connectionID, row.queryID, row.timestamp.Format(time.RFC3339Nano), row.message)
	if d.prevID != "" && row.message == d.prev.message && row.connectionID == d.prev.connectionID &&
		nextQuery(d.prev.queryID, row.queryID) && absDur(row.timestamp.Sub(d.prev.timestamp)) <= time.Millisecond {
		id = d.prevID
	}
	d.prev, d.prevID = row, id
	sql := row.message
	return emit(collectors.QueryEvent{
		Source:        source,
		Engine:        collectors.EngineDuckDB,
		QueryID:       id,
		StartTime:     row.timestamp,
		State:         collectors.StateUnknown,
		StatementType: collectors.ClassifyStatement(sql),
		SQL:           sql,
		SQLTemplate:   collectors.HasPlaceholder(sql),
	})
}

func nextQuery(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return a == "" && b == ""
	}
	return y == x+1
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// peek exposes the first bytes of a reader without consuming them.
type peek struct {
	peek []byte
	r    io.Reader
}

func newPeek(r io.Reader) *peek {
	buf := make([]byte, 4096)
	n, _ := io.ReadFull(r, buf) // a short or failed read surfaces on the next Read
	buf = buf[:n]
	return &peek{peek: buf, r: io.MultiReader(bytes.NewReader(buf), r)}
}

func (p *peek) Read(b []byte) (int, error) { return p.r.Read(b) }
