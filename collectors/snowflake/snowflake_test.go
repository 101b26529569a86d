package snowflake_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/snowflake"
)

const fixtures = "../../testdata/logs/snowflake"

var allFixtures = []string{"query_history.csv", "query_history.tsv", "access_history.csv", "access_history.ndjson", "joined.json"}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type result struct {
	events []collectors.QueryEvent
	bad    []collectors.BadRecord
}

func (r *result) emit(e collectors.QueryEvent) error  { r.events = append(r.events, e); return nil }
func (r *result) addBad(b collectors.BadRecord) error { r.bad = append(r.bad, b); return nil }

func (r *result) byID() map[string]collectors.QueryEvent {
	m := map[string]collectors.QueryEvent{}
	for _, e := range r.events {
		m[e.QueryID] = e
	}
	return m
}

func read(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, file))
	require.NoError(t, err)
	return data
}

func parseWith(t testing.TB, p collectors.Parser, res *result, file string, data []byte) {
	t.Helper()
	require.True(t, p.Detect(file, data), "detect %s", file)
	require.NoError(t, p.Parse(context.Background(), file, bytes.NewReader(data), res.emit, res.addBad))
}

func parseFile(t testing.TB, file string) *result {
	t.Helper()
	res := &result{}
	parseWith(t, snowflake.Parser{}, res, file, read(t, file))
	return res
}

func utc(s string) time.Time {
	v, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return v
}

func TestQueryHistoryCSV(t *testing.T) {
	res := parseFile(t, "query_history.csv")
	require.Len(t, res.events, 4)
	require.Len(t, res.bad, 1)
	require.Equal(t, 9, res.bad[0].Line)
	require.Contains(t, res.bad[0].Reason, "2 fields")

	ev := res.byID()["01b3f1a2-0001-8c3e-0000-00012f0a9c21"]
	require.Equal(t, "snowflake", ev.Source)
	require.Equal(t, collectors.EngineSnowflake, ev.Engine)
	require.Equal(t, utc("2024-05-01 12:51:30.123"), ev.StartTime)
	require.Equal(t, utc("2024-05-01 12:51:33.500"), ev.EndTime)
	require.Equal(t, time.UTC, ev.StartTime.Location())
	require.Equal(t, collectors.StateSucceeded, ev.State)
	require.Equal(t, "SELECT", ev.StatementType)
	require.Equal(t, "ALICE", ev.User)
	require.Equal(t, "LAKE", ev.DefaultCatalog)
	require.Equal(t, "SALES", ev.DefaultSchema)
	require.False(t, ev.SQLTruncated)
	require.False(t, ev.SQLTemplate)
	require.Equal(t, collectors.QueryMetrics{ElapsedMs: 3377, BytesScanned: 73400320, PartitionsScanned: 12, PartitionsTotal: 480}, ev.Metrics)
	require.Empty(t, ev.Tables)

	multi := res.byID()["01b3f1a2-0001-8c3e-0000-00012f0a9c22"]
	require.Equal(t, "-- regional totals for the dashboard\nselect region, total\nfrom reporting.region_totals\nwhere quarter = 'Q2'", multi.SQL)
	require.Equal(t, "SELECT", multi.StatementType)

	failed := res.byID()["01b3f1a2-0001-8c3e-0000-00012f0a9c23"]
	require.Equal(t, collectors.StateFailed, failed.State)
	require.True(t, failed.SQLTemplate)

	require.Equal(t, "INSERT", res.byID()["01b3f1a2-0001-8c3e-0000-00012f0a9c24"].StatementType)
}

