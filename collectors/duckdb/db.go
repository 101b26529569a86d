package duckdb

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/floe-project/floe/collectors"
)

// ErrNoDuckDB is returned by [DBParser.Parse] in builds without the duckdb
// tag. Test with errors.Is.
var ErrNoDuckDB = errors.New("reading .duckdb files needs floe built with -tags duckdb")

// DBParser reads a DuckDB database file (.duckdb) holding logged queries:
// every table with the columns of the duckdb_logs view (at least message
// and timestamp; type when present must be QueryLog), as written by
// CREATE TABLE … AS FROM duckdb_logs. Reading needs cgo and a floe built
// with -tags duckdb; other builds detect the file and say so.
type DBParser struct{}

// Source returns "duckdb-db".
func (DBParser) Source() string { return SourceDB }

// Detect checks the DuckDB file magic ("DUCK" at byte 8).
func (DBParser) Detect(_ string, head []byte) bool {
	return len(head) >= 12 && bytes.Equal(head[8:12], []byte("DUCK"))
}

// Parse opens the database at name read-only (r is not used: DuckDB reads
// the file itself) and emits one event per QueryLog row, with the same
// QueryID rules as [LogParser].
func (DBParser) Parse(ctx context.Context, name string, _ io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return readDB(ctx, name, emit, bad)
}
