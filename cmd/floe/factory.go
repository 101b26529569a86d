package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// factory wires the real world lazily: nothing is opened until a verb asks.
type factory struct {
	IO *IOStreams
	// ConfigPath is the --config flag.
	ConfigPath string
	// ReadOnly is set for a verb that changes nothing (readOnlyVerbs): it
	// creates no local catalog, warehouse or state store.
	ReadOnly bool
	Now      func() time.Time
	// LogLevel is the log level when neither floe.yaml nor FLOE_LOG_LEVEL
	// sets one: warn for the verbs, info for floe serve, which sets it
	// before it asks for anything.
	LogLevel string

	mu       sync.Mutex
	cfg      *config.Config
	catalogs map[string]catalog.Catalog
	store    *store.Store
	engines  *control.Engines
	svc      *control.Service
	readSvc  *control.Service
}

func newFactory(io *IOStreams) *factory {
	return &factory{IO: io, Now: time.Now, LogLevel: "warn", catalogs: map[string]catalog.Catalog{}}
}

// Config loads the configuration once.
func (f *factory) Config() (*config.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg != nil {
		return f.cfg, nil
	}
	cfg, err := config.Load(config.Options{Path: f.ConfigPath, Now: f.Now})
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg, nil
}

// Catalog opens (once) the floe catalog called name.
func (f *factory) Catalog(ctx context.Context, name string) (catalog.Catalog, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.catalogs[name]; ok {
		return c, nil
	}
	props, ok := cfg.Catalogs[name]
	if !ok {
		return nil, notFoundError{fmt.Sprintf("catalog %q is not configured in %s (catalogs: %s)", name, cfg.Source, strings.Join(cfg.CatalogNames(), ", "))}
	}
	if f.ReadOnly {
		if path, missing := control.MissingLocalCatalog(props); missing {
			return nil, notFoundError{fmt.Sprintf("catalog %q has no warehouse yet: %s does not exist ('floe demo' builds the demo warehouse there; for your own lake, name its catalog in floe.yaml)", name, path)}
		}
	}
	c, err := control.OpenCatalog(ctx, name, props)
	if err != nil {
		return nil, err
	}
	f.catalogs[name] = c
	return c, nil
}

// Catalogs are every configured catalog, each opened (once) on first use:
// what orphan removal checks for other entries sharing a table's location.
func (f *factory) Catalogs() (control.Catalogs, error) {
	cfg, err := f.Config()
	if err != nil {
		return control.Catalogs{}, err
	}
	return control.ConfiguredCatalogs(cfg, f.Catalog), nil
}

// Store opens (once) the state store named by the configuration, creating
// its directory on first use. Close it with CloseStore.
func (f *factory) Store(ctx context.Context) (*store.Store, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store != nil {
		return f.store, nil
	}
	state := cfg.State
	if f.ReadOnly && control.MissingLocalStore(state) {
		// Nothing recorded yet: an empty store in memory answers the
		// reads without creating the file.
		state.Path = ":memory:"
	}
	st, err := control.OpenStore(ctx, state)
	if err != nil {
		return nil, err
	}
	f.store = st
	return st, nil
}

// Engines are the configured engines, each opened on first use and
// closed with Close.
func (f *factory) Engines() (*control.Engines, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.engines == nil {
		f.engines = control.NewEngines(cfg, nil)
	}
	return f.engines, nil
}

// Service builds (once) the control plane's service over the factory's
// configuration, catalogs, state store, engines, clock and logger: every
// verb that reads or changes a table calls it.
func (f *factory) Service(ctx context.Context) (*control.Service, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	engs, err := f.Engines()
	if err != nil {
		return nil, err
	}
	log := f.Logger()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.svc != nil {
		return f.svc, nil
	}
	svc, err := control.NewService(control.Deps{Config: cfg, Catalog: f.Catalog, Store: st, Engines: engs, Now: f.Now, Logger: log,
		LeaseTTL: cfg.Server.LeaseTTLDuration()})
	if err != nil {
		return nil, err
	}
	f.svc = svc
	return svc, nil
}

