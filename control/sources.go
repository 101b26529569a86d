package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

// Poller reads one polled telemetry source (a Trino coordinator, an
// Athena workgroup, a Snowflake account) from a cursor: the events that arrived after it and
// the cursor to pass next time. The cursor is the poller's own text (a
// watermark), kept in the state store between polls and restarts; "" is
// the first poll.
type Poller interface {
	// Poll returns the events after cursor and the next cursor. An error
	// leaves the cursor where it was, so nothing is skipped.
	Poll(ctx context.Context, cursor string) (events []collectors.QueryEvent, next string, err error)
	// Ping checks that the source answers and that floe may read it,
	// reading as little as it can (floe doctor).
	Ping(ctx context.Context) (detail string, err error)
	// Close releases the poller's connections.
	Close() error
}

// OpenPollerFunc opens the poller of a configured source.
type OpenPollerFunc func(ctx context.Context, src config.SourceConfig) (Poller, error)

// pollers is the registry of polled source kinds: each kind's opener. A
// kind is added here (with its entry in control/config's sourceKinds and
// its keys on config.SourceConfig); files are collected through
// collectors/ingest and need no poller.
var pollers = map[string]OpenPollerFunc{
	config.SourceTrino:     openTrinoPoller,
	config.SourceAthena:    openAthenaPoller,
	config.SourceSnowflake: openSnowflakePoller,
}

// SourceReport is what one collection of one telemetry source did.
type SourceReport struct {
	// Source and Kind are the source's name and kind; Target names it
	// without secrets.
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Events were read; Inserted were new to the store; Duplicates were
	// stored already (an overlapping poll, a file read again).
	Events     int `json:"events"`
	Inserted   int `json:"inserted"`
	Duplicates int `json:"duplicates"`
	// Bad counts malformed records; Skipped, files unchanged since they
	// were last collected (kind files).
	Bad     int `json:"bad"`
	Skipped int `json:"skipped"`
	// Cursor is a polled source's cursor after the collection.
	Cursor string `json:"cursor,omitempty"`
	// NewestEvent is the newest event time the source ever delivered
	// (an event's end, else its start); LastNew is when a collection last
	// stored a new event. Zero when none.
	NewestEvent time.Time `json:"newest_event,omitzero"`
	LastNew     time.Time `json:"last_new,omitzero"`
	// At is when the collection ended.
	At time.Time `json:"at"`
	// Silent is true while the source has delivered no new event for
	// longer than its silence (see [SourceReport.Silence]).
	Silent bool `json:"silent"`
	// Files is a files source's report, file by file.
	Files *ingest.Report `json:"files,omitempty"`
	// Error is why the collection failed, secrets redacted; "" when it
	// succeeded.
	Error string `json:"error,omitempty"`
}

// Failed reports whether the collection failed.
func (r SourceReport) Failed() bool { return r.Error != "" }

// SourcesOptions configure [NewSources].
type SourcesOptions struct {
	// Config holds the sources (telemetry.sources), the catalogs events
	// are resolved against and the catalog map. Required.
	Config *config.Config
	// Store keeps the events and each source's cursor. Required.
	Store *store.Store
	// Catalog opens a floe catalog by name, to resolve the tables events
	// name. Required.
	Catalog ingest.OpenCatalogFunc
	// Alerts, when set, is told after every collection whether the source
	// is silent ([alert.Silent]).
	Alerts *alert.Notifier
	// OnCollect, when set, sees every collection's report (the daemon's
	// metrics).
	OnCollect func(SourceReport)
	// Now is the clock silence is judged by. Default: time.Now.
	Now func() time.Time
	// Logger gets a line per collection that stored events or failed.
	// Default: discard.
	Logger *slog.Logger
	// MaxSQLBytes caps the SQL text stored per event (see
	// [ingest.Options.MaxSQLBytes]).
	MaxSQLBytes int
	// Pollers replaces the registry of polled kinds (tests). Default: the
	// built-in one.
	Pollers map[string]OpenPollerFunc
}

