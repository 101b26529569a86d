package duckdb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProfileParser reads DuckDB JSON profiling output (PRAGMA
// enable_profiling='json'): the flat 1.x layout (query_name, latency,
// children of operator_type nodes) and the sectioned 2.x layout (query,
// io, operator). Each file holds one query. TABLE_SCAN nodes give the
// tables, and their extra_info Filters the predicate tree.
//
// Profiles carry no timestamps: StartTime is the file's modification time
// (DuckDB rewrites the file after each query), and QueryID hashes the file
// name, that time and the SQL.
type ProfileParser struct{}

// Source returns "duckdb-profile".
func (ProfileParser) Source() string { return SourceProfile }

// Detect accepts a JSON object with the profile's root keys. A profile
// whose SQL text runs past the head (longer than
// [collectors.DetectBytes]) is accepted on the key before the text: 1.x
// "query_name", 2.x the query section's leading "sql".
func (ProfileParser) Detect(_ string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n")
	if len(h) == 0 || h[0] != '{' {
		return false
	}
	v1 := bytes.Contains(head, []byte(`"query_name"`)) && (bytes.Contains(head, []byte(`"latency"`)) || bytes.Contains(head, []byte(`"operator_type"`)))
	v2 := bytes.Contains(head, []byte(`"operator"`)) && bytes.Contains(head, []byte(`"sql"`)) && bytes.Contains(head, []byte(`"total_time"`))
	return v1 || v2 || len(head) >= collectors.DetectBytes && cutInSQL(h)
}

// v2Start is how a 2.x profile begins, white space removed.
var v2Start = []byte(`{"query":{"sql":"`)

// cutInSQL reports whether a head that fills the detection window ends
// inside the SQL string of a profile: a "query_name" key whose string
// value does not end in the head, or the 2.x opening with its "sql".
func cutInSQL(h []byte) bool {
	var compact []byte
	for _, c := range h[:min(len(h), 256)] {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			compact = append(compact, c)
		}
	}
	if bytes.HasPrefix(compact, v2Start) {
		return true
	}
	i := bytes.Index(h, []byte(`"query_name"`))
	if i < 0 {
		return false
	}
	rest := bytes.TrimLeft(h[i+len(`"query_name"`):], " \t\r\n")
	if !bytes.HasPrefix(rest, []byte(":")) {
		return false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if !bytes.HasPrefix(rest, []byte(`"`)) {
		return false
	}
	for j := 1; j < len(rest); j++ {
		switch rest[j] {
		case '\\':
			j++
		case '"':
			return false // the text ends inside the head: the keys after it decide
		}
	}
	return true
}

type profile1 struct {
	QueryName             string  `json:"query_name"`
	Latency               float64 `json:"latency"`
	CPUTime               float64 `json:"cpu_time"`
	CumulativeRowsScanned int64   `json:"cumulative_rows_scanned"`
	TotalBytesRead        int64   `json:"total_bytes_read"`
	Children              []*op   `json:"children"`
}

type profile2 struct {
	Query *struct {
		SQL              string  `json:"sql"`
		TotalTime        float64 `json:"total_time"`
		CPUTime          float64 `json:"cpu_time"`
		TotalRowsScanned int64   `json:"total_rows_scanned"`
	} `json:"query"`
	IO struct {
		TotalBytesRead int64 `json:"total_bytes_read"`
	} `json:"io"`
	Operator json.RawMessage `json:"operator"`
}

// op is an operator node of either layout.
type op struct {
	OperatorType        string                     `json:"operator_type"`
	Type                string                     `json:"type"`
	ExtraInfo           map[string]json.RawMessage `json:"extra_info"`
	OperatorRowsScanned int64                      `json:"operator_rows_scanned"`
	RowsScanned         int64                      `json:"rows_scanned"`
	Children            []*op                      `json:"children"`
}

// Parse reads the profiles of r: one JSON document per query, usually one
// per file (a file several profiles were appended to holds several).
func (ProfileParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return collectors.ReadJSONRecords(ctx, name, r, func(rec []byte, pos collectors.BadRecord) error {
		return parseProfile(name, rec, pos, emit, bad)
	}, bad)
}

// parseProfile reads one profile document.
func parseProfile(name string, data []byte, pos collectors.BadRecord, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		pos.Reason = collectors.JSONReason(data, err)
		return bad(pos)
	}
	ev := collectors.QueryEvent{Source: SourceProfile, Engine: collectors.EngineDuckDB, State: collectors.StateSucceeded}
	var roots []*op
	if _, ok := raw["query_name"]; ok {
		var p profile1
		if err := json.Unmarshal(data, &p); err != nil {
			pos.Reason = collectors.JSONReason(data, err)
			return bad(pos)
		}
		ev.SQL = p.QueryName
		ev.Metrics = collectors.QueryMetrics{ElapsedMs: secMs(p.Latency), CPUMs: secMs(p.CPUTime), RowsScanned: p.CumulativeRowsScanned, BytesScanned: p.TotalBytesRead}
		roots = p.Children
	} else {
		var p profile2
		if err := json.Unmarshal(data, &p); err != nil {
			pos.Reason = collectors.JSONReason(data, err)
			return bad(pos)
		}
		if p.Query == nil {
			pos.Reason = "not a DuckDB profile: no query_name or query section"
			return bad(pos)
		}
		ev.SQL = p.Query.SQL
		ev.Metrics = collectors.QueryMetrics{ElapsedMs: secMs(p.Query.TotalTime), CPUMs: secMs(p.Query.CPUTime), RowsScanned: p.Query.TotalRowsScanned, BytesScanned: p.IO.TotalBytesRead}
		var err error
		if roots, err = operators(p.Operator); err != nil {
			pos.Reason = fmt.Sprintf("operator section: %v", err)
			return bad(pos)
		}
	}
	if strings.TrimSpace(ev.SQL) == "" {
		pos.Reason = "profile without SQL text"
		return bad(pos)
	}
	ev.StatementType = collectors.ClassifyStatement(ev.SQL)
	ev.SQLTemplate = collectors.HasPlaceholder(ev.SQL)
	ev.StartTime = fileTime(name)
	if !ev.StartTime.IsZero() && ev.Metrics.ElapsedMs > 0 {
		// The file is written when the query ends.
		ev.EndTime = ev.StartTime
		ev.StartTime = ev.StartTime.Add(-time.Duration(ev.Metrics.ElapsedMs) * time.Millisecond)
	}
	for _, root := range roots {
		walkOps(root, func(o *op) { addScan(&ev, o) })
	}
	var filters []string
	for _, t := range ev.Tables {
		filters = append(filters, t.QualifiedName()+"|"+strings.Join(t.FilterText, "|"))
	}
	id := []string{SourceProfile, filepath.Base(name), ev.EndTime.Format(time.RFC3339Nano), ev.SQL, strings.Join(filters, ";")}
	if pos.Index > 1 { // a later document of a file holding several
		id = append(id, strconv.Itoa(pos.Index))
	}
	ev.QueryID = collectors.StableID(id...)
	return emit(ev)
}