// ReadService builds (once) a service for verbs that only read: over the
// state store if it exists, else none, so that reading creates no state
// directory (see ExistingStore).
func (f *factory) ReadService(ctx context.Context) (*control.Service, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	st, err := f.ExistingStore(ctx)
	if err != nil {
		return nil, err
	}
	if st != nil {
		return f.Service(ctx)
	}
	engs, err := f.Engines()
	if err != nil {
		return nil, err
	}
	log := f.Logger()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readSvc != nil {
		return f.readSvc, nil
	}
	svc, err := control.NewService(control.Deps{Config: cfg, Catalog: f.Catalog, Engines: engs, Now: f.Now, Logger: log})
	if err != nil {
		return nil, err
	}
	f.readSvc = svc
	return svc, nil
}

// Close releases what the factory opened: engines, the state store, and
// the catalogs that hold resources (a SQL catalog's connection pool).
func (f *factory) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.engines.Close()
	f.engines = nil
	for name, c := range f.catalogs {
		if cl, ok := c.(catalog.Closer); ok {
			if cerr := cl.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("close catalog %s: %w", name, cerr))
			}
		}
	}
	clear(f.catalogs)
	if f.store == nil {
		return err
	}
	err = errors.Join(err, f.store.Close())
	f.store = nil
	return err
}

// Policy is the table's effective policy (see control.ResolvePolicy). A
// policy that cannot be resolved (two rules tie for the table) is a
// configuration error, exit 2.
func (f *factory) Policy(ctx context.Context, id lake.Ident) (policy.Effective, error) {
	cfg, err := f.Config()
	if err != nil {
		return policy.Effective{}, err
	}
	eff, err := control.ResolvePolicy(ctx, cfg, id)
	if errors.Is(err, policy.ErrInvalid) {
		return eff, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return eff, err
}

// ExistingStore opens the state store if its file exists, else returns
// nil: verbs that only read history (health's freshness) do not create
// one. A PostgreSQL store is always opened: its database exists.
func (f *factory) ExistingStore(ctx context.Context) (*store.Store, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if !cfg.State.IsPostgres() {
		if _, err := os.Stat(cfg.State.Path); err != nil {
			return nil, nil
		}
	}
	return f.Store(ctx)
}

// ResolveTable parses a table name with the configured catalogs.
func (f *factory) ResolveTable(name string) (lake.Ident, error) {
	cfg, err := f.Config()
	if err != nil {
		return lake.Ident{}, err
	}
	id, err := lake.ParseIdent(name, cfg.CatalogNames(), cfg.DefaultCatalog)
	if err != nil {
		return lake.Ident{}, flagError{err}
	}
	return id, nil
}

// requireTable resolves name and loads the table from its catalog: a name
// that is no table is a [lake.NoSuchTableError] (exit 4). Verbs that list
// records of a table (runs, queries) call it when they found none.
func requireTable(ctx context.Context, f *factory, name string) error {
	id, err := f.ResolveTable(name)
	if err != nil {
		return err
	}
	cat, err := f.Catalog(ctx, id.Catalog)
	if err != nil {
		return err
	}
	_, err = lake.LoadTable(ctx, cat, id)
	return err
}

// Logger is a structured logger on ErrOut, with the configuration's log
// level and format (FLOE_LOG_LEVEL, FLOE_LOG_FORMAT; validated when the
// configuration loads, so a verb that got this far has a good one), or
// the factory's LogLevel when none is set.
func (f *factory) Logger() *slog.Logger {
	level, format := slog.LevelWarn, "text"
	_ = level.UnmarshalText([]byte(f.LogLevel))
	if cfg, err := f.Config(); err == nil {
		_ = level.UnmarshalText([]byte(cfg.Log.LevelOr(f.LogLevel)))
		format = strings.ToLower(cfg.Log.Format)
	}
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(f.IO.ErrOut, opts))
	}
	return slog.New(slog.NewTextHandler(f.IO.ErrOut, opts))
}
