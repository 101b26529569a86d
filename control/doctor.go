package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// Check names, the values of [Check.Name].
const (
	CheckCatalog          = "catalog"
	CheckObjectStore      = "object_store"
	CheckObjectStoreWrite = "object_store_write"
	CheckStateStore       = "state_store"
	CheckEngine           = "engine"
	// CheckSource reads a telemetry source of floe.yaml
	// (telemetry.sources): its files are listable and readable, its
	// service answers and lets floe read its query history.
	CheckSource = "telemetry_source"
	// CheckDeletes reads the deletes of the table the catalog check loaded
	// and fails when one of them is applied by no reader ([lake.DeleteIssue]:
	// misfiled, or shadowed by a deletion vector): rows someone deleted are
	// visible. floe health checks every table so.
	CheckDeletes = "deletes"
)

// DefaultDoctorTimeout bounds each check when [DoctorOptions.Timeout] is 0.
const DefaultDoctorTimeout = 10 * time.Second

// ErrCheckTimeout is wrapped by the error of a check that ran out of its
// time; test with errors.Is.
var ErrCheckTimeout = errors.New("no answer")

// Check is the outcome of one connection check of [Doctor].
type Check struct {
	// Name is what kind of thing was checked: [CheckCatalog],
	// [CheckObjectStore], [CheckObjectStoreWrite], [CheckStateStore],
	// [CheckEngine], [CheckDeletes] or [CheckSource].
	Name string `json:"name"`
	// Target names the thing: a catalog and its URI, a warehouse location
	// or the state database. Secrets are redacted.
	Target string `json:"target"`
	// OK is true when the check passed.
	OK bool `json:"ok"`
	// Skipped is true when the check could not run (an object store whose
	// location only its catalog knows, when the catalog failed or has no
	// table); Detail says why. A skipped check is not a failure.
	Skipped bool `json:"skipped"`
	// Detail says what a passed or skipped check saw ("2 namespaces; loaded
	// web.events").
	Detail string `json:"detail"`
	// Error says why a failed check failed, secrets redacted; "" when OK.
	Error string `json:"error"`
	// Duration is how long the check took.
	Duration time.Duration `json:"duration_ns"`
}

// Failed reports whether the check ran and failed.
func (c Check) Failed() bool { return !c.OK && !c.Skipped }

// DoctorOptions tune [Doctor]. The zero value checks with the default
// timeout and writes nothing.
type DoctorOptions struct {
	// Timeout bounds each check. Default: [DefaultDoctorTimeout].
	Timeout time.Duration
	// Write also writes and deletes a probe object (.floe-doctor-<random>)
	// in each warehouse. Default: false, listing only.
	Write bool
	// Now is the clock checks are timed with. Default: time.Now.
	Now func() time.Time
	// OpenEngine opens each engine under engines: for its check.
	// Default: [OpenEngine].
	OpenEngine EngineOpener
	// Pollers open the polled telemetry sources for their checks.
	// Default: the built-in kinds'.
	Pollers map[string]OpenPollerFunc
}

// Doctor checks that floe can reach everything cfg configures and returns
// one [Check] per thing checked, in a stable order: for each catalog (by
// name) the catalog itself (open it, list namespaces, load one table), its
// object store (list the warehouse; with [DoctorOptions.Write] also write
// and delete a probe object), then the state store (open, schema current).
//
// Every check runs with its own timeout and returns at its deadline even
// when the library under it ignores its context: the check is reported as
// timed out and its goroutine is left to finish on its own (it closes what
// it opened). The checks of one catalog run one after another when its
// object store's location comes from a loaded table; everything else runs
// concurrently, so Doctor returns within a few timeouts however many
// things hang. It never fails as a whole: failures are in the checks.
//
// The daemon runs Doctor at start and periodically; each call opens fresh
// connections and closes them, so a catalog that went away is noticed.
func Doctor(ctx context.Context, cfg *config.Config, opts DoctorOptions) []Check {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultDoctorTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenEngine == nil {
		opts.OpenEngine = OpenEngine
	}
	if opts.Pollers == nil {
		opts.Pollers = pollers
	}
	d := &doctor{cfg: cfg, opts: opts}
	groups := d.groups()
	results := make([][]Check, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = g(ctx)
		}()
	}
	wg.Wait()
	return slices.Concat(results...)
}