// Validate reports every problem at once: missing dependencies, and a
// files source's format that is no parser's.
func (o *SourcesOptions) Validate() error {
	var errs []error
	if o.Config == nil {
		errs = append(errs, errors.New("config: required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("store: required"))
	}
	if o.Catalog == nil {
		errs = append(errs, errors.New("catalog: required"))
	}
	if o.Config != nil {
		for _, src := range o.Config.Telemetry.Sources {
			if src.Kind == config.SourceFiles && src.Format != "" {
				if _, err := collectors.ParserFor(Parsers(), src.Format); err != nil {
					errs = append(errs, fmt.Errorf("telemetry source %s: format: %w", src.Name, err))
				}
			}
			if src.Polled() && o.Pollers[src.Kind] == nil {
				errs = append(errs, fmt.Errorf("telemetry source %s: kind %s has no poller", src.Name, src.Kind))
			}
		}
	}
	return errors.Join(errs...)
}

// Sources collects the telemetry sources of floe.yaml: once each
// ([Sources.CollectAll], floe collect without arguments) or each on its
// own interval until stopped ([Sources.Run], floe serve). Files are
// collected through the collected files' fingerprints (an unchanged file
// is skipped), polled sources from their cursor in the state store; either
// way every event is stored once, so a collection repeated or cut short is
// harmless. Safe for concurrent use by different sources.
type Sources struct {
	o   SourcesOptions
	log *slog.Logger

	mu sync.Mutex
	// open are the polled sources' pollers, opened on first use and kept
	// (a connection pool) until one fails or Close.
	open map[string]Poller
}

// NewSources returns the collector of o.Config's sources.
func NewSources(o SourcesOptions) (*Sources, error) {
	if o.Pollers == nil {
		o.Pollers = pollers
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("telemetry sources: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sources{o: o, log: o.Logger, open: map[string]Poller{}}, nil
}

// Names are the configured sources' names, in floe.yaml's order.
func (s *Sources) Names() []string {
	out := make([]string, 0, len(s.o.Config.Telemetry.Sources))
	for _, src := range s.o.Config.Telemetry.Sources {
		out = append(out, src.Name)
	}
	return out
}

// CollectAll collects every source once, one after another, in
// floe.yaml's order. A source that fails does not stop the others: its
// report says why.
func (s *Sources) CollectAll(ctx context.Context) []SourceReport {
	var out []SourceReport
	for _, src := range s.o.Config.Telemetry.Sources {
		if ctx.Err() != nil {
			break
		}
		out = append(out, s.collect(ctx, src))
	}
	return out
}

// Collect collects the source named name once.
func (s *Sources) Collect(ctx context.Context, name string) (SourceReport, error) {
	src, ok := s.o.Config.TelemetrySource(name)
	if !ok {
		return SourceReport{}, fmt.Errorf("collect telemetry source %s: %w", name, ErrNoSuchSource)
	}
	return s.collect(ctx, src), nil
}

// Run collects every source now and then every its interval, each in its
// own goroutine, until ctx ends; it returns once every collection in
// flight has ended and the pollers are closed. A failed collection is
// logged, counted (OnCollect) and retried at the next interval; after each
// one the source's silent alert is evaluated.
func (s *Sources) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, src := range s.o.Config.Telemetry.Sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(ctx, src)
		}()
	}
	wg.Wait()
	return s.Close()
}

func (s *Sources) loop(ctx context.Context, src config.SourceConfig) {
	t := time.NewTicker(src.IntervalDuration())
	defer t.Stop()
	for {
		s.collect(ctx, src)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close closes the pollers.
func (s *Sources) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for name, p := range s.open {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close telemetry source %s: %w", name, err))
		}
		delete(s.open, name)
	}
	return errors.Join(errs...)
}

// collect collects src once, records the outcome with its cursor in the
// store, hands the report to OnCollect and its silence to the alerts.
func (s *Sources) collect(ctx context.Context, src config.SourceConfig) SourceReport {
	rep := SourceReport{Source: src.Name, Kind: src.Kind, Target: src.Target()}
	st := s.o.Store
	rec, err := st.TelemetrySource(ctx, src.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rec = store.SourceRecord{Name: src.Name, FirstSeen: s.o.Now().UTC()}
	case err != nil:
		return s.finish(ctx, src, rep, nil, err)
	}
	rec.Kind = src.Kind
	tracked := &trackingStore{Store: st}
	var next string
	if src.Polled() {
		next, err = s.poll(ctx, src, rec.Cursor, tracked, &rep)
	} else {
		err = s.collectFiles(ctx, src, tracked, &rep)
	}
	now := s.o.Now().UTC()
	if tracked.newest.After(rec.NewestEvent) {
		rec.NewestEvent = tracked.newest
	}
	if rep.Inserted > 0 {
		rec.LastNew = now
	}
	if err != nil {
		rec.Error, rec.ErrorAt = redactText(err.Error(), src.Secrets()), now
	} else {
		rec.Error, rec.ErrorAt, rec.CollectedAt = "", time.Time{}, now
		if src.Polled() {
			rec.Cursor = next
		}
	}
	// The events are stored before the cursor moves: a crash between the
	// two polls them again, and the store keeps each once.
	if perr := st.PutTelemetrySource(context.WithoutCancel(ctx), rec); perr != nil {
		err = errors.Join(err, perr)
	}
	return s.finish(ctx, src, rep, &rec, err)
}

// finish completes rep from rec and err, logs it, and reports it to
// OnCollect and the alerts.
func (s *Sources) finish(ctx context.Context, src config.SourceConfig, rep SourceReport, rec *store.SourceRecord, err error) SourceReport {
	now := s.o.Now().UTC()
	rep.At = now
	if err != nil {
		rep.Error = redactText(err.Error(), src.Secrets())
		if ctx.Err() == nil {
			s.log.Error("telemetry source not collected; tried again at its next interval", "source", src.Name, "err", rep.Error)
		}
	} else if rep.Inserted > 0 {
		s.log.Info("telemetry source collected", "source", src.Name, "events", rep.Events, "inserted", rep.Inserted)
	}
	var a alert.Alert
	if rec != nil {
		rep.Cursor, rep.NewestEvent, rep.LastNew = rec.Cursor, rec.NewestEvent, rec.LastNew
		a = silentAlert(src, *rec, now)
		rep.Silent = a.State == alert.Firing
	}
	if s.o.OnCollect != nil {
		s.o.OnCollect(rep)
	}
	if n := s.o.Alerts; n != nil && rec != nil && ctx.Err() == nil {
		if _, err := n.Notify(ctx, a); err != nil {
			s.log.Error("telemetry source alert not delivered; retried after the next collection", "source", src.Name, "err", err)
		}
	}
	return rep
}

// silentAlert is src's silent alert at now: firing when the source has
// stored no new event for longer than its silence (since it was first
// collected, when it never did), resolved otherwise and when its silence
// is off.
func silentAlert(src config.SourceConfig, rec store.SourceRecord, now time.Time) alert.Alert {
	silence := src.SilenceDuration()
	since := rec.LastNew
	if since.IsZero() {
		since = rec.FirstSeen
	}
	if silence <= 0 || now.Sub(since) < silence {
		return alert.Silent(src.Name, nil, now)
	}
	return alert.Silent(src.Name, &alert.Quiet{Target: src.Target(), Since: since, Silence: silence, Error: rec.Error}, now)
}

// collectFiles collects a files source through collectors/ingest, whose
// file records skip what did not change.
func (s *Sources) collectFiles(ctx context.Context, src config.SourceConfig, st *trackingStore, rep *SourceReport) error {
	cfg := s.o.Config
	r, err := ingest.Run(ctx, ingest.Options{
		Paths: src.Paths, Source: src.Format, MaxSQLBytes: s.o.MaxSQLBytes,
		Parsers: Parsers(), Catalogs: cfg, Resolver: ingest.NewCatalogResolver(cfg, s.o.Catalog),
	}, st)
	rep.Files = &r
	rep.Events, rep.Inserted, rep.Duplicates, rep.Bad, rep.Skipped = r.Events, r.Inserted, r.Duplicates, r.Bad, r.Skipped
	if err != nil {
		return fmt.Errorf("collect %s: %w", src.Name, err)
	}
	return nil
}

// poll polls a polled source from cursor and stores what it returns,
// normalized as floe collect normalizes files; it returns the next cursor.
func (s *Sources) poll(ctx context.Context, src config.SourceConfig, cursor string, st *trackingStore, rep *SourceReport) (string, error) {
	p, err := s.poller(ctx, src)
	if err != nil {
		return cursor, err
	}
	events, next, err := p.Poll(ctx, cursor)
	if err != nil {
		// The connection may be what failed: open a fresh one next time.
		s.drop(src.Name, p)
		return cursor, fmt.Errorf("poll %s: %w", src.Name, err)
	}
	rep.Events = len(events)
	cfg := s.o.Config
	nz := ingest.NewNormalizer(cfg, ingest.NewCatalogResolver(cfg, s.o.Catalog))
	nz.MaxSQLBytes = s.o.MaxSQLBytes
	for batch := range slices.Chunk(events, ingest.DefaultBatchSize) {
		for i := range batch {
			if _, err := nz.Normalize(ctx, &batch[i]); err != nil {
				return cursor, fmt.Errorf("normalize %s event %s: %w", src.Name, batch[i].QueryID, err)
			}
		}
		ins, dup, err := st.InsertEvents(ctx, batch)
		rep.Inserted += ins
		rep.Duplicates += dup
		if err != nil {
			return cursor, fmt.Errorf("store %s events: %w", src.Name, err)
		}
	}
	return next, nil
}

// poller returns src's open poller, opening it on first use.
func (s *Sources) poller(ctx context.Context, src config.SourceConfig) (Poller, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.open[src.Name]; ok {
		return p, nil
	}
	open := s.o.Pollers[src.Kind]
	if open == nil {
		return nil, fmt.Errorf("open %s: kind %s has no poller", src.Name, src.Kind)
	}
	p, err := open(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", src.Name, err)
	}
	s.open[src.Name] = p
	return p, nil
}

// drop closes and forgets src's poller after a failed poll.
func (s *Sources) drop(name string, p Poller) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[name] == p {
		delete(s.open, name)
		if err := p.Close(); err != nil {
			s.log.Warn("telemetry source poller not closed", "source", name, "err", err)
		}
	}
}

