package snowflake

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/floe-project/floe/collectors"
)

// Source is the source name of Snowflake events.
const Source = "snowflake"

// MaxQueryTextChars is the length at which QUERY_HISTORY cuts QUERY_TEXT;
// text this long is marked SQLTruncated.
const MaxQueryTextChars = 100_000

// Columns that mark a row as carrying a view's data.
var (
	queryHistoryCols  = []string{"QUERY_TEXT", "EXECUTION_STATUS", "START_TIME", "TOTAL_ELAPSED_TIME", "QUERY_TYPE"}
	accessHistoryCols = []string{"BASE_OBJECTS_ACCESSED", "DIRECT_OBJECTS_ACCESSED", "OBJECTS_MODIFIED"}
)

func hasAny(r row, cols []string) bool {
	for _, c := range cols {
		if r.has(c) {
			return true
		}
	}
	return false
}

// errUnfinished marks a QUERY_HISTORY row of a query still running or
// queued (INFORMATION_SCHEMA exports include them); it is skipped, since
// events are deduplicated keeping the first and the finished row may come
// later.
var errUnfinished = errors.New("query not finished")

// halves is what one row says about one query: the QUERY_HISTORY part,
// the ACCESS_HISTORY part, or both.
type halves struct {
	id     string
	qh, ah *collectors.QueryEvent
}

// split reads a row into its halves.
func split(r row) (halves, error) {
	id := strings.TrimSpace(r["QUERY_ID"])
	if id == "" {
		return halves{}, fmt.Errorf("row has no QUERY_ID")
	}
	h := halves{id: id}
	if hasAny(r, queryHistoryCols) {
		ev, err := queryHistory(id, r)
		if err != nil {
			return halves{}, err
		}
		if strings.TrimSpace(r["EXECUTION_STATUS"]) != "" && ev.State == collectors.StateUnknown {
			return halves{}, errUnfinished
		}
		h.qh = &ev
	}
	if hasAny(r, accessHistoryCols) {
		ev, err := accessHistory(id, r)
		if err != nil {
			return halves{}, err
		}
		h.ah = &ev
	}
	if h.qh == nil && h.ah == nil {
		return halves{}, fmt.Errorf("query %s: row has neither QUERY_HISTORY nor ACCESS_HISTORY columns", id)
	}
	return h, nil
}

// join is the event of a query from its halves; either may be nil.
func join(qh, ah *collectors.QueryEvent) collectors.QueryEvent {
	switch {
	case qh == nil:
		return *ah
	case ah == nil:
		return *qh
	}
	ev := *qh
	ev.Tables = append([]collectors.TableAccess(nil), ah.Tables...)
	if ev.RootQueryID == "" {
		ev.RootQueryID = ah.RootQueryID
	}
	if ev.User == "" {
		ev.User = ah.User
	}
	return ev
}

func queryHistory(id string, r row) (collectors.QueryEvent, error) {
	ev := collectors.QueryEvent{
		Source:         Source,
		Engine:         collectors.EngineSnowflake,
		EngineVersion:  r["RELEASE_VERSION"],
		QueryID:        id,
		RootQueryID:    r["ROOT_QUERY_ID"],
		User:           r["USER_NAME"],
		SQL:            r["QUERY_TEXT"],
		DefaultCatalog: r["DATABASE_NAME"],
		DefaultSchema:  r["SCHEMA_NAME"],
	}
	start := r["START_TIME"]
	if strings.TrimSpace(start) == "" {
		start = r["QUERY_START_TIME"]
	}
	var err error
	if ev.StartTime, err = collectors.ParseTime(start); err != nil {
		return ev, fmt.Errorf("query %s: START_TIME: %w", id, err)
	}
	if end := strings.TrimSpace(r["END_TIME"]); end != "" {
		if ev.EndTime, err = collectors.ParseTime(end); err != nil {
			return ev, fmt.Errorf("query %s: END_TIME: %w", id, err)
		}
	}
	ev.State = state(r["EXECUTION_STATUS"], r["ERROR_CODE"])
	if ev.State == collectors.StateFailed || ev.State == collectors.StateCancelled {
		ev.Error = failure(r["ERROR_CODE"], r["ERROR_MESSAGE"])
	}
	ev.StatementType = statementType(r["QUERY_TYPE"], ev.SQL)
	ev.SQLTruncated = utf8.RuneCountInString(ev.SQL) >= MaxQueryTextChars
	ev.SQLTemplate = hasBind(ev.SQL)
	m := &ev.Metrics
	fields := []struct {
		col string
		dst *int64
	}{
		{"TOTAL_ELAPSED_TIME", &m.ElapsedMs},
		{"BYTES_SCANNED", &m.BytesScanned},
		{"PARTITIONS_SCANNED", &m.PartitionsScanned},
		{"PARTITIONS_TOTAL", &m.PartitionsTotal},
	}
	for _, f := range fields {
		if *f.dst, err = number(r[f.col]); err != nil {
			return ev, fmt.Errorf("query %s: %s: %w", id, f.col, err)
		}
	}
	for _, col := range []string{"QUEUED_OVERLOAD_TIME", "QUEUED_PROVISIONING_TIME", "QUEUED_REPAIR_TIME"} {
		q, err := number(r[col])
		if err != nil {
			return ev, fmt.Errorf("query %s: %s: %w", id, col, err)
		}
		m.QueuedMs += q
	}
	return ev, nil
}

