package collectors

import (
	"context"
	"fmt"
	"io"
)

// Parser turns one source's log format into [QueryEvent]s. Each
// sub-package of collectors (trino, spark, athena, snowflake, duckdb,
// icebergscan) provides one or more Parsers; they are registered explicitly
// in one wiring file, not through init.
type Parser interface {
	// Source is the name used with --source and stored on every event,
	// such as "trino-event" or "spark-eventlog".
	Source() string
	// Detect reports whether a file whose first bytes (decompressed, up to
	// 64 KiB) are head, and whose base name is name, is in this format.
	// It must be cheap and must not panic on any input.
	Detect(name string, head []byte) bool
	// Parse reads r to the end, calling emit for every event and bad for
	// every malformed record, and returns only when reading itself fails,
	// ctx is cancelled, or emit / bad return an error (which Parse returns
	// unchanged). name is used in BadRecord positions.
	Parse(ctx context.Context, name string, r io.Reader, emit func(QueryEvent) error, bad func(BadRecord) error) error
}

// BadRecord is a record a parser could not read. The rest of the file is
// still collected unless the caller is strict.
type BadRecord struct {
	File string `json:"file"`
	// Line is 1-based; 0 when the format has no lines (a JSON array, a
	// binary file), in which case Offset or Index locates the record.
	Line   int    `json:"line,omitempty"`
	Index  int    `json:"index,omitempty"`
	Reason string `json:"reason"`
	// Err is the error behind a file-level bad record (an unrecognized
	// format, an unsupported codec, a read error), for errors.Is; nil for
	// malformed records.
	Err error `json:"-"`
}

// Unwrap returns Err.
func (b BadRecord) Unwrap() error { return b.Err }

// Error formats the record as file:line: reason.
func (b BadRecord) Error() string {
	switch {
	case b.Line > 0:
		return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason)
	case b.Index > 0:
		return fmt.Sprintf("%s: record %d: %s", b.File, b.Index, b.Reason)
	default:
		return fmt.Sprintf("%s: %s", b.File, b.Reason)
	}
}
