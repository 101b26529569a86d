package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The Spark log is one Thrift JDBC/ODBC server application (Spark 3.5,
// Iceberg's SparkSessionCatalog as spark_catalog) serving the week's
// queries. Each statement is one SQL execution: its start carries the
// statement as the description and the physical plan, whose Iceberg
// BatchScan nodes print the pushed filters as Iceberg's Spark3Util.describe
// does — dates as day numbers, timestamps as epoch microseconds, strings
// quoted — after Spark's inferred IS NOT NULL filters on nullable columns.

const sqlEventPrefix = "org.apache.spark.sql.execution.ui."

type sparkNode struct {
	NodeName     string            `json:"nodeName"`
	SimpleString string            `json:"simpleString"`
	Children     []*sparkNode      `json:"children"`
	Metadata     map[string]string `json:"metadata"`
	Metrics      []sparkMetric     `json:"metrics"`
}

type sparkMetric struct {
	Name          string `json:"name"`
	AccumulatorID int64  `json:"accumulatorId"`
	MetricType    string `json:"metricType"`
}

type sparkExecStart struct {
	Event                   string            `json:"Event"`
	ExecutionID             int64             `json:"executionId"`
	RootExecutionID         int64             `json:"rootExecutionId"`
	Description             string            `json:"description"`
	Details                 string            `json:"details"`
	PhysicalPlanDescription string            `json:"physicalPlanDescription"`
	SparkPlanInfo           *sparkNode        `json:"sparkPlanInfo"`
	Time                    int64             `json:"time"`
	ModifiedConfigs         map[string]string `json:"modifiedConfigs"`
	JobTags                 []string          `json:"jobTags"`
}

type sparkAQEUpdate struct {
	Event                   string     `json:"Event"`
	ExecutionID             int64      `json:"executionId"`
	PhysicalPlanDescription string     `json:"physicalPlanDescription"`
	SparkPlanInfo           *sparkNode `json:"sparkPlanInfo"`
}

type sparkExecEnd struct {
	Event        string  `json:"Event"`
	ExecutionID  int64   `json:"executionId"`
	Time         int64   `json:"time"`
	ErrorMessage *string `json:"errorMessage,omitempty"`
}

type sparkAccumUpdates struct {
	Event        string     `json:"Event"`
	ExecutionID  int64      `json:"executionId"`
	AccumUpdates [][2]int64 `json:"accumUpdates"`
}

type sparkJobStart struct {
	Event          string            `json:"Event"`
	JobID          int64             `json:"Job ID"`
	SubmissionTime int64             `json:"Submission Time"`
	StageInfos     []any             `json:"Stage Infos"`
	StageIDs       []int64           `json:"Stage IDs"`
	Properties     map[string]string `json:"Properties"`
}

type sparkJobEnd struct {
	Event          string         `json:"Event"`
	JobID          int64          `json:"Job ID"`
	CompletionTime int64          `json:"Completion Time"`
	JobResult      map[string]any `json:"Job Result"`
}

type sparkTaskEnd struct {
	Event          string            `json:"Event"`
	StageID        int64             `json:"Stage ID"`
	StageAttemptID int               `json:"Stage Attempt ID"`
	TaskType       string            `json:"Task Type"`
	TaskEndReason  map[string]string `json:"Task End Reason"`
	TaskInfo       sparkTaskInfo     `json:"Task Info"`
	TaskMetrics    sparkTaskMetrics  `json:"Task Metrics"`
}

type sparkTaskInfo struct {
	TaskID            int64  `json:"Task ID"`
	Index             int    `json:"Index"`
	Attempt           int    `json:"Attempt"`
	LaunchTime        int64  `json:"Launch Time"`
	ExecutorID        string `json:"Executor ID"`
	Host              string `json:"Host"`
	Locality          string `json:"Locality"`
	Speculative       bool   `json:"Speculative"`
	GettingResultTime int64  `json:"Getting Result Time"`
	FinishTime        int64  `json:"Finish Time"`
	Failed            bool   `json:"Failed"`
	Killed            bool   `json:"Killed"`
	Accumulables      []any  `json:"Accumulables"`
}

type sparkTaskMetrics struct {
	ExecutorDeserializeTime int64            `json:"Executor Deserialize Time"`
	ExecutorRunTime         int64            `json:"Executor Run Time"`
	ExecutorCPUTime         int64            `json:"Executor CPU Time"`
	ResultSize              int64            `json:"Result Size"`
	JVMGCTime               int64            `json:"JVM GC Time"`
	InputMetrics            map[string]int64 `json:"Input Metrics"`
	OutputMetrics           map[string]int64 `json:"Output Metrics"`
}

// longCols are bigint columns, which Spark prints as name#idL.
var longCols = map[string]bool{
	"event_id": true, "user_id": true, "o_orderkey": true, "o_custkey": true,
	"l_orderkey": true, "l_partkey": true, "l_suppkey": true, "account_id": true,
}

// sparkLog holds the running ids of one application's log.
type sparkLog struct {
	enc                    *json.Encoder
	lw                     *logWriter
	exec, job, stage, task int64
	accum, attr            int64
	catalog                string
	err                    error
}

func (sl *sparkLog) line(v any) {
	if sl.err != nil {
		return
	}
	sl.err = sl.enc.Encode(v)
}

func writeSpark(lw *logWriter, qs []*query) error {
	// The application id depends on Now: remove the logs of earlier runs so
	// that the directory holds one application.
	old, err := filepath.Glob(filepath.Join(lw.dir, "application_*_0001"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	start := lw.now.Add(-8 * 24 * time.Hour).Truncate(time.Hour).Add(17 * time.Minute)
	if len(qs) > 0 && qs[0].at.Before(start) {
		start = qs[0].at.Add(-time.Hour)
	}
	appID := fmt.Sprintf("application_%d_0001", start.UnixMilli()-int64(lw.r.IntN(86400000)))
	return lw.create(appID, func(w *bufio.Writer) error {
		sl := &sparkLog{enc: lineEncoder(w), lw: lw, catalog: engineCatalog[engSpark], accum: 100, attr: 0}
		sl.line(map[string]string{"Event": "SparkListenerLogStart", "Spark Version": "3.5.3"})
		sl.line(struct {
			Event   string `json:"Event"`
			AppName string `json:"App Name"`
			AppID   string `json:"App ID"`
			Time    int64  `json:"Timestamp"`
			User    string `json:"User"`
		}{"SparkListenerApplicationStart", "Thrift JDBC/ODBC Server", appID, start.UnixMilli(), "spark"})
		for _, q := range qs {
			sl.query(q)
			lw.event(q)
		}
		end := lw.now
		if n := len(qs); n > 0 && qs[n-1].at.Add(qs[n-1].elapsed).After(end) {
			end = qs[n-1].at.Add(qs[n-1].elapsed + time.Minute)
		}
		sl.line(struct {
			Event string `json:"Event"`
			Time  int64  `json:"Timestamp"`
		}{"SparkListenerApplicationEnd", end.UnixMilli()})
		return sl.err
	})
}

// query logs one SQL execution.
func (sl *sparkLog) query(q *query) {
	r := sl.lw.r
	id := sl.exec
	sl.exec++
	t0 := q.at.UnixMilli()
	t1 := q.at.Add(q.elapsed).UnixMilli()
	plan, scans := sl.plan(q)
	sl.line(sparkExecStart{
		Event: sqlEventPrefix + "SparkListenerSQLExecutionStart", ExecutionID: id, RootExecutionID: id,
		Description: q.sql(engSpark),
		Details: "org.apache.hive.service.cli.operation.ExecuteStatementOperation.runInternal(ExecuteStatementOperation.java:208)\n" +
			"org.apache.spark.sql.hive.thriftserver.SparkExecuteStatementOperation.execute(SparkExecuteStatementOperation.scala:226)",
		PhysicalPlanDescription: describePlan(plan, false),
		SparkPlanInfo:           plan, Time: t0, ModifiedConfigs: map[string]string{}, JobTags: []string{},
	})
	if len(scans) == 0 {
		sl.line(sparkExecEnd{Event: sqlEventPrefix + "SparkListenerSQLExecutionEnd", ExecutionID: id, Time: t1})
		return
	}
	final := finalPlan(plan)
	sl.line(sparkAQEUpdate{Event: sqlEventPrefix + "SparkListenerSQLAdaptiveExecutionUpdate", ExecutionID: id,
		PhysicalPlanDescription: describePlan(final, true), SparkPlanInfo: final})
	job := sl.job
	sl.job++
	stage := sl.stage
	sl.stage += 2
	sl.line(sparkJobStart{Event: "SparkListenerJobStart", JobID: job, SubmissionTime: t0 + 40, StageInfos: []any{},
		StageIDs: []int64{stage, stage + 1}, Properties: map[string]string{
			"spark.sql.execution.id": fmt.Sprint(id), "spark.job.description": firstLineOf(q.sql(engSpark)),
			"spark.sql.thriftserver.operation.id": uuid(r),
		}})
	var updates [][2]int64
	var files int64
	for _, s := range scans {
		files += s.result
		updates = append(updates, [2]int64{s.accum + 1, s.result}, [2]int64{s.accum + 2, s.skipped},
			[2]int64{s.accum + 3, 1 + s.result/40}, [2]int64{s.accum + 4, s.skipped / 40},
			[2]int64{s.accum + 5, s.bytes}, [2]int64{s.accum + 6, int64(5 + r.IntN(80))})
	}
	tasks := min(max(files, 1), 4)
	for i := range tasks {
		sl.task++
		run := (t1 - t0) * 6 / 10 / tasks
		sl.line(sparkTaskEnd{Event: "SparkListenerTaskEnd", StageID: stage, TaskType: "ShuffleMapTask",
			TaskEndReason: map[string]string{"Reason": "Success"},
			TaskInfo: sparkTaskInfo{TaskID: sl.task, Index: int(i), LaunchTime: t0 + 60, ExecutorID: fmt.Sprint(1 + r.IntN(4)),
				Host: fmt.Sprintf("10.0.2.%d", 11+r.IntN(4)), Locality: "PROCESS_LOCAL", FinishTime: t0 + 60 + run, Accumulables: []any{}},
			TaskMetrics: sparkTaskMetrics{ExecutorDeserializeTime: int64(2 + r.IntN(20)), ExecutorRunTime: run,
				ExecutorCPUTime: run * int64(400000+r.IntN(500000)), ResultSize: int64(2000 + r.IntN(3000)), JVMGCTime: int64(r.IntN(30)),
				InputMetrics:  map[string]int64{"Bytes Read": q.bytes / tasks, "Records Read": q.rows / tasks},
				OutputMetrics: map[string]int64{"Bytes Written": 0, "Records Written": 0}},
		})
	}
	jobEnd := sparkJobEnd{Event: "SparkListenerJobEnd", JobID: job, CompletionTime: t1 - 5, JobResult: map[string]any{"Result": "JobSucceeded"}}
	var errMsg *string
	if q.fail != failNone {
		msg := fmt.Sprintf("Job aborted due to stage failure: Task 2 in stage %d.0 failed 4 times, most recent failure: Lost task 2.3 in stage %d.0 (TID %d) (10.0.2.13 executor 3): "+
			"ExecutorLostFailure (executor 3 exited caused by one of the running tasks) Reason: Container killed by YARN for exceeding physical memory limits.", stage, stage, sl.task)
		jobEnd.JobResult = map[string]any{"Result": "JobFailed", "Exception": map[string]any{"Message": "org.apache.spark.SparkException: " + msg, "Stack Trace": []any{}}}
		full := "org.apache.spark.SparkException: " + msg + "\n\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)"
		errMsg = &full
	}
	sl.line(jobEnd)
	sl.line(sparkAccumUpdates{Event: sqlEventPrefix + "SparkListenerDriverAccumUpdates", ExecutionID: id, AccumUpdates: updates})
	sl.line(sparkExecEnd{Event: sqlEventPrefix + "SparkListenerSQLExecutionEnd", ExecutionID: id, Time: t1, ErrorMessage: errMsg})
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// scanInfo is one planned BatchScan and its metrics.
type scanInfo struct {
	accum                  int64
	result, skipped, bytes int64
}

// plan builds the initial adaptive plan of q and returns its scans.
func (sl *sparkLog) plan(q *query) (*sparkNode, []scanInfo) {
	if q.utility {
		return node("CommandResult", "CommandResult [col_name#0, data_type#1, comment#2]",
			node("DescribeTable", "DescribeTable [col_name#0, data_type#1, comment#2]")), nil
	}
	var scans []scanInfo
	var leaves []*sparkNode
	if q.meta != "" {
		name := sl.catalog + ".web.events." + q.meta
		cols := sl.attrs([]string{"committed_at", "snapshot_id", "parent_id", "operation", "manifest_list", "summary"})
		s := sl.batchScan(name, cols, "")
		leaves = append(leaves, s)
		scans = append(scans, scanInfo{accum: s.Metrics[0].AccumulatorID, result: 1, bytes: 4096})
		return node("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false",
			node("TakeOrderedAndProject", "TakeOrderedAndProject(limit=10, orderBy=[committed_at DESC NULLS LAST], output=[snapshot_id, committed_at, operation])", leaves...)), scans
	}
	// groupKey is the grouping attribute plans print for an aggregate: the
	// first returned column of the first scan.
	groupKey := ""
	for i, s := range q.scans {
		info := s.t.info()
		name := sl.catalog + "." + info.ns + "." + info.name
		attrs := sl.attrs(s.read)
		if i == 0 && len(s.out) > 0 {
			groupKey = attrs[0]
		}
		bs := sl.batchScan(name, attrs, pushedFilters(s))
		res, skip := s.dataFiles(q.at)
		scans = append(scans, scanInfo{accum: bs.Metrics[0].AccumulatorID, result: res, skipped: skip,
			bytes: int64(float64(info.bytes) * s.fraction(q.at))})
		var conds []string
		for _, p := range s.preds {
			conds = append(conds, sparkCond(p, attrs))
		}
		leaf := node("Filter", "Filter ("+strings.Join(conds, " AND ")+")", bs)
		leaf = node("Project", "Project ["+strings.Join(attrs[:min(len(attrs), max(1, len(s.out)))], ", ")+"]", leaf)
		leaves = append(leaves, leaf)
	}
	var body *sparkNode
	if len(leaves) == 2 {
		body = node("BroadcastHashJoin", "BroadcastHashJoin [l_orderkey], [o_orderkey], Inner, BuildLeft, false",
			node("BroadcastExchange", "BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, false]),false), [plan_id=12]", leaves[0]), leaves[1])
	} else {
		body = leaves[0]
	}
	if lookups[q.kind] {
		top := node("Sort", "Sort [1 ASC NULLS FIRST], true, 0",
			node("Exchange", "Exchange rangepartitioning(200), ENSURE_REQUIREMENTS, [plan_id=31]", body))
		return node("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false", top), scans
	}
	keys := "[" + groupKey + "]"
	agg := node("HashAggregate", "HashAggregate(keys="+keys+", functions=[partial_count(1)])", body)
	top := node("HashAggregate", "HashAggregate(keys="+keys+", functions=[count(1)])",
		node("Exchange", "Exchange hashpartitioning("+strings.Trim(keys, "[]")+", 200), ENSURE_REQUIREMENTS, [plan_id=27]", agg))
	return node("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false", top), scans
}

// lookups are the templates that return rows rather than aggregates.
var lookups = map[string]bool{"events-user": true, "lineitem-order": true, "orders-customer": true, "accounts-lookup": true}

// attrs gives each column an attribute id, as the analyzer does.
func (sl *sparkLog) attrs(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = fmt.Sprintf("%s#%d", c, sl.attr)
		if longCols[c] {
			out[i] += "L"
		}
		sl.attr++
	}
	return out
}

func (sl *sparkLog) batchScan(table string, attrs []string, filters string) *sparkNode {
	n := node("BatchScan "+table, fmt.Sprintf("BatchScan %s[%s] %s (branch=null) [filters=%s, groupedBy=] RuntimeFilters: []",
		table, strings.Join(attrs, ", "), table, filters))
	base := sl.accum
	sl.accum += 8
	const m = "v2Custom_org.apache.iceberg.spark.source.metrics."
	n.Metrics = []sparkMetric{
		{"number of output rows", base, "sum"},
		{"number of result data files", base + 1, m + "ResultDataFiles"},
		{"number of skipped data files", base + 2, m + "SkippedDataFiles"},
		{"number of scanned data manifests", base + 3, m + "ScannedDataManifests"},
		{"number of skipped data manifests", base + 4, m + "SkippedDataManifests"},
		{"total data file size (bytes)", base + 5, m + "TotalFileSize"},
		{"total planning duration (ms)", base + 6, m + "TotalPlanningDuration"},
	}
	return n
}

func node(name, simple string, children ...*sparkNode) *sparkNode {
	if children == nil {
		children = []*sparkNode{}
	}
	return &sparkNode{NodeName: name, SimpleString: simple, Children: children, Metadata: map[string]string{}, Metrics: []sparkMetric{}}
}

// finalPlan is the plan AQE reports once the shuffle stage ran: the same
// nodes (and metrics) under query stages.
func finalPlan(p *sparkNode) *sparkNode {
	c := *p
	c.SimpleString = "AdaptiveSparkPlan isFinalPlan=true"
	c.Children = make([]*sparkNode, len(p.Children))
	for i, ch := range p.Children {
		c.Children[i] = wrapStages(ch)
	}
	return &c
}

func wrapStages(n *sparkNode) *sparkNode {
	c := *n
	c.Children = make([]*sparkNode, len(n.Children))
	for i, ch := range n.Children {
		c.Children[i] = wrapStages(ch)
	}
	switch n.NodeName {
	case "Exchange":
		return node("ShuffleQueryStage", "ShuffleQueryStage 0", &c)
	case "BroadcastExchange":
		return node("BroadcastQueryStage", "BroadcastQueryStage 1", &c)
	}
	return &c
}

// describePlan is the formatted physical plan text ("== Physical Plan ==").
func describePlan(p *sparkNode, final bool) string {
	var b strings.Builder
	b.WriteString("== Physical Plan ==\n")
	// Operators are numbered bottom-up, as Spark's formatted explain does.
	var nodes []*sparkNode
	num := map[*sparkNode]int{}
	var number func(n *sparkNode)
	number = func(n *sparkNode) {
		for _, ch := range n.Children {
			number(ch)
		}
		nodes = append(nodes, n)
		num[n] = len(nodes)
	}
	number(p)
	var tree func(n *sparkNode, prefix string, first bool)
	tree = func(n *sparkNode, prefix string, first bool) {
		if first {
			b.WriteString(n.NodeName)
		} else {
			b.WriteString(prefix + "+- " + n.NodeName)
		}
		fmt.Fprintf(&b, " (%d)\n", num[n])
		for _, ch := range n.Children {
			next := prefix + "   "
			if first {
				next = ""
			}
			tree(ch, next, false)
		}
	}
	tree(p, "", true)
	b.WriteString("\n\n")
	for i, n := range nodes {
		if !strings.HasPrefix(n.NodeName, "BatchScan ") {
			continue
		}
		table := strings.TrimPrefix(n.NodeName, "BatchScan ")
		rest := strings.TrimPrefix(n.SimpleString, "BatchScan "+table)
		out, desc, _ := strings.Cut(rest, "] ")
		fmt.Fprintf(&b, "(%d) BatchScan %s\nOutput [%d]: %s]\n%s\n\n", i+1, table, strings.Count(out, "#"), out, strings.Replace(desc, " RuntimeFilters:", "\nRuntimeFilters:", 1))
	}
	if !final {
		b.WriteString("===== Subqueries =====\n")
	}
	return b.String()
}

// pushedFilters prints the filters Spark pushes to Iceberg for s, as
// Iceberg's Spark3Util.describe renders them.
func pushedFilters(s scan) string {
	info := s.t.info()
	var notNull, filters []string
	seen := map[string]bool{}
	for _, p := range s.preds {
		if p.op != "in" && !info.required[p.col] && !seen[p.col] {
			seen[p.col] = true
			notNull = append(notNull, p.col+" IS NOT NULL")
		}
		switch p.op {
		case "in":
			vs := make([]string, len(p.vals))
			for i, v := range p.vals {
				vs[i] = icebergLit(v)
			}
			filters = append(filters, p.col+" IN ("+strings.Join(vs, ", ")+")")
		case "like":
			filters = append(filters, p.col+" LIKE "+quote(p.vals[0].s))
		case "between":
			filters = append(filters, p.col+" >= "+icebergLit(p.vals[0]), p.col+" <= "+icebergLit(p.vals[1]))
		default:
			filters = append(filters, p.col+" "+p.op+" "+icebergLit(p.vals[0]))
		}
	}
	return strings.Join(append(notNull, filters...), ", ")
}

// icebergLit is a literal as Iceberg prints a Spark-converted value: dates
// as day numbers, timestamps as epoch microseconds.
func icebergLit(v lit) string {
	switch v.kind {
	case litStr:
		return quote(v.s)
	case litDate:
		return fmt.Sprint(v.t.Unix() / 86400)
	case litTS, litRelTS:
		return fmt.Sprint(v.t.UnixMicro())
	}
	return fmt.Sprint(v.n)
}

// sparkCond is a Filter node's condition text for p.
func sparkCond(p pred, attrs []string) string {
	a := p.col
	for _, x := range attrs {
		if strings.HasPrefix(x, p.col+"#") {
			a = x
		}
	}
	v := func(l lit) string {
		switch l.kind {
		case litStr:
			return l.s
		case litDate:
			return l.t.Format(time.DateOnly)
		case litTS, litRelTS:
			return l.t.UTC().Format("2006-01-02 15:04:05.999")
		}
		return fmt.Sprint(l.n)
	}
	switch p.op {
	case "in":
		vs := make([]string, len(p.vals))
		for i, l := range p.vals {
			vs[i] = v(l)
		}
		return a + " IN (" + strings.Join(vs, ",") + ")"
	case "like":
		return "StartsWith(" + a + ", " + strings.TrimSuffix(p.vals[0].s, "%") + ")"
	case "between":
		return "((" + a + " >= " + v(p.vals[0]) + ") AND (" + a + " <= " + v(p.vals[1]) + "))"
	}
	return "(" + a + " " + p.op + " " + v(p.vals[0]) + ")"
}