// fileTime is the modification time of name in UTC, zero when name is not
// a file.
func fileTime(name string) time.Time {
	fi, err := os.Stat(name)
	if err != nil || fi.IsDir() {
		return time.Time{}
	}
	return fi.ModTime().UTC()
}

func secMs(s float64) int64 {
	if s != s || s < 0 || s > 1e9 {
		return 0
	}
	return int64(s * 1000)
}

// operators decodes the 2.x operator section: an array of nodes or one node.
func operators(raw json.RawMessage) ([]*op, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] == '[' {
		var ops []*op
		err := json.Unmarshal(raw, &ops)
		return ops, err
	}
	var o op
	err := json.Unmarshal(raw, &o)
	return []*op{&o}, err
}

func walkOps(o *op, fn func(*op)) {
	if o == nil {
		return
	}
	fn(o)
	for _, c := range o.Children {
		walkOps(c, fn)
	}
}

// infoStrings reads an extra_info value that is a string or a list.
func infoStrings(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if one == "" {
			return nil
		}
		return []string{one}
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err == nil {
		return many
	}
	return nil
}

func addScan(ev *collectors.QueryEvent, o *op) {
	typ := o.OperatorType
	if typ == "" {
		typ = o.Type
	}
	if typ != "TABLE_SCAN" {
		return
	}
	names := infoStrings(o.ExtraInfo["Table"])
	if len(names) == 0 {
		return // a table function (read_parquet, iceberg_scan) without a table name
	}
	cat, ns, name := splitTable(names[0])
	var t *collectors.TableAccess
	for i := range ev.Tables {
		if strings.EqualFold(ev.Tables[i].QualifiedName(), names[0]) {
			t = &ev.Tables[i]
		}
	}
	first := t == nil
	if first {
		ev.Tables = append(ev.Tables, collectors.TableAccess{Catalog: cat, Namespace: ns, Name: name, Direct: true, Evidence: collectors.EvidencePushedFilter})
		t = &ev.Tables[len(ev.Tables)-1]
	}
	rows := o.OperatorRowsScanned + o.RowsScanned
	t.Metrics.RowsScanned += rows
	texts := infoStrings(o.ExtraInfo["Filters"])
	var conj []*expr.Node
	for _, f := range texts {
		t.FilterText = append(t.FilterText, f)
		n, err := ParseFilter(t.QualifiedName(), f)
		if err != nil {
			n = &expr.Node{Kind: expr.NodeOpaque, Text: f}
		}
		if n != nil {
			addFilterColumns(t, n)
			if n.Kind == expr.NodeAnd {
				conj = append(conj, n.Children...)
			} else {
				conj = append(conj, n)
			}
		}
	}
	var f *expr.Node
	switch len(conj) {
	case 0:
	case 1:
		f = conj[0]
	default:
		f = &expr.Node{Kind: expr.NodeAnd, Children: conj}
	}
	// Several scans of one table: the table's filter is the OR of the scans'
	// filters; one unfiltered scan reads the whole table.
	switch {
	case first:
		t.Filter = f
	case f == nil || t.Filter == nil:
		t.Filter = nil
	default:
		t.Filter = &expr.Node{Kind: expr.NodeOr, Children: []*expr.Node{t.Filter, f}}
	}
}

// splitTable splits DuckDB's catalog.schema.table.
func splitTable(s string) (cat, ns, name string) {
	parts := strings.Split(s, ".")
	switch len(parts) {
	case 1:
		return "", "", parts[0]
	case 2:
		return "", parts[0], parts[1]
	}
	return parts[0], strings.Join(parts[1:len(parts)-1], "."), parts[len(parts)-1]
}

func addFilterColumns(t *collectors.TableAccess, n *expr.Node) {
	if n.Pred != nil {
		for _, c := range t.Columns {
			if strings.EqualFold(c.Name, n.Pred.Column) {
				return
			}
		}
		t.Columns = append(t.Columns, collectors.ColumnUse{Name: n.Pred.Column, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidencePushedFilter})
	}
	for _, c := range n.Children {
		addFilterColumns(t, c)
	}
}