func TestQueryHistoryTSVLowerCase(t *testing.T) {
	res := parseFile(t, "query_history.tsv")
	require.Empty(t, res.bad)
	require.Len(t, res.events, 3)
	byID := res.byID()

	cancelled := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c31"]
	require.Equal(t, collectors.StateCancelled, cancelled.State)
	require.Equal(t, "000604: SQL execution canceled", cancelled.Error)
	require.Equal(t, utc("2024-05-02 07:00:00.000"), cancelled.StartTime)
	require.True(t, cancelled.SQLTemplate, ":1 bind")
	require.Equal(t, int64(1500), cancelled.Metrics.QueuedMs)
	require.Equal(t, "8.17.2", cancelled.EngineVersion)

	incident := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c32"]
	require.Equal(t, collectors.StateFailed, incident.State)
	require.Contains(t, incident.Error, "incident 4821939")
	require.False(t, incident.SQLTemplate, "variant path and :: cast are not binds")
	require.Equal(t, int64(250), incident.Metrics.QueuedMs)

	ctas := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c33"]
	require.Equal(t, "CTAS", ctas.StatementType)
	require.Equal(t, collectors.StateSucceeded, ctas.State)
	require.Empty(t, ctas.Error)
	require.Equal(t, utc("2024-05-02 09:00:00.000"), ctas.StartTime)
}

func cols(ta collectors.TableAccess) map[string]collectors.Role {
	m := map[string]collectors.Role{}
	for _, c := range ta.Columns {
		if c.Evidence != collectors.EvidenceAccessHistory || len(c.Roles) != 1 {
			panic("unexpected column use")
		}
		m[c.Name] = c.Roles[0]
	}
	return m
}

func TestAccessHistoryCSV(t *testing.T) {
	res := parseFile(t, "access_history.csv")
	require.Len(t, res.events, 3)
	require.Len(t, res.bad, 1)
	require.Contains(t, res.bad[0].Reason, "DIRECT_OBJECTS_ACCESSED")
	require.Equal(t, 48, res.bad[0].Line)
	byID := res.byID()

	ev := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c21"]
	require.Equal(t, collectors.StateUnknown, ev.State)
	require.Equal(t, "SELECT", ev.StatementType)
	require.Equal(t, utc("2024-05-01 12:51:30.123"), ev.StartTime)
	require.Len(t, ev.Tables, 1)
	ta := ev.Tables[0]
	require.Equal(t, "LAKE.SALES.ORDERS", ta.QualifiedName())
	require.True(t, ta.Direct)
	require.Equal(t, collectors.EvidenceAccessHistory, ta.Evidence)
	require.Equal(t, map[string]collectors.Role{
		"ORDER_DATE": collectors.RoleFilter, "CUSTOMER_ID": collectors.RoleFilter,
		"ORDER_ID": collectors.RoleProjection, "AMOUNT": collectors.RoleProjection,
	}, cols(ta))

	view := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c22"]
	require.Len(t, view.Tables, 1, "the view and the function are not tables")
	require.False(t, view.Tables[0].Direct, "reached through the view")
	require.Equal(t, map[string]collectors.Role{
		"AMOUNT": collectors.RoleFilter, "ORDER_DATE": collectors.RoleFilter, "REGION": collectors.RoleFilter,
	}, cols(view.Tables[0]))

	quoted := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c25"]
	require.Len(t, quoted.Tables, 1)
	require.Equal(t, "LAKE", quoted.Tables[0].Catalog)
	require.Equal(t, "Sales.EU", quoted.Tables[0].Namespace)
	require.Equal(t, "ORDERS", quoted.Tables[0].Name)
	require.Equal(t, map[string]collectors.Role{"ORDER_ID": collectors.RoleFilter}, cols(quoted.Tables[0]), "TRUNCATED marker dropped")
}

func TestAccessHistoryNDJSON(t *testing.T) {
	res := parseFile(t, "access_history.ndjson")
	require.Len(t, res.events, 3)
	require.Len(t, res.bad, 1)
	require.Equal(t, 4, res.bad[0].Line)
	byID := res.byID()

	ctas := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c33"]
	require.Equal(t, "01b3f1a2-0001-8c3e-0000-00012f0a9c30", ctas.RootQueryID)
	require.Equal(t, "OTHER", ctas.StatementType, "it modified a table")
	require.Len(t, ctas.Tables, 2)
	require.False(t, ctas.Tables[0].Write)
	require.Equal(t, "LAKE.EVENTS.DAILY", ctas.Tables[1].QualifiedName())
	require.True(t, ctas.Tables[1].Write)
	require.Empty(t, ctas.Tables[1].Columns)

	// VARIANT cells given as JSON text inside strings.
	str := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c34"]
	require.Len(t, str.Tables, 1)
	require.Equal(t, map[string]collectors.Role{"TENANT_ID": collectors.RoleFilter, "KIND": collectors.RoleProjection}, cols(str.Tables[0]))
}

