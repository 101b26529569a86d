package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/simulator"
)

// Deps are what a [Service] is built from, once per process: a verb's
// factory, the daemon and the tests build one and call its methods.
type Deps struct {
	// Config is the loaded configuration. Required.
	Config *config.Config
	// Catalog opens the configured catalog called name; callers cache the
	// catalogs they open (the CLI's factory does). Required.
	Catalog func(ctx context.Context, name string) (catalog.Catalog, error)
	// Store is floe's state store. Nil only for a service that answers
	// health without history (floe health in a directory with no state);
	// every use case that records or reads runs and plans needs it.
	Store *store.Store
	// Engines are the engines a policy's engine key may name. Default:
	// those of Config.
	Engines *Engines
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Logger gets one info line per run started, decided and ended.
	// Default: discard.
	Logger *slog.Logger
	// Runner names this process in run records and leases. Default:
	// [RunnerID].
	Runner string
	// LeaseTTL is how long a run's lease of its table lasts without
	// renewal. Default: [RunLeaseTTL].
	LeaseTTL time.Duration
	// StateCacheFiles bounds the tables' states the service keeps loaded
	// between calls, in data and delete files: the health of a table whose
	// metadata location has not moved is measured without reading its
	// manifests again (see [Service.Health]). Default:
	// [DefaultStateCacheFiles]; negative keeps none.
	StateCacheFiles int
}

// Service is floe's control plane: its methods are the use cases — a
// table's health under its policy, its last success, the decision of what
// maintenance to run, the dry run, the run itself (by policy, by a typed
// layout, by an approved plan, or some steps), and the plan lifecycle —
// each defined once. The CLI's verbs, the daemon's scheduler and the HTTP
// API call these methods and assemble no use case themselves.
//
// Every change to a table goes through [Service.Run]: it takes the table's
// lease, decides (the same decision [Service.Decide] and [Service.DryRun]
// report), records the run with each step's before/after health and typed
// report, and releases the lease.
type Service struct {
	cfg      *config.Config
	catalog  func(ctx context.Context, name string) (catalog.Catalog, error)
	store    *store.Store
	engines  *Engines
	now      func() time.Time
	log      *slog.Logger
	runner   string
	leaseTTL time.Duration
	// states are the tables' states loaded for measuring their health.
	states *stateCache
	// manifests reads the manifests of those loads: each distinct
	// manifest schema of the lake is parsed once.
	manifests *lake.ManifestReader
	// trees keeps the trees learned for tree candidates across passes.
	trees *simulator.TreeCache
}

