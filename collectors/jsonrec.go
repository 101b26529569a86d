package collectors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadJSONRecords reads r as one of the JSON shapes logs come in and calls
// fn with each top-level record:
//   - NDJSON (one value per line);
//   - a JSON array of records;
//   - a stream of (pretty-printed) values, any of which may be an array of
//     records, so that several documents in one file are all read.
//
// pos carries File = name and Line, the line the record starts on (in
// arrays and streams also Index, the 1-based record), so a parser reports
// a bad record by setting pos.Reason and passing pos to bad. A leading
// UTF-8 byte order mark is skipped. NDJSON lines are passed on unchecked
// (fn reports those it cannot decode, see [JSONReason]); in array and
// stream form a syntax error is reported here, at its line, and ends the
// file, since the rest cannot be re-synchronized.
// Errors from fn and bad are returned unchanged.
func ReadJSONRecords(ctx context.Context, name string, r io.Reader, fn func(rec []byte, pos BadRecord) error, bad func(BadRecord) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	peek, err := br.Peek(64 << 10)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	if bytes.HasPrefix(peek, bom) {
		if _, err := br.Discard(len(bom)); err != nil {
			return err
		}
		peek = peek[len(bom):]
	}
	trimmed := bytes.TrimLeft(peek, " \t\r\n")
	if len(trimmed) == 0 {
		return nil
	}
	first := trimmed
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	first = bytes.TrimSpace(first)
	if trimmed[0] == '[' || trimmed[0] == '{' && len(first) > 0 && first[len(first)-1] != '}' && bytes.IndexByte(trimmed, '\n') >= 0 {
		return readJSONStream(ctx, name, br, trimmed[0] == '[', fn, bad)
	}
	lr := NewLineReader(br)
	for {
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := fn(line, BadRecord{File: name, Line: n}); err != nil {
			return err
		}
	}
}

var bom = []byte("\ufeff")

// readJSONStream reads a stream of top-level values; the elements of an
// array value are the records (the first array is streamed, later ones
// are read whole).
func readJSONStream(ctx context.Context, name string, r io.Reader, array bool, fn func([]byte, BadRecord) error, bad func(BadRecord) error) error {
	lc := &lineCounter{r: r}
	dec := json.NewDecoder(lc)
	index := 0
	record := func(raw []byte, start int64) error {
		index++
		if index%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(raw, BadRecord{File: name, Line: lc.lineAt(start), Index: index})
	}
	syntax := func(what string, err error) error {
		return bad(BadRecord{File: name, Line: lc.lineAt(errOffset(err, dec.InputOffset())), Index: index + 1, Reason: fmt.Sprintf("invalid JSON%s: %v", what, err)})
	}
	for first := true; ; first = false {
		if first && array {
			if _, err := dec.Token(); err != nil {
				return syntax(" array", err)
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return syntax("", err)
				}
				if err := record(raw, dec.InputOffset()-int64(len(raw))); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return syntax(" array end", err)
			}
			continue
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return syntax("", err)
		}
		start := dec.InputOffset() - int64(len(raw))
		if len(raw) == 0 || raw[0] != '[' {
			if err := record(raw, start); err != nil {
				return err
			}
			continue
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return syntax(" array", err)
		}
		for _, e := range elems {
			// An element's start is not known to the byte: the array's
			// line stands for its elements.
			if err := record(e, start); err != nil {
				return err
			}
		}
	}
}

// errOffset is where a decoding error happened: a syntax error's offset,
// else the decoder's position.
func errOffset(err error, at int64) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 {
		return se.Offset - 1
	}
	return at
}

// lineCounter counts the lines of what a json.Decoder reads, so that
// offsets the decoder reports (which only grow) can be turned into line
// numbers without keeping every line's offset.
type lineCounter struct {
	r     io.Reader
	read  int64   // bytes read so far
	nl    []int64 // offsets of newlines read and not yet passed by lineAt
	lines int     // newlines before nl[0]
}

func (l *lineCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.nl = append(l.nl, l.read+int64(i))
		}
	}
	l.read += int64(n)
	return n, err
}

// lineAt returns the 1-based line of offset off; off must not be less
// than in an earlier call.
func (l *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(l.nl) && l.nl[i] < off {
		i++
	}
	l.lines += i
	l.nl = l.nl[i:]
	return l.lines + 1
}

// JSONReason is a BadRecord reason for a record that failed to decode.
func JSONReason(rec []byte, err error) string {
	return fmt.Sprintf("invalid JSON: %v%s", err, snippet(rec))
}

// JSONLine returns the 1-based line of data at which decoding it failed
// with err (a *json.SyntaxError carries the offset), and 1 when err says
// nothing about where.
func JSONLine(data []byte, err error) int {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset <= 0 {
		return 1
	}
	off := min(int(se.Offset), len(data))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// snippet quotes the start of a bad record for a BadRecord reason.
func snippet(b []byte) string {
	const max = 60
	if len(b) > max {
		return fmt.Sprintf(" (starts %q…)", b[:max])
	}
	return fmt.Sprintf(" (%q)", b)
}
