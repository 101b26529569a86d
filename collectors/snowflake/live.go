package snowflake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// PollOptions tune [Poll].
type PollOptions struct {
	// BatchSize is the most queries one poll reads. Default: 1000.
	BatchSize int
	// Settle is how old a query must be before it is read: ACCOUNT_USAGE
	// views lag behind (QUERY_HISTORY by up to 45 minutes, ACCESS_HISTORY
	// by up to 3 hours), and a query that appears after the watermark has
	// passed its start would never be read. A query read before its
	// ACCESS_HISTORY row arrived has no tables from it; its SQL is still
	// there to extract them from. Default: 45 minutes. Against a source
	// without lag (a test fake) set it to a nanosecond.
	Settle time.Duration
}

// DefaultPollOptions returns the defaults of every tunable.
func DefaultPollOptions() PollOptions {
	return PollOptions{BatchSize: 1000, Settle: 45 * time.Minute}
}

// Validate reports every problem of o at once.
func (o PollOptions) Validate() error {
	var errs []error
	if o.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("batch size %d must be >= 0", o.BatchSize))
	}
	if o.Settle < 0 {
		errs = append(errs, fmt.Errorf("settle %s must be >= 0", o.Settle))
	}
	return errors.Join(errs...)
}

// maxBatchGrowth bounds how many times a batch of one START_TIME is read
// again with twice the room.
const maxBatchGrowth = 10

// pollColumns are the columns [Poll] reads, as the export files name them,
// so rows map through the same code as exports do.
var pollColumns = []string{
	"q.QUERY_ID", "q.QUERY_TEXT", "q.DATABASE_NAME", "q.SCHEMA_NAME", "q.QUERY_TYPE",
	"q.USER_NAME", "q.EXECUTION_STATUS", "q.ERROR_CODE", "q.ERROR_MESSAGE",
	"q.START_TIME", "q.END_TIME", "q.TOTAL_ELAPSED_TIME", "q.BYTES_SCANNED",
	"q.PARTITIONS_SCANNED", "q.PARTITIONS_TOTAL", "q.QUEUED_OVERLOAD_TIME",
	"q.QUEUED_PROVISIONING_TIME", "q.QUEUED_REPAIR_TIME", "q.RELEASE_VERSION",
	"a.ROOT_QUERY_ID", "a.BASE_OBJECTS_ACCESSED", "a.DIRECT_OBJECTS_ACCESSED", "a.OBJECTS_MODIFIED",
}

// PollStatement is the statement [Poll] runs. Its bindings are the
// watermark (exclusive), the settle bound (inclusive), both as ISO-8601
// text, and the batch size.
var PollStatement = "SELECT " + strings.Join(pollColumns, ", ") + `
FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY q
LEFT JOIN SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY a ON a.QUERY_ID = q.QUERY_ID
WHERE q.START_TIME > TO_TIMESTAMP_LTZ(?) AND q.START_TIME <= TO_TIMESTAMP_LTZ(?)
ORDER BY q.START_TIME, q.QUERY_ID
LIMIT ?`