// NewService builds the service from d, filling d's defaults.
func NewService(d Deps) (*Service, error) {
	var errs []error
	if d.Config == nil {
		errs = append(errs, errors.New("config is required"))
	}
	if d.Catalog == nil {
		errs = append(errs, errors.New("catalog opener is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("new service: %w", err)
	}
	s := &Service{cfg: d.Config, catalog: d.Catalog, store: d.Store, engines: d.Engines, now: d.Now, log: d.Logger,
		runner: d.Runner, leaseTTL: d.LeaseTTL, trees: simulator.NewTreeCache(0)}
	if s.engines == nil {
		s.engines = NewEngines(d.Config, nil)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.runner == "" {
		s.runner = RunnerID()
	}
	if s.leaseTTL <= 0 {
		s.leaseTTL = RunLeaseTTL
	}
	if d.StateCacheFiles == 0 {
		d.StateCacheFiles = DefaultStateCacheFiles
	}
	s.states = newStateCache(d.StateCacheFiles)
	s.manifests = lake.NewManifestReader(0)
	return s, nil
}

// Config is the service's configuration.
func (s *Service) Config() *config.Config { return s.cfg }

// Store is the service's state store (nil when it has none).
func (s *Service) Store() *store.Store { return s.store }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Engines are the service's engines.
func (s *Service) Engines() *Engines { return s.engines }

// Catalogs are every configured catalog, opened through the service's
// opener: what orphan removal and expiry check for other entries sharing a
// table's location.
func (s *Service) Catalogs() Catalogs {
	c := ConfiguredCatalogs(s.cfg, s.catalog)
	c.Located = s.keptLocation
	return c
}

// OpenCatalog opens the configured catalog called name.
func (s *Service) OpenCatalog(ctx context.Context, name string) (catalog.Catalog, error) {
	return s.catalog(ctx, name)
}

// Policy is table id's effective policy ([ResolvePolicy]).
func (s *Service) Policy(ctx context.Context, id lake.Ident) (policy.Effective, error) {
	return ResolvePolicy(ctx, s.cfg, id)
}

// policyOf is table id's effective policy: the caller's (hr.Policy), else
// resolved now.
func (s *Service) policyOf(ctx context.Context, id lake.Ident, hr HealthRequest) (policy.Effective, error) {
	if hr.Policy != nil {
		return *hr.Policy, nil
	}
	return s.Policy(ctx, id)
}

// Table is what the use cases know of one table, loaded once per call: its
// catalog, its state (every manifest read), its effective policy, and its
// health measured under that policy.
type Table struct {
	Ident   lake.Ident
	Catalog catalog.Catalog
	State   *lake.State
	Policy  policy.Effective
	// HealthOptions measure the table under its policy (thresholds,
	// target, freshness and compaction history from the store).
	HealthOptions HealthOptions
	Health        lake.Health
}

// HealthRequest tunes [Service.Health] beyond the table's policy.
type HealthRequest struct {
	// TargetFileSizeBytes, when set, is the target for a table without
	// write.target-file-size-bytes in place of the policy's (a flag).
	TargetFileSizeBytes int64
	// AllowSmallTarget judges small files by a target below
	// lake.MinTargetFileSizeBytes as it is (see [HealthOptions]).
	AllowSmallTarget bool
	// Columns are measured for clustering besides the sort order's.
	Columns []string
	// Named says the caller named the table: a column it lacks is an
	// error. Otherwise the columns apply where they exist.
	Named bool
	// MetadataLocation, when set, is where the caller knows the table's
	// current metadata to be (the scheduler's pass: its catalog's listing,
	// or what the pass read). When the service's kept state of the table
	// was loaded from there, no metadata file and no manifest is read: the
	// health is measured from it at the service's clock.
	MetadataLocation string
	// Runs, when not nil, are the table's newest runs (at most 200),
	// newest first, as the caller read them (the scheduler's pass): the
	// health's history is judged by them and the store is not read. Nil:
	// the service reads them.
	Runs []Run
	// Policy, when not nil, is the table's effective policy as the caller
	// resolved it (the scheduler's pass, once for all its uses of the
	// table): it is not resolved again. Nil: the service resolves it.
	Policy *policy.Effective
}

// Table loads table id with its policy and measures its health under it.
// It reads the table afresh: what a run decides on.
func (s *Service) Table(ctx context.Context, id lake.Ident, hr HealthRequest) (*Table, error) {
	return s.table(ctx, id, hr, loadState)
}

// table is [Service.Table] with the table's state loaded by load.
func (s *Service) table(ctx context.Context, id lake.Ident, hr HealthRequest,
	load func(context.Context, catalog.Catalog, lake.Ident) (*lake.State, error)) (*Table, error) {
	cat, err := s.catalog(ctx, id.Catalog)
	if err != nil {
		return nil, err
	}
	eff, err := s.policyOf(ctx, id, hr)
	if err != nil {
		return nil, err
	}
	state, err := load(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	return s.measure(ctx, cat, state, eff, hr)
}

// measured is [Service.Table] for measuring: the table's manifests are read
// only when its metadata location moved since the service last read them,
// its metadata not at all when hr.MetadataLocation says it did not
// ([Service.measuredState]).
func (s *Service) measured(ctx context.Context, id lake.Ident, hr HealthRequest) (*Table, error) {
	return s.table(ctx, id, hr, func(ctx context.Context, cat catalog.Catalog, id lake.Ident) (*lake.State, error) {
		return s.measuredState(ctx, cat, id, hr.MetadataLocation)
	})
}

// measure is [Service.Table] for a state already loaded.
func (s *Service) measure(ctx context.Context, cat catalog.Catalog, state *lake.State, eff policy.Effective, hr HealthRequest) (*Table, error) {
	base := HealthOptions{TargetFileSizeBytes: hr.TargetFileSizeBytes, AllowSmallTarget: hr.AllowSmallTarget, Columns: hr.Columns, Named: hr.Named, Now: s.now}
	st := s.store
	if hr.Runs != nil {
		st = nil // the caller read them
	}
	ho, err := PolicyHealth(ctx, s.cfg, st, state.Ident, eff.Policy, base)
	if err != nil {
		return nil, fmt.Errorf("health of %s: %w", state.Ident, err)
	}
	if hr.Runs != nil {
		ho.LastCompaction, ho.History = lastCompaction(hr.Runs), HistoryOf(hr.Runs)
	}
	h, err := Health(state, ho)
	if err != nil {
		// A column the table lacks, asked for by name.
		return nil, fmt.Errorf("health of %s: %w", state.Ident, rewriter.MarkInvalidOptions(err))
	}
	return &Table{Ident: state.Ident, Catalog: cat, State: state, Policy: eff, HealthOptions: ho, Health: h}, nil
}

// Health is table id's health under its policy: the one definition the
// health verb, the dashboard, the API, the metrics and the scheduler share.
// The table's metadata is read each time (its ages and the run records are
// measured now), its manifests only when its metadata location moved since
// the service last read them; neither when hr.MetadataLocation is where
// the service last read them.
func (s *Service) Health(ctx context.Context, id lake.Ident, hr HealthRequest) (lake.Health, error) {
	t, err := s.measured(ctx, id, hr)
	if err != nil {
		return lake.Health{}, err
	}
	return t.Health, nil
}

// HealthOf is [Service.Health] of a table whose state the caller loaded.
func (s *Service) HealthOf(ctx context.Context, state *lake.State, hr HealthRequest) (lake.Health, error) {
	eff, err := s.policyOf(ctx, state.Ident, hr)
	if err != nil {
		return lake.Health{}, err
	}
	t, err := s.measure(ctx, nil, state, eff, hr)
	if err != nil {
		return lake.Health{}, err
	}
	return t.Health, nil
}

// Triggers are the steps table id's policy and health call for, by
// trigger alone ([Decide]): what the scheduler asks to know whether a table
// is due. Like [Service.Health] it reads the table's manifests only when
// its metadata location moved; the run that follows reads them afresh. The
// layout a compaction writes is decided when the run decides
// ([Service.Decide]).
func (s *Service) Triggers(ctx context.Context, id lake.Ident) ([]StepDecision, error) {
	return s.triggers(ctx, id, HealthRequest{})
}

// triggers is [Service.Triggers] of a table the caller knows at metadata
// location hr.MetadataLocation ("": unknown), with its runs when the
// caller read them (see [HealthRequest]).
func (s *Service) triggers(ctx context.Context, id lake.Ident, hr HealthRequest) ([]StepDecision, error) {
	t, err := s.measured(ctx, id, hr)
	if err != nil {
		return nil, err
	}
	p := t.Policy.Policy
	return Decide(t.Health, p, s.history(t, ExpireDefaults(p, rewriter.ExpireOptions{}))), nil
}

// history is what [Decide] judges table t by: its run records' [History],
// what an expiry with opts would remove now, and what a bin-pack
// compaction would rewrite.
func (s *Service) history(t *Table, opts rewriter.ExpireOptions) History {
	h := t.HealthOptions.History
	h.Expirable = ExpirableNow(t.State, opts, s.now())
	h.Compactable = CompactableNow(t.State, t.Policy.Policy)
	return h
}

// LastSuccess is when table's last successful run ended; zero when none
// did (or the service has no store).
func (s *Service) LastSuccess(ctx context.Context, table string) (time.Time, error) {
	if s.store == nil {
		return time.Time{}, nil
	}
	t, err := s.store.LastRunEnded(ctx, table, string(StatusDone))
	if err != nil {
		return time.Time{}, fmt.Errorf("last success of %s: %w", table, err)
	}
	return t, nil
}

// needStore is the error of a use case that records or reads runs and
// plans on a service without a store.
func (s *Service) needStore(what string) error {
	if s.store == nil {
		return fmt.Errorf("%s: the service has no state store", what)
	}
	return nil
}
