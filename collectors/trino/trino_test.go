package trino_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/trino"
	"github.com/stretchr/testify/require"
)

var dir = filepath.Join("..", "..", "testdata", "logs", "trino")

func fx(name string) string { return filepath.Join(dir, name) }

var eventFixtures = []string{fx("kafka-completed.ndjson"), fx("http-events.ndjson"), fx("http-events-array.json"), fx("bad/http-events-bad.ndjson"),
	filepath.Join(dir, "..", "presto", "query-completed.ndjson")}

var runtimeFixtures = []string{fx("runtime-queries.csv"), fx("runtime-queries.json")}

func TestConformance(t *testing.T) {
	t.Run("trino-event", func(t *testing.T) { collectortest.Run(t, trino.EventParser{}, eventFixtures...) })
	t.Run("trino-runtime", func(t *testing.T) { collectortest.Run(t, trino.RuntimeParser{}, runtimeFixtures...) })
}

func ts(s string) time.Time {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return v.UTC()
}

func byID(evs []collectors.QueryEvent) map[string]collectors.QueryEvent {
	m := map[string]collectors.QueryEvent{}
	for _, e := range evs {
		m[e.QueryID] = e
	}
	return m
}

func TestEventKafka(t *testing.T) {
	evs, bad := collectortest.Parse(t, trino.EventParser{}, fx("kafka-completed.ndjson"))
	require.Empty(t, bad)
	require.Len(t, evs, 6, "five events plus one redelivery (dropped by Collect, not the parser)")
	m := byID(evs)

	snap := int64(3053316373432432132)
	want := collectors.QueryEvent{
		Source: "trino-event", Engine: collectors.EngineTrino, EngineVersion: "478",
		QueryID: "20240501_125130_00042_q7k3m", User: "alice",
		StartTime: ts("2024-05-01T12:51:30.123Z"), EndTime: ts("2024-05-01T12:51:33.512Z"),
		State: collectors.StateSucceeded, StatementType: "SELECT",
		SQL:            "SELECT o.order_id, o.amount FROM lake.sales.orders o WHERE o.order_date >= DATE '2024-04-01' AND o.customer_id = 42",
		DefaultCatalog: "lake", DefaultSchema: "sales",
		Tables: []collectors.TableAccess{{
			Catalog: "lake", Namespace: "sales", Name: "orders", Direct: true, SnapshotID: &snap,
			Columns: []collectors.ColumnUse{
				{Name: "order_id", Roles: []collectors.Role{collectors.RoleReferenced}, Evidence: collectors.EvidenceAnalysisRefs},
				{Name: "amount", Roles: []collectors.Role{collectors.RoleReferenced}, Evidence: collectors.EvidenceAnalysisRefs},
				{Name: "order_date", Roles: []collectors.Role{collectors.RoleReferenced, collectors.RoleFilter}, Evidence: collectors.EvidencePushedFilter},
				{Name: "customer_id", Roles: []collectors.Role{collectors.RoleReferenced}, Evidence: collectors.EvidenceAnalysisRefs},
			},
			FilterText: []string{"constraint on [order_date]"},
			Evidence:   collectors.EvidenceAnalysisRefs,
			Metrics:    collectors.TableMetrics{BytesScanned: 73400320, RowsScanned: 1250000},
		}},
		Metrics: collectors.QueryMetrics{ElapsedMs: 3377, CPUMs: 1212, QueuedMs: 4, BytesScanned: 73400320, RowsScanned: 1250000},
	}
	require.Equal(t, want, m["20240501_125130_00042_q7k3m"])

	tests := []struct {
		name  string
		id    string
		check func(t *testing.T, e collectors.QueryEvent)
	}{
		{"failed", "20240501_125201_00043_q7k3m", func(t *testing.T, e collectors.QueryEvent) {
			require.Equal(t, collectors.StateFailed, e.State)
			require.Equal(t, "USER_ERROR TABLE_NOT_FOUND: line 1:15: Table 'lake.sales.orderz' does not exist", e.Error)
			require.Empty(t, e.Tables)
			require.Equal(t, int64(52), e.Metrics.ElapsedMs)
		}},
		{"insert", "20240501_130000_00044_q7k3m", func(t *testing.T, e collectors.QueryEvent) {
			require.Equal(t, "INSERT", e.StatementType)
			require.Equal(t, "etl", e.User)
			require.Len(t, e.Tables, 2)
			require.Equal(t, "orders", e.Tables[0].Name)
			require.False(t, e.Tables[0].Write)
			require.Equal(t, "daily_totals", e.Tables[1].Name)
			require.True(t, e.Tables[1].Write)
		}},
		{"prepared", "20240501_130500_00045_q7k3m", func(t *testing.T, e collectors.QueryEvent) {
			require.Equal(t, "SELECT order_id FROM orders WHERE customer_id = ? AND region = ?", e.SQL)
			require.True(t, e.SQLTemplate)
			require.Equal(t, []string{"42", "eu"}, e.Params)
		}},
		{"view", "20240501_131000_00046_q7k3m", func(t *testing.T, e collectors.QueryEvent) {
			require.Empty(t, e.DefaultCatalog)
			require.Len(t, e.Tables, 2)
			require.Equal(t, "big_orders", e.Tables[0].Name)
			require.True(t, e.Tables[0].Direct)
			require.Equal(t, "orders", e.Tables[1].Name)
			require.False(t, e.Tables[1].Direct)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := m[tc.id]
			require.True(t, ok)
			tc.check(t, e)
		})
	}
}

