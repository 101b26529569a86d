package athena

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	awsathena "github.com/aws/aws-sdk-go-v2/service/athena"
	"github.com/aws/aws-sdk-go-v2/service/athena/types"

	"github.com/floe-project/floe/collectors"
)

// batchSize is the most ids BatchGetQueryExecution accepts per call.
const batchSize = 50

// API is the part of the Athena client [Poll] and [Workgroups] use;
// *athena.Client of github.com/aws/aws-sdk-go-v2/service/athena
// implements it.
type API interface {
	ListWorkGroups(ctx context.Context, in *awsathena.ListWorkGroupsInput, optFns ...func(*awsathena.Options)) (*awsathena.ListWorkGroupsOutput, error)
	ListQueryExecutions(ctx context.Context, in *awsathena.ListQueryExecutionsInput, optFns ...func(*awsathena.Options)) (*awsathena.ListQueryExecutionsOutput, error)
	BatchGetQueryExecution(ctx context.Context, in *awsathena.BatchGetQueryExecutionInput, optFns ...func(*awsathena.Options)) (*awsathena.BatchGetQueryExecutionOutput, error)
}

var _ API = (*awsathena.Client)(nil)

// Workgroups lists the names of the workgroups the caller can see, in the
// service's order. Query history is per workgroup: poll each one with its
// own watermark.
func Workgroups(ctx context.Context, client API) ([]string, error) {
	var names []string
	pager := awsathena.NewListWorkGroupsPaginator(client, &awsathena.ListWorkGroupsInput{})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list athena workgroups: %w", err)
		}
		for _, wg := range page.WorkGroups {
			if name := deref(wg.Name); name != "" {
				names = append(names, name)
			}
		}
	}
	return names, nil
}

// Poll returns the finished queries of workgroup ("" for the caller's
// default, primary) submitted after watermark, oldest first, and the
// watermark to pass next time.
//
// ListQueryExecutions returns ids newest first, so Poll stops paging after
// the first page that reaches back to the watermark. Queries still queued
// or running are left out, and the returned watermark stays below the
// oldest of them, so the next poll sees them once they finish; queries
// that finished after that point are then returned again, which the
// (source, query id) deduplication absorbs. Ids the service could not
// return (UnprocessedQueryExecutionIds) fail the poll, leaving the caller's
// watermark where it was, so nothing is skipped silently.
func Poll(ctx context.Context, client API, workgroup string, watermark time.Time) ([]collectors.QueryEvent, time.Time, error) {
	in := &awsathena.ListQueryExecutionsInput{MaxResults: ptr(int32(batchSize))}
	if workgroup != "" {
		in.WorkGroup = &workgroup
	}
	where := workgroup
	if where == "" {
		where = "(default)"
	}
	pager := awsathena.NewListQueryExecutionsPaginator(client, in)
	var (
		events      []collectors.QueryEvent
		next        = watermark
		oldestOpen  time.Time
		reachedMark bool
	)
	for pager.HasMorePages() && !reachedMark {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, watermark, fmt.Errorf("list athena query executions of workgroup %s: %w", where, err)
		}
		for ids := range slices.Chunk(page.QueryExecutionIds, batchSize) {
			out, err := client.BatchGetQueryExecution(ctx, &awsathena.BatchGetQueryExecutionInput{QueryExecutionIds: ids})
			if err != nil {
				return nil, watermark, fmt.Errorf("get %d athena query executions of workgroup %s: %w", len(ids), where, err)
			}
			if err := unprocessed(out.UnprocessedQueryExecutionIds); err != nil {
				return nil, watermark, fmt.Errorf("get athena query executions of workgroup %s: %w", where, err)
			}
			for _, qe := range out.QueryExecutions {
				e := fromSDK(&qe)
				submitted := e.Status.SubmissionDateTime.Time
				if !submitted.After(watermark) {
					reachedMark = true
					continue
				}
				if !finished(e.Status.State) {
					if oldestOpen.IsZero() || submitted.Before(oldestOpen) {
						oldestOpen = submitted
					}
					continue
				}
				ev, err := e.event(SourceAPI)
				if err != nil {
					return nil, watermark, fmt.Errorf("read athena query execution of workgroup %s: %w", where, err)
				}
				events = append(events, ev)
				if submitted.After(next) {
					next = submitted
				}
			}
		}
	}
	if !oldestOpen.IsZero() && !next.Before(oldestOpen) {
		next = oldestOpen.Add(-time.Nanosecond)
	}
	slices.SortStableFunc(events, func(a, b collectors.QueryEvent) int {
		return a.StartTime.Compare(b.StartTime)
	})
	return events, next, nil
}

func unprocessed(ids []types.UnprocessedQueryExecutionId) error {
	if len(ids) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(ids))
	for _, u := range ids {
		msgs = append(msgs, fmt.Sprintf("%s (%s: %s)", deref(u.QueryExecutionId), deref(u.ErrorCode), deref(u.ErrorMessage)))
	}
	return fmt.Errorf("%d query executions unprocessed: %s", len(ids), strings.Join(msgs, "; "))
}

// fromSDK copies the fields floe reads from an SDK QueryExecution.
func fromSDK(qe *types.QueryExecution) execution {
	var e execution
	e.QueryExecutionID = deref(qe.QueryExecutionId)
	e.Query = deref(qe.Query)
	e.StatementType = string(qe.StatementType)
	e.SubstatementType = deref(qe.SubstatementType)
	e.WorkGroup = deref(qe.WorkGroup)
	e.ExecutionParameters = qe.ExecutionParameters
	if c := qe.QueryExecutionContext; c != nil {
		e.QueryExecutionContext.Catalog = deref(c.Catalog)
		e.QueryExecutionContext.Database = deref(c.Database)
	}
	if s := qe.Status; s != nil {
		e.Status.State = string(s.State)
		e.Status.StateChangeReason = deref(s.StateChangeReason)
		if ae := s.AthenaError; ae != nil {
			e.Status.AthenaError = &struct{ ErrorMessage string }{ErrorMessage: deref(ae.ErrorMessage)}
		}
		if s.SubmissionDateTime != nil {
			e.Status.SubmissionDateTime.Time = s.SubmissionDateTime.UTC()
		}
		if s.CompletionDateTime != nil {
			e.Status.CompletionDateTime.Time = s.CompletionDateTime.UTC()
		}
	}
	if s := qe.Statistics; s != nil {
		e.Statistics.DataScannedInBytes = flexInt(deref(s.DataScannedInBytes))
		e.Statistics.EngineExecutionTimeInMillis = flexInt(deref(s.EngineExecutionTimeInMillis))
		e.Statistics.TotalExecutionTimeInMillis = flexInt(deref(s.TotalExecutionTimeInMillis))
		e.Statistics.QueryQueueTimeInMillis = flexInt(deref(s.QueryQueueTimeInMillis))
	}
	if v := qe.EngineVersion; v != nil {
		e.EngineVersion.EffectiveEngineVersion = deref(v.EffectiveEngineVersion)
		e.EngineVersion.SelectedEngineVersion = deref(v.SelectedEngineVersion)
	}
	return e
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
