package duckdb

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/floe-project/floe/collectors"
)

// HistoryParser reads the DuckDB CLI's ~/.duckdb_history: SQL statements
// terminated by ';', possibly spanning lines, and dot commands (.mode,
// .read …), which are skipped. The history has no times, users or states:
// every statement gets the file's modification time as StartTime (an upper
// bound) and State UNKNOWN, and QueryID hashes the file's base name, the
// statement's first line number and its text. The CLI keeps the last 1000
// entries, so line numbers shift once the file is full: collecting it again
// later can store a statement twice.
type HistoryParser struct{}

// Source returns "duckdb-history".
func (HistoryParser) Source() string { return SourceHistory }

// Detect accepts files named like .duckdb_history that are not JSON or CSV
// logs.
func (HistoryParser) Detect(name string, head []byte) bool {
	if !strings.Contains(strings.ToLower(name), "duckdb_history") {
		return false
	}
	h := bytes.TrimLeft(head, " \t\r\n")
	return len(h) == 0 || (h[0] != '{' && h[0] != '[' && bytes.IndexByte(head, 0) < 0)
}

// Parse splits the history into statements.
func (HistoryParser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	mtime := fileTime(name)
	base := filepath.Base(name)
	lr := collectors.NewLineReader(r)
	var stmt strings.Builder
	startLine := 0
	var quote byte
	flush := func() error {
		sql := strings.TrimSpace(stmt.String())
		stmt.Reset()
		if sql == "" || sql == ";" {
			return nil
		}
		return emit(collectors.QueryEvent{
			Source:        SourceHistory,
			Engine:        collectors.EngineDuckDB,
			QueryID:       collectors.StableID(SourceHistory, base, strconv.Itoa(startLine), sql),
			StartTime:     mtime,
			State:         collectors.StateUnknown,
			StatementType: collectors.ClassifyStatement(sql),
			SQL:           sql,
			SQLTemplate:   collectors.HasPlaceholder(sql),
		})
	}
	for {
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text := string(line)
		if stmt.Len() == 0 {
			t := strings.TrimSpace(text)
			if t == "" || strings.HasPrefix(t, ".") {
				continue // blank line or dot command
			}
			startLine = n
		} else {
			stmt.WriteByte('\n')
		}
		// Split on ';' outside quotes; a line may hold several statements.
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				stmt.WriteString(text[i:])
				i = len(text)
				continue
			case c == ';':
				stmt.WriteByte(';')
				if err := flush(); err != nil {
					return err
				}
				startLine = n
				continue
			}
			stmt.WriteByte(c)
		}
		if strings.TrimSpace(stmt.String()) == "" {
			stmt.Reset()
		}
	}
	if rest := strings.TrimSpace(stmt.String()); rest != "" {
		return bad(collectors.BadRecord{File: name, Line: startLine, Reason: "statement without a terminating ';'"})
	}
	return nil
}
