package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/floe-project/floe/collectors"
)

// MaxBadRecords is how many bad records a [Report] keeps; all are counted.
const MaxBadRecords = 100

// DefaultBatchSize is how many events go into one store transaction.
const DefaultBatchSize = 500

// EventStore keeps normalized events; the HTTP endpoints ([Handler],
// [Serve]) need only this. The control plane's state store (control/store's
// Store) implements it.
type EventStore interface {
	// InsertEvents stores events, skipping those already stored under the
	// same source and query id, and says how many were new and how many
	// were duplicates.
	InsertEvents(ctx context.Context, events []collectors.QueryEvent) (inserted, duplicates int, err error)
}

// Store is where [Run] puts what it collects: the events, and a record of
// each input read to the end so that an unchanged one is skipped next
// time. The control plane's state store implements it.
type Store interface {
	EventStore
	// File returns the record of path; ok is false when path was never
	// collected.
	File(ctx context.Context, path string) (rec collectors.FileRecord, ok bool, err error)
	// RecordFile inserts or replaces the record of rec.Path.
	RecordFile(ctx context.Context, rec collectors.FileRecord) error
}

// Options configure [Run].
type Options struct {
	// Paths are files, directories or glob patterns, as [collectors.Open]
	// takes them.
	Paths []string
	// Source forces one parser by its Source name ("trino-event", …)
	// instead of detecting each file's format. Default: detect.
	Source string
	// Strict makes the first bad record (or unreadable, undetectable
	// file) fatal: Run returns an error naming it with file:line.
	Strict bool
	// Force reads files even when their size and modification time are
	// unchanged since they were last collected.
	Force bool
	// Parsers are the formats to detect among (the wiring list).
	Parsers []collectors.Parser
	// Resolver finds tables and their schemas in the floe catalogs.
	Resolver Resolver
	// Catalogs maps engine catalogs to floe catalogs and names the
	// default catalog.
	Catalogs Catalogs
	// BatchSize is how many events are stored per transaction. Default:
	// [DefaultBatchSize].
	BatchSize int
	// MaxSQLBytes caps the SQL text stored per event (see
	// [Normalizer.MaxSQLBytes]). Default: [DefaultMaxSQLBytes]; negative
	// keeps every text whole.
	MaxSQLBytes int
}

// Validate reports every missing option at once.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Paths) == 0 {
		errs = append(errs, errors.New("paths: at least one path is required"))
	}
	if len(o.Parsers) == 0 {
		errs = append(errs, errors.New("parsers: none given"))
	}
	if o.Resolver == nil {
		errs = append(errs, errors.New("resolver: required"))
	}
	if o.Catalogs == nil {
		errs = append(errs, errors.New("catalogs: required"))
	}
	if o.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("batch size: %d is negative", o.BatchSize))
	}
	return errors.Join(errs...)
}

// FileReport says what happened to one input.
type FileReport struct {
	// Path is the input as collected: a file, or a Spark rolling event log
	// directory.
	Path   string `json:"path"`
	Source string `json:"source,omitempty"`
	// Events were read (after per-file deduplication); Inserted were new
	// to the store; Duplicates were already stored or repeated in the file.
	Events     int `json:"events"`
	Inserted   int `json:"inserted"`
	Duplicates int `json:"duplicates"`
	// Bad counts malformed records (the first ones are in Report.BadRecords).
	Bad int `json:"bad"`
	// Skipped is true when the file was unchanged since it was last
	// collected and not read.
	Skipped bool `json:"skipped,omitempty"`
	// Error is set when the file could not be detected or read to the end.
	Error string `json:"error,omitempty"`
	// Unrecognized is set when the file is in no log format floe reads
	// (Error lists those tried); `floe collect` then exits 1.
	Unrecognized bool `json:"unrecognized,omitempty"`
	// Note says why an input was skipped without an error: a Spark
	// rolling event log directory without events yet (see
	// [collectors.Input.Note]).
	Note string `json:"note,omitempty"`
	// TruncatedTail is set when the input is a log still being written
	// whose end was cut off; what was complete was collected, the rest is
	// read when the file has grown.
	TruncatedTail bool `json:"truncated_tail,omitempty"`
}

