package icebergscan_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/floe-project/floe/expr"
)

// TestBareScanReport reads a ScanReport as Iceberg's ScanReportParser
// writes it, without the report-type of a ReportMetricsRequest.
func TestBareScanReport(t *testing.T) {
	data := read(t, "scan_report_bare.json")
	p := fixedParser()
	require.True(t, p.Detect("scan_report_bare.json", data))
	res := parse(t, p, "scan_report_bare.json", data)
	require.Empty(t, res.bad)
	require.Len(t, res.events, 1)
	ta := res.events[0].Tables[0]
	require.Equal(t, "demo.events.clicks", ta.QualifiedName())
	require.Equal(t, int64(8812004417730071299), *ta.SnapshotID)
	require.Equal(t, expr.NodeAnd, ta.Filter.Kind)
	require.Equal(t, "day", ta.Filter.Children[0].Pred.Transform)
	require.Equal(t, int64(113), ta.Metrics.SkippedDataFiles)
	require.Equal(t, "spark 3.5.3", res.events[0].EngineVersion)

	// One per line, and wrapped in a capture envelope.
	var line bytes.Buffer
	require.NoError(t, json.Compact(&line, data))
	env := `{"time":"2024-05-01T12:51:30Z","path":"/v1/namespaces/events/tables/clicks/metrics","body":` + line.String() + "}"
	res = parse(t, fixedParser(), "f.ndjson", []byte(line.String()+"\n"+env+"\n"))
	require.Empty(t, res.bad)
	require.Len(t, res.events, 2)

	for _, source := range []string{"", icebergscan.Source} {
		var evs []collectors.QueryEvent
		st, err := collectors.Collect(t.Context(), []collectors.Parser{fixedParser()}, collectors.CollectOptions{Source: source, Strict: true},
			[]string{filepath.Join(fixtures, "scan_report_bare.json")}, func(e collectors.QueryEvent) error { evs = append(evs, e); return nil })
		require.NoError(t, err, "source %q", source)
		require.Len(t, evs, 1)
		require.Equal(t, icebergscan.Source, st.Files[0].Source)
	}
}

// TestScanReportRequiredFields rejects, as Iceberg's ScanReportParser
// does, a report without the fields it requires — with report-type or
// bare.
func TestScanReportRequiredFields(t *testing.T) {
	complete := map[string]string{
		"table-name": `"demo.sales.orders"`, "snapshot-id": `1`, "filter": `true`, "schema-id": `0`,
		"projected-field-ids": `[1]`, "projected-field-names": `["order_id"]`, "metrics": `{}`,
	}
	report := func(reportType bool, drop, null string) string {
		var parts []string
		if reportType {
			parts = append(parts, `"report-type":"scan-report"`)
		}
		for _, k := range []string{"table-name", "snapshot-id", "filter", "schema-id", "projected-field-ids", "projected-field-names", "metrics"} {
			switch k {
			case drop:
			case null:
				parts = append(parts, `"`+k+`":null`)
			default:
				parts = append(parts, `"`+k+`":`+complete[k])
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for _, reportType := range []bool{true, false} {
		res := parse(t, fixedParser(), "f", []byte(report(reportType, "", "")))
		require.Empty(t, res.bad)
		require.Len(t, res.events, 1)
		for k := range complete {
			for _, null := range []bool{false, true} {
				in := report(reportType, k, "")
				if null {
					in = report(reportType, "", k)
				}
				res := parse(t, fixedParser(), "f", []byte(in))
				require.Empty(t, res.events, in)
				require.Len(t, res.bad, 1, in)
				require.Contains(t, res.bad[0].Reason, "without "+k, in)
			}
		}
	}
	res := parse(t, fixedParser(), "f", []byte(`{"report-type":"scan-report","table-name":"x"}`))
	require.Empty(t, res.events)
	require.Len(t, res.bad, 1)
	require.Equal(t, "scan report without snapshot-id, filter, schema-id, projected-field-ids, projected-field-names, metrics (Iceberg's ScanReportParser requires them)", res.bad[0].Reason)
}

func TestDetectBare(t *testing.T) {
	p := icebergscan.NewParser()
	require.True(t, p.Detect("f", []byte(`{"table-name":"a.b","snapshot-id":1,"filter":{"type":"eq","term":"x","value":"`+strings.Repeat("y", 70<<10))))
	require.False(t, p.Detect("f", []byte(`{"table-name":"a.b"}`)))
}
