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
	"github.com/apache/iceberg-go/table"
	_ "github.com/duckdb/duckdb-go/v2" // database/sql driver "duckdb"
)

// Checksum digests, with DuckDB's Parquet reader and hash(), every row of the
// Parquet files at paths (plain paths or file:// locations).
//
// Every read_parquet here passes hive_partitioning = false: DuckDB otherwise
// takes a directory named col=value, which is how Iceberg writers lay out a
// partitioned table's data files, for a Hive partition and adds a column
// derived from the path to every row. The digest of the same rows would
// then change with the directory they were written to.
func Checksum(ctx context.Context, paths []string) (Sum, error) {
	return ChecksumLive(ctx, paths, nil)
}

// ChecksumLive is [Checksum] with the position delete files posDeletes
// applied: a row is left out when a delete file lists its data file and row
// position.
func ChecksumLive(ctx context.Context, dataPaths, posDeletes []string) (Sum, error) {
	if len(dataPaths) == 0 {
		return Sum{}, nil
	}
	live := fmt.Sprintf("SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet(%s, filename = true, file_row_number = true, hive_partitioning = false)", pathList(dataPaths))
	if len(posDeletes) > 0 {
		live = fmt.Sprintf(`SELECT d.* EXCLUDE (filename, file_row_number)
FROM read_parquet(%s, filename = true, file_row_number = true, hive_partitioning = false) d
ANTI JOIN (SELECT regexp_replace(file_path, '^file://', '') AS fp, pos FROM read_parquet(%s, hive_partitioning = false)) p
ON p.fp = d.filename AND p.pos = d.file_row_number`, pathList(dataPaths), pathList(posDeletes))
	}
	q := fmt.Sprintf(`WITH live AS (%s)
SELECT count(*), CAST(coalesce(sum(hash(live)), 0) AS VARCHAR), CAST(coalesce(bit_xor(hash(live)), 0) AS VARCHAR) FROM live`, live)
	var (
		s        Sum
		sum, xor string
	)
	err := withDB(ctx, func(db *sql.DB) error {
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
// writes do not count. It returns ErrUnsupportedDeletes when equality
// deletes apply to a live file.
func ChecksumTable(ctx context.Context, tbl *table.Table) (Sum, error) {
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
		strings.Join(cols, ", "), pathList(paths))
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
		if err := insertDeleted(ctx, conn, plan); err != nil {
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
// rows a statement.
func insertDeleted(ctx context.Context, conn *sql.Conn, plan LivePlan) error {
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
		p := LocalPath(f.Path)
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
// a key column are not compared.
func OrderViolations(ctx context.Context, paths []string, keyColumns ...string) (int64, error) {
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
	list := pathList(paths)
	q := fmt.Sprintf(`WITH r AS (
  SELECT %[1]s AS k, list_position(%[2]s, filename) AS f, file_row_number AS n
  FROM read_parquet(%[2]s, filename = true, file_row_number = true, hive_partitioning = false)
), o AS (SELECT k, lag(k) OVER (ORDER BY f, n) AS prev FROM r)
SELECT count(*) FROM o WHERE prev > k`, key, list)
	var n int64
	err := withDB(ctx, func(db *sql.DB) error {
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
		quoted[i] = "'" + strings.ReplaceAll(LocalPath(p), "'", "''") + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
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
