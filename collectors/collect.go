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
	// TruncatedTails counts cut-off last lines of in-progress logs, which
	// are expected and not bad records.
	TruncatedTails int `json:"truncated_tails,omitempty"`
}

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
// file:line. A cut-off last line of an in-progress input is not a bad
// record. sink errors and context cancellation stop Collect at once and are
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
	c := &collector{st: &st, maxBad: maxBad, strict: opts.Strict, seen: seen, sink: sink}
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
	st     *Stats
	maxBad int
	strict bool
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
	if len(c.st.Bad) < c.maxBad {
		c.st.Bad = append(c.st.Bad, b)
	}
	if c.strict {
		return fmt.Errorf("strict mode: %w", b)
	}
	return nil
}

func (c *collector) collectInput(ctx context.Context, parsers []Parser, forced Parser, in Input) (err error) {
	c.st.Files = append(c.st.Files, FileStats{Name: in.Name})
	fs := &c.st.Files[len(c.st.Files)-1]
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
	head := make([]byte, DetectBytes)
	n, rerr := io.ReadFull(cr, head)
	head = head[:n]
	if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
		return fileErr(fmt.Errorf("read %s: %w", in.Name, rerr))
	}
	if n == 0 {
		return nil // empty file: nothing to collect
	}
	p := forced
	if p == nil {
		p, err = Detect(parsers, filepath.Base(in.Name), head)
		if err != nil {
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
	bad := func(b BadRecord) error {
		if in.InProgress && cr.eof && !cr.endsNL() && b.Line > 0 && b.Line == cr.lines() {
			c.st.TruncatedTails++
			return nil
		}
		return c.addBad(fs, b)
	}
	perr := p.Parse(ctx, in.Name, io.MultiReader(bytes.NewReader(head), cr), emit, bad)
	fs.Bytes = cr.n
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