// Poll returns the queries that started after watermark (and at least
// Settle ago), oldest first, joined with their ACCESS_HISTORY rows, as
// the same events the export files give; and the watermark to pass next
// time.
//
// Polls are idempotent: a query is returned by exactly one poll. When a
// batch is full, the queries sharing its last START_TIME are left for the
// next poll (which reads START_TIME > watermark), so a tie is never split
// across the boundary; a batch that is one tie is read again, larger. Queries still running keep the watermark below
// their start, so they are read once they finish; the finished queries
// after them are then read again, which the (source, query id)
// deduplication absorbs. Any error returns the caller's watermark, so
// nothing is skipped.
func Poll(ctx context.Context, client *Client, opts PollOptions, watermark time.Time) ([]collectors.QueryEvent, time.Time, error) {
	if err := opts.Validate(); err != nil {
		return nil, watermark, fmt.Errorf("snowflake poll options: %w", err)
	}
	def := DefaultPollOptions()
	if opts.BatchSize == 0 {
		opts.BatchSize = def.BatchSize
	}
	if opts.Settle == 0 {
		opts.Settle = def.Settle
	}
	upTo := client.opts.Now().Add(-opts.Settle)
	if !upTo.After(watermark) {
		return nil, watermark, nil
	}
	// A full batch whose queries all share one START_TIME cannot be cut
	// at a tie; read it again with room for more until it can.
	var events []collectors.QueryEvent
	for limit, tries := opts.BatchSize, 0; ; limit, tries = limit*2, tries+1 {
		rs, err := client.query(ctx, PollStatement,
			binding{Type: "TEXT", Value: watermark.UTC().Format(time.RFC3339Nano)},
			binding{Type: "TEXT", Value: upTo.UTC().Format(time.RFC3339Nano)},
			binding{Type: "FIXED", Value: strconv.Itoa(limit)},
		)
		if err != nil {
			return nil, watermark, fmt.Errorf("poll snowflake query history: %w", err)
		}
		if events, err = rs.events(); err != nil {
			return nil, watermark, fmt.Errorf("poll snowflake query history of account %s: %w", client.account, err)
		}
		if len(rs.rows) < limit || len(events) == 0 {
			break
		}
		last := events[len(events)-1].StartTime
		cut := len(events)
		for cut > 0 && events[cut-1].StartTime.Equal(last) {
			cut--
		}
		if cut > 0 {
			events = events[:cut]
			break
		}
		if tries == maxBatchGrowth {
			return nil, watermark, fmt.Errorf("poll snowflake query history of account %s: more than %d queries started at %s", client.account, limit, last.Format(time.RFC3339Nano))
		}
	}
	next := watermark
	var out []collectors.QueryEvent
	var oldestOpen time.Time
	for _, ev := range events {
		if ev.State == collectors.StateUnknown {
			if oldestOpen.IsZero() || ev.StartTime.Before(oldestOpen) {
				oldestOpen = ev.StartTime
			}
			continue
		}
		out = append(out, ev)
		if ev.StartTime.After(next) {
			next = ev.StartTime
		}
	}
	if !oldestOpen.IsZero() && !next.Before(oldestOpen) {
		next = oldestOpen.Add(-time.Nanosecond)
	}
	return out, next, nil
}

// events maps each row through the export files' row mapping. A query
// still running comes back with State UNKNOWN (and only its id and start).
func (rs *resultSet) events() ([]collectors.QueryEvent, error) {
	out := make([]collectors.QueryEvent, 0, len(rs.rows))
	for i, cells := range rs.rows {
		r := make(row, len(rs.cols))
		for j, c := range rs.cols {
			v, err := cellText(c, cells[j])
			if err != nil {
				return nil, fmt.Errorf("row %d: %s: %w", i, c.Name, err)
			}
			r[strings.ToUpper(c.Name)] = v
		}
		h, err := split(r)
		if errors.Is(err, errUnfinished) {
			start, perr := collectors.ParseTime(r["START_TIME"])
			if perr != nil {
				return nil, fmt.Errorf("row %d: START_TIME: %w", i, perr)
			}
			out = append(out, collectors.QueryEvent{Source: Source, QueryID: r["QUERY_ID"], StartTime: start, State: collectors.StateUnknown})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out = append(out, join(h.qh, h.ah))
	}
	return out, nil
}

// cellText is a jsonv2 cell as export files write it. NULL is "";
// TIMESTAMP_TZ's "<epoch seconds> <offset+1440>" keeps only the epoch
// seconds (an instant needs no offset); every other type's text is already
// what the export row mapping reads (epoch seconds for the other
// timestamps, digits for numbers, JSON text for VARIANT, ARRAY, OBJECT).
func cellText(c column, v *string) (string, error) {
	if v == nil {
		return "", nil
	}
	s := *v
	switch strings.ToLower(c.Type) {
	case "timestamp_tz":
		sec, _, _ := strings.Cut(s, " ")
		if _, err := collectors.EpochSeconds(sec); err != nil {
			return "", err
		}
		return sec, nil
	case "timestamp_ltz", "timestamp_ntz":
		if _, err := collectors.EpochSeconds(s); err != nil {
			return "", err
		}
	}
	return s, nil
}
