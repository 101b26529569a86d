package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Trino's HTTP event listener serializes QueryCompletedEvent with a plain
// Jackson mapper: Instants and Durations as decimal seconds with nine
// fraction digits, absent Optionals omitted. Only completed events are
// logged (http-event-listener.log-completed=true).

// jsecs is a java.time.Instant or Duration as Jackson writes it.
type jsecs int64 // nanoseconds

func (s jsecs) MarshalJSON() ([]byte, error) {
	n := max(int64(s), 0)
	return []byte(fmt.Sprintf("%d.%09d", n/1e9, n%1e9)), nil
}

func instant(t time.Time) jsecs { return jsecs(t.UnixNano()) }

type trinoEvent struct {
	Metadata           trinoMetadata   `json:"metadata"`
	Statistics         trinoStatistics `json:"statistics"`
	Context            trinoContext    `json:"context"`
	IOMetadata         trinoIO         `json:"ioMetadata"`
	FailureInfo        *trinoFailure   `json:"failureInfo,omitempty"`
	Warnings           []string        `json:"warnings"`
	CreateTime         jsecs           `json:"createTime"`
	ExecutionStartTime jsecs           `json:"executionStartTime"`
	EndTime            jsecs           `json:"endTime"`
}

type trinoMetadata struct {
	QueryID       string       `json:"queryId"`
	TransactionID string       `json:"transactionId"`
	Query         string       `json:"query"`
	QueryState    string       `json:"queryState"`
	URI           string       `json:"uri"`
	Tables        []trinoTable `json:"tables"`
	Routines      []string     `json:"routines"`
}

type trinoTable struct {
	Catalog            string        `json:"catalog"`
	Schema             string        `json:"schema"`
	Table              string        `json:"table"`
	Authorization      string        `json:"authorization"`
	Filters            []string      `json:"filters"`
	Columns            []trinoColumn `json:"columns"`
	DirectlyReferenced bool          `json:"directlyReferenced"`
	ReferenceChain     []string      `json:"referenceChain"`
}

type trinoColumn struct {
	Column string `json:"column"`
}

type trinoStatistics struct {
	CPUTime                jsecs    `json:"cpuTime"`
	FailedCPUTime          jsecs    `json:"failedCpuTime"`
	WallTime               jsecs    `json:"wallTime"`
	QueuedTime             jsecs    `json:"queuedTime"`
	ScheduledTime          jsecs    `json:"scheduledTime"`
	AnalysisTime           jsecs    `json:"analysisTime"`
	PlanningTime           jsecs    `json:"planningTime"`
	ExecutionTime          jsecs    `json:"executionTime"`
	PeakUserMemoryBytes    int64    `json:"peakUserMemoryBytes"`
	PeakTaskUserMemory     int64    `json:"peakTaskUserMemory"`
	PeakTaskTotalMemory    int64    `json:"peakTaskTotalMemory"`
	PhysicalInputBytes     int64    `json:"physicalInputBytes"`
	PhysicalInputRows      int64    `json:"physicalInputRows"`
	ProcessedInputBytes    int64    `json:"processedInputBytes"`
	ProcessedInputRows     int64    `json:"processedInputRows"`
	InternalNetworkBytes   int64    `json:"internalNetworkBytes"`
	InternalNetworkRows    int64    `json:"internalNetworkRows"`
	TotalBytes             int64    `json:"totalBytes"`
	TotalRows              int64    `json:"totalRows"`
	OutputBytes            int64    `json:"outputBytes"`
	OutputRows             int64    `json:"outputRows"`
	WrittenBytes           int64    `json:"writtenBytes"`
	WrittenRows            int64    `json:"writtenRows"`
	CumulativeMemory       float64  `json:"cumulativeMemory"`
	FailedCumulativeMemory float64  `json:"failedCumulativeMemory"`
	StageGcStatistics      []string `json:"stageGcStatistics"`
	CompletedSplits        int      `json:"completedSplits"`
	Complete               bool     `json:"complete"`
	CPUTimeDistribution    []string `json:"cpuTimeDistribution"`
	OperatorSummaries      []string `json:"operatorSummaries"`
}