// accessHistory reads an ACCESS_HISTORY row. Standing alone, the event has
// State UNKNOWN and a statement type guessed from what the query touched:
// SELECT when it modified nothing, else OTHER.
func accessHistory(id string, r row) (collectors.QueryEvent, error) {
	ev := collectors.QueryEvent{
		Source:        Source,
		Engine:        collectors.EngineSnowflake,
		QueryID:       id,
		RootQueryID:   r["ROOT_QUERY_ID"],
		User:          r["USER_NAME"],
		State:         collectors.StateUnknown,
		StatementType: collectors.StatementSelect,
	}
	start := r["QUERY_START_TIME"]
	if strings.TrimSpace(start) == "" {
		start = r["START_TIME"]
	}
	var err error
	if ev.StartTime, err = collectors.ParseTime(start); err != nil {
		return ev, fmt.Errorf("query %s: QUERY_START_TIME: %w", id, err)
	}
	base, err := objects(r["BASE_OBJECTS_ACCESSED"])
	if err != nil {
		return ev, fmt.Errorf("query %s: BASE_OBJECTS_ACCESSED: %w", id, err)
	}
	direct, err := objects(r["DIRECT_OBJECTS_ACCESSED"])
	if err != nil {
		return ev, fmt.Errorf("query %s: DIRECT_OBJECTS_ACCESSED: %w", id, err)
	}
	modified, err := objects(r["OBJECTS_MODIFIED"])
	if err != nil {
		return ev, fmt.Errorf("query %s: OBJECTS_MODIFIED: %w", id, err)
	}
	ev.Tables = tables(base, direct, modified)
	if len(modified) > 0 {
		ev.StatementType = collectors.StatementOther
	}
	return ev, nil
}

// object is one element of an ACCESS_HISTORY objects array. objectId is
// not read: it is a number or a string, and floe does not need it.
type object struct {
	ObjectDomain string `json:"objectDomain"`
	ObjectName   string `json:"objectName"`
	Columns      []struct {
		ColumnName string `json:"columnName"`
	} `json:"columns"`
}

func (o object) isTable() bool {
	return strings.Contains(strings.ToLower(o.ObjectDomain), "table") && o.ObjectName != ""
}

func objects(cell string) ([]object, error) {
	cell = strings.TrimSpace(cell)
	if cell == "" || strings.EqualFold(cell, "null") {
		return nil, nil
	}
	var out []object
	if err := json.Unmarshal([]byte(cell), &out); err != nil {
		return nil, fmt.Errorf("not a JSON array of objects: %w", err)
	}
	return out, nil
}

// tables turns the three object lists into table accesses, in order of
// first appearance: read tables first (base, then direct-only), then
// written ones.
func tables(base, direct, modified []object) []collectors.TableAccess {
	type cols struct {
		base, direct []string
		inDirect     bool
	}
	var order []string
	byName := map[string]*cols{}
	get := func(name string) *cols {
		c, ok := byName[name]
		if !ok {
			c = &cols{}
			byName[name] = c
			order = append(order, name)
		}
		return c
	}
	for _, o := range base {
		if o.isTable() {
			c := get(o.ObjectName)
			c.base = appendColumns(c.base, o)
		}
	}
	for _, o := range direct {
		if o.isTable() {
			c := get(o.ObjectName)
			c.inDirect = true
			c.direct = appendColumns(c.direct, o)
		}
	}
	var out []collectors.TableAccess
	for _, name := range order {
		c := byName[name]
		ta := tableAccess(name)
		ta.Direct = c.inDirect
		projected := map[string]bool{}
		for _, col := range c.direct {
			projected[col] = true
		}
		for _, col := range c.base {
			if !projected[col] {
				ta.Columns = append(ta.Columns, collectors.ColumnUse{Name: col, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceAccessHistory})
			}
		}
		for _, col := range c.direct {
			ta.Columns = append(ta.Columns, collectors.ColumnUse{Name: col, Roles: []collectors.Role{collectors.RoleProjection}, Evidence: collectors.EvidenceAccessHistory})
		}
		out = append(out, ta)
	}
	seen := map[string]bool{}
	for _, o := range modified {
		if o.isTable() && !seen[o.ObjectName] {
			seen[o.ObjectName] = true
			ta := tableAccess(o.ObjectName)
			ta.Direct = true
			ta.Write = true
			out = append(out, ta)
		}
	}
	return out
}

