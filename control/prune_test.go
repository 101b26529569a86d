package control_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/expr"
)

// dayOfQueries is one day of a lake's queries from midnight day: panels
// dashboard panels refreshed runs times (the same tables and filters each
// run) and adHoc queries whose literals are that day's own.
func dayOfQueries(day time.Time, panels, runs, adHoc int) []collectors.QueryEvent {
	num := func(n int) expr.Value { return expr.Value{Kind: expr.KindNumber, Text: fmt.Sprint(n)} }
	query := func(id string, at time.Time, tenant, user int) collectors.QueryEvent {
		return collectors.QueryEvent{Source: "trino-event", Engine: collectors.EngineTrino, QueryID: id, User: fmt.Sprint("user", user),
			StartTime: at, EndTime: at.Add(800 * time.Millisecond), State: collectors.StateSucceeded, StatementType: "SELECT",
			SQL:     fmt.Sprintf("SELECT count(*) FROM web.events WHERE tenant_id = %d", tenant),
			Metrics: collectors.QueryMetrics{ElapsedMs: int64(800 + user), BytesScanned: int64(1<<20 + tenant)},
			Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "web", Name: "events", Direct: true, Evidence: collectors.EvidenceSQL,
				Filter:  &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: "local.web.events", Column: "tenant_id", Op: expr.OpEq, Values: []expr.Value{num(tenant)}}},
				Columns: []collectors.ColumnUse{{Name: "tenant_id", Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}}}
	}
	tag := day.Format("20060102")
	var evs []collectors.QueryEvent
	for r := range runs {
		for p := range panels {
			evs = append(evs, query(fmt.Sprintf("%s-r%02d-p%d", tag, r, p), day.Add(time.Duration(r)*time.Hour+time.Duration(p)*time.Second), p, r))
		}
	}
	for i := range adHoc {
		evs = append(evs, query(fmt.Sprintf("%s-a%02d", tag, i), day.Add(time.Duration(i)*time.Minute+30*time.Second), 1000+day.YearDay()*100+i, i))
	}
	return evs
}

// TestPruneTelemetryStaysBounded runs the daemon's hourly pruning once a
// day over three histories of a steady workload: with a history, the
// store holds exactly a retention of raw events and the rest of the
// history folded, and its size stops growing once the first history has
// passed; kept forever, the folded events pile up.
func TestPruneTelemetryStaysBounded(t *testing.T) {
	const (
		panels, runs, adHoc = 8, 10, 10
		perDay              = panels*runs + adHoc
		full                = 21 // the history's days: from day full-1 on it is full
		days                = 3 * full
	)
	day := 24 * time.Hour
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name               string
		retention, history time.Duration
		bounded            bool
	}{
		{"history", 7 * day, full * day, true},
		{"kept for years", 7 * day, 3650 * day, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
			require.NoError(t, err)
			defer func() { require.NoError(t, st.Close()) }()
			sizes := make([]store.Size, days)
			for d := range days {
				midnight := start.Add(time.Duration(d) * day)
				_, _, err := st.InsertEvents(ctx, dayOfQueries(midnight, panels, runs, adHoc))
				require.NoError(t, err)
				r, err := control.PruneTelemetry(ctx, st, control.PruneOptions{Retention: tc.retention, History: tc.history,
					Now: func() time.Time { return midnight.Add(day) }})
				require.NoError(t, err)
				sizes[d] = r.Size
			}
			last := sizes[days-1]
			if !tc.bounded {
				require.Equal(t, int64(perDay*(days-7)), last.FoldedEvents)
				t.Logf("store bytes: day %d %d, day %d %d", full-1, sizes[full-1].Bytes, days-1, last.Bytes)
				require.Greater(t, last.Bytes, sizes[full-1].Bytes*3/2, "the folded events pile up")
				return
			}
			var high int64
			for d := full - 1; d < days; d++ {
				sz := sizes[d]
				require.Equal(t, int64(perDay*7), sz.Events, "day %d: a retention of raw events", d)
				require.Equal(t, int64(perDay*(full-7)), sz.FoldedEvents, "day %d: the rest of the history, folded", d)
				require.Equal(t, int64(panels+adHoc*(full-7)), sz.FoldedShapes, "day %d: a shape per panel, one per ad-hoc query", d)
				if d < 2*full {
					high = max(high, sz.Bytes)
				} else {
					require.LessOrEqual(t, sz.Bytes, high, "day %d: no larger than during the second history", d)
				}
			}
			t.Logf("store bytes: day %d %d, day %d %d, day %d %d", full-1, sizes[full-1].Bytes, 2*full-1, sizes[2*full-1].Bytes, days-1, last.Bytes)
		})
	}
}

// TestPruneTelemetryOptions: a retention or history that is negative, or a
// history shorter than the retention, is refused with every problem named;
// a zero history is the default, or the retention when that is longer.
func TestPruneTelemetryOptions(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	for _, tc := range []struct {
		name               string
		retention, history time.Duration
		wantErr            []string
		wantHistory        time.Duration
	}{
		{"defaults", 0, 0, nil, 400 * day},
		{"long retention", 500 * day, 0, nil, 500 * day},
		{"given", 7 * day, 60 * day, nil, 60 * day},
		{"negative", -day, -day, []string{"retention -24h0m0s is negative", "history -24h0m0s is negative"}, 0},
		{"history shorter than retention", 60 * day, 30 * day, []string{"history 30d is shorter than the retention 60d"}, 0},
	} {
		r, err := control.PruneTelemetry(t.Context(), st, control.PruneOptions{Retention: tc.retention, History: tc.history, Now: func() time.Time { return now }})
		if tc.wantErr != nil {
			for _, w := range tc.wantErr {
				require.ErrorContains(t, err, w, tc.name)
			}
			continue
		}
		require.NoError(t, err, tc.name)
		require.Equal(t, now.Add(-tc.wantHistory), r.HistoryBefore, tc.name)
	}
}

// TestHistoryNote: a --since past the history gets a note naming both;
// one within it, or all queries (0), none.
func TestHistoryNote(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		since, history time.Duration
		want           string
	}{
		{30 * day, 400 * day, ""},
		{400 * day, 400 * day, ""},
		{0, 400 * day, ""},
		{500 * day, 400 * day, "--since 500d reaches past telemetry.history (400d)"},
		{36 * time.Hour, day, "--since 1d12h reaches past telemetry.history (1d)"},
	} {
		got := control.HistoryNote(tc.since, tc.history)
		if tc.want == "" {
			require.Empty(t, got, "since %s", tc.since)
			continue
		}
		require.Contains(t, got, tc.want)
	}
}
