//go:build duckdb

package rewrite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/layout"
)

const duckDBAvailable = true

// Checksum digests the rows of the Parquet files at paths. With the duckdb
// build tag it is internal/oracle's DuckDB checksum; without it, [Digest].
// Only compare sums from the same binary.
func Checksum(ctx context.Context, paths []string) (oracle.Sum, error) {
	return oracle.Checksum(ctx, iceio.LocalFS{}, paths)
}

// runDuckDB rewrites each of job.Groups in turn: it sorts the group's
// inputs into a temp table and writes one file per entry of the group's
// FileRows with COPY ... LIMIT n OFFSET k, so that file i holds rows
// [k, k+n) of the group's order. Each sort uses all of DuckDB's threads.
// The inputs are read with hive_partitioning = false: the data files of a
// partitioned Iceberg table sit in col=value directories, which DuckDB
// would otherwise turn into an extra column.
func runDuckDB(ctx context.Context, job Job) (res JobResult, err error) {
	if len(job.Groups) == 0 || job.OutDir == "" {
		return res, errors.New("duckdb job needs groups and an output dir")
	}
	for i, g := range job.Groups {
		if len(g.Inputs) == 0 || len(g.FileRows) == 0 {
			return res, fmt.Errorf("duckdb job: group %d (%s) needs inputs and file rows", i, g.Partition)
		}
	}
	order, err := duckOrder(job)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(job.OutDir, 0o755); err != nil {
		return res, fmt.Errorf("duckdb output dir: %w", err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return res, fmt.Errorf("open duckdb: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	// A temp table lives in one connection: pin it.
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("open duckdb: %w", err)
	}
	defer func() { err = errors.Join(err, conn.Close()) }()

	exec := func(q string) error {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("duckdb %s: %w", firstWords(q), err)
		}
		return nil
	}
	if job.TempDir != "" {
		if err := exec("SET temp_directory = " + quote(job.TempDir)); err != nil {
			return res, err
		}
	}
	sel := "*"
	if job.KeyColumn != "" {
		sel = "* EXCLUDE (" + ident(job.KeyColumn) + ")"
	}
	for gi, g := range job.Groups {
		if err := exec(fmt.Sprintf("CREATE OR REPLACE TEMP TABLE s AS SELECT * FROM read_parquet(%s, hive_partitioning = false) ORDER BY %s", pathList(g.Inputs), order)); err != nil {
			return res, err
		}
		var offset int64
		for i, n := range g.FileRows {
			out := filepath.Join(job.OutDir, fmt.Sprintf("%03d-%05d.parquet", gi, i))
			if err := exec(fmt.Sprintf("COPY (SELECT %s FROM s LIMIT %d OFFSET %d) TO %s (FORMAT parquet, COMPRESSION zstd)",
				sel, n, offset, quote(out))); err != nil {
				return res, err
			}
			offset += n
			res.Files = append(res.Files, out)
			res.FileRows = append(res.FileRows, n)
		}
		var total int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM s").Scan(&total); err != nil {
			return res, fmt.Errorf("duckdb count: %w", err)
		}
		if total != offset {
			return res, fmt.Errorf("duckdb sorted %d rows of group %d (%s) but its output files were cut for %d", total, gi, g.Partition, offset)
		}
		res.Rows += total
		res.Groups = append(res.Groups, JobGroup{Partition: g.Partition, Inputs: g.Inputs, FileRows: g.FileRows})
	}
	return res, nil
}

// duckOrder is the ORDER BY list of a job: the key column, or the sort
// layout's columns with their directions and nulls orders.
func duckOrder(job Job) (string, error) {
	if job.KeyColumn != "" {
		return ident(job.KeyColumn), nil
	}
	l, err := layout.Parse(job.Layout)
	if err != nil {
		return "", err
	}
	if l.Strategy != layout.StrategySort {
		return "", fmt.Errorf("layout %s needs a precomputed key column for duckdb", l)
	}
	parts := make([]string, len(l.Columns))
	for i, c := range l.Columns {
		dir, nulls := "ASC", "NULLS FIRST"
		if c.Desc {
			dir = "DESC"
		}
		if c.NullsLast {
			nulls = "NULLS LAST"
		}
		parts[i] = ident(c.Name) + " " + dir + " " + nulls
	}
	return strings.Join(parts, ", "), nil
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func pathList(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = quote(localPath(p))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func firstWords(q string) string {
	if f := strings.Fields(q); len(f) > 3 {
		return strings.Join(f[:3], " ")
	}
	return q
}