func TestEventForms(t *testing.T) {
	tests := []struct {
		file  string
		ids   []string
		check func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord)
	}{
		{"http-events.ndjson", []string{"20240502_080000_00001_http1", "20240502_080100_00002_http1"}, func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord) {
			require.Empty(t, bad, "created and split events are skipped, not bad")
			require.Equal(t, ts("2024-05-02T08:00:00.123Z"), evs[0].StartTime)
			require.Equal(t, ts("2024-05-02T08:00:03.5Z"), evs[0].EndTime)
			require.Equal(t, ts("2024-05-02T08:01:01.25Z"), evs[1].EndTime)
		}},
		{"http-events-array.json", []string{"20240503_090000_00007_arr01", "20240501_125201_00043_q7k3m"}, func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord) {
			require.Empty(t, bad)
			require.Equal(t, collectors.QueryMetrics{ElapsedMs: 3380, CPUMs: 1212, QueuedMs: 4, BytesScanned: 73400320, RowsScanned: 1250000}, evs[0].Metrics)
			require.Equal(t, ts("2024-05-03T09:00:00Z"), evs[0].StartTime)
		}},
		{"bad/http-events-bad.ndjson", []string{"20240502_080000_00001_http1"}, func(t *testing.T, evs []collectors.QueryEvent, bad []collectors.BadRecord) {
			require.Len(t, bad, 3)
			require.Equal(t, []int{2, 3, 4}, []int{bad[0].Line, bad[1].Line, bad[2].Line})
			require.Contains(t, bad[0].Reason, "invalid JSON")
			require.Contains(t, bad[1].Reason, "not a Trino query event")
			require.Equal(t, fx("bad/http-events-bad.ndjson"), bad[0].File)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			evs, bad := collectortest.Parse(t, trino.EventParser{}, fx(tc.file))
			ids := make([]string, len(evs))
			for i, e := range evs {
				ids[i] = e.QueryID
			}
			require.Equal(t, tc.ids, ids)
			tc.check(t, evs, bad)
		})
	}
}

func TestRuntime(t *testing.T) {
	for _, file := range runtimeFixtures {
		t.Run(filepath.Base(file), func(t *testing.T) {
			evs, bad := collectortest.Parse(t, trino.RuntimeParser{}, file)
			require.Empty(t, bad)
			require.Len(t, evs, 4)
			e := evs[0]
			require.Equal(t, "20240504_101500_00011_rt001", e.QueryID)
			require.Equal(t, "trino-runtime", e.Source)
			require.Equal(t, "alice", e.User)
			require.Equal(t, ts("2024-05-04T10:15:00.12Z"), e.StartTime)
			require.Equal(t, ts("2024-05-04T10:15:02.79Z"), e.EndTime)
			require.Equal(t, collectors.StateSucceeded, e.State)
			require.Equal(t, "SELECT", e.StatementType)
			require.Equal(t, int64(2670), e.Metrics.ElapsedMs)
			require.Equal(t, int64(3), e.Metrics.QueuedMs)

			require.Equal(t, collectors.StateFailed, evs[1].State)
			require.Equal(t, "SELECT *\nFROM lake.sales.orders\nWHERE customer_id = 7, -- broken", evs[1].SQL)
			require.Equal(t, "USER_ERROR SYNTAX_ERROR", evs[1].Error)
			require.Equal(t, collectors.StateUnknown, evs[2].State, "running")
			require.True(t, evs[2].EndTime.IsZero())
			require.Equal(t, collectors.StateCancelled, evs[3].State)
		})
	}
}

func FuzzParse(f *testing.F) { collectortest.Fuzz(f, trino.EventParser{}, eventFixtures...) }

func FuzzParseRuntime(f *testing.F) { collectortest.Fuzz(f, trino.RuntimeParser{}, runtimeFixtures...) }

func TestRuntimeTSV(t *testing.T) {
	tsv := "query_id\tstate\tuser\tsource\tquery\tcreated\tend\terror_type\terror_code\n" +
		"20240504_1_00001_tsv01\tFINISHED\tzoe\ttrino-cli\tSELECT 1\t2024-05-04 10:15:00.120 UTC\t2024-05-04 10:15:01.120 UTC\t\t\n" +
		"20240504_1_00002_tsv01\tFINISHED\tzoe\ttrino-cli\tSELECT 2\tnot a time\t\t\t\n"
	path := filepath.Join(t.TempDir(), "queries.tsv")
	require.NoError(t, os.WriteFile(path, []byte(tsv), 0o644))
	require.True(t, trino.RuntimeParser{}.Detect("queries.tsv", []byte(tsv)))
	require.False(t, trino.EventParser{}.Detect("queries.tsv", []byte(tsv)))
	evs, bad := collectortest.Parse(t, trino.RuntimeParser{}, path)
	require.Len(t, evs, 1)
	require.Equal(t, int64(1000), evs[0].Metrics.ElapsedMs)
	require.Len(t, bad, 1)
	require.Equal(t, 3, bad[0].Line)
	require.Contains(t, bad[0].Reason, "created")
}
