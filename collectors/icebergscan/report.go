package icebergscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/expr"
)

// Source is the source name of scan-report events.
const Source = "iceberg-scanreport"

// Report types.
const (
	typeScan   = "scan-report"
	typeCommit = "commit-report"
)

// Reports that are skipped, not bad.
var (
	// errCommitReport marks a commit report.
	errCommitReport = errors.New("commit report")
	// errMetadataTable marks a scan of a metadata table (t.files,
	// t.snapshots, …): its filter is on metadata columns, not the table's.
	errMetadataTable = errors.New("metadata table scan")
)

// isMetadataTable reports whether a table-name names a metadata table:
// its last part is a metadata table type and it has one part more than a
// table's name, which is the REST path's table when known, else
// catalog.namespace.table (so "demo.sales.files" stays a table).
func isMetadataTable(name string, loc location) bool {
	parts := strings.Split(name, ".")
	n := len(parts)
	if n < 2 || !expr.IsMetadataTable(parts[n-1]) {
		return false
	}
	if loc.table != "" {
		return parts[n-2] == loc.table
	}
	return n >= 4
}

type wireReport struct {
	ReportType          string                     `json:"report-type"`
	TableName           *string                    `json:"table-name"`
	SnapshotID          *int64                     `json:"snapshot-id"`
	Filter              json.RawMessage            `json:"filter"`
	SchemaID            *int64                     `json:"schema-id"`
	ProjectedFieldIDs   *[]int64                   `json:"projected-field-ids"`
	ProjectedFieldNames *[]string                  `json:"projected-field-names"`
	Metrics             map[string]json.RawMessage `json:"metrics"`
	Metadata            map[string]string          `json:"metadata"`

	// A capture envelope's fields (see [Parser]), decoded in the same
	// pass so a bare report is decoded once.
	envelope
}

type wireMetric struct {
	Value         *int64 `json:"value"`
	TimeUnit      string `json:"time-unit"`
	TotalDuration *int64 `json:"total-duration"`
}

// location is where the report came from: the REST path's namespace
// levels and table, when known.
type location struct {
	namespace []string
	table     string
}

// decode reads one ReportMetricsRequest body into an event received at
// at; with bare, a ScanReport without report-type (as ScanReportParser
// writes it) is read too. It returns errCommitReport for commit reports
// and errMetadataTable for scans of metadata tables.
func decode(body []byte, loc location, at time.Time, bare bool) (collectors.QueryEvent, error) {
	var r wireReport
	if err := json.Unmarshal(body, &r); err != nil {
		return collectors.QueryEvent{}, fmt.Errorf("decode report: %w", err)
	}
	return r.event(body, loc, at, bare)
}

// isBare reports whether a record without report-type has fields of a
// ScanReport, so that it is read (and checked) as one.
func (r *wireReport) isBare() bool {
	return r.ReportType == "" && (r.TableName != nil || r.SnapshotID != nil || len(r.Filter) > 0 || r.ProjectedFieldNames != nil)
}

// missing lists the fields Iceberg's ScanReportParser requires that r
// lacks (or has null): table-name (floe also needs it non-empty),
// snapshot-id, filter, schema-id, projected-field-ids,
// projected-field-names and metrics.
func (r *wireReport) missing() []string {
	var out []string
	if r.TableName == nil || strings.TrimSpace(*r.TableName) == "" {
		out = append(out, "table-name")
	}
	if r.SnapshotID == nil {
		out = append(out, "snapshot-id")
	}
	if f := bytes.TrimSpace(r.Filter); len(f) == 0 || bytes.Equal(f, []byte("null")) {
		out = append(out, "filter")
	}
	if r.SchemaID == nil {
		out = append(out, "schema-id")
	}
	if r.ProjectedFieldIDs == nil {
		out = append(out, "projected-field-ids")
	}
	if r.ProjectedFieldNames == nil {
		out = append(out, "projected-field-names")
	}
	if r.Metrics == nil {
		out = append(out, "metrics")
	}
	return out
}

