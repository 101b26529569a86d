//go:build duckdb

package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// RowLineage reads, with DuckDB's Parquet reader, the row lineage of every
// row of files (deletes not applied), keyed by the int64 column key: the
// values the files hold in their _row_id and _last_updated_sequence_number
// columns, else the inherited ones (see [LineageFile]): the same as
// [RowLineageParquet], by another reader. A row with neither, or a key seen
// twice, is an error. Files not on a local path are downloaded through fio
// first (see [Checksum]).
func RowLineage(ctx context.Context, fio iceio.IO, files []LineageFile, key string) (_ map[int64]Lineage, err error) {
	out := lineageTable{}
	locs := make([]string, len(files))
	for i, f := range files {
		locs[i] = f.Path
	}
	local, done, err := localCopies(ctx, fio, locs)
	if err != nil {
		return nil, fmt.Errorf("row lineage: %w", err)
	}
	defer func() { err = errors.Join(err, done()) }()
	err = withDB(ctx, func(db *sql.DB) error {
		for _, f := range files {
			if err := duckFileLineage(ctx, db, f, local[f.Path], key, out); err != nil {
				return fmt.Errorf("row lineage of %s: %w", f.Path, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func duckFileLineage(ctx context.Context, db *sql.DB, f LineageFile, path, key string, out lineageTable) error {
	src := pathList([]string{path})
	has := map[string]bool{}
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT name FROM parquet_schema(%s)", src))
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		has[name] = true
	}
	if err := rows.Close(); err != nil {
		return err
	}
	// A column the file lacks reads as null, as the spec has readers
	// treat it; a null is then inherited.
	value := func(col string, inherited *int64, plusPosition bool) string {
		stored := "NULL::BIGINT"
		if has[col] {
			stored = `"` + col + `"`
		}
		if inherited == nil {
			return stored
		}
		v := strconv.FormatInt(*inherited, 10)
		if plusPosition {
			v += " + file_row_number"
		}
		return "coalesce(" + stored + ", " + v + ")"
	}
	q := fmt.Sprintf(`SELECT "%s", %s, %s FROM read_parquet(%s, file_row_number = true, hive_partitioning = false)`,
		strings.ReplaceAll(key, `"`, `""`),
		value("_row_id", f.FirstRowID, true),
		value("_last_updated_sequence_number", f.DataSequenceNumber, false),
		src)
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k        int64
			rid, seq sql.NullInt64
		)
		if err := rows.Scan(&k, &rid, &seq); err != nil {
			return err
		}
		if !rid.Valid || !seq.Valid {
			return fmt.Errorf("%s %d has no row lineage (_row_id %v, _last_updated_sequence_number %v)", key, k, rid, seq)
		}
		if err := out.add(f.Path, k, Lineage{RowID: rid.Int64, LastUpdatedSequenceNumber: seq.Int64}); err != nil {
			return err
		}
	}
	return rows.Err()
}
