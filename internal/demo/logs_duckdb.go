package demo

import (
	"bufio"
	"encoding/csv"
	"fmt"
)

// The DuckDB log is the file storage of CALL enable_logging('QueryLog',
// storage='file', storage_path=…) with the default normalized layout:
// duckdb_log_entries.csv holds one QueryLog entry per statement (the SQL as
// sent, failed statements included) and duckdb_log_contexts.csv the
// connection, transaction and query ids of each entry's context. DuckDB
// has the demo lakehouse attached as the Iceberg REST catalog "lake".

func duckdbTime(q *query) string {
	return q.at.UTC().Format("2006-01-02 15:04:05.999999-07")
}

func writeDuckDB(lw *logWriter, qs []*query) error {
	type entry struct {
		ctx, conn, txn, qid int64
		q                   *query
	}
	entries := make([]entry, len(qs))
	ctx, txn, qid := int64(20), int64(6), int64(5)
	conns := []int64{2, 3, 4, 6, 7, 9, 11, 12}
	for i, q := range qs {
		ctx += int64(3 + lw.r.IntN(4))
		txn += 2
		qid++
		entries[i] = entry{ctx: ctx, conn: conns[q.user], txn: txn, qid: qid, q: q}
	}
	err := lw.create("duckdb_log_contexts.csv", func(w *bufio.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"context_id", "scope", "connection_id", "transaction_id", "query_id", "thread_id"}); err != nil {
			return err
		}
		for _, e := range entries {
			rec := []string{fmt.Sprint(e.ctx), "CONNECTION", fmt.Sprint(e.conn), fmt.Sprint(e.txn), fmt.Sprint(e.qid), ""}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	return lw.create("duckdb_log_entries.csv", func(w *bufio.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"context_id", "timestamp", "type", "log_level", "message"}); err != nil {
			return err
		}
		for _, e := range entries {
			rec := []string{fmt.Sprint(e.ctx), duckdbTime(e.q), "QueryLog", "INFO", e.q.sql(engDuckDB)}
			if err := cw.Write(rec); err != nil {
				return err
			}
			lw.src.Events++ // the log records no outcome: nothing counts as failed
		}
		cw.Flush()
		return cw.Error()
	})
}