// event maps a decoded report whose raw body is body; bare allows a
// ScanReport without report-type.
func (r *wireReport) event(body []byte, loc location, at time.Time, bare bool) (collectors.QueryEvent, error) {
	switch {
	case r.ReportType == typeScan:
	case r.ReportType == typeCommit:
		return collectors.QueryEvent{}, errCommitReport
	case r.ReportType == "" && bare && r.isBare():
	case r.ReportType == "":
		return collectors.QueryEvent{}, fmt.Errorf("report has no report-type")
	default:
		return collectors.QueryEvent{}, fmt.Errorf("unknown report-type %q", r.ReportType)
	}
	if m := r.missing(); len(m) > 0 {
		return collectors.QueryEvent{}, fmt.Errorf("scan report without %s (Iceberg's ScanReportParser requires them)", strings.Join(m, ", "))
	}
	name := *r.TableName
	if isMetadataTable(strings.TrimSpace(name), loc) {
		return collectors.QueryEvent{}, errMetadataTable
	}
	ta, err := table(name, loc)
	if err != nil {
		return collectors.QueryEvent{}, err
	}
	ta.SnapshotID = r.SnapshotID
	ta.Direct = true
	ta.Evidence = collectors.EvidenceScanReport
	ta.Filter = convert(r.Filter, ta.QualifiedName())
	if len(r.Filter) > 0 {
		ta.FilterText = []string{clip(string(compact(r.Filter)))}
	}
	filtered := columns(ta.Filter, nil, map[string]bool{})
	projected := map[string]bool{}
	for _, c := range *r.ProjectedFieldNames {
		projected[c] = true
	}
	for _, c := range filtered {
		use := collectors.ColumnUse{Name: c, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceScanReport}
		if projected[c] {
			use.Roles = append(use.Roles, collectors.RoleProjection)
		}
		ta.Columns = append(ta.Columns, use)
	}
	inFilter := map[string]bool{}
	for _, c := range filtered {
		inFilter[c] = true
	}
	for _, c := range *r.ProjectedFieldNames {
		if c != "" && !inFilter[c] {
			inFilter[c] = true
			ta.Columns = append(ta.Columns, collectors.ColumnUse{Name: c, Roles: []collectors.Role{collectors.RoleProjection}, Evidence: collectors.EvidenceScanReport})
		}
	}
	if err := metrics(r.Metrics, &ta.Metrics); err != nil {
		return collectors.QueryEvent{}, err
	}
	ev := collectors.QueryEvent{
		Source:        Source,
		Engine:        collectors.EngineIceberg,
		EngineVersion: strings.TrimSpace(r.Metadata["engine-name"] + " " + r.Metadata["engine-version"]),
		QueryID:       collectors.StableID(string(compact(body))),
		StartTime:     at.UTC(),
		State:         collectors.StateUnknown,
		StatementType: collectors.StatementSelect,
		Tables:        []collectors.TableAccess{ta},
	}
	ev.Metrics.BytesScanned = ta.Metrics.BytesScanned
	return ev, nil
}

// committed is the table a commit report body names: the REST path's
// (loc) when known, else its table-name.
func committed(body []byte, loc location) (collectors.TableAccess, error) {
	var r struct {
		TableName string `json:"table-name"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return collectors.TableAccess{}, fmt.Errorf("decode report: %w", err)
	}
	return table(r.TableName, loc)
}

// table names the scanned table from the REST path when known, else from
// table-name (catalog.namespace….table as the client names it).
func table(name string, loc location) (collectors.TableAccess, error) {
	parts := strings.Split(strings.TrimSpace(name), ".")
	if loc.table != "" {
		ta := collectors.TableAccess{Namespace: strings.Join(loc.namespace, "."), Name: loc.table}
		if len(parts) == len(loc.namespace)+2 && parts[len(parts)-1] == loc.table {
			ta.Catalog = parts[0]
		}
		return ta, nil
	}
	for _, p := range parts {
		if p == "" {
			return collectors.TableAccess{}, fmt.Errorf("report has no usable table-name %q", name)
		}
	}
	switch len(parts) {
	case 1:
		return collectors.TableAccess{Name: parts[0]}, nil
	case 2:
		return collectors.TableAccess{Namespace: parts[0], Name: parts[1]}, nil
	default:
		return collectors.TableAccess{
			Catalog:   parts[0],
			Namespace: strings.Join(parts[1:len(parts)-1], "."),
			Name:      parts[len(parts)-1],
		}, nil
	}
}

func metrics(m map[string]json.RawMessage, dst *collectors.TableMetrics) error {
	counters := []struct {
		keys []string
		dst  *int64
	}{
		{[]string{"result-data-files"}, &dst.ResultDataFiles},
		{[]string{"skipped-data-files"}, &dst.SkippedDataFiles},
		{[]string{"scanned-data-manifests"}, &dst.ScannedManifests},
		{[]string{"skipped-data-manifests"}, &dst.SkippedManifests},
		// The OpenAPI example says total-file-size-bytes; Java writes
		// total-file-size-in-bytes.
		{[]string{"total-file-size-in-bytes", "total-file-size-bytes"}, &dst.BytesScanned},
	}
	for _, c := range counters {
		for _, k := range c.keys {
			raw, ok := m[k]
			if !ok {
				continue
			}
			var w wireMetric
			if err := json.Unmarshal(raw, &w); err != nil {
				return fmt.Errorf("metric %s: %w", k, err)
			}
			if w.Value != nil {
				*c.dst = *w.Value
			}
			break
		}
	}
	if raw, ok := m["total-planning-duration"]; ok {
		var w wireMetric
		if err := json.Unmarshal(raw, &w); err != nil {
			return fmt.Errorf("metric total-planning-duration: %w", err)
		}
		if w.TotalDuration != nil {
			ns, err := nanos(*w.TotalDuration, w.TimeUnit)
			if err != nil {
				return fmt.Errorf("metric total-planning-duration: %w", err)
			}
			dst.PlanningNanos = ns
		}
	}
	return nil
}

func nanos(v int64, unit string) (int64, error) {
	per := map[string]int64{
		"nanoseconds": 1, "microseconds": 1e3, "milliseconds": 1e6, "seconds": 1e9, "minutes": 60e9, "hours": 3600e9, "days": 86400e9,
	}
	f, ok := per[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("unknown time-unit %q", unit)
	}
	if v != 0 && (v*f)/f != v {
		return 0, fmt.Errorf("duration %d %s overflows", v, unit)
	}
	return v * f, nil
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return bytes.TrimSpace(b)
	}
	return buf.Bytes()
}