// doctor runs one [Doctor] call.
type doctor struct {
	cfg  *config.Config
	opts DoctorOptions
}

// checkGroup runs checks that depend on each other one after another;
// groups run concurrently.
type checkGroup func(ctx context.Context) []Check

// groups is the list of what Doctor checks: each catalog, the state store,
// each engine under engines: and each telemetry source. Alert webhooks
// plug in here, one group each, once they have a check.
func (d *doctor) groups() []checkGroup {
	var gs []checkGroup
	for _, name := range d.cfg.CatalogNames() {
		gs = append(gs, d.catalogGroup(name, d.cfg.Catalogs[name]))
	}
	gs = append(gs, d.stateGroup)
	for _, name := range d.cfg.EngineNames() {
		gs = append(gs, d.engineGroup(name, d.cfg.Engines[name]))
	}
	for _, src := range d.cfg.Telemetry.Sources {
		gs = append(gs, d.sourceGroup(src))
	}
	return gs
}

// sourceGroup checks one telemetry source: a files source's paths list
// and each input opens; a polled source's poller opens (a fresh
// connection) and pings.
func (d *doctor) sourceGroup(src config.SourceConfig) checkGroup {
	return func(ctx context.Context) []Check {
		c, _ := runCheck(ctx, d, CheckSource, src.Target(), src.Secrets(), func(ctx context.Context) (_ string, _ struct{}, err error) {
			if !src.Polled() {
				detail, err := checkFiles(ctx, src.Paths)
				return detail, struct{}{}, err
			}
			open := d.opts.Pollers[src.Kind]
			if open == nil {
				return "", struct{}{}, fmt.Errorf("kind %s has no poller", src.Kind)
			}
			p, err := open(ctx, src)
			if err != nil {
				return "", struct{}{}, err
			}
			defer func() { err = errors.Join(err, p.Close()) }()
			detail, err := p.Ping(ctx)
			return detail, struct{}{}, err
		})
		return []Check{c}
	}
}

// checkFiles lists a files source's paths as collection does and opens
// every input: a path that matches nothing, or an input that cannot be
// read, fails the check.
func checkFiles(ctx context.Context, paths []string) (string, error) {
	inputs, err := collectors.Open(ctx, paths)
	if err != nil {
		return "", err
	}
	var errs []error
	for _, in := range inputs {
		if in.Err != nil {
			errs = append(errs, in.Err)
			continue
		}
		for _, part := range in.Parts {
			f, err := os.Open(part)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := f.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return fmt.Sprintf("%d input%s readable", len(inputs), plural(len(inputs))), nil
}

// engineGroup checks one engine: open it (a fresh client), run its
// trivial query ([rewriter.Engine.Ping]) and close it.
func (d *doctor) engineGroup(name string, ec config.EngineConfig) checkGroup {
	return func(ctx context.Context) []Check {
		target, secrets := engineTarget(name, ec)
		c, _ := runCheck(ctx, d, CheckEngine, target, secrets, func(ctx context.Context) (_ string, _ struct{}, err error) {
			eng, err := d.opts.OpenEngine(ctx, name, ec)
			if err != nil {
				return "", struct{}{}, err
			}
			defer func() { err = errors.Join(err, eng.Close()) }()
			if err := eng.Ping(ctx); err != nil {
				return "", struct{}{}, err
			}
			return fmt.Sprintf("%s answered a trivial query", ec.Type), struct{}{}, nil
		})
		return []Check{c}
	}
}

// engineTarget names an engine and its address without secrets, and lists
// the secrets to cut out of its errors.
func engineTarget(name string, ec config.EngineConfig) (string, []string) {
	addr := ec.DSN.Reveal()
	if ec.Type == config.EngineSpark {
		addr = ec.Remote.Reveal()
	}
	secrets := []string{}
	for _, s := range []config.Secret{ec.Password, ec.Token} {
		if s != "" {
			secrets = append(secrets, s.Reveal())
		}
	}
	// Only scheme, user and host are shown: a password, and Spark
	// Connect's ;token=… parameters, stay out.
	shown := "(address not shown)"
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p)
		}
		shown = u.Scheme + "://" + u.Host
		if u.User != nil {
			shown = u.Scheme + "://" + u.User.Username() + "@" + u.Host
		}
		for _, part := range []string{u.Path, u.RawQuery} {
			if strings.Trim(part, "/;") != "" {
				secrets = append(secrets, part)
			}
		}
	}
	return fmt.Sprintf("%s (%s %s)", name, ec.Type, shown), secrets
}