func TestJoinedExport(t *testing.T) {
	res := parseFile(t, "joined.json")
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	ev := res.events[0]
	require.Equal(t, collectors.StateSucceeded, ev.State)
	require.Equal(t, int64(52428800), ev.Metrics.BytesScanned)
	require.Equal(t, utc("2024-05-03 15:00:00.500"), ev.StartTime)
	require.Len(t, ev.Tables, 1)
	require.Equal(t, map[string]collectors.Role{
		"TENANT_ID": collectors.RoleProjection, "EVENT_DATE": collectors.RoleFilter, "KIND": collectors.RoleFilter,
	}, cols(ev.Tables[0]))
}

func TestJoiner(t *testing.T) {
	orders := map[string][]string{
		"history first": {"query_history.csv", "query_history.tsv", "access_history.csv", "access_history.ndjson"},
		"access first":  {"access_history.ndjson", "access_history.csv", "query_history.tsv", "query_history.csv"},
	}
	for name, files := range orders {
		t.Run(name, func(t *testing.T) {
			j := snowflake.NewJoiner()
			live := &result{}
			for _, f := range files {
				parseWith(t, j, live, f, read(t, f))
			}
			require.Len(t, live.bad, 3)
			joinedIDs := []string{}
			for _, e := range live.events {
				joinedIDs = append(joinedIDs, e.QueryID)
			}
			require.ElementsMatch(t, []string{
				"01b3f1a2-0001-8c3e-0000-00012f0a9c21", "01b3f1a2-0001-8c3e-0000-00012f0a9c22",
				"01b3f1a2-0001-8c3e-0000-00012f0a9c31", "01b3f1a2-0001-8c3e-0000-00012f0a9c33",
			}, joinedIDs)
			// c23, c24 and c32 have no access row; c25 and c34 no history row.
			require.Equal(t, 5, j.Pending())

			flushed := &result{}
			require.NoError(t, j.Flush(flushed.emit))
			require.Zero(t, j.Pending())
			require.Len(t, flushed.events, 5)
			all := append(live.events, flushed.events...)
			seen := map[string]bool{}
			for _, e := range all {
				require.False(t, seen[e.QueryID], "query %s emitted twice", e.QueryID)
				seen[e.QueryID] = true
			}

			byID := (&result{events: all}).byID()
			ev := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c21"]
			require.Equal(t, collectors.StateSucceeded, ev.State, "history half")
			require.Equal(t, int64(73400320), ev.Metrics.BytesScanned)
			require.Equal(t, "select order_id, amount from orders where order_date >= '2024-04-01' and customer_id = 42", ev.SQL)
			require.Len(t, ev.Tables, 1, "access half")
			require.Equal(t, collectors.RoleFilter, cols(ev.Tables[0])["CUSTOMER_ID"])

			ctas := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c33"]
			require.Equal(t, "CTAS", ctas.StatementType, "history wins over the access guess")
			require.Equal(t, "01b3f1a2-0001-8c3e-0000-00012f0a9c30", ctas.RootQueryID)
			require.Len(t, ctas.Tables, 2)

			onlyHistory := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c24"]
			require.Equal(t, collectors.StateSucceeded, onlyHistory.State)
			require.Empty(t, onlyHistory.Tables)
			onlyAccess := byID["01b3f1a2-0001-8c3e-0000-00012f0a9c25"]
			require.Equal(t, collectors.StateUnknown, onlyAccess.State)
			require.Len(t, onlyAccess.Tables, 1)

			// A half read again after its query was emitted is dropped.
			again := &result{}
			parseWith(t, j, again, "access_history.csv", read(t, "access_history.csv"))
			require.Empty(t, again.events)
			require.NoError(t, j.Flush(again.emit))
			require.Empty(t, again.events)
		})
	}
}

