package demo

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// LogOptions tune [WriteLogs]. Zero values mean the defaults.
type LogOptions struct {
	// Queries is the number of queries in the workload, over all engines.
	// Default: 3,000.
	Queries int
	// Seed makes the workload reproducible: the same seed, Now and options
	// write the same bytes. Default: 1.
	Seed uint64
	// Now is the end of the query time range; queries start during the
	// Window before it. Use the Now given to [Build] so that the queries'
	// time filters fall on the table's data. Default: time.Now.
	Now time.Time
	// Window is how far back queries go. Default: 7 days.
	Window time.Duration
	// Orders is the number of TPC-H orders in sales.orders, so that
	// l_orderkey lookups hit existing keys. Default: 25,000 (as [Options]).
	Orders int
}

// DefaultLogOptions returns the options [WriteLogs] uses for zero fields,
// with Now left zero (the time of the call).
func DefaultLogOptions() LogOptions {
	o := LogOptions{}
	o.defaults()
	o.Now = time.Time{}
	return o
}

// MaxLogQueries bounds LogOptions.Queries: the logs of ten million queries
// are gigabytes.
const MaxLogQueries = 10_000_000

// Validate reports every bad option at once.
func (o *LogOptions) Validate() error {
	var errs []error
	if o.Queries < 0 || o.Queries > MaxLogQueries {
		errs = append(errs, fmt.Errorf("queries: %d is outside 0..%d", o.Queries, MaxLogQueries))
	}
	if o.Window < 0 {
		errs = append(errs, fmt.Errorf("window: %s is negative", o.Window))
	}
	if o.Orders < 0 {
		errs = append(errs, fmt.Errorf("orders: %d is negative", o.Orders))
	}
	return errors.Join(errs...)
}

