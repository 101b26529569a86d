package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
)

// The scan-report log is what a capture of the REST catalog's
// POST /v1/namespaces/{ns}/tables/{table}/metrics endpoint keeps: one JSON
// line per request with the receive time, the path and the
// ReportMetricsRequest body. Scan reports come from two Spark applications
// using the REST catalog as "local"; their filters are Iceberg expressions
// as ExpressionUtil.sanitize leaves them (literals masked: digit counts,
// dates and timestamps relative to the report time, hashed strings). A
// Flink job streaming into web.events sends commit reports, and snapshot
// listings scan the events.snapshots metadata table; floe skips both.

type scanEnvelope struct {
	Time string `json:"time"`
	Path string `json:"path"`
	Body any    `json:"body"`
}

type scanReport struct {
	ReportType          string            `json:"report-type"`
	TableName           string            `json:"table-name"`
	SnapshotID          int64             `json:"snapshot-id"`
	Filter              any               `json:"filter"`
	SchemaID            int               `json:"schema-id"`
	ProjectedFieldIDs   []int             `json:"projected-field-ids"`
	ProjectedFieldNames []string          `json:"projected-field-names"`
	Metrics             scanMetrics       `json:"metrics"`
	Metadata            map[string]string `json:"metadata"`
}

type counter struct {
	Unit  string `json:"unit"`
	Value int64  `json:"value"`
}

type timer struct {
	Count         int    `json:"count"`
	TimeUnit      string `json:"time-unit"`
	TotalDuration int64  `json:"total-duration"`
}

type scanMetrics struct {
	TotalPlanningDuration      timer   `json:"total-planning-duration"`
	ResultDataFiles            counter `json:"result-data-files"`
	ResultDeleteFiles          counter `json:"result-delete-files"`
	TotalDataManifests         counter `json:"total-data-manifests"`
	TotalDeleteManifests       counter `json:"total-delete-manifests"`
	ScannedDataManifests       counter `json:"scanned-data-manifests"`
	SkippedDataManifests       counter `json:"skipped-data-manifests"`
	TotalFileSizeInBytes       counter `json:"total-file-size-in-bytes"`
	TotalDeleteFileSizeInBytes counter `json:"total-delete-file-size-in-bytes"`
	SkippedDataFiles           counter `json:"skipped-data-files"`
	SkippedDeleteFiles         counter `json:"skipped-delete-files"`
	ScannedDeleteManifests     counter `json:"scanned-delete-manifests"`
	SkippedDeleteManifests     counter `json:"skipped-delete-manifests"`
	IndexedDeleteFiles         counter `json:"indexed-delete-files"`
	EqualityDeleteFiles        counter `json:"equality-delete-files"`
	PositionalDeleteFiles      counter `json:"positional-delete-files"`
}

type commitReport struct {
	ReportType     string            `json:"report-type"`
	TableName      string            `json:"table-name"`
	SnapshotID     int64             `json:"snapshot-id"`
	SequenceNumber int64             `json:"sequence-number"`
	Operation      string            `json:"operation"`
	Metrics        map[string]any    `json:"metrics"`
	Metadata       map[string]string `json:"metadata"`
}

