package athena

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/floe-project/floe/collectors"
)

// SourceCloudTrail is the source name of events read from CloudTrail.
const SourceCloudTrail = "cloudtrail"

// CloudTrailParser reads CloudTrail log files and keeps the successful
// StartQueryExecution calls to athena.amazonaws.com. Other records,
// including StartQueryExecution calls that failed (errorCode set, no query
// id), are skipped without being reported as bad.
type CloudTrailParser struct{}

var _ collectors.Parser = CloudTrailParser{}

// Source returns "cloudtrail".
func (CloudTrailParser) Source() string { return SourceCloudTrail }

// Detect matches a CloudTrail file ({"Records":[…]}) or NDJSON of
// CloudTrail records.
func (CloudTrailParser) Detect(_ string, head []byte) bool {
	h := headStart(head)
	if len(h) == 0 || (h[0] != '{' && h[0] != '[') {
		return false
	}
	if !bytes.Contains(h, []byte(`"eventSource"`)) && !bytes.Contains(h, []byte(`"eventVersion"`)) {
		return false
	}
	return bytes.Contains(h, []byte(`"Records"`)) || bytes.Contains(h, []byte(`"eventName"`))
}

type trailFile struct {
	Records []json.RawMessage
}

type trailRecord struct {
	EventTime    string
	EventSource  string
	EventName    string
	ErrorCode    string
	UserIdentity struct {
		PrincipalID string `json:"principalId"`
		Arn         string
		UserName    string
	}
	RequestParameters *struct {
		QueryString           string
		QueryExecutionContext struct {
			Database string
			Catalog  string
		}
		WorkGroup           string
		ExecutionParameters []string
	}
	ResponseElements *struct {
		QueryExecutionID string `json:"queryExecutionId"`
	}
}

// Parse reads r and emits one event per kept record.
func (CloudTrailParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return collectors.ReadJSONRecords(ctx, name, r, func(raw []byte, pos collectors.BadRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var f trailFile
		if err := json.Unmarshal(raw, &f); err == nil && f.Records != nil {
			for i, rec := range f.Records {
				if err := ctx.Err(); err != nil {
					return err
				}
				p := pos
				if p.Line == 0 {
					p.Index = i + 1
				}
				if err := parseRecord(rec, p, fmt.Sprintf("record %d: ", i+1), emit, bad); err != nil {
					return err
				}
			}
			return nil
		}
		return parseRecord(raw, pos, "", emit, bad)
	}, bad)
}

func parseRecord(raw []byte, pos collectors.BadRecord, prefix string, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	var rec trailRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		pos.Reason = prefix + collectors.JSONReason(raw, err)
		return bad(pos)
	}
	if rec.EventSource != "athena.amazonaws.com" || rec.EventName != "StartQueryExecution" || rec.ErrorCode != "" {
		return nil
	}
	ev, err := rec.event()
	if err != nil {
		pos.Reason = prefix + err.Error()
		return bad(pos)
	}
	return emit(ev)
}

func (rec *trailRecord) event() (collectors.QueryEvent, error) {
	if rec.ResponseElements == nil || rec.ResponseElements.QueryExecutionID == "" {
		return collectors.QueryEvent{}, fmt.Errorf("StartQueryExecution record has no responseElements.queryExecutionId")
	}
	id := rec.ResponseElements.QueryExecutionID
	if rec.RequestParameters == nil || strings.TrimSpace(rec.RequestParameters.QueryString) == "" {
		return collectors.QueryEvent{}, fmt.Errorf("StartQueryExecution %s has no requestParameters.queryString", id)
	}
	start, err := parseTime(rec.EventTime)
	if err != nil {
		return collectors.QueryEvent{}, fmt.Errorf("StartQueryExecution %s eventTime: %w", id, err)
	}
	req := rec.RequestParameters
	ev := collectors.QueryEvent{
		Source:        SourceCloudTrail,
		Engine:        collectors.EngineAthena,
		QueryID:       id,
		User:          user(rec),
		StartTime:     start,
		State:         collectors.StateUnknown,
		StatementType: statementType("", "", req.QueryString),
		SQL:           req.QueryString,
		Params:        req.ExecutionParameters,
		SQLTemplate:   len(req.ExecutionParameters) > 0 || collectors.HasPlaceholder(req.QueryString),
	}
	ev.DefaultCatalog, ev.DefaultSchema = defaults(req.QueryExecutionContext.Catalog, req.QueryExecutionContext.Database)
	return ev, nil
}

// user is the IAM user name, else the session name at the end of an
// assumed-role ARN, else the whole ARN or principal id.
func user(rec *trailRecord) string {
	id := rec.UserIdentity
	switch {
	case id.UserName != "":
		return id.UserName
	case strings.Contains(id.Arn, ":assumed-role/"):
		return id.Arn[strings.LastIndexByte(id.Arn, '/')+1:]
	case id.Arn != "":
		return id.Arn
	default:
		return id.PrincipalID
	}
}