func (o *LogOptions) defaults() {
	if o.Queries <= 0 {
		o.Queries = 3000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = o.Now.UTC()
	if o.Window <= 0 {
		o.Window = 7 * 24 * time.Hour
	}
	if o.Orders <= 0 {
		o.Orders = 25000
	}
}

// LogSummary says what [WriteLogs] wrote.
type LogSummary struct {
	// Dir is the directory the logs were written under.
	Dir string `json:"dir"`
	// Queries is the number of queries in the workload.
	Queries int `json:"queries"`
	// Sources has one entry per telemetry source, in the order Trino,
	// Spark, Athena, Snowflake, DuckDB, Iceberg scan reports.
	Sources []SourceLog `json:"sources"`
}

// Events is the number of events collecting every log yields.
func (s LogSummary) Events() int {
	n := 0
	for _, src := range s.Sources {
		n += src.Events
	}
	return n
}

// SourceLog is one source's share of the workload and the files written
// for it.
type SourceLog struct {
	// Source is the collector source name the files are detected as
	// ("trino-event", "spark-eventlog", "athena-api", "snowflake",
	// "duckdb-log", "iceberg-scanreport").
	Source string `json:"source"`
	// Engine is the engine that ran the queries ("iceberg-client" for scan
	// reports).
	Engine string `json:"engine"`
	// Files are the paths written, under LogSummary.Dir.
	Files []string `json:"files"`
	// Bytes is the total size of Files.
	Bytes int64 `json:"bytes"`
	// Queries is the number of workload queries this source ran.
	Queries int `json:"queries"`
	// Events is the number of query events collecting Files yields: one
	// per query, except for scan reports (one per table scan of a query)
	// and Spark (statements that fail analysis never reach the event log).
	Events int `json:"events"`
	// Failed counts the events of failed or cancelled queries.
	Failed int `json:"failed"`
	// Skipped counts records that are written but yield no event: Iceberg
	// commit reports and scans of metadata tables.
	Skipped int `json:"skipped"`
}

// Source names, as the collectors report them.
const (
	sourceTrino     = "trino-event"
	sourceSpark     = "spark-eventlog"
	sourceAthena    = "athena-api"
	sourceSnowflake = "snowflake"
	sourceDuckDB    = "duckdb-log"
	sourceScan      = "iceberg-scanreport"
)

// engine indexes the six telemetry sources.
type engine int

const (
	engTrino engine = iota
	engSpark
	engAthena
	engSnowflake
	engDuckDB
	engScan
	numEngines
)

// shares is each source's part of the workload, in engine order.
var shares = [numEngines]float64{0.40, 0.20, 0.10, 0.10, 0.10, 0.10}

// WriteLogs writes a query workload over the demo tables as the six
// telemetry sources floe collects would log it, each in its engine's
// on-disk format, under dir:
//
//	dir/trino/http-event-listener.ndjson            QueryCompletedEvent per line
//	dir/spark/application_<ms>_0001                 Spark event log of one Thrift server
//	dir/athena/batch-get-query-execution.ndjson     BatchGetQueryExecution responses
//	dir/snowflake/query_history.csv, access_history.csv  Snowsight CSV exports
//	dir/duckdb/duckdb_log_entries.csv, duckdb_log_contexts.csv  QueryLog file storage
//	dir/icebergscan/scan-reports.ndjson             captured REST /metrics bodies
//
// The workload has a skewed mix of filters a layout optimizer should find:
// web.events is mostly read by tenant_id (Zipf-distributed, as in the
// table) and a recent ts range, sales.lineitem by l_shipdate ranges and
// l_orderkey, sales.orders by o_orderdate and o_custkey, crm.accounts by
// account_id and country; with joins, a CTE, metadata queries, DDL and
// failed queries as noise. Output is deterministic for a fixed
// opts.Seed and opts.Now. Files already present are overwritten.
func WriteLogs(dir string, opts LogOptions) (LogSummary, error) {
	if err := opts.Validate(); err != nil {
		return LogSummary{}, fmt.Errorf("write demo logs: %w", err)
	}
	opts.defaults()
	sum := LogSummary{Dir: dir, Queries: opts.Queries}
	qs := newWorkload(opts).queries()
	var byEngine [numEngines][]*query
	for _, q := range qs {
		byEngine[q.eng] = append(byEngine[q.eng], q)
	}
	writers := [numEngines]func(lw *logWriter, qs []*query) error{
		engTrino:     writeTrino,
		engSpark:     writeSpark,
		engAthena:    writeAthena,
		engSnowflake: writeSnowflake,
		engDuckDB:    writeDuckDB,
		engScan:      writeScanReports,
	}
	sources := [numEngines][2]string{
		{sourceTrino, "trino"}, {sourceSpark, "spark"}, {sourceAthena, "athena"},
		{sourceSnowflake, "snowflake"}, {sourceDuckDB, "duckdb"}, {sourceScan, "iceberg-client"},
	}
	subdirs := [numEngines]string{"trino", "spark", "athena", "snowflake", "duckdb", "icebergscan"}
	for e := range numEngines {
		lw := &logWriter{
			dir: filepath.Join(dir, subdirs[e]),
			src: SourceLog{Source: sources[e][0], Engine: sources[e][1], Queries: len(byEngine[e])},
			now: opts.Now,
			r:   rand.New(rand.NewPCG(opts.Seed, 1000+uint64(e))),
		}
		if err := os.MkdirAll(lw.dir, 0o755); err != nil {
			return sum, fmt.Errorf("write demo logs: %w", err)
		}
		if err := writers[e](lw, byEngine[e]); err != nil {
			return sum, fmt.Errorf("write demo %s log: %w", sources[e][1], err)
		}
		sum.Sources = append(sum.Sources, lw.src)
	}
	return sum, nil
}

// logWriter writes one source's files and accounts for them.
type logWriter struct {
	dir string
	src SourceLog
	now time.Time
	r   *rand.Rand
}

// create writes one file through fn, recording its path and size.
func (lw *logWriter) create(name string, fn func(w *bufio.Writer) error) (err error) {
	path := filepath.Join(lw.dir, name)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close %s: %w", path, cerr))
		}
	}()
	w := bufio.NewWriterSize(f, 256<<10)
	if err := fn(w); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	lw.src.Files = append(lw.src.Files, path)
	lw.src.Bytes += st.Size()
	return nil
}

// lineEncoder writes one JSON value per line to w as the engines' Jackson
// mappers do: without Go's HTML escaping of <, > and &.
func lineEncoder(w *bufio.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// event counts one event the collector will yield for q.
func (lw *logWriter) event(q *query) {
	lw.src.Events++
	if q.fail != failNone {
		lw.src.Failed++
	}
}

// sortByTime orders queries by start time, ties by sequence.
func sortByTime(qs []*query) {
	slices.SortStableFunc(qs, func(a, b *query) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
}