// timeoutGrace is how long a check may take past its deadline to return
// its own error before it is reported as timed out without one.
const timeoutGrace = 100 * time.Millisecond

// outcome is what a check function returns: its detail, or its error, and a
// value for the checks after it in the group.
type outcome[T any] struct {
	detail string
	value  T
	err    error
}

// runCheck runs fn with the doctor's timeout and returns its check, and
// fn's value when it finished in time. It returns at the deadline even if
// fn ignores ctx; fn then finishes on its own and its result is dropped.
// redact lists secret values to cut out of the error text.
func runCheck[T any](ctx context.Context, d *doctor, name, target string, redact []string, fn func(context.Context) (string, T, error)) (Check, T) {
	timedOut := fmt.Errorf("%w within %s", ErrCheckTimeout, d.opts.Timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, d.opts.Timeout, timedOut)
	defer cancel()
	start := d.opts.Now()
	done := make(chan outcome[T], 1)
	go func() {
		detail, v, err := fn(ctx)
		done <- outcome[T]{detail: detail, value: v, err: err}
	}()
	var o outcome[T]
	select {
	case o = <-done:
	case <-ctx.Done():
		// A library that heeds ctx returns at once, with an error that
		// says what it was doing: wait a moment for it.
		select {
		case o = <-done:
		case <-time.After(timeoutGrace):
			o.err = context.Cause(ctx)
		}
	}
	c := Check{Name: name, Target: target, Duration: d.opts.Now().Sub(start)}
	if o.err != nil && errors.Is(context.Cause(ctx), ErrCheckTimeout) && !errors.Is(o.err, ErrCheckTimeout) {
		// fn gave up at the deadline with the context's own error.
		o.err = fmt.Errorf("%w: %w", timedOut, o.err)
	}
	if o.err != nil {
		c.Error = redactText(o.err.Error(), redact)
		var zero T
		return c, zero
	}
	c.OK, c.Detail = true, o.detail
	return c, o.value
}

// skipped is a check that could not run, with why.
func skipped(name, target, why string) Check {
	return Check{Name: name, Target: target, Skipped: true, Detail: why}
}

// redactText cuts each secret out of s (errors of libraries may echo a
// URL or a header).
func redactText(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "****")
		}
	}
	return s
}