// Report is what [Run] did.
type Report struct {
	Files []FileReport `json:"files"`
	// Totals over Files.
	Events     int `json:"events"`
	Inserted   int `json:"inserted"`
	Duplicates int `json:"duplicates"`
	Bad        int `json:"bad"`
	Skipped    int `json:"skipped"`
	// BadRecords are the first [MaxBadRecords] bad records, with file:line,
	// at most [collectors.DefaultMaxBadPerFile] of each file (FileReport.Bad
	// counts them all).
	BadRecords []collectors.BadRecord `json:"bad_records,omitempty"`
	// Unresolved counts, per table name as the query wrote it (with the
	// event's defaults applied), the events that referenced a table the
	// catalogs do not know: views, temp tables, CTE names, other catalogs.
	Unresolved map[string]int `json:"unresolved,omitempty"`
	// Warnings counts what was dropped during normalization, by message
	// ("column local.web.events.foo not in schema").
	Warnings map[string]int `json:"warnings,omitempty"`
}

// Run collects the inputs under opts.Paths into st: each file's format is
// detected (or forced), its events are parsed, normalized — SQL parsed
// with the engine's dialect and merged with what the source reported,
// tables resolved in the floe catalogs, columns spelled as the schema
// spells them, literals typed by their columns — and stored.
//
// Collection is incremental and idempotent: a file whose size and
// modification time match its record in st is skipped unless opts.Force,
// and events already stored (same source and query id) are counted as
// duplicates. Bad records are counted and reported with file:line while
// the rest of the file is collected; with opts.Strict the first one stops
// the run. A file is recorded as collected only when it was read to the
// end.
//
// The report is returned also with an error, holding what was done before
// it.
func Run(ctx context.Context, opts Options, st Store) (Report, error) {
	rep, err := run(ctx, opts, st)
	return *rep, err
}