type trinoContext struct {
	User                string            `json:"user"`
	OriginalUser        string            `json:"originalUser"`
	Principal           string            `json:"principal"`
	EnabledRoles        []string          `json:"enabledRoles"`
	Groups              []string          `json:"groups"`
	RemoteClientAddress string            `json:"remoteClientAddress"`
	UserAgent           string            `json:"userAgent"`
	Source              string            `json:"source"`
	Timezone            string            `json:"timezone"`
	Catalog             string            `json:"catalog"`
	Schema              string            `json:"schema"`
	ResourceGroupID     []string          `json:"resourceGroupId"`
	ClientTags          []string          `json:"clientTags"`
	ClientCapabilities  []string          `json:"clientCapabilities"`
	SessionProperties   map[string]string `json:"sessionProperties"`
	ResourceEstimates   map[string]string `json:"resourceEstimates"`
	ServerAddress       string            `json:"serverAddress"`
	ServerVersion       string            `json:"serverVersion"`
	Environment         string            `json:"environment"`
	QueryType           string            `json:"queryType"`
	RetryPolicy         string            `json:"retryPolicy"`
}

type trinoIO struct {
	Inputs []trinoInput `json:"inputs"`
}

type trinoInput struct {
	CatalogName        string                    `json:"catalogName"`
	Schema             string                    `json:"schema"`
	Table              string                    `json:"table"`
	Columns            []string                  `json:"columns"`
	ConnectorInfo      map[string]int64          `json:"connectorInfo"`
	ConnectorMetrics   map[string]map[string]any `json:"connectorMetrics"`
	PhysicalInputBytes int64                     `json:"physicalInputBytes"`
	PhysicalInputRows  int64                     `json:"physicalInputRows"`
}

