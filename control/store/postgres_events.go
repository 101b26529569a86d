package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sync/errgroup"

	"github.com/floe-project/floe/collectors"
)

// errCopyConflict is returned by [Store.copyRound] when its COPY broke a
// unique constraint: a concurrent writer stored one of the round's keys
// after the round looked them up. The transaction is lost with it;
// [Store.InsertEvents] stores the batch again by INSERTs.
var errCopyConflict = errors.New("a key of the batch was stored concurrently")

// The sequences of the identity columns query_events.id and
// table_accesses.id: PostgreSQL names a column's sequence
// <table>_<column>_seq.
const (
	eventIDSeq  = "query_events_id_seq"
	accessIDSeq = "table_accesses_id_seq"
)

// pgx runs fn with the PostgreSQL connection underneath t, which must be
// begun with [handle.BeginConnTx]: what fn runs on it is inside t.
func (t *txn) pgx(fn func(*pgx.Conn) error) error {
	if t.conn == nil {
		return errors.New("the transaction has no connection of its own")
	}
	return t.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the connection is a %T, not pgx's", dc)
		}
		return fn(c.Conn())
	})
}

// copyRound is [Store.insertRound] for PostgreSQL, with the same result
// and with its rows sent by COPY, which costs the server less per row
// than INSERT … SELECT FROM unnest: the heap takes them many at a time,
// and there is no ON CONFLICT to check nor RETURNING to send back. The
// foreign keys are checked row by row as for any insert.
//
// COPY has no ON CONFLICT, so the round looks its keys up first: a stored
// key is a duplicate, unless the stored event is unfinished and this one
// is not, when the stored one is deleted (with its tables, by the
// cascade) and this one stored. The ids of the new events and accesses
// come from their sequences, reserved in one statement, so the child rows
// can name their parents before they are stored. A key stored by another
// writer after the lookup makes the COPY fail with a unique violation,
// reported as [errCopyConflict].
//
// The four tables go one COPY each, in the order of their foreign keys. A
// goroutine builds their rows (JSON filter trees and predicate values, as
// for the INSERTs) and encodes them in COPY's binary format, whose columns
// are all bigint or text, while the server stores the previous table's: at
// the end of each COPY the server checks the foreign keys, row by row, and
// the client would otherwise wait idle.
func (s *Store) copyRound(ctx context.Context, tx *txn, events []*collectors.QueryEvent) (int, error) {
	type evKey struct{ source, id string }
	sources, qids := make([]string, len(events)), make([]string, len(events))
	for i, ev := range events {
		sources[i], qids[i] = ev.Source, ev.QueryID
	}
	var stored int
	err := tx.pgx(func(c *pgx.Conn) error {
		found, err := c.Query(ctx, `SELECT e.source, e.query_id, e.state = $3 AND e.end_time IS NULL
FROM unnest($1::text[], $2::text[]) AS k(source, query_id)
JOIN query_events e ON e.source = k.source AND e.query_id = k.query_id`, sources, qids, string(collectors.StateUnknown))
		if err != nil {
			return fmt.Errorf("look up keys: %w", err)
		}
		// replaceable says whether a stored key's event is unfinished.
		replaceable := map[evKey]bool{}
		var (
			k       evKey
			unfin   bool
			scanned = []any{&k.source, &k.id, &unfin}
		)
		_, err = pgx.ForEachRow(found, scanned, func() error {
			replaceable[k] = unfin
			return nil
		})
		if err != nil {
			return fmt.Errorf("look up keys: %w", err)
		}
		var (
			fresh      []*collectors.QueryEvent
			delSources []string
			delIDs     []string
			naccesses  int
		)
		for _, ev := range events {
			unfinStored, ok := replaceable[evKey{ev.Source, ev.QueryID}]
			switch {
			case !ok:
			case unfinStored && !unfinished(ev):
				delSources, delIDs = append(delSources, ev.Source), append(delIDs, ev.QueryID)
			default:
				continue // a duplicate
			}
			fresh = append(fresh, ev)
			naccesses += len(ev.Tables)
		}
		if len(fresh) == 0 {
			return nil
		}
		if len(delSources) > 0 {
			if _, err := c.Exec(ctx, `DELETE FROM query_events e USING unnest($2::text[], $3::text[]) AS k(source, query_id)
WHERE e.source = k.source AND e.query_id = k.query_id AND e.state = $1 AND e.end_time IS NULL`,
				string(collectors.StateUnknown), delSources, delIDs); err != nil {
				return fmt.Errorf("replace unfinished events: %w", err)
			}
		}
		var eventIDs, accessIDs []int64
		if err := c.QueryRow(ctx, `SELECT
	ARRAY(SELECT nextval('`+eventIDSeq+`') FROM generate_series(1, $1)),
	ARRAY(SELECT nextval('`+accessIDSeq+`') FROM generate_series(1, $2))`, len(fresh), naccesses).Scan(&eventIDs, &accessIDs); err != nil {
			return fmt.Errorf("reserve ids: %w", err)
		}
		if len(eventIDs) != len(fresh) || len(accessIDs) != naccesses {
			return fmt.Errorf("reserve ids: got %d and %d, want %d and %d", len(eventIDs), len(accessIDs), len(fresh), naccesses)
		}
		// In batch order, as the INSERTs number them, so that events that
		// started at the same time read back in the same order.
		slices.Sort(eventIDs)
		slices.Sort(accessIDs)

		type access struct {
			t                 *collectors.TableAccess
			ev                *collectors.QueryEvent
			eventID, accessID int64
			ord               int
		}
		accs := make([]access, 0, naccesses)
		for i, ev := range fresh {
			for j := range ev.Tables {
				accs = append(accs, access{&ev.Tables[j], ev, eventIDs[i], accessIDs[len(accs)], j})
			}
		}
		accErr := func(a access, err error) error {
			return fmt.Errorf("insert event %s %s: table %s: %w", a.ev.Source, a.ev.QueryID, a.t.QualifiedName(), err)
		}
		steps := []struct {
			t    insertTable
			id   bool
			n    int
			rows func(i int, rows [][]any) ([][]any, error)
		}{
			{eventColumns, true, len(fresh), func(i int, rows [][]any) ([][]any, error) {
				row, err := eventRow(fresh[i])
				if err != nil {
					return nil, err
				}
				return append(rows, append([]any{eventIDs[i]}, row...)), nil
			}},
			{accessColumns, true, len(accs), func(i int, rows [][]any) ([][]any, error) {
				a := accs[i]
				row, err := accessRow(a.eventID, a.ord, a.t)
				if err != nil {
					return nil, accErr(a, err)
				}
				return append(rows, append([]any{a.accessID}, row...)), nil
			}},
			{columnUseColumns, false, len(accs), func(i int, rows [][]any) ([][]any, error) {
				return appendColumnRows(rows, accs[i].accessID, accs[i].t), nil
			}},
			{predicateColumns, false, len(accs), func(i int, rows [][]any) ([][]any, error) {
				a := accs[i]
				rows, err := appendPredRows(rows, a.accessID, a.eventID, a.t)
				if err != nil {
					return nil, accErr(a, err)
				}
				return rows, nil
			}},
		}
		built := make(chan []byte, len(steps))
		var g errgroup.Group
		g.Go(func() error {
			defer close(built)
			var rows [][]any
			for _, step := range steps {
				rows = rows[:0]
				for i := range step.n {
					var err error
					if rows, err = step.rows(i, rows); err != nil {
						return err
					}
				}
				if len(rows) == 0 {
					built <- nil
					continue
				}
				types := step.t.types
				if step.id {
					types = append([]string{"bigint"}, types...)
				}
				data, err := appendCopyRows(nil, types, rows)
				if err != nil {
					return fmt.Errorf("copy %s: %w", step.t.name, err)
				}
				built <- data
			}
			return nil
		})
		var copyErr error
		for _, step := range steps {
			data, ok := <-built
			if !ok {
				break // the builder failed
			}
			if data == nil {
				continue
			}
			cols := strings.Join(step.t.cols, ", ")
			if step.id {
				cols = "id, " + cols
			}
			q := "COPY " + step.t.name + " (" + cols + ") FROM STDIN (FORMAT binary)"
			if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), q); err != nil {
				if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" {
					err = fmt.Errorf("%w: %w", errCopyConflict, err)
				}
				copyErr = fmt.Errorf("copy %s: %w", step.t.name, err)
				break
			}
		}
		if err := errors.Join(copyErr, g.Wait()); err != nil {
			return err
		}
		stored = len(fresh)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("insert events: %w", err)
	}
	return stored, nil
}