// secretValues lists the values of props that must not be printed: secret
// properties and the secrets URIs embed, longest first, so that a secret
// containing another is cut whole.
func secretValues(props config.Props) []string {
	var out []string
	for k, v := range props {
		switch {
		case config.IsSecret(k) && v != "":
			out = append(out, v)
		case config.IsURIKey(k):
			out = append(out, config.URISecrets(v)...)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// catalogTarget is a catalog's name, type and URI (redacted) as a check's
// target: "prod (rest, https://polaris.example.com/api/catalog)".
func catalogTarget(name string, props config.Props) string {
	var parts []string
	if t := props["type"]; t != "" {
		parts = append(parts, t)
	}
	if uri := props["uri"]; uri != "" {
		uri = config.RedactURI(uri)
		if strings.HasPrefix(uri, "file:") {
			// A local SQLite DSN: its query holds pragmas, not where it is.
			uri, _, _ = strings.Cut(uri, "?")
		}
		parts = append(parts, uri)
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, ", ") + ")"
}

// isLocation reports whether a warehouse property is a storage location
// (s3://bucket/path, file:///data) rather than a name a REST catalog
// resolves.
func isLocation(wh string) bool { return strings.Contains(wh, "://") }

// catalogGroup checks one catalog and its object store.
func (d *doctor) catalogGroup(name string, props config.Props) checkGroup {
	return func(ctx context.Context) []Check {
		secrets := secretValues(props)
		wh := props["warehouse"]
		var (
			st []Check // the object store's checks
			wg sync.WaitGroup
		)
		if isLocation(wh) {
			// The location is known: check storage alongside the catalog.
			wg.Add(1)
			go func() {
				defer wg.Done()
				st = d.objectStoreChecks(ctx, name, wh, secrets, func(ctx context.Context) (iceio.IO, error) {
					return iceio.LoadFS(ctx, lake.IOProps(props), wh)
				})
			}()
		}
		cat, tbl := runCheck(ctx, d, CheckCatalog, catalogTarget(name, props), secrets, func(ctx context.Context) (string, *table.Table, error) {
			return checkCatalog(ctx, name, props)
		})
		switch {
		case isLocation(wh):
			wg.Wait()
		case tbl != nil:
			st = d.objectStoreChecks(ctx, name, tbl.Location(), secrets, tbl.FS)
		default:
			why := "the catalog check failed"
			if cat.OK {
				why = "the catalog has no table"
			}
			what := "no warehouse location"
			if wh != "" {
				what = fmt.Sprintf("warehouse %q is not a location", wh)
			}
			st = []Check{skipped(CheckObjectStore, "catalog "+name, fmt.Sprintf("%s; %s, so there is no table location to list", what, why))}
		}
		out := append([]Check{cat}, st...)
		if tbl != nil {
			out = append(out, d.deletesCheck(ctx, name, tbl, secrets))
		}
		return out
	}
}

// deletesCheck reads the deletes of tbl, of catalog catName, for deletes
// no reader applies.
func (d *doctor) deletesCheck(ctx context.Context, catName string, tbl *table.Table, secrets []string) Check {
	tid := tbl.Identifier()
	id := lake.Ident{Catalog: catName, Namespace: tid[:len(tid)-1], Name: tid[len(tid)-1]}
	c, _ := runCheck(ctx, d, CheckDeletes, "table "+id.String(), secrets, func(ctx context.Context) (string, struct{}, error) {
		st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{})
		if err != nil {
			return "", struct{}{}, err
		}
		if n := len(st.DeleteIssues); n > 0 {
			is := st.DeleteIssues[0]
			return "", struct{}{}, fmt.Errorf("%d delete%s no reader applies, so rows deleted are visible (first: %s delete %s: %s); floe keeps them and the files they name: see 'floe health %s'",
				n, plural(n), is.Kind, is.Delete, is.Reason, id)
		}
		return fmt.Sprintf("%d delete%s, each applied by readers", len(st.DeleteFiles), plural(len(st.DeleteFiles))), struct{}{}, nil
	})
	return c
}

// checkCatalog opens the catalog, lists its namespaces and loads the first
// table it finds. It returns that table (nil when there is none) for the
// object store check.
func checkCatalog(ctx context.Context, name string, props config.Props) (string, *table.Table, error) {
	cat, err := OpenCatalog(ctx, name, props)
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if c, ok := cat.(catalog.Closer); ok {
			// A read-only check: nothing to lose when close fails.
			_ = c.Close()
		}
	}()
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return "", nil, fmt.Errorf("list namespaces: %w", err)
	}
	detail := fmt.Sprintf("%d namespace%s", len(nss), plural(len(nss)))
	id, err := firstTable(ctx, name, cat, nss)
	if err != nil {
		return "", nil, err
	}
	if id == nil {
		return detail + "; no table to load", nil, nil
	}
	tbl, err := lake.LoadTable(ctx, cat, *id)
	if err != nil {
		return "", nil, err
	}
	ident := *id
	ident.Catalog = ""
	return detail + "; loaded " + ident.String(), tbl, nil
}

// maxNamespacesToSearch bounds how many namespaces checkCatalog lists
// tables of to find one to load.
const maxNamespacesToSearch = 20

// firstTable is the first table of the first namespaces that has one, or nil.
func firstTable(ctx context.Context, name string, cat catalog.Catalog, nss []table.Identifier) (*lake.Ident, error) {
	nss = slices.Clone(nss)
	slices.SortFunc(nss, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	for _, ns := range nss[:min(len(nss), maxNamespacesToSearch)] {
		for tid, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, fmt.Errorf("list tables of %s: %w", strings.Join(ns, "."), err)
			}
			if len(tid) == 0 {
				continue
			}
			return &lake.Ident{Catalog: name, Namespace: tid[:len(tid)-1], Name: tid[len(tid)-1]}, nil
		}
	}
	return nil, nil
}

// maxListEntries bounds how many entries the object store check counts.
const maxListEntries = 1000

