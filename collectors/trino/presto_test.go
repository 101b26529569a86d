package trino_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/collectortest"
	"github.com/floe-project/floe/collectors/trino"
)

func TestPrestoEvents(t *testing.T) {
	evs, bad := collectortest.Parse(t, trino.EventParser{}, filepath.Join(dir, "..", "presto", "query-completed.ndjson"))
	require.Empty(t, bad)
	require.Len(t, evs, 4)

	sel := evs[0]
	require.Equal(t, collectors.EnginePresto, sel.Engine)
	require.Equal(t, "trino-event", sel.Source)
	require.Equal(t, "0.287", sel.EngineVersion)
	require.Equal(t, ts("2024-05-01T12:51:30.123Z"), sel.StartTime, "epoch milliseconds")
	require.Equal(t, ts("2024-05-01T12:51:33.512Z"), sel.EndTime)
	require.Equal(t, int64(3377), sel.Metrics.ElapsedMs, "wallTime in milliseconds, not seconds")
	require.Equal(t, int64(1212), sel.Metrics.CPUMs)
	require.Equal(t, int64(4), sel.Metrics.QueuedMs)
	require.Equal(t, int64(73400320), sel.Metrics.BytesScanned)
	require.Equal(t, int64(20000), sel.Metrics.RowsScanned)
	require.Equal(t, "SELECT", sel.StatementType)
	require.Equal(t, "orders", sel.Tables[0].Name)

	ins := evs[1]
	require.Equal(t, collectors.EnginePresto, ins.Engine, "told by the unit alone")
	require.Equal(t, int64(61000), ins.Metrics.ElapsedMs)
	require.Equal(t, int64(45210), ins.Metrics.CPUMs)
	require.Equal(t, "INSERT", ins.StatementType)

	// A 67.8 s query was once stored as 67,795,000 ms: whole numbers read as
	// seconds when the event's instants were a test's placeholders (createTime
	// 0) or when the numbers came quoted.
	placeholder := evs[2]
	require.Equal(t, collectors.EnginePresto, placeholder.Engine)
	require.Equal(t, int64(67795), placeholder.Metrics.ElapsedMs, "a 0.x server writes whole milliseconds, whatever its instants say")
	require.Equal(t, int64(201334), placeholder.Metrics.CPUMs)
	quoted := evs[3]
	require.Equal(t, collectors.EnginePresto, quoted.Engine, "told by the unit alone")
	require.Equal(t, int64(67795), quoted.Metrics.ElapsedMs, "quoted whole milliseconds that fit the times")
	require.Equal(t, int64(3), quoted.Metrics.QueuedMs)
}

func TestDurationUnit(t *testing.T) {
	event := func(stats string) string {
		return `{"metadata":{"queryId":"q","query":"SELECT 1","queryState":"FINISHED"},"statistics":` + stats +
			`,"context":{"serverVersion":"478"},"createTime":"2024-05-01T12:00:00Z","endTime":"2024-05-01T12:00:03.400Z"}`
	}
	tests := []struct {
		name    string
		stats   string
		elapsed int64
		engine  collectors.Engine
	}{
		{"decimal seconds", `{"wallTime":3.377000000,"cpuTime":1}`, 3377, collectors.EngineTrino},
		{"iso", `{"wallTime":"PT3.377S"}`, 3377, collectors.EngineTrino},
		{"airlift", `{"wallTime":"3.38s"}`, 3380, collectors.EngineTrino},
		{"whole seconds that fit the times", `{"wallTime":3}`, 3000, collectors.EngineTrino},
		{"whole milliseconds that fit the times", `{"wallTime":3377}`, 3377, collectors.EnginePresto},
		{"whole number as a string is seconds", `{"wallTime":"3"}`, 3000, collectors.EngineTrino},
		{"whole milliseconds as a string that fit the times", `{"wallTime":"3377"}`, 3377, collectors.EnginePresto},
		{"milliseconds with a zero fraction that fit the times", `{"wallTime":3377.0}`, 3377, collectors.EnginePresto},
		{"decimal seconds with a zero fraction", `{"wallTime":3.000000000}`, 3000, collectors.EngineTrino},
		{"zero decimal seconds falls back to the times", `{"wallTime":0.000000000}`, 3400, collectors.EngineTrino},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var evs []collectors.QueryEvent
			err := trino.EventParser{}.Parse(context.Background(), "f", bytes.NewReader([]byte(event(tc.stats))),
				func(e collectors.QueryEvent) error { evs = append(evs, e); return nil },
				func(b collectors.BadRecord) error { t.Fatal(b.Error()); return nil })
			require.NoError(t, err)
			require.Len(t, evs, 1)
			require.Equal(t, tc.elapsed, evs[0].Metrics.ElapsedMs)
			require.Equal(t, tc.engine, evs[0].Engine)
		})
	}
}