func TestJoinerFlushError(t *testing.T) {
	j := snowflake.NewJoiner()
	res := &result{}
	parseWith(t, j, res, "query_history.csv", read(t, "query_history.csv"))
	require.Empty(t, res.events)
	stop := errors.New("sink full")
	n := 0
	err := j.Flush(func(collectors.QueryEvent) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
	require.Equal(t, 3, j.Pending())
}

func TestUnfinishedSkipped(t *testing.T) {
	data := "QUERY_ID,QUERY_TEXT,EXECUTION_STATUS,START_TIME\n" +
		"q1,select 1,RUNNING,2024-05-01 00:00:00.000 +0000\n" +
		"q2,select 2,QUEUED,2024-05-01 00:00:00.000 +0000\n" +
		"q3,select 3,,2024-05-01 00:00:00.000 +0000\n" +
		"q4,select 4,SUCCESS,2024-05-01 00:00:00.000 +0000\n"
	for _, p := range []collectors.Parser{snowflake.Parser{}, snowflake.NewJoiner()} {
		res := &result{}
		parseWith(t, p, res, "qh.csv", []byte(data))
		if j, ok := p.(*snowflake.Joiner); ok {
			require.NoError(t, j.Flush(res.emit))
		}
		require.Empty(t, res.bad)
		require.Len(t, res.events, 2)
		require.Equal(t, collectors.StateUnknown, res.byID()["q3"].State, "no status: kept as unknown")
		require.Equal(t, collectors.StateSucceeded, res.byID()["q4"].State)
	}
}

func TestTruncatedText(t *testing.T) {
	for _, n := range []int{snowflake.MaxQueryTextChars - 1, snowflake.MaxQueryTextChars} {
		// Multi-byte characters: the limit counts characters, not bytes.
		sql := "select '" + strings.Repeat("é", n-len("select ''")) + "'"
		data := "QUERY_ID,QUERY_TEXT,START_TIME\nq1,\"" + sql + "\",2024-05-01 00:00:00.000 +0000\n"
		res := &result{}
		parseWith(t, snowflake.Parser{}, res, "qh.csv", []byte(data))
		require.Len(t, res.events, 1)
		require.Equal(t, n >= snowflake.MaxQueryTextChars, res.events[0].SQLTruncated, "length %d", n)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"upper csv", "QUERY_ID,QUERY_TEXT,START_TIME\n", true},
		{"quoted lower csv", "\"query_id\",\"base_objects_accessed\"\n", true},
		{"tsv", "query_id\tdirect_objects_accessed\n", true},
		{"json", `[{"Query_Id":"x","Query_Text":"select 1"}]`, true},
		{"trino runtime", "query_id,state,user,source,query,created\n", false},
		{"athena", `{"QueryExecutionId":"x","Query":"select 1"}`, false},
		{"only id", "QUERY_ID\nx\n", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, snowflake.Parser{}.Detect("f", []byte(tt.head)))
			require.Equal(t, tt.want, snowflake.NewJoiner().Detect("f", []byte(tt.head)))
		})
	}
}

func TestConformance(t *testing.T) {
	paths := make([]string, 0, len(allFixtures))
	for _, f := range allFixtures {
		paths = append(paths, filepath.Join(fixtures, f))
	}
	collectortest.Run(t, snowflake.Parser{}, paths...)
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range allFixtures {
		err := snowflake.Parser{}.Parse(ctx, f, bytes.NewReader(read(t, f)),
			func(collectors.QueryEvent) error { return nil }, func(collectors.BadRecord) error { return nil })
		require.ErrorIs(t, err, context.Canceled, f)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range allFixtures {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = snowflake.Parser{}.Detect("f", data)
		j := snowflake.NewJoiner()
		check := func(e collectors.QueryEvent) error {
			if e.QueryID == "" || e.StartTime.IsZero() || e.StartTime.Location() != time.UTC || e.StatementType == "" {
				t.Fatalf("bad event %+v", e)
			}
			return nil
		}
		for _, p := range []collectors.Parser{snowflake.Parser{}, j} {
			if err := p.Parse(context.Background(), "f", bytes.NewReader(data), check, func(collectors.BadRecord) error { return nil }); err != nil {
				t.Fatalf("parse: %v", err)
			}
		}
		if err := j.Flush(check); err != nil {
			t.Fatal(err)
		}
	})
}
