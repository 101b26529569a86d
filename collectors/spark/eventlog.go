package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Source is the source name of [EventLogParser].
const Source = "spark-eventlog"

// EventLogParser reads Spark event logs (JSON lines; single files or
// rolling eventlog_v2_* directories, decompressed by [collectors.Open]).
type EventLogParser struct{}

// Source returns "spark-eventlog".
func (EventLogParser) Source() string { return Source }

// Detect accepts JSON lines whose head names a Spark listener event.
func (EventLogParser) Detect(_ string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n")
	return bytes.HasPrefix(h, []byte(`{"Event":`)) && bytes.Contains(head, []byte(`SparkListener`))
}

// execution accumulates the events of one SQL execution.
type execution struct {
	id, root    int64
	start, end  int64 // epoch ms
	ended       bool
	description string
	sqlText     string
	errMsg      string
	jobFailed   string
	startPlan   *planNode
	startDesc   string
	finalPlan   *planNode
	finalDesc   string
	accums      map[int64]int64
	bytesRead   int64
	rowsRead    int64
	cpuNanos    int64
}

type planNode struct {
	NodeName     string      `json:"nodeName"`
	SimpleString string      `json:"simpleString"`
	Children     []*planNode `json:"children"`
	Metrics      []struct {
		Name          string `json:"name"`
		AccumulatorID int64  `json:"accumulatorId"`
	} `json:"metrics"`
}

type wireSQL struct {
	Event                   string           `json:"Event"`
	ExecutionID             *int64           `json:"executionId"`
	RootExecutionID         *int64           `json:"rootExecutionId"`
	Description             string           `json:"description"`
	SQLText                 string           `json:"sqlText"`
	PhysicalPlanDescription string           `json:"physicalPlanDescription"`
	SparkPlanInfo           *planNode        `json:"sparkPlanInfo"`
	Time                    int64            `json:"time"`
	ErrorMessage            *string          `json:"errorMessage"`
	AccumUpdates            [][2]json.Number `json:"accumUpdates"`
}

type wireCore struct {
	Event        string            `json:"Event"`
	SparkVersion string            `json:"Spark Version"`
	AppID        string            `json:"App ID"`
	User         string            `json:"User"`
	JobID        *int64            `json:"Job ID"`
	StageIDs     []int64           `json:"Stage IDs"`
	StageID      *int64            `json:"Stage ID"`
	Properties   map[string]string `json:"Properties"`
	JobResult    *struct {
		Result    string `json:"Result"`
		Exception *struct {
			Message string `json:"Message"`
		} `json:"Exception"`
	} `json:"Job Result"`
	TaskMetrics *struct {
		ExecutorCPUTime int64 `json:"Executor CPU Time"`
		InputMetrics    *struct {
			BytesRead   int64 `json:"Bytes Read"`
			RecordsRead int64 `json:"Records Read"`
		} `json:"Input Metrics"`
	} `json:"Task Metrics"`
}

type logState struct {
	name      string
	appID     string
	user      string
	version   string
	execs     map[int64]*execution
	order     []int64
	jobExec   map[int64]int64
	stageExec map[int64]int64
}