// trackingStore is the store as collection sees it, noting the newest
// event time it is handed.
type trackingStore struct {
	*store.Store
	mu     sync.Mutex
	newest time.Time
}

func (t *trackingStore) InsertEvents(ctx context.Context, events []collectors.QueryEvent) (int, int, error) {
	t.mu.Lock()
	for _, ev := range events {
		at := ev.EndTime
		if at.IsZero() {
			at = ev.StartTime
		}
		if at.After(t.newest) {
			t.newest = at.UTC()
		}
	}
	t.mu.Unlock()
	return t.Store.InsertEvents(ctx, events)
}

// CollectSources collects every source of cfg once (floe collect without
// arguments): see [Sources.CollectAll]. It fails only when the sources
// cannot be set up; each source's failure is in its report.
func CollectSources(ctx context.Context, st *store.Store, cfg *config.Config, open ingest.OpenCatalogFunc, maxSQLBytes int) ([]SourceReport, error) {
	s, err := NewSources(SourcesOptions{Config: cfg, Store: st, Catalog: open, MaxSQLBytes: maxSQLBytes})
	if err != nil {
		return nil, err
	}
	reps := s.CollectAll(ctx)
	return reps, s.Close()
}

// Summary says in one line what the collection did.
func (r SourceReport) Summary() string {
	if r.Failed() {
		return "failed: " + r.Error
	}
	out := fmt.Sprintf("%d events read, %d new", r.Events, r.Inserted)
	if r.Skipped > 0 {
		out += fmt.Sprintf(", %d files unchanged", r.Skipped)
	}
	return out
}
