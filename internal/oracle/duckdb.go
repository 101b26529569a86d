//go:build duckdb

package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"
)

// Checksum digests, with DuckDB's Parquet reader and hash(), every row of the
// Parquet files at paths: plain paths and file:// locations are read in
// place, any other location (s3://...) is first downloaded through fio,
// the table's own IO, as DuckDB here has no network extension to read it.
//
// Every read_parquet here passes hive_partitioning = false: DuckDB otherwise
// takes a directory named col=value, which is how Iceberg writers lay out a
// partitioned table's data files, for a Hive partition and adds a column
// derived from the path to every row. The digest of the same rows would
// then change with the directory they were written to.
func Checksum(ctx context.Context, fio iceio.IO, paths []string) (Sum, error) {
	return ChecksumLive(ctx, fio, paths, nil)
}

// ChecksumLive is [Checksum] with the position delete files posDeletes
// applied: a row is left out when a delete file lists its data file and row
// position.
func ChecksumLive(ctx context.Context, fio iceio.IO, dataPaths, posDeletes []string) (_ Sum, err error) {
	if len(dataPaths) == 0 {
		return Sum{}, nil
	}
	local, done, err := localCopies(ctx, fio, append(append([]string(nil), dataPaths...), posDeletes...))
	if err != nil {
		return Sum{}, fmt.Errorf("duckdb checksum of %d files: %w", len(dataPaths), err)
	}
	defer func() { err = errors.Join(err, done()) }()
	live := fmt.Sprintf("SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet(%s, filename = true, file_row_number = true, hive_partitioning = false)", pathList(mapPaths(local, dataPaths)))
	if len(posDeletes) > 0 {
		// A delete file names its data files by location; m maps each
		// to the path DuckDB read it from.
		pairs := make([]string, 0, len(dataPaths))
		for _, p := range dataPaths {
			pairs = append(pairs, "("+quote(p)+", "+quote(local[p])+")")
		}
		live = fmt.Sprintf(`SELECT d.* EXCLUDE (filename, file_row_number)
FROM read_parquet(%s, filename = true, file_row_number = true, hive_partitioning = false) d
ANTI JOIN (SELECT coalesce(m.fp, regexp_replace(x.file_path, '^file://', '')) AS fp, x.pos
  FROM read_parquet(%s, hive_partitioning = false) x LEFT JOIN (VALUES %s) m(loc, fp) ON m.loc = x.file_path) p
ON p.fp = d.filename AND p.pos = d.file_row_number`, pathList(mapPaths(local, dataPaths)), pathList(mapPaths(local, posDeletes)), strings.Join(pairs, ", "))
	}
	q := fmt.Sprintf(`WITH live AS (%s)
SELECT count(*), CAST(coalesce(sum(hash(live)), 0) AS VARCHAR), CAST(coalesce(bit_xor(hash(live)), 0) AS VARCHAR) FROM live`, live)
	var (
		s        Sum
		sum, xor string
	)
	err = withDB(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, q).Scan(&s.Rows, &sum, &xor)
	})
	if err != nil {
		return Sum{}, fmt.Errorf("duckdb checksum of %d files: %w", len(dataPaths), err)
	}
	if s.Sum, err = mod64(sum); err != nil {
		return Sum{}, err
	}
	if s.Xor, err = mod64(xor); err != nil {
		return Sum{}, err
	}
	return s, nil
}