func run(ctx context.Context, opts Options, st Store) (*Report, error) {
	rep := &Report{Unresolved: map[string]int{}, Warnings: map[string]int{}}
	if err := opts.Validate(); err != nil {
		return rep, fmt.Errorf("collect: %w", err)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Source != "" {
		if _, err := collectors.ParserFor(opts.Parsers, opts.Source); err != nil {
			return rep, fmt.Errorf("collect: %w", err)
		}
	}
	inputs, err := collectors.Open(ctx, opts.Paths)
	if err != nil {
		return rep, fmt.Errorf("collect: %w", err)
	}
	nz := NewNormalizer(opts.Catalogs, opts.Resolver)
	nz.MaxSQLBytes = opts.MaxSQLBytes
	norm := &normalizer{n: nz, rep: rep}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		err := collectInput(ctx, opts, st, norm, rep, in)
		fr := rep.Files[len(rep.Files)-1]
		rep.Events += fr.Events
		rep.Inserted += fr.Inserted
		rep.Duplicates += fr.Duplicates
		rep.Bad += fr.Bad
		if fr.Skipped {
			rep.Skipped++
		}
		if err != nil {
			return rep, err
		}
	}
	for _, p := range opts.Parsers {
		if f, ok := p.(Flusher); ok {
			if err := flushParser(ctx, opts, st, norm, rep, p.Source(), f); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// Flusher is a parser that holds records back until it has seen every
// input, such as the Snowflake joiner pairing QUERY_HISTORY and
// ACCESS_HISTORY rows. [Run] calls Flush once after the last input and
// stores what it emits.
type Flusher interface {
	Flush(emit func(collectors.QueryEvent) error) error
}

// flushParser stores the events a Flusher held back, reported as a
// FileReport with Path "(flush)".
func flushParser(ctx context.Context, opts Options, st Store, norm *normalizer, rep *Report, source string, f Flusher) error {
	fr := FileReport{Path: "(flush)", Source: source}
	b := &batcher{st: st, size: opts.BatchSize, fr: &fr}
	err := f.Flush(func(ev collectors.QueryEvent) error {
		if err := norm.normalize(ctx, &ev); err != nil {
			return err
		}
		fr.Events++
		return b.add(ctx, ev)
	})
	if err == nil {
		err = b.flush(ctx)
	}
	if fr.Events > 0 {
		rep.Files = append(rep.Files, fr)
		rep.Events += fr.Events
		rep.Inserted += fr.Inserted
		rep.Duplicates += fr.Duplicates
	}
	if err != nil {
		return fmt.Errorf("flush %s: %w", source, err)
	}
	return nil
}

// batcher stores events in transactions of size events.
type batcher struct {
	st    EventStore
	size  int
	fr    *FileReport
	batch []collectors.QueryEvent
}

func (b *batcher) add(ctx context.Context, ev collectors.QueryEvent) error {
	b.batch = append(b.batch, ev)
	if len(b.batch) >= b.size {
		return b.flush(ctx)
	}
	return nil
}

func (b *batcher) flush(ctx context.Context) error {
	if len(b.batch) == 0 {
		return nil
	}
	ins, dup, err := b.st.InsertEvents(ctx, b.batch)
	if err != nil {
		return err
	}
	b.fr.Inserted += ins
	b.fr.Duplicates += dup
	b.batch = b.batch[:0]
	return nil
}

// fileState is the size and latest modification time of an input's parts.
func fileState(in collectors.Input) (int64, time.Time, error) {
	if in.Err != nil {
		return 0, time.Time{}, in.Err
	}
	var size int64
	var mtime time.Time
	for _, p := range in.Parts {
		fi, err := os.Stat(p)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("stat %s: %w", p, err)
		}
		size += fi.Size()
		if fi.ModTime().After(mtime) {
			mtime = fi.ModTime()
		}
	}
	return size, mtime.UTC(), nil
}

func collectInput(ctx context.Context, opts Options, st Store, norm *normalizer, rep *Report, in collectors.Input) error {
	rep.Files = append(rep.Files, FileReport{Path: in.Name})
	fr := &rep.Files[len(rep.Files)-1]
	key, err := filepath.Abs(in.Name)
	if err != nil {
		return fmt.Errorf("collect %s: %w", in.Name, err)
	}
	size, mtime, err := fileState(in)
	if err != nil {
		// Gone or unreadable since it was listed: a bad input, not a
		// failed run, unless strict.
		b := collectors.BadRecord{File: in.Name, Reason: err.Error(), Err: err}
		fr.Bad, fr.Error = 1, err.Error()
		if len(rep.BadRecords) < MaxBadRecords {
			rep.BadRecords = append(rep.BadRecords, b)
		}
		if opts.Strict {
			return fmt.Errorf("strict mode: %w", b)
		}
		return nil
	}
	if len(in.Parts) == 0 {
		fr.Note = in.Note // nothing to read yet; nothing to record
		return nil
	}
	if !opts.Force {
		rec, ok, err := st.File(ctx, key)
		if err != nil {
			return fmt.Errorf("collect %s: %w", in.Name, err)
		}
		if ok && rec.Unchanged(size, mtime) {
			fr.Skipped, fr.Source = true, rec.Source
			return nil
		}
	}
	b := &batcher{st: st, size: opts.BatchSize, fr: fr}
	sink := func(ev collectors.QueryEvent) error {
		if err := norm.normalize(ctx, &ev); err != nil {
			return err
		}
		return b.add(ctx, ev)
	}
	maxBad := MaxBadRecords - len(rep.BadRecords)
	if maxBad <= 0 {
		maxBad = -1
	}
	stats, cerr := collectors.Collect(ctx, opts.Parsers, collectors.CollectOptions{
		Source: opts.Source, Strict: opts.Strict, MaxBad: maxBad,
	}, []string{escapeGlob(in.Name)}, sink)
	rep.BadRecords = append(rep.BadRecords, stats.Bad...)
	if len(stats.Files) > 0 {
		fs := stats.Files[0]
		fr.Source, fr.Events, fr.Bad, fr.Error = fs.Source, fs.Events, fs.BadRecords, fs.Err
		fr.TruncatedTail = fs.TruncatedTail
		fr.Unrecognized = fs.Unrecognized
		fr.Duplicates += fs.Duplicates
	}
	if cerr != nil {
		return cerr
	}
	if err := b.flush(ctx); err != nil {
		return fmt.Errorf("collect %s: %w", in.Name, err)
	}
	if fr.Error != "" {
		return nil // not read to the end: try again next time
	}
	return st.RecordFile(ctx, collectors.FileRecord{
		Path: key, Source: fr.Source, Size: size, ModTime: mtime, Events: fr.Events, Bad: fr.Bad,
	})
}

// normalizer runs a [Normalizer] and adds its notes to a report.
type normalizer struct {
	n   *Normalizer
	rep *Report
}

func (r *normalizer) normalize(ctx context.Context, ev *collectors.QueryEvent) error {
	notes, err := r.n.Normalize(ctx, ev)
	for _, name := range notes.Unresolved {
		r.rep.Unresolved[name]++
	}
	for _, msg := range notes.Warnings {
		if _, ok := r.rep.Warnings[msg]; !ok && len(r.rep.Warnings) >= maxWarningKinds {
			msg = "further warnings omitted"
		}
		r.rep.Warnings[msg]++
	}
	return err
}

// escapeGlob quotes the glob metacharacters of a path that names one input,
// since [collectors.Collect] expands patterns.
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, "*?[") {
		return p
	}
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '*', '?', '[':
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
