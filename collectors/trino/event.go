package trino

import (
	"bytes"
	"context"
	json "github.com/goccy/go-json"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// SourceEvent is the source name of [EventParser].
const SourceEvent = "trino-event"

// EventParser reads Trino event-listener JSON (QueryCompletedEvent).
type EventParser struct{}

// Source returns "trino-event".
func (EventParser) Source() string { return SourceEvent }

// Detect accepts JSON whose head has a query event's metadata.queryId. It
// does not rely on keys after metadata: with the plan included (HTTP
// listener) the first event can be larger than the head.
func (EventParser) Detect(_ string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n[")
	if len(h) == 0 || h[0] != '{' {
		return false
	}
	return bytes.Contains(head, []byte(`"queryId"`)) && bytes.Contains(head, []byte(`"metadata"`))
}

// Parse reads every record of r, emitting one event per QueryCompletedEvent.
func (EventParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return collectors.ReadJSONRecords(ctx, name, r, func(rec []byte, pos collectors.BadRecord) error {
		ev, ok, reason := decodeEvent(rec)
		if reason != "" {
			pos.Reason = reason
			return bad(pos)
		}
		if !ok {
			return nil
		}
		return emit(ev)
	}, bad)
}

// Wire types: only the fields floe uses; unknown fields are ignored and
// Optionals may be absent or null.
type wireEvent struct {
	EventPayload *wireEvent      `json:"eventPayload"`
	Metadata     *wireMetadata   `json:"metadata"`
	Statistics   *wireStatistics `json:"statistics"`
	Context      wireContext     `json:"context"`
	IOMetadata   wireIO          `json:"ioMetadata"`
	FailureInfo  *wireFailure    `json:"failureInfo"`
	// QueryType is Presto's place for it (Trino's is context.queryType).
	QueryType          string   `json:"queryType"`
	CreateTime         flexTime `json:"createTime"`
	ExecutionStartTime flexTime `json:"executionStartTime"`
	EndTime            flexTime `json:"endTime"`
}

type wireMetadata struct {
	QueryID    string `json:"queryId"`
	Query      string `json:"query"`
	UpdateType string `json:"updateType"`
	// UpdateQueryType is Presto's name for updateType.
	UpdateQueryType string      `json:"updateQueryType"`
	PreparedQuery   string      `json:"preparedQuery"`
	QueryState      string      `json:"queryState"`
	Tables          []wireTable `json:"tables"`
	Plan            string      `json:"plan"`
}

type wireTable struct {
	Catalog            string        `json:"catalog"`
	Schema             string        `json:"schema"`
	Table              string        `json:"table"`
	Columns            []tableColumn `json:"columns"`
	DirectlyReferenced *bool         `json:"directlyReferenced"`
}

type wireStatistics struct {
	CPUTime            flexDuration `json:"cpuTime"`
	WallTime           flexDuration `json:"wallTime"`
	QueuedTime         flexDuration `json:"queuedTime"`
	PhysicalInputBytes int64        `json:"physicalInputBytes"`
	PhysicalInputRows  int64        `json:"physicalInputRows"`
	ProcessedInputRows int64        `json:"processedInputRows"`
	// TotalBytes and TotalRows are Presto's input counts.
	TotalBytes int64 `json:"totalBytes"`
	TotalRows  int64 `json:"totalRows"`
}

type wireContext struct {
	User          string `json:"user"`
	Catalog       string `json:"catalog"`
	Schema        string `json:"schema"`
	ServerVersion string `json:"serverVersion"`
	QueryType     string `json:"queryType"`
}

type wireIO struct {
	Inputs []wireInput `json:"inputs"`
	Output *wireOutput `json:"output"`
}

type wireInput struct {
	CatalogName   string    `json:"catalogName"`
	Schema        string    `json:"schema"`
	Table         string    `json:"table"`
	Columns       []colName `json:"columns"`
	ConnectorInfo *struct {
		SnapshotID *int64 `json:"snapshotId"`
	} `json:"connectorInfo"`
	PhysicalInputBytes int64 `json:"physicalInputBytes"`
	PhysicalInputRows  int64 `json:"physicalInputRows"`
}

type wireOutput struct {
	CatalogName string `json:"catalogName"`
	Schema      string `json:"schema"`
	Table       string `json:"table"`
}

type wireFailure struct {
	ErrorCode *struct {
		Code int    `json:"code"`
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"errorCode"`
	FailureType    string `json:"failureType"`
	FailureMessage string `json:"failureMessage"`
}

// colName is a column given as a string (ioMetadata.inputs), {"column": …}
// (metadata.tables) or {"name": …} (QueryInfo inputs).
type colName string

func (c *colName) UnmarshalJSON(b []byte) error {
	if len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		*c = colName(b[1 : len(b)-1]) // the common case, without a second decoder pass
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = colName(s)
		return nil
	}
	var o struct {
		Column string `json:"column"`
		Name   string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*c = colName(o.Column)
	if o.Column == "" {
		*c = colName(o.Name)
	}
	return nil
}

// tableColumn is a metadata.tables column: {"column": …, "mask": …}.
type tableColumn struct {
	Column string `json:"column"`
}

// flexTime is an Instant as decimal epoch seconds (number or string),
// whole epoch milliseconds (Presto; an integer of more than 11 digits) or
// ISO-8601 text; null and absent are zero.
type flexTime struct{ time.Time }

func (t *flexTime) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "null" || s == "" {
		return nil
	}
	if ms, ok := bareInt(s); ok && (ms > 1e11 || ms < -1e11) {
		t.Time = collectors.EpochMillis(ms)
		return nil
	}
	v, err := collectors.ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// bareInt parses s when it is a whole number without a fraction or
// exponent.
func bareInt(s string) (int64, bool) {
	if strings.ContainsAny(s, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// flexDuration is a Duration as decimal seconds (Jackson with nanosecond
// timestamps, Trino's default), an airlift string ("3.38s"), ISO-8601
// ("PT3.377S") or a whole number, which Jackson writes for
// Duration.toMillis() (Presto) but which may also be whole seconds; the
// event decides (see [durationUnit]). A whole number may come quoted or
// with a zero fraction ("67795", 67795.0): its unit is just as unknown.
type flexDuration struct {
	time.Duration
	// whole is the number when the JSON was a whole number, unit unknown.
	whole *int64
	// bare is set when it was an unquoted integer without a fraction, the
	// form Jackson gives Duration.toMillis().
	bare bool
}

func (d *flexDuration) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "null" || s == "" {
		return nil
	}
	if n, ok := bareInt(s); ok {
		d.whole, d.bare = &n, b[0] != '"'
		return nil
	}
	if n, ok := zeroFraction(s); ok {
		d.whole = &n
		return nil
	}
	v, err := collectors.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// zeroFraction parses "67795.0" or "3.000000000": a whole number written
// with a fraction of zeros.
func zeroFraction(s string) (int64, bool) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || frac == "" || strings.Trim(frac, "0") != "" {
		return 0, false
	}
	return bareInt(whole)
}

// resolve sets the Duration of a whole-number duration in unit.
func (d *flexDuration) resolve(unit time.Duration) {
	if d.whole != nil {
		d.Duration = time.Duration(*d.whole) * unit
	}
}

// durationUnit returns the unit of the statistics' whole-number durations.
// An event that is otherwise known to be PrestoDB's (see [prestoMarks])
// writes whole milliseconds, whatever its instants say: test suites log
// events with placeholder instants (createTime 0). Otherwise, when
// wallTime is a whole number, it is the unit that brings wallTime closer
// to endTime - createTime, a tie or missing times going to the number's
// form: milliseconds for a bare integer (Duration.toMillis(), Presto's
// form), seconds for one quoted or with a zero fraction (Trino's decimal
// seconds). Without a whole wallTime it is seconds.
func durationUnit(w *wireEvent) time.Duration {
	s := w.Statistics
	if s.WallTime.whole == nil {
		return time.Second
	}
	if prestoMarks(w) {
		return time.Millisecond
	}
	byForm := time.Second
	if s.WallTime.bare {
		byForm = time.Millisecond
	}
	start, end := w.CreateTime.Time, w.EndTime.Time
	if start.IsZero() || end.Before(start) {
		return byForm
	}
	elapsed := end.Sub(start)
	n := *s.WallTime.whole
	dist := func(d time.Duration) time.Duration {
		if d > elapsed {
			return d - elapsed
		}
		return elapsed - d
	}
	switch sec, ms := dist(time.Duration(n)*time.Second), dist(time.Duration(n)*time.Millisecond); {
	case sec < ms:
		return time.Second
	case ms < sec:
		return time.Millisecond
	}
	return byForm
}

// decodeEvent turns one record into an event. ok is false (and reason
// empty) for records that are valid but not completed queries.
func decodeEvent(rec []byte) (ev collectors.QueryEvent, ok bool, reason string) {
	var w wireEvent
	if err := json.Unmarshal(rec, &w); err != nil {
		return ev, false, collectors.JSONReason(rec, err)
	}
	if w.EventPayload != nil { // Kafka wrapper, decoded in the same pass
		w = *w.EventPayload
	}
	if w.Metadata == nil || w.Metadata.QueryID == "" {
		if bytes.Contains(rec, []byte(`"splitId"`)) || bytes.Contains(rec, []byte(`"stageId"`)) {
			return ev, false, "" // split completed event
		}
		return ev, false, "not a Trino query event: no metadata.queryId"
	}
	if w.Statistics == nil && w.EndTime.IsZero() {
		return ev, false, "" // QueryCreatedEvent: only completed queries are collected
	}
	if w.CreateTime.IsZero() {
		return ev, false, "query " + w.Metadata.QueryID + ": no createTime"
	}
	return buildEvent(&w), true, ""
}

func buildEvent(w *wireEvent) collectors.QueryEvent {
	md := w.Metadata
	ev := collectors.QueryEvent{
		Source:         SourceEvent,
		Engine:         engine(w),
		EngineVersion:  w.Context.ServerVersion,
		QueryID:        md.QueryID,
		User:           w.Context.User,
		StartTime:      w.CreateTime.Time,
		EndTime:        w.EndTime.Time,
		DefaultCatalog: w.Context.Catalog,
		DefaultSchema:  w.Context.Schema,
	}
	ev.State = mapState(md.QueryState, w.FailureInfo)
	if w.FailureInfo != nil {
		ev.Error = failureText(w.FailureInfo)
	}
	ev.SQL, ev.Params, ev.SQLTemplate = splitExecute(md.Query, md.PreparedQuery)
	ev.StatementType = statementType(firstNonEmpty(w.Context.QueryType, w.QueryType), firstNonEmpty(md.UpdateType, md.UpdateQueryType), ev.SQL)
	if s := w.Statistics; s != nil {
		unit := durationUnit(w)
		for _, d := range []*flexDuration{&s.WallTime, &s.CPUTime, &s.QueuedTime} {
			d.resolve(unit)
		}
		if s.PhysicalInputBytes == 0 {
			s.PhysicalInputBytes = s.TotalBytes
		}
		if s.PhysicalInputRows == 0 {
			s.PhysicalInputRows = s.TotalRows
		}
		ev.Metrics = collectors.QueryMetrics{
			ElapsedMs:    s.WallTime.Milliseconds(),
			CPUMs:        s.CPUTime.Milliseconds(),
			QueuedMs:     s.QueuedTime.Milliseconds(),
			BytesScanned: s.PhysicalInputBytes,
			RowsScanned:  s.ProcessedInputRows,
		}
		if ev.Metrics.RowsScanned == 0 {
			ev.Metrics.RowsScanned = s.PhysicalInputRows
		}
	}
	if ev.Metrics.ElapsedMs == 0 && !ev.EndTime.IsZero() {
		ev.Metrics.ElapsedMs = ev.EndTime.Sub(ev.StartTime).Milliseconds()
	}
	ev.Tables = tables(md, &w.IOMetadata)
	return ev
}

// engine tells Presto's events from Trino's: Presto writes durations as
// whole milliseconds, numbers its versions 0.x and names fields of its own
// (queryType beside context, metadata.updateQueryType).
func engine(w *wireEvent) collectors.Engine {
	s := w.Statistics
	if prestoMarks(w) || s != nil && s.WallTime.whole != nil && durationUnit(w) == time.Millisecond {
		return collectors.EnginePresto
	}
	return collectors.EngineTrino
}

// prestoMarks reports whether w names itself PrestoDB's apart from its
// durations: a 0.x version, queryType beside context, or
// metadata.updateQueryType.
func prestoMarks(w *wireEvent) bool {
	return strings.HasPrefix(w.Context.ServerVersion, "0.") || w.QueryType != "" || w.Metadata.UpdateQueryType != ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mapState(s string, f *wireFailure) collectors.State {
	switch strings.ToUpper(s) {
	case "FINISHED":
		return collectors.StateSucceeded
	case "FAILED":
		if f != nil && f.ErrorCode != nil && (f.ErrorCode.Name == "USER_CANCELED" || f.ErrorCode.Name == "ADMINISTRATIVELY_KILLED") {
			return collectors.StateCancelled
		}
		return collectors.StateFailed
	}
	return collectors.StateUnknown
}

func failureText(f *wireFailure) string {
	var parts []string
	if f.ErrorCode != nil {
		parts = append(parts, strings.TrimSpace(f.ErrorCode.Type+" "+f.ErrorCode.Name))
	}
	if f.FailureMessage != "" {
		parts = append(parts, f.FailureMessage)
	} else if f.FailureType != "" {
		parts = append(parts, f.FailureType)
	}
	return strings.Join(parts, ": ")
}

// statementType maps Trino's QueryType and updateType to floe's statement
// types; without either it classifies the SQL text.
func statementType(queryType, updateType, sql string) string {
	if strings.EqualFold(updateType, "CREATE TABLE") {
		if strings.EqualFold(queryType, "INSERT") || queryType == "" {
			return collectors.StatementCTAS
		}
		return collectors.StatementDDL
	}
	if t, ok := collectors.StatementTypeNamed(updateType); ok {
		return t
	}
	if t, ok := collectors.StatementTypeNamed(queryType); ok {
		return t
	}
	switch {
	case strings.EqualFold(queryType, "DATA_DEFINITION"):
		return collectors.StatementDDL
	case queryType != "":
		return collectors.StatementOther
	case updateType != "":
		return collectors.StatementDDL
	}
	return collectors.ClassifyStatement(sql)
}

// constraintRe matches an Iceberg table handle in a Trino plan:
// "table = lake:sales.orders$data@305… constraint on [order_date, region]".
var constraintRe = regexp.MustCompile(`table = ([^:\s,\]]+):([^.\s]+)\.([^$@\s,\]]+)(?:\$[a-z_]+)?(?:@\d+)? constraint on \[([^\]]*)\]`)

func tables(md *wireMetadata, io *wireIO) []collectors.TableAccess {
	var out []collectors.TableAccess
	find := func(cat, schema, table string) int {
		for i := range out {
			t := &out[i]
			if strings.EqualFold(t.Catalog, cat) && strings.EqualFold(t.Namespace, schema) && strings.EqualFold(t.Name, table) {
				return i
			}
		}
		return -1
	}
	for _, t := range md.Tables {
		if t.Table == "" {
			continue
		}
		direct := t.DirectlyReferenced == nil || *t.DirectlyReferenced
		i := find(t.Catalog, t.Schema, t.Table)
		if i < 0 {
			out = append(out, collectors.TableAccess{Catalog: t.Catalog, Namespace: t.Schema, Name: t.Table, Direct: direct, Evidence: collectors.EvidenceAnalysisRefs})
			i = len(out) - 1
		} else if direct {
			out[i].Direct = true
		}
		for _, c := range t.Columns {
			addColumn(&out[i], c.Column, collectors.RoleReferenced, collectors.EvidenceAnalysisRefs)
		}
	}
	for _, in := range io.Inputs {
		if in.Table == "" {
			continue
		}
		i := find(in.CatalogName, in.Schema, in.Table)
		if i < 0 {
			out = append(out, collectors.TableAccess{Catalog: in.CatalogName, Namespace: in.Schema, Name: in.Table, Direct: true, Evidence: collectors.EvidenceAnalysisRefs})
			i = len(out) - 1
		}
		t := &out[i]
		if in.ConnectorInfo != nil && in.ConnectorInfo.SnapshotID != nil {
			id := *in.ConnectorInfo.SnapshotID
			t.SnapshotID = &id
		}
		t.Metrics.BytesScanned += in.PhysicalInputBytes
		t.Metrics.RowsScanned += in.PhysicalInputRows
		for _, c := range in.Columns {
			addColumn(t, string(c), collectors.RoleReferenced, collectors.EvidenceAnalysisRefs)
		}
	}
	if o := io.Output; o != nil && o.Table != "" {
		i := find(o.CatalogName, o.Schema, o.Table)
		if i < 0 {
			out = append(out, collectors.TableAccess{Catalog: o.CatalogName, Namespace: o.Schema, Name: o.Table, Direct: true, Evidence: collectors.EvidenceAnalysisRefs})
			i = len(out) - 1
		}
		out[i].Write = true
	}
	if md.Plan != "" && strings.Contains(md.Plan, "constraint on [") {
		for _, m := range constraintRe.FindAllStringSubmatch(md.Plan, -1) {
			i := find(m[1], m[2], m[3])
			if i < 0 {
				continue
			}
			t := &out[i]
			text := "constraint on [" + m[4] + "]"
			if !contains(t.FilterText, text) {
				t.FilterText = append(t.FilterText, text)
			}
			for c := range strings.SplitSeq(m[4], ",") {
				if c = strings.Trim(strings.TrimSpace(c), `"`); c != "" {
					addColumn(t, c, collectors.RoleFilter, collectors.EvidencePushedFilter)
				}
			}
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// addColumn adds role to column name of t; stronger evidence replaces weaker.
func addColumn(t *collectors.TableAccess, name string, role collectors.Role, ev collectors.Evidence) {
	if name == "" {
		return
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if !strings.EqualFold(c.Name, name) {
			continue
		}
		if !containsRole(c.Roles, role) {
			c.Roles = append(c.Roles, role)
		}
		if ev == collectors.EvidencePushedFilter {
			c.Evidence = ev
		}
		return
	}
	t.Columns = append(t.Columns, collectors.ColumnUse{Name: name, Roles: []collectors.Role{role}, Evidence: ev})
}

func containsRole(rs []collectors.Role, r collectors.Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}