type trinoErrorCode struct {
	Code int    `json:"code"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type trinoFailure struct {
	ErrorCode      trinoErrorCode `json:"errorCode"`
	FailureType    string         `json:"failureType"`
	FailureMessage string         `json:"failureMessage"`
	FailureHost    string         `json:"failureHost,omitempty"`
	FailuresJSON   string         `json:"failuresJson"`
}

var trinoUsers = []struct{ user, source, agent string }{
	{"alice", "trino-cli", "Trino CLI/476"},
	{"bob", "DBeaver 24.2.0 - SQLEditor <Script-3.sql>", "Trino JDBC Driver/476"},
	{"carol", "trino-cli", "Trino CLI/476"},
	{"dave", "DBeaver 24.2.0 - Main", "Trino JDBC Driver/476"},
	{"superset", "Apache Superset", "python-requests/2.32.3"},
	{"superset", "Apache Superset", "python-requests/2.32.3"},
	{"looker", "Looker", "Trino JDBC Driver/476"},
	{"airflow", "trino-python-client", "python-requests/2.32.3"},
}

// snapshotID is the table's current snapshot when a query at t planned:
// web.events gets a new snapshot every few minutes, the others rarely.
func snapshotID(t tableID, at time.Time) int64 {
	step := 7 * 24 * time.Hour
	if t == tEvents {
		step = 30 * time.Minute
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s.%s@%d", t.info().ns, t.info().name, at.Truncate(step).Unix())
	return int64(h.Sum64() >> 1)
}

func randHex(r *rand.Rand, n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

func uuid(r *rand.Rand) string {
	return randHex(r, 8) + "-" + randHex(r, 4) + "-4" + randHex(r, 3) + "-" + "89ab"[r.IntN(4):][:1] + randHex(r, 3) + "-" + randHex(r, 12)
}

func writeTrino(lw *logWriter, qs []*query) error {
	return lw.create("http-event-listener.ndjson", func(w *bufio.Writer) error {
		enc := lineEncoder(w)
		day, counter := "", 0
		for _, q := range qs {
			ev := trinoCompleted(lw, q)
			d := q.at.UTC().Format("20060102")
			if d != day {
				day, counter = d, 0 // the coordinator restarts nightly
			}
			counter++
			ev.Metadata.QueryID = q.at.UTC().Format("20060102_150405") + fmt.Sprintf("_%05d_", counter) + "q7k3m"
			ev.Metadata.URI = "http://trino-coordinator.internal:8080/v1/query/" + ev.Metadata.QueryID
			if err := enc.Encode(ev); err != nil {
				return err
			}
			lw.event(q)
		}
		return nil
	})
}

func trinoCompleted(lw *logWriter, q *query) trinoEvent {
	r := lw.r
	u := trinoUsers[q.user]
	wall := q.elapsed
	queued := min(time.Duration(1+r.IntN(40))*time.Millisecond, wall/5)
	analysis := min(time.Duration(5+r.IntN(60))*time.Millisecond, wall/5)
	planning := min(time.Duration(10+r.IntN(150))*time.Millisecond, wall/5)
	cpu := time.Duration(float64(wall) * (0.3 + 1.5*r.Float64()))
	ev := trinoEvent{
		Metadata: trinoMetadata{
			TransactionID: uuid(r),
			Query:         q.sql(engTrino),
			QueryState:    "FINISHED",
			Tables:        []trinoTable{},
			Routines:      []string{},
		},
		Statistics: trinoStatistics{
			CPUTime: jsecs(cpu), WallTime: jsecs(wall), QueuedTime: jsecs(queued), ScheduledTime: jsecs(cpu + cpu/3),
			AnalysisTime: jsecs(analysis), PlanningTime: jsecs(planning), ExecutionTime: jsecs(wall - queued),
			PeakUserMemoryBytes: 1<<20 + r.Int64N(64<<20), PeakTaskUserMemory: 1<<20 + r.Int64N(16<<20), PeakTaskTotalMemory: 2<<20 + r.Int64N(32<<20),
			PhysicalInputBytes: q.bytes, PhysicalInputRows: q.rows, ProcessedInputBytes: q.bytes, ProcessedInputRows: q.rows,
			InternalNetworkBytes: q.bytes / 20, InternalNetworkRows: q.rows / 50, TotalBytes: q.bytes, TotalRows: q.rows,
			OutputBytes: 200 + r.Int64N(20000), OutputRows: 1 + r.Int64N(200),
			CumulativeMemory: float64(r.Int64N(5e9)), StageGcStatistics: []string{}, CompletedSplits: 1 + int(q.bytes>>20)*4 + r.IntN(8),
			Complete: true, CPUTimeDistribution: []string{}, OperatorSummaries: []string{},
		},
		Context: trinoContext{
			User: u.user, OriginalUser: u.user, Principal: u.user, EnabledRoles: []string{}, Groups: []string{},
			RemoteClientAddress: fmt.Sprintf("10.0.3.%d", 10+q.user), UserAgent: u.agent, Source: u.source, Timezone: "UTC",
			Catalog: "iceberg", Schema: q.ns(), ResourceGroupID: []string{"global", u.user},
			ClientTags: []string{}, ClientCapabilities: []string{"PATH", "PARAMETRIC_DATETIME", "SESSION_AUTHORIZATION"},
			SessionProperties: map[string]string{}, ResourceEstimates: map[string]string{},
			ServerAddress: "10.0.1.5", ServerVersion: "476", Environment: "prod", QueryType: "SELECT", RetryPolicy: "NONE",
		},
		IOMetadata: trinoIO{Inputs: []trinoInput{}},
		Warnings:   []string{},
		CreateTime: instant(q.at),
	}
	if q.utility {
		ev.Context.QueryType = "DESCRIBE"
	}
	ev.ExecutionStartTime = instant(q.at.Add(queued + analysis + planning))
	ev.EndTime = instant(q.at.Add(wall))
	for _, s := range q.scans {
		info := s.t.info()
		cols := make([]trinoColumn, len(s.read))
		for i, c := range s.read {
			cols[i] = trinoColumn{c}
		}
		ev.Metadata.Tables = append(ev.Metadata.Tables, trinoTable{
			Catalog: "iceberg", Schema: info.ns, Table: info.name, Authorization: "etl",
			Filters: []string{}, Columns: cols, DirectlyReferenced: true, ReferenceChain: []string{},
		})
		f := s.fraction(q.at)
		ev.IOMetadata.Inputs = append(ev.IOMetadata.Inputs, trinoInput{
			CatalogName: "iceberg", Schema: info.ns, Table: info.name, Columns: s.read,
			ConnectorInfo:      map[string]int64{"snapshotId": snapshotID(s.t, q.at)},
			ConnectorMetrics:   map[string]map[string]any{"metrics": {}},
			PhysicalInputBytes: q.bytes / int64(len(q.scans)), PhysicalInputRows: int64(float64(info.rows) * f),
		})
	}
	if q.meta != "" {
		name := "events$" + q.meta
		cols := []trinoColumn{{"snapshot_id"}, {"committed_at"}, {"operation"}, {"summary"}}
		ev.Metadata.Tables = append(ev.Metadata.Tables, trinoTable{
			Catalog: "iceberg", Schema: "web", Table: name, Authorization: "etl",
			Filters: []string{}, Columns: cols, DirectlyReferenced: true, ReferenceChain: []string{},
		})
		ev.IOMetadata.Inputs = append(ev.IOMetadata.Inputs, trinoInput{
			CatalogName: "iceberg", Schema: "web", Table: name, Columns: []string{"snapshot_id", "committed_at", "operation", "summary"},
			ConnectorInfo: map[string]int64{}, ConnectorMetrics: map[string]map[string]any{"metrics": {}},
		})
	}
	if q.fail != failNone {
		ev.Metadata.QueryState = "FAILED"
		ev.Statistics.Complete = false
		var code trinoErrorCode
		var msg string
		switch q.fail {
		case failColumn:
			code, msg = trinoErrorCode{47, "COLUMN_NOT_FOUND", "USER_ERROR"}, "line 1:8: Column 'tenant' cannot be resolved"
		case failTable:
			code, msg = trinoErrorCode{46, "TABLE_NOT_FOUND", "USER_ERROR"}, "line 1:15: Table 'iceberg.web.event' does not exist"
		default:
			code, msg = trinoErrorCode{3, "USER_CANCELED", "USER_ERROR"}, "Query was canceled"
		}
		ev.FailureInfo = &trinoFailure{
			ErrorCode: code, FailureType: "io.trino.spi.TrinoException", FailureMessage: msg,
			FailuresJSON: failuresJSON(msg),
		}
		if q.fail == failColumn || q.fail == failTable {
			ev.ExecutionStartTime = ev.CreateTime
			ev.Statistics.PhysicalInputBytes, ev.Statistics.PhysicalInputRows = 0, 0
			ev.Statistics.ProcessedInputBytes, ev.Statistics.ProcessedInputRows = 0, 0
			ev.Statistics.TotalBytes, ev.Statistics.TotalRows, ev.Statistics.OutputRows, ev.Statistics.OutputBytes = 0, 0, 0, 0
		}
	}
	return ev
}

// failuresJSON is the listener's failuresJson: the failure chain as a JSON
// string.
func failuresJSON(msg string) string {
	b, err := json.Marshal(struct {
		Type       string   `json:"type"`
		Message    string   `json:"message"`
		Suppressed []string `json:"suppressed"`
		Stack      []string `json:"stack"`
	}{"io.trino.spi.TrinoException", msg, []string{}, []string{}})
	if err != nil {
		return "[]"
	}
	return string(b)
}
