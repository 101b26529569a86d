package athena

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// DefaultCatalog is the catalog Athena uses when a query names none.
const DefaultCatalog = "awsdatacatalog"

// execution is the part of an Athena QueryExecution floe reads. Field
// matching is case-insensitive (encoding/json), so the service's
// PascalCase, the CLI's output and camelCase re-exports all decode.
type execution struct {
	QueryExecutionID      string `json:"QueryExecutionId"`
	Query                 string
	StatementType         string
	SubstatementType      string
	QueryExecutionContext struct {
		Database string
		Catalog  string
	}
	Status struct {
		State              string
		StateChangeReason  string
		SubmissionDateTime awsTime
		CompletionDateTime awsTime
		AthenaError        *struct {
			ErrorMessage string
		}
	}
	Statistics struct {
		EngineExecutionTimeInMillis flexInt
		DataScannedInBytes          flexInt
		TotalExecutionTimeInMillis  flexInt
		QueryQueueTimeInMillis      flexInt
	}
	WorkGroup     string
	EngineVersion struct {
		SelectedEngineVersion  string
		EffectiveEngineVersion string
	}
	ExecutionParameters []string
}

// event maps the execution to a QueryEvent of the given source.
func (e *execution) event(source string) (collectors.QueryEvent, error) {
	if e.QueryExecutionID == "" {
		return collectors.QueryEvent{}, fmt.Errorf("query execution has no QueryExecutionId")
	}
	if e.Status.SubmissionDateTime.IsZero() {
		return collectors.QueryEvent{}, fmt.Errorf("query execution %s has no Status.SubmissionDateTime", e.QueryExecutionID)
	}
	ev := collectors.QueryEvent{
		Source:        source,
		Engine:        collectors.EngineAthena,
		EngineVersion: e.EngineVersion.EffectiveEngineVersion,
		QueryID:       e.QueryExecutionID,
		StartTime:     e.Status.SubmissionDateTime.Time,
		EndTime:       e.Status.CompletionDateTime.Time,
		State:         state(e.Status.State),
		StatementType: statementType(e.SubstatementType, e.StatementType, e.Query),
		SQL:           e.Query,
		Params:        e.ExecutionParameters,
		SQLTemplate:   len(e.ExecutionParameters) > 0 || collectors.HasPlaceholder(e.Query),
		Metrics: collectors.QueryMetrics{
			ElapsedMs:    int64(e.Statistics.TotalExecutionTimeInMillis),
			QueuedMs:     int64(e.Statistics.QueryQueueTimeInMillis),
			BytesScanned: int64(e.Statistics.DataScannedInBytes),
		},
	}
	if ev.State == collectors.StateFailed || ev.State == collectors.StateCancelled {
		ev.Error = e.Status.StateChangeReason
		if ae := e.Status.AthenaError; ae != nil && ae.ErrorMessage != "" {
			ev.Error = ae.ErrorMessage
		}
	}
	if ev.EngineVersion == "" {
		ev.EngineVersion = e.EngineVersion.SelectedEngineVersion
	}
	if ev.Metrics.ElapsedMs == 0 {
		ev.Metrics.ElapsedMs = int64(e.Statistics.EngineExecutionTimeInMillis)
	}
	ev.DefaultCatalog, ev.DefaultSchema = defaults(e.QueryExecutionContext.Catalog, e.QueryExecutionContext.Database)
	return ev, nil
}

func defaults(catalog, database string) (string, string) {
	catalog = strings.ToLower(strings.TrimSpace(catalog))
	if catalog == "" {
		catalog = DefaultCatalog
	}
	return catalog, strings.ToLower(strings.TrimSpace(database))
}

func state(s string) collectors.State {
	switch strings.ToUpper(s) {
	case "SUCCEEDED":
		return collectors.StateSucceeded
	case "FAILED":
		return collectors.StateFailed
	case "CANCELLED", "CANCELED":
		return collectors.StateCancelled
	default:
		return collectors.StateUnknown
	}
}

// finished reports whether an Athena state is final.
func finished(s string) bool {
	return state(s) != collectors.StateUnknown
}

// awsTime is an Athena timestamp: a JSON number of epoch seconds with a
// fraction on the wire, an ISO-8601 string in CLI output and in
// json.Marshal of SDK types. It is always UTC.
type awsTime struct{ time.Time }

// UnmarshalJSON accepts numbers, numeric strings, ISO strings and null.
func (t *awsTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) || len(b) == 0 {
		t.Time = time.Time{}
		return nil
	}
	s := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			t.Time = time.Time{}
			return nil
		}
	}
	v, err := parseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05-07:00",
	"2006-01-02 15:04:05 -07:00",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
}

// parseTime parses epoch seconds (with fraction or exponent) or an ISO-8601
// time; times without an offset are taken as UTC.
func parseTime(s string) (time.Time, error) {
	if s != "" && (s[0] >= '0' && s[0] <= '9') && !strings.ContainsAny(s, "-:T ") {
		return parseEpochSeconds(s)
	}
	for _, layout := range isoLayouts {
		if v, err := time.Parse(layout, s); err == nil {
			return v.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("parse time %q: not epoch seconds or ISO-8601", s)
}

// parseEpochSeconds keeps the exact fraction of plain decimals; exponent
// forms go through float64 and are rounded to the microsecond.
func parseEpochSeconds(s string) (time.Time, error) {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e11 || f < 0 {
			return time.Time{}, fmt.Errorf("parse epoch seconds %q: out of range", s)
		}
		return time.UnixMicro(int64(math.Round(f * 1e6))).UTC(), nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > 1e11 {
		return time.Time{}, fmt.Errorf("parse epoch seconds %q: not a number in range", s)
	}
	var nanos int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		frac += strings.Repeat("0", 9-len(frac))
		nanos, err = strconv.ParseInt(frac, 10, 64)
		if err != nil || nanos < 0 {
			return time.Time{}, fmt.Errorf("parse epoch seconds %q: bad fraction", s)
		}
	}
	return time.Unix(sec, nanos).UTC(), nil
}

// flexInt is an integer that may be written as a JSON number or string.
type flexInt int64

// UnmarshalJSON accepts 12, 12.0, "12" and null.
func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = flexInt(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > math.MaxInt64/2 {
		return fmt.Errorf("parse integer %q", s)
	}
	*n = flexInt(int64(f))
	return nil
}