// copyHeader starts COPY's binary format: its signature, no flags and no
// header extension.
const copyHeader = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// appendCopyRows appends rows to buf in COPY's binary format, header and
// trailer included, their columns typed by types (bigint or text, as
// [insertTable]'s). The rows are as [pgArray] takes them.
func appendCopyRows(buf []byte, types []string, rows [][]any) ([]byte, error) {
	buf = append(buf, copyHeader...)
	for i, r := range rows {
		if len(r) != len(types) {
			return nil, fmt.Errorf("row %d has %d values, want %d", i, len(r), len(types))
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(types)))
		for j, typ := range types {
			switch typ {
			case "bigint":
				v, ok, err := bigintValue(r[j])
				if err != nil {
					return nil, fmt.Errorf("row %d: %w", i, err)
				}
				if !ok {
					buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1: NULL
					continue
				}
				buf = binary.BigEndian.AppendUint32(buf, 8)
				buf = binary.BigEndian.AppendUint64(buf, uint64(v))
			case "text":
				v, ok, err := textValue(r[j])
				if err != nil {
					return nil, fmt.Errorf("row %d: %w", i, err)
				}
				if !ok {
					buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
					continue
				}
				if len(v) > math.MaxInt32 {
					return nil, fmt.Errorf("row %d: a text of %d bytes", i, len(v))
				}
				buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
				buf = append(buf, v...)
			default:
				return nil, fmt.Errorf("unknown column type %q", typ)
			}
		}
	}
	return binary.BigEndian.AppendUint16(buf, math.MaxUint16), nil // -1: the end
}