// expr is an Iceberg expression in ExpressionParser's JSON form.
type expr struct {
	Type   string   `json:"type"`
	Term   string   `json:"term,omitempty"`
	Value  *string  `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
	Left   *expr    `json:"left,omitempty"`
	Right  *expr    `json:"right,omitempty"`
}

const icebergVersion = "Apache Iceberg 1.10.0 (commit 2114bf631e49af532d66e2ce148ee49dd1dd1f1f)"

var scanApps = []map[string]string{
	{"engine-name": "spark", "engine-version": "3.5.3", "iceberg-version": icebergVersion, "app-id": "application_1763985600000_0007", "app-name": "tenant-dashboards"},
	{"engine-name": "spark", "engine-version": "3.5.3", "iceberg-version": icebergVersion, "app-id": "application_1763985600000_0012", "app-name": "finance-reports"},
}

type scanRecord struct {
	at   time.Time
	seq  int
	body any
	path string
}

func writeScanReports(lw *logWriter, qs []*query) error {
	var recs []scanRecord
	seen := map[string]bool{}
	for _, q := range qs {
		for _, s := range q.scans {
			info := s.t.info()
			rep := scanReport{
				ReportType: "scan-report", TableName: "local." + info.ns + "." + info.name,
				SnapshotID: snapshotID(s.t, q.at), Filter: reportFilter(s, q.at), SchemaID: 0,
				Metrics: scanReportMetrics(lw, s, q.at), Metadata: scanApps[0],
			}
			if s.t != tEvents {
				rep.Metadata = scanApps[1]
			}
			for _, c := range s.read {
				rep.ProjectedFieldIDs = append(rep.ProjectedFieldIDs, s.t.fieldID(c))
			}
			slices.Sort(rep.ProjectedFieldIDs)
			for _, id := range rep.ProjectedFieldIDs {
				rep.ProjectedFieldNames = append(rep.ProjectedFieldNames, info.cols[id-1])
			}
			// floe identifies a report by its body: two identical bodies
			// are one report delivered twice. Planning times differ in
			// practice; make sure they do here.
			for {
				b, err := json.Marshal(rep)
				if err != nil {
					return err
				}
				if !seen[string(b)] {
					seen[string(b)] = true
					break
				}
				rep.Metrics.TotalPlanningDuration.TotalDuration++
			}
			at := q.at.Add(time.Duration(rep.Metrics.TotalPlanningDuration.TotalDuration)).Truncate(time.Millisecond)
			recs = append(recs, scanRecord{at: at, seq: len(recs), body: rep, path: metricsPath(s.t)})
			lw.event(q)
		}
	}
	// Noise: commit reports of the streaming writer and snapshot listings.
	var seqNo int64 = 9000
	for i := range len(qs) / 8 {
		at := lw.now.Add(-time.Duration(len(qs)/8-i) * 7 * 24 * time.Hour / time.Duration(len(qs)/8+1)).Truncate(time.Millisecond)
		seqNo++
		added := int64(1 + lw.r.IntN(3))
		recs = append(recs, scanRecord{at: at, seq: len(recs), path: metricsPath(tEvents), body: commitReport{
			ReportType: "commit-report", TableName: "local.web.events", SnapshotID: snapshotID(tEvents, at) ^ int64(i),
			SequenceNumber: seqNo, Operation: "append",
			Metrics: map[string]any{
				"total-duration":   timer{Count: 1, TimeUnit: "nanoseconds", TotalDuration: 120000000 + lw.r.Int64N(400000000)},
				"attempts":         counter{"count", 1},
				"added-data-files": counter{"count", added},
				"total-data-files": counter{"count", 300 + seqNo%40},
				"added-records":    counter{"count", 500 * added},
			},
			Metadata: map[string]string{"engine-name": "flink", "engine-version": "1.20.1", "iceberg-version": icebergVersion},
		}})
		lw.src.Skipped++
	}
	for i := range len(qs) / 50 {
		at := lw.now.Add(-time.Duration(1+i) * 5 * time.Hour).Add(-time.Duration(lw.r.IntN(3600)) * time.Second).Truncate(time.Millisecond)
		m := scanMetrics{TotalPlanningDuration: timer{Count: 1, TimeUnit: "nanoseconds", TotalDuration: 2000000 + lw.r.Int64N(9000000)},
			ResultDataFiles: counter{"count", 1}}
		fillCounters(&m)
		recs = append(recs, scanRecord{at: at, seq: len(recs), path: metricsPath(tEvents), body: scanReport{
			ReportType: "scan-report", TableName: "local.web.events.snapshots", SnapshotID: snapshotID(tEvents, at),
			Filter: true, ProjectedFieldIDs: []int{1, 2, 3, 4}, ProjectedFieldNames: []string{"committed_at", "snapshot_id", "parent_id", "operation"},
			Metrics: m, Metadata: scanApps[0],
		}})
		lw.src.Skipped++
	}
	slices.SortStableFunc(recs, func(a, b scanRecord) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	return lw.create("scan-reports.ndjson", func(w *bufio.Writer) error {
		enc := lineEncoder(w)
		for _, rec := range recs {
			if err := enc.Encode(scanEnvelope{Time: rec.at.UTC().Format(time.RFC3339Nano), Path: rec.path, Body: rec.body}); err != nil {
				return err
			}
		}
		return nil
	})
}

func metricsPath(t tableID) string {
	info := t.info()
	return "/v1/namespaces/" + info.ns + "/tables/" + info.name + "/metrics"
}

func scanReportMetrics(lw *logWriter, s scan, at time.Time) scanMetrics {
	res, skip := s.dataFiles(at)
	manifests := 1 + (res+skip)/12
	scanned := min(manifests, 1+res/12)
	m := scanMetrics{
		TotalPlanningDuration: timer{Count: 1, TimeUnit: "nanoseconds", TotalDuration: 8000000 + lw.r.Int64N(400000000)},
		ResultDataFiles:       counter{"count", res},
		TotalDataManifests:    counter{"count", manifests},
		ScannedDataManifests:  counter{"count", scanned},
		SkippedDataManifests:  counter{"count", manifests - scanned},
		TotalFileSizeInBytes:  counter{"bytes", int64(float64(s.t.info().bytes) * s.fraction(at))},
		SkippedDataFiles:      counter{"count", skip},
	}
	if s.t == tAccounts {
		m.ResultDeleteFiles = counter{"count", 2}
		m.TotalDeleteManifests = counter{"count", 2}
		m.ScannedDeleteManifests = counter{"count", 2}
		m.IndexedDeleteFiles = counter{"count", 2}
		m.PositionalDeleteFiles = counter{"count", 2}
		m.TotalDeleteFileSizeInBytes = counter{"bytes", 3400}
	}
	fillCounters(&m)
	return m
}

// fillCounters gives unset counters their unit, as every report carries
// each counter.
func fillCounters(m *scanMetrics) {
	for _, c := range []*counter{&m.ResultDataFiles, &m.ResultDeleteFiles, &m.TotalDataManifests, &m.TotalDeleteManifests,
		&m.ScannedDataManifests, &m.SkippedDataManifests, &m.SkippedDataFiles, &m.SkippedDeleteFiles, &m.ScannedDeleteManifests,
		&m.SkippedDeleteManifests, &m.IndexedDeleteFiles, &m.EqualityDeleteFiles, &m.PositionalDeleteFiles} {
		c.Unit = "count"
	}
	m.TotalFileSizeInBytes.Unit = "bytes"
	m.TotalDeleteFileSizeInBytes.Unit = "bytes"
}

// reportFilter is the scan's pushed filter (Spark's inferred not-null
// checks first, then the predicates, AND-ed left-deep) as a sanitized
// Iceberg expression, or true for a full scan.
func reportFilter(s scan, at time.Time) any {
	info := s.t.info()
	var leaves []*expr
	seen := map[string]bool{}
	for _, p := range s.preds {
		if p.op != "in" && !info.required[p.col] && !seen[p.col] {
			seen[p.col] = true
			leaves = append(leaves, &expr{Type: "not-null", Term: p.col})
		}
	}
	cmp := map[string]string{"=": "eq", "<": "lt", "<=": "lt-eq", ">": "gt", ">=": "gt-eq"}
	for _, p := range s.preds {
		switch p.op {
		case "in":
			e := &expr{Type: "in", Term: p.col}
			for _, v := range p.vals {
				e.Values = append(e.Values, sanitize(v, at))
			}
			leaves = append(leaves, e)
		case "like":
			prefix := p.vals[0].s[:len(p.vals[0].s)-1]
			leaves = append(leaves, leaf("starts-with", p.col, sanitize(strLit(prefix), at)))
		case "between":
			leaves = append(leaves, leaf("gt-eq", p.col, sanitize(p.vals[0], at)), leaf("lt-eq", p.col, sanitize(p.vals[1], at)))
		default:
			leaves = append(leaves, leaf(cmp[p.op], p.col, sanitize(p.vals[0], at)))
		}
	}
	if len(leaves) == 0 {
		return true
	}
	e := leaves[0]
	for _, l := range leaves[1:] {
		e = &expr{Type: "and", Left: e, Right: l}
	}
	return e
}

func leaf(typ, term, value string) *expr { return &expr{Type: typ, Term: term, Value: &value} }

// sanitize masks a literal as Iceberg's ExpressionUtil.sanitize does once
// the filter is bound to the table schema; at is the report time.
func sanitize(v lit, at time.Time) string {
	switch v.kind {
	case litInt:
		digits := 1
		if v.n != 0 {
			digits = int(math.Log10(math.Abs(float64(v.n)))) + 1
		}
		return fmt.Sprintf("(%d-digit-int)", digits)
	case litDate:
		today := at.UTC().Unix() / 86400
		days := v.t.Unix() / 86400
		diff, dir := today-days, "ago"
		if diff < 0 {
			diff, dir = -diff, "from-now"
		}
		switch {
		case diff == 0:
			return "(date-today)"
		case diff < 90:
			return fmt.Sprintf("(date-%d-days-%s)", diff, dir)
		}
		return "(date)"
	case litTS, litRelTS:
		diff, dir := at.Sub(v.t), "ago"
		if diff < 0 {
			diff, dir = -diff, "from-now"
		}
		hours := int64(diff / time.Hour)
		switch {
		case diff < 5*time.Minute:
			return "(timestamp-about-now)"
		case hours <= 72:
			return fmt.Sprintf("(timestamp-%d-hours-%s)", hours, dir)
		case hours < 90*24:
			return fmt.Sprintf("(timestamp-%d-days-%s)", hours/24, dir)
		}
		return "(timestamp)"
	}
	// Strings are hashed with Iceberg's bucket function over all ints.
	h := iceberg.BucketTransform{NumBuckets: math.MaxInt32}.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: iceberg.StringLiteral(v.s)})
	if n, ok := h.Val.(iceberg.Int32Literal); ok && h.Valid {
		return fmt.Sprintf("(hash-%08x)", int32(n))
	}
	return "(hash-00000000)"
}
