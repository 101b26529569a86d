package athena

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/floe-project/floe/collectors"
)

// SourceAPI is the source name of events read from Athena API responses.
const SourceAPI = "athena-api"

// APIParser reads saved GetQueryExecution and BatchGetQueryExecution
// responses. Each input value may be a GetQueryExecution response
// ({"QueryExecution":{…}}), a BatchGetQueryExecution response
// ({"QueryExecutions":[…]}), or a bare QueryExecution object; values
// without any of these (ListQueryExecutions output, say) are skipped.
type APIParser struct{}

var _ collectors.Parser = APIParser{}

// Source returns "athena-api".
func (APIParser) Source() string { return SourceAPI }

// Detect matches JSON whose head names a QueryExecutionId field as the API
// spells it (CloudTrail spells it queryExecutionId).
func (APIParser) Detect(_ string, head []byte) bool {
	h := headStart(head)
	if len(h) == 0 || (h[0] != '{' && h[0] != '[') {
		return false
	}
	return bytes.Contains(h, []byte(`"QueryExecutionId"`)) && !bytes.Contains(h, []byte(`"eventSource"`))
}

// response holds every shape an input value can have.
type response struct {
	QueryExecution               json.RawMessage
	QueryExecutions              []json.RawMessage
	QueryExecutionID             string `json:"QueryExecutionId"`
	UnprocessedQueryExecutionIds []struct {
		QueryExecutionID string `json:"QueryExecutionId"`
		ErrorCode        string
		ErrorMessage     string
	}
}

// Parse reads r and emits one event per QueryExecution.
func (APIParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return collectors.ReadJSONRecords(ctx, name, r, func(raw []byte, pos collectors.BadRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var resp response
		if err := json.Unmarshal(raw, &resp); err != nil {
			pos.Reason = collectors.JSONReason(raw, err)
			return bad(pos)
		}
		var items []json.RawMessage
		switch {
		case len(resp.QueryExecutions) > 0:
			items = resp.QueryExecutions
		case len(resp.QueryExecution) > 0 && !bytes.Equal(resp.QueryExecution, []byte("null")):
			items = []json.RawMessage{resp.QueryExecution}
		case resp.QueryExecutionID != "":
			items = []json.RawMessage{json.RawMessage(raw)}
		}
		// Ids the service could not return are missing data, not
		// malformed input, but the user should hear about them.
		for _, u := range resp.UnprocessedQueryExecutionIds {
			p := pos
			p.Reason = fmt.Sprintf("query execution %s was not returned (%s: %s)", u.QueryExecutionID, u.ErrorCode, u.ErrorMessage)
			if err := bad(p); err != nil {
				return err
			}
		}
		for i, item := range items {
			p := pos
			prefix := ""
			if len(items) > 1 {
				prefix = fmt.Sprintf("query execution %d: ", i+1)
			}
			var e execution
			if err := json.Unmarshal(item, &e); err != nil {
				p.Reason = prefix + "decode query execution: " + err.Error()
				if err := bad(p); err != nil {
					return err
				}
				continue
			}
			if e.Status.State != "" && !finished(e.Status.State) {
				continue // still QUEUED or RUNNING: a later record has the outcome
			}
			ev, err := e.event(SourceAPI)
			if err != nil {
				p.Reason = prefix + err.Error()
				if err := bad(p); err != nil {
					return err
				}
				continue
			}
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	}, bad)
}