func appendColumns(dst []string, o object) []string {
	for _, c := range o.Columns {
		name := strings.TrimSpace(c.ColumnName)
		if name == "" || name == "TRUNCATED" {
			continue
		}
		dup := false
		for _, d := range dst {
			if d == name {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, name)
		}
	}
	return dst
}

// tableAccess splits DB.SCHEMA.TABLE, honouring double-quoted parts that
// may hold dots, and removes the quotes.
func tableAccess(name string) collectors.TableAccess {
	parts := splitName(name)
	ta := collectors.TableAccess{Evidence: collectors.EvidenceAccessHistory}
	switch len(parts) {
	case 1:
		ta.Name = parts[0]
	case 2:
		ta.Namespace, ta.Name = parts[0], parts[1]
	default:
		ta.Catalog = parts[0]
		ta.Namespace = strings.Join(parts[1:len(parts)-1], ".")
		ta.Name = parts[len(parts)-1]
	}
	return ta
}

func splitName(s string) []string {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

func failure(code, msg string) string {
	code, msg = strings.TrimSpace(code), strings.TrimSpace(msg)
	switch {
	case code != "" && msg != "":
		return code + ": " + msg
	case msg != "":
		return msg
	default:
		return code
	}
}

func state(status, code string) collectors.State {
	code = strings.TrimLeft(strings.TrimSpace(code), "0")
	switch strings.ToUpper(strings.TrimSpace(status)) {
	case "SUCCESS":
		return collectors.StateSucceeded
	case "FAIL", "FAILED", "FAILED_WITH_ERROR", "FAILED_WITH_INCIDENT", "INCIDENT":
		// 000604 is "SQL execution canceled".
		if code == "604" {
			return collectors.StateCancelled
		}
		return collectors.StateFailed
	default:
		return collectors.StateUnknown
	}
}

// statementType maps Snowflake's QUERY_TYPE; without one it classifies
// the SQL text.
func statementType(queryType, sql string) string {
	if t, ok := collectors.StatementTypeNamed(queryType); ok {
		return t
	}
	qt := strings.ToUpper(strings.TrimSpace(queryType))
	if qt == "" || qt == "UNKNOWN" {
		return collectors.ClassifyStatement(sql)
	}
	for _, p := range []string{"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE"} {
		if strings.HasPrefix(qt, p) {
			return collectors.StatementDDL
		}
	}
	return collectors.StatementOther
}

// number parses a NUMBER cell: empty is 0; integers, and decimals or
// exponents (as JSON exports may write them), truncated.
func number(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "null") {
		return 0, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > 9e18 {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return int64(f), nil
}

// hasBind reports whether sql holds a bind placeholder (?, :1, :name)
// outside string literals, quoted identifiers, $$ blocks and comments.
// "::" casts and "col:path" variant paths are not binds.
func hasBind(sql string) bool {
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '?':
			return true
		case c == '\'' || c == '"':
			j := strings.IndexByte(sql[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
		case c == '$' && i+1 < len(sql) && sql[i+1] == '$':
			j := strings.Index(sql[i+2:], "$$")
			if j < 0 {
				return false
			}
			i += j + 3
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return false
			}
			i += j
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += j + 3
		case c == ':':
			if i+1 < len(sql) && sql[i+1] == ':' {
				i++
				continue
			}
			prev := byte(' ')
			if i > 0 {
				prev = sql[i-1]
			}
			if isIdent(prev) || prev == ']' || prev == ')' {
				continue // variant path v:a
			}
			if i+1 < len(sql) && (isIdent(sql[i+1])) {
				return true
			}
		}
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
