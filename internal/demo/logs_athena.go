package demo

import (
	"bufio"
	"fmt"
	"time"
)

// The Athena log is what a collector script saves from the API: one
// BatchGetQueryExecution response (at most 50 executions, the API's limit)
// per line, timestamps as epoch seconds with a fraction as on the wire.

type athenaBatch struct {
	QueryExecutions              []athenaExecution `json:"QueryExecutions"`
	UnprocessedQueryExecutionIDs []any             `json:"UnprocessedQueryExecutionIds"`
}

type athenaExecution struct {
	QueryExecutionID      string              `json:"QueryExecutionId"`
	Query                 string              `json:"Query"`
	StatementType         string              `json:"StatementType"`
	SubstatementType      string              `json:"SubstatementType"`
	ResultConfiguration   map[string]string   `json:"ResultConfiguration"`
	QueryExecutionContext athenaContext       `json:"QueryExecutionContext"`
	Status                athenaStatus        `json:"Status"`
	Statistics            athenaStatistics    `json:"Statistics"`
	WorkGroup             string              `json:"WorkGroup"`
	EngineVersion         athenaEngineVersion `json:"EngineVersion"`
	ExecutionParameters   []string            `json:"ExecutionParameters,omitempty"`
	ResultReuseConfig     map[string]any      `json:"ResultReuseConfiguration"`
}

type athenaContext struct {
	Database string `json:"Database"`
	Catalog  string `json:"Catalog"`
}

type athenaEngineVersion struct {
	SelectedEngineVersion  string `json:"SelectedEngineVersion"`
	EffectiveEngineVersion string `json:"EffectiveEngineVersion"`
}

type athenaStatus struct {
	State              string       `json:"State"`
	StateChangeReason  string       `json:"StateChangeReason,omitempty"`
	SubmissionDateTime epochSeconds `json:"SubmissionDateTime"`
	CompletionDateTime epochSeconds `json:"CompletionDateTime"`
	AthenaError        *athenaError `json:"AthenaError,omitempty"`
}

type athenaError struct {
	ErrorCategory int    `json:"ErrorCategory"`
	ErrorType     int    `json:"ErrorType"`
	Retryable     bool   `json:"Retryable"`
	ErrorMessage  string `json:"ErrorMessage"`
}

type athenaStatistics struct {
	EngineExecutionTimeInMillis      int64          `json:"EngineExecutionTimeInMillis"`
	DataScannedInBytes               int64          `json:"DataScannedInBytes"`
	TotalExecutionTimeInMillis       int64          `json:"TotalExecutionTimeInMillis"`
	QueryQueueTimeInMillis           int64          `json:"QueryQueueTimeInMillis"`
	ServicePreProcessingTimeInMillis int64          `json:"ServicePreProcessingTimeInMillis"`
	QueryPlanningTimeInMillis        int64          `json:"QueryPlanningTimeInMillis"`
	ServiceProcessingTimeInMillis    int64          `json:"ServiceProcessingTimeInMillis"`
	ResultReuseInformation           map[string]any `json:"ResultReuseInformation"`
}

// epochSeconds is a timestamp as the Athena wire protocol sends it.
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(fmt.Sprintf("%d.%03d", ms/1000, ms%1000)), nil
}

func writeAthena(lw *logWriter, qs []*query) error {
	return lw.create("batch-get-query-execution.ndjson", func(w *bufio.Writer) error {
		enc := lineEncoder(w)
		for i := 0; i < len(qs); i += 50 {
			batch := athenaBatch{UnprocessedQueryExecutionIDs: []any{}}
			for _, q := range qs[i:min(i+50, len(qs))] {
				batch.QueryExecutions = append(batch.QueryExecutions, athenaExec(lw, q))
				lw.event(q)
			}
			if err := enc.Encode(batch); err != nil {
				return err
			}
		}
		return nil
	})
}

func athenaExec(lw *logWriter, q *query) athenaExecution {
	r := lw.r
	id := uuid(r)
	queue := int64(40 + r.IntN(400))
	planning := int64(60 + r.IntN(300))
	engine := q.elapsed.Milliseconds()
	total := queue + engine + int64(20+r.IntN(60))
	e := athenaExecution{
		QueryExecutionID:      id,
		Query:                 q.sql(engAthena),
		StatementType:         "DML",
		SubstatementType:      "SELECT",
		ResultConfiguration:   map[string]string{"OutputLocation": "s3://acme-athena-results/primary/" + id + ".csv"},
		QueryExecutionContext: athenaContext{Database: q.ns(), Catalog: "AwsDataCatalog"},
		Status: athenaStatus{
			State:              "SUCCEEDED",
			SubmissionDateTime: epochSeconds(q.at),
			CompletionDateTime: epochSeconds(q.at.Add(time.Duration(total) * time.Millisecond)),
		},
		Statistics: athenaStatistics{
			EngineExecutionTimeInMillis: engine, DataScannedInBytes: q.bytes, TotalExecutionTimeInMillis: total,
			QueryQueueTimeInMillis: queue, ServicePreProcessingTimeInMillis: int64(10 + r.IntN(40)), QueryPlanningTimeInMillis: planning,
			ServiceProcessingTimeInMillis: int64(10 + r.IntN(50)), ResultReuseInformation: map[string]any{"ReusedPreviousResult": false},
		},
		WorkGroup:           "primary",
		EngineVersion:       athenaEngineVersion{SelectedEngineVersion: "AUTO", EffectiveEngineVersion: "Athena engine version 3"},
		ExecutionParameters: q.params(),
		ResultReuseConfig:   map[string]any{"ResultReuseByAgeConfiguration": map[string]any{"Enabled": false}},
	}
	if q.utility {
		e.StatementType, e.SubstatementType = "DDL", "DESCRIBE_TABLE"
		e.Statistics.DataScannedInBytes = 0
	}
	if q.meta != "" {
		e.Statistics.DataScannedInBytes = 0
	}
	switch q.fail {
	case failColumn:
		e.Status.State = "FAILED"
		e.Status.StateChangeReason = "COLUMN_NOT_FOUND: line 1:8: Column 'tenant' cannot be resolved or requester is not authorized to access requested resources"
		e.Status.AthenaError = &athenaError{ErrorCategory: 2, ErrorType: 1006, ErrorMessage: e.Status.StateChangeReason}
		e.Statistics.DataScannedInBytes = 0
	case failTable:
		e.Status.State = "FAILED"
		e.Status.StateChangeReason = "TABLE_NOT_FOUND: line 1:15: Table 'awsdatacatalog.web.event' does not exist"
		e.Status.AthenaError = &athenaError{ErrorCategory: 2, ErrorType: 1006, ErrorMessage: e.Status.StateChangeReason}
		e.Statistics.DataScannedInBytes = 0
	case failCancel, failRuntime:
		e.Status.State = "CANCELLED"
		e.Status.StateChangeReason = "Query cancelled by user"
		e.Statistics.DataScannedInBytes /= 2
	}
	return e
}
