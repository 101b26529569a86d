package collectors

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// CollectOptions tune [Collect]. The zero value is usable.
type CollectOptions struct {
	// Source forces one parser (by its Source name) for every file instead
	// of detecting the format. Default: detect per file.
	Source string
	// Strict makes the first bad record, undetectable file or unreadable
	// file fatal: Collect returns an error wrapping it. Default: count and
	// continue.
	Strict bool
	// MaxBad is how many bad records Stats.Bad keeps. Default: 20; negative
	// keeps none.
	MaxBad int
	// MaxBadPerFile is how many bad records of one input Stats.Bad keeps,
	// so that one damaged file does not hide the others; the rest are only
	// counted (FileStats.BadRecords). Default: [DefaultMaxBadPerFile];
	// negative: no limit besides MaxBad.
	MaxBadPerFile int
	// OnFile, when set, is called after each input with its counts (for
	// progress output). Default: nil.
	OnFile func(FileStats)
}

// Stats says what [Collect] read.
type Stats struct {
	Files []FileStats `json:"files"`
	// Events were passed to the sink; Duplicates were dropped because an
	// event with the same Source and QueryID was already passed on.
	Events     int `json:"events"`
	Duplicates int `json:"duplicates"`
	// BadRecords counts all bad records (and unreadable or undetectable
	// files); Bad keeps the first MaxBad of them.
	BadRecords int         `json:"bad_records"`
	Bad        []BadRecord `json:"bad,omitempty"`
	// TruncatedTails counts in-progress logs whose end was cut off — a
	// last line without its newline, or a compressed block or frame not
	// yet complete — which is expected and not a bad record: what was
	// complete is collected, the rest when the log is read again.
	TruncatedTails int `json:"truncated_tails,omitempty"`
	// Notes counts inputs skipped with a FileStats.Note.
	Notes int `json:"notes,omitempty"`
}

// DefaultMaxBadPerFile is the default of CollectOptions.MaxBadPerFile.
const DefaultMaxBadPerFile = 5

// FileStats are the counts of one input.
type FileStats struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
	// Bytes is the decompressed size read.
	Bytes      int64 `json:"bytes"`
	Events     int   `json:"events"`
	Duplicates int   `json:"duplicates"`
	BadRecords int   `json:"bad_records"`
	// Err is set when the file could not be detected or read to the end.
	Err string `json:"error,omitempty"`
	// Unrecognized is set when the file is in no format the parsers read
	// (Err says which were tried).
	Unrecognized bool `json:"unrecognized,omitempty"`
	// Note says why an input was skipped without an error (see
	// [Input.Note]).
	Note string `json:"note,omitempty"`
	// TruncatedTail is set when the input is in progress and its end was
	// cut off (see Stats.TruncatedTails).
	TruncatedTail bool `json:"truncated_tail,omitempty"`
	kept          int  // bad records of this input kept in Stats.Bad
}

// Collect reads every input under paths (see [Open]), detects each one's
// format among parsers (or uses opts.Source), parses it and passes each
// event to sink once.
//
// Deduplication is per run and keyed on Source + QueryID; each parser forms
// QueryID so that the duplicates its engine writes collide:
//   - trino-event: the Trino query id. Files holding QueryCreatedEvent and
//     QueryCompletedEvent yield only the completed one; a completed event
//     delivered twice (Kafka redelivery, overlapping exports) is dropped here.
//   - spark-eventlog: "<appId>/<executionId>". The parser folds the start,
//     every SparkListenerSQLAdaptiveExecutionUpdate (AQE re-plans) and the end
//     of one execution into one event; the same log read twice (an
//     .inprogress copy and the finished file) is dropped here.
//   - duckdb-log: a hash of connection id, message and time; DuckDB 2.0's
//     doubled entry of a statement gets the id of the first one.
//   - duckdb-history, duckdb-profile: hashes of the record itself.
//
// Idempotence across runs is the state store's job (unique source+query_id).
//
// Bad records are counted per file and the first opts.MaxBad kept with
// file:line, at most opts.MaxBadPerFile of each file. A cut-off end of an
// in-progress input (a last line without its newline, a compressed block
// or frame not yet complete) is not a bad record: what was complete is
// collected, and the rest when the grown file is read again. A Spark
// rolling log directory without parts yet is skipped with a
// FileStats.Note. One input's failure never stops the others unless
// opts.Strict. sink errors and context cancellation stop Collect at once and are
// returned wrapped; so is the first bad record when opts.Strict is set.
func Collect(ctx context.Context, parsers []Parser, opts CollectOptions, paths []string, sink func(QueryEvent) error) (Stats, error) {
	var st Stats
	maxBad := opts.MaxBad
	if maxBad == 0 {
		maxBad = 20
	}
	var forced Parser
	if opts.Source != "" {
		p, err := ParserFor(parsers, opts.Source)
		if err != nil {
			return st, err
		}
		forced = p
	}
	inputs, err := Open(ctx, paths)
	if err != nil {
		return st, err
	}
	seen := make(map[[16]byte]struct{})
	perFile := opts.MaxBadPerFile
	if perFile == 0 {
		perFile = DefaultMaxBadPerFile
	}
	c := &collector{st: &st, maxBad: maxBad, perFile: perFile, strict: opts.Strict, seen: seen, sink: sink}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := c.collectInput(ctx, parsers, forced, in); err != nil {
			return st, err
		}
		if opts.OnFile != nil {
			opts.OnFile(st.Files[len(st.Files)-1])
		}
	}
	return st, nil
}