// objectStoreChecks lists location through the IO open returns, then, with
// Write, writes and deletes a probe object there.
func (d *doctor) objectStoreChecks(ctx context.Context, catName, location string, secrets []string, open func(context.Context) (iceio.IO, error)) []Check {
	target := config.RedactURI(location) + " (catalog " + catName + ")"
	list, _ := runCheck(ctx, d, CheckObjectStore, target, secrets, func(ctx context.Context) (string, struct{}, error) {
		fio, err := open(ctx)
		if err != nil {
			return "", struct{}{}, fmt.Errorf("open %s: %w", location, err)
		}
		detail, err := listLocation(fio, location)
		return detail, struct{}{}, err
	})
	out := []Check{list}
	if !d.opts.Write {
		return out
	}
	if !list.OK {
		return append(out, skipped(CheckObjectStoreWrite, target, "the object store could not be listed"))
	}
	// The probe opens its own IO: an object store's IO keeps the context it
	// was opened with for every request, and the listing check's context
	// ended with that check.
	w, _ := runCheck(ctx, d, CheckObjectStoreWrite, target, secrets, func(ctx context.Context) (string, struct{}, error) {
		fio, err := open(ctx)
		if err != nil {
			return "", struct{}{}, fmt.Errorf("open %s: %w", location, err)
		}
		detail, err := writeProbe(fio, location)
		return detail, struct{}{}, err
	})
	return append(out, w)
}

// listLocation lists the entries directly under location. A location with
// nothing under it yet (an object store prefix no table was written to)
// lists as empty.
func listLocation(fio iceio.IO, location string) (string, error) {
	lister, ok := fio.(iceio.ListableIO)
	if !ok {
		return "", fmt.Errorf("list %s: %T cannot list: %w", location, fio, errors.ErrUnsupported)
	}
	n, more, atRoot := 0, false, true
	err := lister.WalkDir(strings.TrimSuffix(location, "/"), func(_ string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if atRoot {
			// WalkDir visits the root first (LocalFS names it by path,
			// blob stores by URI).
			atRoot = false
			return nil
		}
		if n == maxListEntries {
			more = true
			return fs.SkipAll
		}
		n++
		if de.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) && n == 0 {
		// A local warehouse floe has not written to yet (the catalog
		// check, which runs at the same time, may be creating it): the
		// same count an empty directory gives.
		return "listed 0 entries (nothing written there yet)", nil
	}
	if err != nil {
		return "", fmt.Errorf("list %s: %w", location, err)
	}
	switch {
	case more:
		return fmt.Sprintf("listed more than %d entries", maxListEntries), nil
	case n == 1:
		return "listed 1 entry", nil
	}
	return fmt.Sprintf("listed %d entries", n), nil
}

// writeProbe writes a small object under location and deletes it again.
func writeProbe(fio iceio.IO, location string) (string, error) {
	w, ok := fio.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("write under %s: %T cannot write: %w", location, fio, errors.ErrUnsupported)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("probe name: %w", err)
	}
	name := ".floe-doctor-" + hex.EncodeToString(b[:])
	p := strings.TrimSuffix(location, "/") + "/" + name
	if err := w.WriteFile(p, []byte("floe doctor probe; safe to delete\n")); err != nil {
		return "", fmt.Errorf("write probe %s: %w", name, err)
	}
	if err := fio.Remove(p); err != nil {
		return "", fmt.Errorf("wrote probe %s, but delete it: %w (delete it by hand)", name, err)
	}
	return "wrote and deleted " + name, nil
}

// stateGroup checks the state store: it opens it as every verb does
// (creating a SQLite file and its directory on first use, connecting to
// PostgreSQL, applying pending migrations), checks it takes a write and,
// on SQLite, that its file is whole ([store.Store.Check]), and reads its
// schema version.
// The check names the store without its password.
func (d *doctor) stateGroup(ctx context.Context) []Check {
	st := d.cfg.State
	c, _ := runCheck(ctx, d, CheckStateStore, st.String(), nil, func(ctx context.Context) (string, struct{}, error) {
		return checkState(ctx, st)
	})
	return []Check{c}
}

func checkState(ctx context.Context, cfg config.StateConfig) (_ string, _ struct{}, err error) {
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return "", struct{}{}, err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	if err := st.Check(ctx); err != nil {
		return "", struct{}{}, redactState(err, cfg)
	}
	v, err := st.Version(ctx)
	if err != nil {
		return "", struct{}{}, redactState(err, cfg)
	}
	if latest := store.SchemaVersion(); v != latest {
		return "", struct{}{}, fmt.Errorf("schema version %d, this floe writes %d", v, latest)
	}
	return fmt.Sprintf("schema version %d (current)", v), struct{}{}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