// Parse reads the log and emits one event per SQL execution, when the
// execution ends; executions still open at the end of the log (an
// in-progress application) are emitted with State UNKNOWN and no EndTime.
// Nested executions (rootExecutionId naming another execution) that
// scanned no table are skipped: their root already carries the query.
func (EventLogParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	st := &logState{name: name, execs: map[int64]*execution{}, jobExec: map[int64]int64{}, stageExec: map[int64]int64{}}
	lr := collectors.NewLineReader(r)
	for {
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
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
		ended, reason := st.line(line)
		if reason != "" {
			if err := bad(collectors.BadRecord{File: name, Line: n, Reason: reason}); err != nil {
				return err
			}
			continue
		}
		if ended != nil {
			if err := st.emit(ended, emit); err != nil {
				return err
			}
		}
	}
	for _, id := range st.order {
		if ex := st.execs[id]; ex != nil {
			if err := st.emit(ex, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// eventName returns the value of the leading "Event" key cheaply.
func eventName(line []byte) string {
	const key = `{"Event":"`
	if !bytes.HasPrefix(line, []byte(key)) {
		return ""
	}
	rest := line[len(key):]
	if i := bytes.IndexByte(rest, '"'); i >= 0 {
		return string(rest[:i])
	}
	return ""
}

// line applies one log line; it returns the execution the line ended, or
// the reason the line is a bad record.
func (st *logState) line(line []byte) (*execution, string) {
	ev := eventName(line)
	if ev == "" {
		var probe struct {
			Event string `json:"Event"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, collectors.JSONReason(line, err)
		}
		if probe.Event == "" {
			return nil, "not a Spark listener event: no \"Event\""
		}
		ev = probe.Event
	}
	short := ev[strings.LastIndexByte(ev, '.')+1:]
	switch short {
	case "SparkListenerSQLExecutionStart", "SparkListenerSQLAdaptiveExecutionUpdate", "SparkListenerSQLExecutionEnd", "SparkListenerDriverAccumUpdates":
		var w wireSQL
		if err := json.Unmarshal(line, &w); err != nil {
			return nil, collectors.JSONReason(line, err)
		}
		if w.ExecutionID == nil {
			return nil, short + " without executionId"
		}
		ex := st.sqlEvent(short, &w)
		if ex.ended {
			return ex, ""
		}
	case "SparkListenerLogStart", "SparkListenerApplicationStart", "SparkListenerJobStart", "SparkListenerJobEnd", "SparkListenerTaskEnd":
		var w wireCore
		if err := json.Unmarshal(line, &w); err != nil {
			return nil, collectors.JSONReason(line, err)
		}
		st.coreEvent(short, &w)
	default:
		if !json.Valid(line) {
			return nil, fmt.Sprintf("invalid JSON in %s event", short)
		}
	}
	return nil, ""
}

func (st *logState) exec(id int64) *execution {
	ex, ok := st.execs[id]
	if !ok {
		ex = &execution{id: id, root: id, accums: map[int64]int64{}}
		st.execs[id] = ex
		st.order = append(st.order, id)
	}
	return ex
}

func (st *logState) sqlEvent(short string, w *wireSQL) *execution {
	ex := st.exec(*w.ExecutionID)
	switch short {
	case "SparkListenerSQLExecutionStart":
		ex.start = w.Time
		if w.RootExecutionID != nil && *w.RootExecutionID >= 0 {
			ex.root = *w.RootExecutionID
		}
		ex.description, ex.sqlText = w.Description, w.SQLText
		ex.startPlan, ex.startDesc = w.SparkPlanInfo, w.PhysicalPlanDescription
		ex.finalPlan, ex.finalDesc = w.SparkPlanInfo, w.PhysicalPlanDescription
	case "SparkListenerSQLAdaptiveExecutionUpdate":
		ex.finalPlan, ex.finalDesc = w.SparkPlanInfo, w.PhysicalPlanDescription
		if ex.startPlan == nil {
			ex.startPlan, ex.startDesc = w.SparkPlanInfo, w.PhysicalPlanDescription
		}
	case "SparkListenerSQLExecutionEnd":
		ex.end, ex.ended = w.Time, true
		if w.ErrorMessage != nil {
			ex.errMsg = *w.ErrorMessage
		}
	case "SparkListenerDriverAccumUpdates":
		for _, u := range w.AccumUpdates {
			id, err1 := u[0].Int64()
			v, err2 := u[1].Int64()
			if err1 == nil && err2 == nil {
				ex.accums[id] = v
			}
		}
	}
	return ex
}

func (st *logState) coreEvent(short string, w *wireCore) {
	switch short {
	case "SparkListenerLogStart":
		st.version = w.SparkVersion
	case "SparkListenerApplicationStart":
		st.appID, st.user = w.AppID, w.User
	case "SparkListenerJobStart":
		id, err := strconv.ParseInt(w.Properties["spark.sql.execution.id"], 10, 64)
		if err != nil || w.JobID == nil {
			return
		}
		st.jobExec[*w.JobID] = id
		for _, s := range w.StageIDs {
			st.stageExec[s] = id
		}
	case "SparkListenerJobEnd":
		if w.JobID == nil || w.JobResult == nil || w.JobResult.Result != "JobFailed" {
			return
		}
		if id, ok := st.jobExec[*w.JobID]; ok {
			ex := st.exec(id)
			ex.jobFailed = "job failed"
			if w.JobResult.Exception != nil && w.JobResult.Exception.Message != "" {
				ex.jobFailed = w.JobResult.Exception.Message
			}
		}
	case "SparkListenerTaskEnd":
		if w.StageID == nil || w.TaskMetrics == nil {
			return
		}
		id, ok := st.stageExec[*w.StageID]
		if !ok {
			return
		}
		ex, ok := st.execs[id]
		if !ok {
			return
		}
		ex.cpuNanos += w.TaskMetrics.ExecutorCPUTime
		if im := w.TaskMetrics.InputMetrics; im != nil {
			ex.bytesRead += im.BytesRead
			ex.rowsRead += im.RecordsRead
		}
	}
}

// appID falls back to the log's file name when the log lacks
// SparkListenerApplicationStart (a damaged or partial log).
func (st *logState) appIDOrName() string {
	if st.appID != "" {
		return st.appID
	}
	b := filepath.Base(st.name)
	b = strings.TrimPrefix(b, "eventlog_v2_")
	for _, suf := range []string{".inprogress", ".zstd", ".zst", ".gz", ".lz4", ".snappy", ".lzf", ".inprogress"} {
		b = strings.TrimSuffix(b, suf)
	}
	if b == "" || b == "." {
		return "unknown-app"
	}
	return b
}

func (st *logState) emit(ex *execution, emit func(collectors.QueryEvent) error) error {
	delete(st.execs, ex.id)
	for i, id := range st.order {
		if id == ex.id {
			st.order = append(st.order[:i], st.order[i+1:]...)
			break
		}
	}
	if ex.start == 0 {
		return nil // end or accumulator updates of an execution whose start is not in this log
	}
	app := st.appIDOrName()
	scans := scansOf(ex)
	if ex.root != ex.id && len(scans) == 0 {
		return nil
	}
	ev := collectors.QueryEvent{
		Source:        Source,
		Engine:        collectors.EngineSpark,
		EngineVersion: st.version,
		QueryID:       app + "/" + strconv.FormatInt(ex.id, 10),
		User:          st.user,
		StartTime:     collectors.EpochMillis(ex.start),
		State:         collectors.StateUnknown,
	}
	if ex.root != ex.id {
		ev.RootQueryID = app + "/" + strconv.FormatInt(ex.root, 10)
	}
	if ex.ended {
		ev.EndTime = collectors.EpochMillis(ex.end)
		ev.Metrics.ElapsedMs = ex.end - ex.start
		ev.State = collectors.StateSucceeded
		switch {
		case ex.errMsg != "":
			ev.State, ev.Error = collectors.StateFailed, firstLine(ex.errMsg)
		case ex.jobFailed != "":
			ev.State, ev.Error = collectors.StateFailed, firstLine(ex.jobFailed)
		}
	}
	ev.SQL = sqlOf(ex)
	ev.Metrics.BytesScanned = ex.bytesRead
	ev.Metrics.RowsScanned = ex.rowsRead
	ev.Metrics.CPUMs = ex.cpuNanos / 1e6
	ev.Tables = tablesOf(ex, scans)
	ev.StatementType = statementType(ev.SQL, ex.finalPlan, len(scans) > 0)
	return emit(ev)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// sqlOf returns the SQL text: sqlText where the Spark version records it,
// else the description when it is SQL (the Thrift server and spark-sql
// set it to the statement; DataFrame jobs have a call site such as
// "collect at Job.scala:42", which is not SQL).
func sqlOf(ex *execution) string {
	if ex.sqlText != "" {
		return ex.sqlText
	}
	d := strings.TrimSpace(ex.description)
	if d == "" || !collectors.IsStatement(d) {
		return ""
	}
	if strings.Contains(d, " at ") && strings.Contains(d, ".scala:") || strings.Contains(d, ".py:") || strings.Contains(d, ".java:") {
		return ""
	}
	return d
}

var writeRe = regexp.MustCompile(`IcebergWrite\(table=([^,\s)]+)`)

// statementType classifies the SQL text, else the plan's root: a write
// node, or a scan of a table (a DataFrame read).
func statementType(sql string, plan *planNode, hasScans bool) string {
	if sql != "" {
		return collectors.ClassifyStatement(sql)
	}
	if plan != nil {
		switch n := plan.NodeName; {
		case strings.Contains(n, "AppendData"), strings.Contains(n, "OverwriteByExpression"), strings.Contains(n, "OverwritePartitionsDynamic"):
			return collectors.StatementInsert
		case strings.Contains(n, "TableAsSelect"):
			return collectors.StatementCTAS
		}
	}
	if hasScans {
		return collectors.StatementSelect
	}
	return collectors.StatementOther
}

// scan is one Iceberg BatchScan of a plan.
type scan struct {
	table   string
	filters string // the text after "filters=", "" for none
}

// scansOf finds the Iceberg scans: from the start plan (AQE does not change
// pushdown), else from the last re-plan, else from the formatted physical
// plan text.
func scansOf(ex *execution) []scan {
	for _, p := range []*planNode{ex.startPlan, ex.finalPlan} {
		var out []scan
		walk(p, func(n *planNode) {
			if strings.HasPrefix(n.NodeName, "BatchScan") || strings.HasPrefix(n.SimpleString, "BatchScan") {
				if s, ok := parseScan(n.NodeName, n.SimpleString); ok {
					out = append(out, s)
				}
			}
		})
		if len(out) > 0 {
			return out
		}
	}
	for _, d := range []string{ex.startDesc, ex.finalDesc} {
		var out []scan
		for line := range strings.SplitSeq(d, "\n") {
			if strings.Contains(line, "[filters=") {
				if s, ok := parseScan("", line); ok {
					out = append(out, s)
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func walk(n *planNode, fn func(*planNode)) {
	if n == nil {
		return
	}
	fn(n)
	for _, c := range n.Children {
		walk(c, fn)
	}
}

// parseScan reads the table and filter text of an Iceberg scan
// description: "<table> (branch=null) [filters=…, groupedBy=…]".
func parseScan(nodeName, s string) (scan, bool) {
	var sc scan
	if t, ok := strings.CutPrefix(nodeName, "BatchScan "); ok {
		sc.table = strings.TrimSpace(t)
	}
	i := strings.Index(s, "[filters=")
	if i < 0 {
		if sc.table == "" {
			return sc, false
		}
		return sc, true
	}
	if sc.table == "" {
		prefix := strings.TrimSpace(s[:i])
		if j := strings.LastIndex(prefix, " (branch="); j >= 0 {
			prefix = prefix[:j]
		}
		if f := strings.Fields(prefix); len(f) > 0 {
			sc.table = f[len(f)-1]
		}
		if k := strings.IndexByte(sc.table, '['); k >= 0 {
			sc.table = sc.table[:k]
		}
	}
	if sc.table == "" {
		return sc, false
	}
	body := bracketBody(s[i+1:])
	items := splitTopLevel(body)
	var keep []string
	for k, it := range items {
		it = strings.TrimSpace(it)
		if k == 0 {
			it = strings.TrimPrefix(it, "filters=")
		} else if isKeyValue(it) {
			break
		}
		keep = append(keep, it)
	}
	sc.filters = strings.TrimSpace(strings.Join(keep, ", "))
	return sc, true
}

// bracketBody returns the text up to the ']' closing a bracket whose '['
// precedes s, respecting quotes and nesting.
func bracketBody(s string) string {
	depth := 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c == '(' || c == '[':
			depth++
		case c == ')':
			depth--
		case c == ']':
			if depth == 0 {
				return s[:i]
			}
			depth--
		}
	}
	return s
}

// isKeyValue reports whether a description item is the next key of the
// scan description (groupedBy=…), not a filter.
func isKeyValue(it string) bool {
	k, _, ok := strings.Cut(it, "=")
	if !ok || k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

var scanMetrics = map[string]func(m *collectors.TableMetrics, v int64){
	"number of result data files":      func(m *collectors.TableMetrics, v int64) { m.ResultDataFiles += v },
	"number of skipped data files":     func(m *collectors.TableMetrics, v int64) { m.SkippedDataFiles += v },
	"number of scanned data manifests": func(m *collectors.TableMetrics, v int64) { m.ScannedManifests += v },
	"number of skipped data manifests": func(m *collectors.TableMetrics, v int64) { m.SkippedManifests += v },
	"total data file size (bytes)":     func(m *collectors.TableMetrics, v int64) { m.BytesScanned += v },
	"total planning duration (ms)":     func(m *collectors.TableMetrics, v int64) { m.PlanningNanos += v * 1e6 },
}

func tablesOf(ex *execution, scans []scan) []collectors.TableAccess {
	var out []collectors.TableAccess
	wholeTable := map[int]bool{}
	for _, s := range scans {
		cat, ns, name := splitName(s.table)
		i := -1
		for k := range out {
			if strings.EqualFold(out[k].QualifiedName(), s.table) {
				i = k
			}
		}
		if i < 0 {
			out = append(out, collectors.TableAccess{Catalog: cat, Namespace: ns, Name: name, Direct: true, Evidence: collectors.EvidencePushedFilter})
			i = len(out) - 1
		}
		t := &out[i]
		if s.filters != "" {
			t.FilterText = append(t.FilterText, s.filters)
		}
		f, err := ParseFilters(t.QualifiedName(), s.filters)
		switch {
		case err != nil:
			// Unparseable filter text: keep it as opaque, the scan may match anything.
			f = &expr.Node{Kind: expr.NodeOpaque, Text: s.filters}
		case f == nil:
			wholeTable[i] = true
		}
		if f != nil {
			addFilterColumns(t, f)
		}
		if wholeTable[i] {
			t.Filter = nil
		} else if t.Filter == nil {
			t.Filter = f
		} else {
			t.Filter = &expr.Node{Kind: expr.NodeOr, Children: []*expr.Node{t.Filter, f}}
		}
	}
	// Driver metrics: AQE re-plans may give a scan new accumulators, so
	// read them from every plan, each accumulator once.
	used := map[int64]bool{}
	for _, p := range []*planNode{ex.startPlan, ex.finalPlan} {
		walk(p, func(n *planNode) {
			if !strings.HasPrefix(n.NodeName, "BatchScan") && !strings.HasPrefix(n.SimpleString, "BatchScan") {
				return
			}
			s, ok := parseScan(n.NodeName, n.SimpleString)
			if !ok {
				return
			}
			for k := range out {
				if !strings.EqualFold(out[k].QualifiedName(), s.table) {
					continue
				}
				for _, m := range n.Metrics {
					fn, ok := scanMetrics[m.Name]
					v, have := ex.accums[m.AccumulatorID]
					if ok && have && !used[m.AccumulatorID] {
						used[m.AccumulatorID] = true
						fn(&out[k].Metrics, v)
					}
				}
				break
			}
		})
	}
	if ex.finalPlan != nil {
		walk(ex.finalPlan, func(n *planNode) {
			for _, m := range writeRe.FindAllStringSubmatch(n.SimpleString, -1) {
				cat, ns, name := splitName(m[1])
				out = append(out, collectors.TableAccess{Catalog: cat, Namespace: ns, Name: name, Direct: true, Write: true})
			}
		})
	}
	return out
}

// splitName splits catalog.namespace.table; a two-part name has no catalog,
// and a longer one keeps the middle parts as a dotted namespace.
func splitName(s string) (cat, ns, name string) {
	s = strings.ReplaceAll(s, "`", "")
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
	if n == nil {
		return
	}
	if n.Pred != nil {
		found := false
		for _, c := range t.Columns {
			if strings.EqualFold(c.Name, n.Pred.Column) {
				found = true
			}
		}
		if !found {
			t.Columns = append(t.Columns, collectors.ColumnUse{Name: n.Pred.Column, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidencePushedFilter})
		}
	}
	for _, c := range n.Children {
		addFilterColumns(t, c)
	}
}