type collector struct {
	st      *Stats
	maxBad  int
	perFile int
	strict  bool
	// seen holds a 128-bit hash of each Source+QueryID passed on: a map
	// without pointers, which the garbage collector does not scan, so a run
	// over millions of events stays cheap. Accidental collisions are
	// negligible at 2^-128.
	seen map[[16]byte]struct{}
	sink func(QueryEvent) error
}

// sinkError marks an error returned by the caller's sink so it is not
// mistaken for a problem with the file.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

func (c *collector) addBad(fs *FileStats, b BadRecord) error {
	fs.BadRecords++
	c.st.BadRecords++
	if len(c.st.Bad) < c.maxBad && (c.perFile < 0 || fs.kept < c.perFile) {
		c.st.Bad = append(c.st.Bad, b)
		fs.kept++
	}
	if c.strict {
		return fmt.Errorf("strict mode: %w", b)
	}
	return nil
}

func (c *collector) collectInput(ctx context.Context, parsers []Parser, forced Parser, in Input) (err error) {
	c.st.Files = append(c.st.Files, FileStats{Name: in.Name})
	fs := &c.st.Files[len(c.st.Files)-1]
	if in.Err == nil && len(in.Parts) == 0 && in.Note != "" {
		fs.Note = in.Note
		c.st.Notes++
		return nil
	}
	fileErr := func(e error) error {
		fs.Err = e.Error()
		return c.addBad(fs, BadRecord{File: in.Name, Reason: e.Error(), Err: e})
	}
	rc, err := in.Open()
	if err != nil {
		return fileErr(err)
	}
	defer func() {
		if cerr := rc.Close(); cerr != nil && err == nil && fs.Err == "" {
			err = fileErr(fmt.Errorf("close %s: %w", in.Name, cerr))
		}
	}()
	cr := &countingReader{r: rc}
	head, rerr := readHead(cr)
	n := len(head)
	var rest io.Reader = cr
	switch {
	case rerr != nil && n == 0:
		return fileErr(fmt.Errorf("read %s: %w", in.Name, rerr))
	case rerr != nil:
		rest = errReader{rerr} // parse what was read, then fail
	}
	// A UTF-8 byte order mark (Windows tools write one) is not content;
	// parsers and detection see the text after it.
	head = bytes.TrimPrefix(head, bom)
	if len(bytes.TrimSpace(head)) == 0 && n < DetectBytes {
		return nil // empty or white space only: nothing to collect
	}
	p := forced
	if p == nil {
		p, err = Detect(parsers, filepath.Base(in.Name), head)
		if err != nil {
			fs.Unrecognized = errors.Is(err, ErrUnrecognized)
			return fileErr(err)
		}
	}
	fs.Source = p.Source()
	emit := func(ev QueryEvent) error {
		key := dedupeKey(ev.Source, ev.QueryID)
		if _, dup := c.seen[key]; dup {
			fs.Duplicates++
			c.st.Duplicates++
			return nil
		}
		c.seen[key] = struct{}{}
		if err := c.sink(ev); err != nil {
			return &sinkError{err}
		}
		fs.Events++
		c.st.Events++
		return nil
	}
	cutLine := false // the cut-off last line of an in-progress input was bad
	bad := func(b BadRecord) error {
		if in.InProgress && cr.eof && !cr.endsNL() && b.Line > 0 && b.Line == cr.lines() {
			cutLine = true
			return nil
		}
		return c.addBad(fs, b)
	}
	perr := p.Parse(ctx, in.Name, io.MultiReader(bytes.NewReader(head), rest), emit, bad)
	fs.Bytes = cr.n
	if cutLine || CutOff(rc) != "" {
		fs.TruncatedTail = true
		c.st.TruncatedTails++
	}
	if perr == nil {
		return nil
	}
	var se *sinkError
	switch {
	case errors.As(perr, &se):
		return fmt.Errorf("collect %s: %w", in.Name, se.err)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(perr, new(BadRecord)) && c.strict:
		return fmt.Errorf("collect %s: %w", in.Name, perr)
	}
	return fileErr(fmt.Errorf("parse %s as %s: %w", in.Name, p.Source(), perr))
}

// readHead reads the first DetectBytes of r, fewer at its end, and what
// it read before an error. Unlike
// io.ReadFull it keeps a decoder's io.ErrUnexpectedEOF (a damaged stream)
// apart from a short file.
func readHead(r io.Reader) ([]byte, error) {
	head := make([]byte, DetectBytes)
	n := 0
	for n < len(head) {
		m, err := r.Read(head[n:])
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return head[:n], err
		}
	}
	return head[:n], nil
}

func dedupeKey(source, id string) [16]byte {
	h := sha256.New()
	_, _ = io.WriteString(h, source) // hash writes never fail
	_, _ = h.Write([]byte{0})
	_, _ = io.WriteString(h, id)
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// countingReader counts bytes and newlines and remembers whether the
// stream ended, so that a cut-off last line can be recognized.
type countingReader struct {
	r        io.Reader
	n        int64
	newlines int
	last     byte
	eof      bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n += int64(n)
		c.newlines += bytes.Count(p[:n], []byte{'\n'})
		c.last = p[n-1]
	}
	if errors.Is(err, io.EOF) {
		c.eof = true
	}
	return n, err
}

func (c *countingReader) endsNL() bool { return c.n == 0 || c.last == '\n' }

// lines is the number of the last line: newlines, plus one for a last line
// without a terminator.
func (c *countingReader) lines() int {
	if c.endsNL() {
		return c.newlines
	}
	return c.newlines + 1
}