// ChecksumTable digests the live rows of tbl's current snapshot through
// DuckDB: [PlanLive] plans the snapshot and finds the rows deletion vectors
// and position delete files delete, by the spec's rules and not by
// iceberg-go's planner; DuckDB reads the data files and leaves those rows
// out by an anti-join on (file, row number). Only the current schema's
// columns are digested, matched by their Parquet name (union_by_name: a column a file
// lacks reads as null), so the row-lineage columns a format-3 rewrite
// writes do not count. A table not on a local path has its live data files
// downloaded through its own IO first (see [Checksum]). It returns
// ErrUnsupportedDeletes when equality deletes apply to a live file.
func ChecksumTable(ctx context.Context, tbl *table.Table) (_ Sum, err error) {
	plan, err := PlanLive(ctx, tbl)
	if err != nil {
		return Sum{}, fmt.Errorf("plan %s: %w", tbl.Location(), err)
	}
	if len(plan.Files) == 0 {
		return Sum{}, nil
	}
	var paths []string
	for _, f := range plan.Files {
		if len(f.Equality) > 0 {
			return Sum{}, fmt.Errorf("%s: %w", f.Path, ErrUnsupportedDeletes)
		}
		paths = append(paths, f.Path)
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return Sum{}, fmt.Errorf("io of %s: %w", tbl.Location(), err)
	}
	local, done, err := localCopies(ctx, fio, paths)
	if err != nil {
		return Sum{}, fmt.Errorf("duckdb checksum of %s: %w", tbl.Location(), err)
	}
	defer func() { err = errors.Join(err, done()) }()
	// Parquet files hold the names Iceberg makes Avro-compatible
	// ("order-id" is stored as "order_x2Did"), as every writer does.
	fileSchema, err := iceberg.SanitizeColumnNames(tbl.Schema())
	if err != nil {
		return Sum{}, fmt.Errorf("column names of %s: %w", tbl.Location(), err)
	}
	cols := make([]string, 0, fileSchema.NumFields())
	for _, f := range fileSchema.Fields() {
		cols = append(cols, `d."`+strings.ReplaceAll(f.Name, `"`, `""`)+`"`)
	}
	q := fmt.Sprintf(`WITH live AS (
SELECT %s FROM read_parquet(%s, filename = true, file_row_number = true, hive_partitioning = false, union_by_name = true) d
ANTI JOIN floe_deleted x ON x.fp = d.filename AND x.pos = d.file_row_number)
SELECT count(*), CAST(coalesce(sum(hash(live)), 0) AS VARCHAR), CAST(coalesce(bit_xor(hash(live)), 0) AS VARCHAR) FROM live`,
		strings.Join(cols, ", "), pathList(mapPaths(local, paths)))
	var (
		s        Sum
		sum, xor string
	)
	err = withDB(ctx, func(db *sql.DB) (err error) {
		// A temporary table lives in one connection: pin it.
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, conn.Close()) }()
		if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE floe_deleted (fp VARCHAR, pos BIGINT)`); err != nil {
			return err
		}
		if err := insertDeleted(ctx, conn, plan, local); err != nil {
			return err
		}
		return conn.QueryRowContext(ctx, q).Scan(&s.Rows, &sum, &xor)
	})
	if err != nil {
		return Sum{}, fmt.Errorf("duckdb checksum of %s: %w", tbl.Location(), err)
	}
	if s.Sum, err = mod64(sum); err != nil {
		return Sum{}, err
	}
	if s.Xor, err = mod64(xor); err != nil {
		return Sum{}, err
	}
	return s, nil
}

// insertDeleted fills floe_deleted with the deleted positions of plan, 500
// rows a statement, each file by the local path DuckDB reads it from.
func insertDeleted(ctx context.Context, conn *sql.Conn, plan LivePlan, local map[string]string) error {
	var (
		args []any
		vals []string
	)
	flush := func() error {
		if len(vals) == 0 {
			return nil
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO floe_deleted VALUES `+strings.Join(vals, ", "), args...)
		args, vals = args[:0], vals[:0]
		return err
	}
	for _, f := range plan.Files {
		p := local[f.Path]
		for pos := range f.Deleted {
			args = append(args, p, pos)
			vals = append(vals, "(?, ?)")
			if len(vals) == 500 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// OrderViolations reads paths in the given order, each file in its row order,
// and counts adjacent rows whose key (keyColumns compared lexicographically)
// decreases. Zero means the files are globally ordered. Rows with a NULL in
// a key column are not compared. Files not on a local path are downloaded
// through fio first (see [Checksum]).
func OrderViolations(ctx context.Context, fio iceio.IO, paths []string, keyColumns ...string) (_ int64, err error) {
	if len(paths) == 0 {
		return 0, nil
	}
	if len(keyColumns) == 0 {
		return 0, errors.New("order violations: no key columns")
	}
	cols := make([]string, len(keyColumns))
	for i, c := range keyColumns {
		cols[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	key := "row(" + strings.Join(cols, ", ") + ")"
	local, done, err := localCopies(ctx, fio, paths)
	if err != nil {
		return 0, fmt.Errorf("duckdb order check of %d files: %w", len(paths), err)
	}
	defer func() { err = errors.Join(err, done()) }()
	list := pathList(mapPaths(local, paths))
	q := fmt.Sprintf(`WITH r AS (
  SELECT %[1]s AS k, list_position(%[2]s, filename) AS f, file_row_number AS n
  FROM read_parquet(%[2]s, filename = true, file_row_number = true, hive_partitioning = false)
), o AS (SELECT k, lag(k) OVER (ORDER BY f, n) AS prev FROM r)
SELECT count(*) FROM o WHERE prev > k`, key, list)
	var n int64
	err = withDB(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx, q).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("duckdb order check of %d files: %w", len(paths), err)
	}
	return n, nil
}

func withDB(ctx context.Context, fn func(*sql.DB) error) (err error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	return fn(db)
}

// pathList renders paths as a DuckDB list literal.
func pathList(paths []string) string {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = quote(LocalPath(p))
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// quote renders s as a DuckDB string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// mod64 reduces a decimal integer (DuckDB HUGEINT) modulo 2^64.
func mod64(s string) (uint64, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return 0, fmt.Errorf("duckdb returned %q, not an integer", s)
	}
	return new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0))).Uint64(), nil
}

// ChecksumPreferDuckDB is [ChecksumTable] when floe is built with the duckdb
// tag, as here, and [ChecksumIceberg] without it: the most independent read
// of tbl's live rows the build has. Compare its Sums only with its own.
func ChecksumPreferDuckDB(ctx context.Context, tbl *table.Table) (Sum, error) {
	return ChecksumTable(ctx, tbl)
}
