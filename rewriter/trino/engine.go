package trino

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	trinodriver "github.com/trinodb/trino-go-client/trino"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// Config configures a Trino engine.
type Config struct {
	// Name is the engine's key under engines in floe.yaml.
	Name string
	// DSN is a trino-go-client DSN naming the coordinator and the user,
	// such as "https://floe@trino:8443?source=floe". Its catalog and
	// schema do not matter: every statement names its table in full.
	DSN string
	// Password, when set, authenticates the DSN's user (HTTP basic auth,
	// which the client allows over https only). The caller reads it from
	// FLOE_ENGINE__<NAME>__PASSWORD; the engine never prints it.
	Password string
	// Timeout bounds each statement. Default: none beyond ctx (the client
	// then applies its own 10 h).
	Timeout time.Duration
	// Now is the clock retention thresholds are measured against.
	// Default: time.Now.
	Now func() time.Time
}

// String prints the config with the password redacted.
func (c Config) String() string {
	return fmt.Sprintf("trino engine %s (%s, timeout %s)", c.Name, redactor(c).redact(c.DSN), c.Timeout)
}

// DefaultTargetFileSizeBytes is the target file size when neither the plan,
// the options nor the table's write.target-file-size-bytes give one:
// Iceberg's default, 512 MiB.
const DefaultTargetFileSizeBytes = 512 << 20

// retentionMargin is added to every retention threshold. Trino measures
// the threshold back from its own clock when the procedure starts, later
// than floe's; the margin keeps Trino's cutoff before floe's, so Trino
// never removes a snapshot or file that floe's plan keeps.
const retentionMargin = time.Minute

// Engine runs floe's maintenance steps as statements on a Trino cluster,
// through its Iceberg connector's ALTER TABLE … EXECUTE procedures. See
// the package documentation for the statements.
type Engine struct {
	name      string
	db        *sql.DB
	client    *http.Client
	transport *http.Transport
	user      string
	password  string
	red       redactor
	timeout   time.Duration
	now       func() time.Time
}

var _ rewriter.Engine = (*Engine)(nil)

// Open configures an engine for cfg. It does not connect; [Engine.Ping]
// does. Every problem with cfg is reported at once, with the password
// redacted.
func Open(cfg Config) (*Engine, error) {
	red := redactor(cfg)
	var errs []error
	if cfg.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if cfg.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is negative", cfg.Timeout))
	}
	u, err := url.Parse(cfg.DSN)
	switch {
	case cfg.DSN == "":
		errs = append(errs, errors.New("dsn is empty"))
	case err != nil:
		errs = append(errs, fmt.Errorf("parse dsn: %w", err))
	case u.User == nil || u.User.Username() == "":
		errs = append(errs, errors.New("dsn names no user (http[s]://user@host:port)"))
	}
	if len(errs) > 0 {
		return nil, red.wrap(fmt.Errorf("trino engine %s: %w", cfg.Name, errors.Join(errs...)))
	}
	user := u.User.Username()
	password, _ := u.User.Password()
	if cfg.Password != "" {
		password = cfg.Password
		u.User = url.UserPassword(user, password)
	}
	q := u.Query()
	if q.Get("source") == "" {
		q.Set("source", "floe")
		u.RawQuery = q.Encode()
	}
	conf, err := trinodriver.ParseDSN(u.String())
	if err != nil {
		return nil, red.wrap(fmt.Errorf("trino engine %s: parse dsn: %w", cfg.Name, err))
	}
	transport, err := newTransport(conf, u.Scheme == "https")
	if err != nil {
		return nil, red.wrap(fmt.Errorf("trino engine %s: %w", cfg.Name, err))
	}
	client := &http.Client{Transport: recorder{base: transport}}
	conf.HTTPClient = client
	conn, err := trinodriver.NewConnector(conf)
	if err != nil {
		return nil, red.wrap(fmt.Errorf("trino engine %s: configure client: %w", cfg.Name, err))
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Engine{
		name: cfg.Name, db: sql.OpenDB(conn), client: client, transport: transport,
		user: user, password: password, red: red, timeout: cfg.Timeout, now: now,
	}, nil
}

// newTransport builds the HTTP transport the DSN's TLS and proxy settings
// ask for. The client refuses its own settings next to an HTTP client of
// the caller's, which the engine needs to read query ids, so they move onto
// the transport and off conf.
func newTransport(conf *trinodriver.Config, https bool) (*http.Transport, error) {
	if conf.CustomClientName != "" {
		return nil, errors.New("dsn: custom_client is not supported; give TLS settings (SSLCert, SSLCertPath, …) in the dsn instead")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if https {
		tlsConf, err := conf.TLSConfig()
		if err != nil {
			return nil, fmt.Errorf("dsn tls settings: %w", err)
		}
		t.TLSClientConfig = tlsConf
	}
	switch {
	case conf.HTTPProxy != "":
		t.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: conf.HTTPProxy})
	case conf.SOCKSProxy != "":
		t.Proxy = http.ProxyURL(&url.URL{Scheme: "socks5", Host: conf.SOCKSProxy})
	}
	conf.SSLCert, conf.SSLCertPath, conf.SSLVerification = "", "", ""
	conf.SSLClientCert, conf.SSLClientCertPath, conf.SSLClientKey, conf.SSLClientKeyPath = "", "", "", ""
	conf.HTTPProxy, conf.SOCKSProxy = "", ""
	return t, nil
}

// Name returns the engine's name.
func (e *Engine) Name() string { return e.name }

// Kind returns [rewriter.KindTrino].
func (e *Engine) Kind() string { return rewriter.KindTrino }

// String names the engine; it carries no secret.
func (e *Engine) String() string { return "trino engine " + e.name }

// CanWrite reports whether Trino can write layouts of strategy s: binpack,
// sort (through the table's sorted_by) and current. Trino's optimize
// writes no z-order or Hilbert curve and no tree.
func (e *Engine) CanWrite(s layout.Strategy) bool {
	switch s {
	case layout.StrategyBinpack, layout.StrategySort, layout.StrategyCurrent, "":
		return true
	}
	return false
}

// Compact runs the job as Trino's optimize. A sort layout first becomes the
// table's sort order (ALTER TABLE … SET PROPERTIES sorted_by = ARRAY[…]),
// which optimize then writes; the order stays the table's afterwards, as
// Iceberg's write order. optimize rewrites the files smaller than its
// file_size_threshold, here the job's target file size; the size of the
// files it writes is not an argument of the procedure but the table's
// write.target-file-size-bytes (or the session's
// <catalog>.target_max_file_size), which the engine leaves alone. A scoped
// job adds a WHERE on the partitions' source columns (see
// [rewriter.PartitionScopes]).
//
// A z-order, Hilbert or tree layout is refused before any statement is sent,
// with an error wrapping [rewriter.ErrLayoutUnsupported].
func (e *Engine) Compact(ctx context.Context, job rewriter.CompactJob) (rewriter.StepReport, error) {
	rep, err := e.compact(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) compact(ctx context.Context, job rewriter.CompactJob) (*rewriter.EngineReport, error) {
	l := job.Options.Layout
	if !e.CanWrite(l.Strategy) {
		can := "native"
		if l.Strategy == layout.StrategyZOrder {
			can = "native, spark" // Iceberg's Spark procedure writes z-order, not Hilbert or tree
		}
		return nil, fmt.Errorf("%w: Trino cannot write %s layouts; engines that can: %s", rewriter.ErrLayoutUnsupported, l.Strategy, can)
	}
	tbl, err := tableName(job.Table)
	if err != nil {
		return nil, err
	}
	var stmts []string
	if l.Strategy == layout.StrategySort {
		cols := make([]string, len(l.Columns))
		for i, c := range l.Columns {
			cols[i] = c.Name
			if job.State != nil {
				_, name, ok := job.State.FieldID(c.Name)
				if !ok {
					return nil, rewriter.MarkInvalidOptions(fmt.Errorf("sort column %q is not in table %s", c.Name, job.Table))
				}
				cols[i] = name
			}
		}
		s, err := setSortedBy(tbl, cols, l.Columns)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
	s, err := optimize(tbl, targetFileSize(job), job.Scope)
	if err != nil {
		return nil, fmt.Errorf("compact %s: %w", job.Table, err)
	}
	stmts = append(stmts, s)
	return e.runAll(ctx, "compact", stmts, nil)
}

// targetFileSize is the job's target file size: the plan's, the options',
// the layout's, the table's write.target-file-size-bytes, or
// [DefaultTargetFileSizeBytes].
func targetFileSize(job rewriter.CompactJob) int64 {
	for _, n := range []int64{job.Plan.TargetFileSizeBytes, job.Options.TargetFileSizeBytes, job.Options.Layout.TargetFileSizeBytes} {
		if n > 0 {
			return n
		}
	}
	if job.State != nil && job.State.Metadata != nil {
		if v, err := strconv.ParseInt(job.State.Metadata.Properties()["write.target-file-size-bytes"], 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return DefaultTargetFileSizeBytes
}

// Expire runs Trino's expire_snapshots with retention_threshold = now −
// job.OlderThan, in whole seconds rounded up, plus a minute of margin (so
// Trino's cutoff, taken from its own later clock, stays before floe's).
//
// Trino's procedure takes no retain_last (newer releases are reported to,
// older ones refuse the argument; the engine sends only what every release
// accepts). Iceberg itself keeps the table's
// history.expire.min-snapshots-to-keep newest snapshots; when job.RetainLast
// asks for more and job.Tbl is given, the engine moves the cutoff back to
// the RetainLast-th newest snapshot of main, so those survive too. The
// report's Notes say which happened.
//
// Trino refuses a threshold under the catalog's
// iceberg.expire-snapshots.min-retention (default 7d); the error carries
// Trino's message.
func (e *Engine) Expire(ctx context.Context, job rewriter.ExpireJob) (rewriter.StepReport, error) {
	rep, err := e.expire(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) expire(ctx context.Context, job rewriter.ExpireJob) (*rewriter.EngineReport, error) {
	if job.OlderThan.IsZero() {
		return nil, errors.New("expire: the job has no cutoff (OlderThan)")
	}
	tbl, err := tableName(job.Table)
	if err != nil {
		return nil, err
	}
	cutoff := job.OlderThan
	var notes []string
	if job.RetainLast > 0 {
		note := fmt.Sprintf("Trino's expire_snapshots has no retain_last; %d newest snapshots asked for", job.RetainLast)
		if kept, ok := nthNewestMain(job, job.RetainLast); ok && kept.Before(cutoff) {
			cutoff = kept
			note += fmt.Sprintf(", kept by moving the cutoff back to the oldest of them (%s)", kept.UTC().Format(time.RFC3339Nano))
		} else if ok {
			note += ", all younger than the cutoff"
		} else if job.Tbl == nil {
			note += ", not enforced (no table loaded): only the table's history.expire.min-snapshots-to-keep protects them"
		} else {
			note += ", main has no more snapshots than that"
		}
		notes = append(notes, note)
	}
	stmt := "ALTER TABLE " + tbl + " EXECUTE expire_snapshots(retention_threshold => '" + retention(e.threshold(cutoff)) + "')"
	rep, err := e.runAll(ctx, "expire", []string{stmt}, notes)
	if rep != nil && job.RetainLast > 0 {
		rep.Metrics["retain_last_requested"] = int64(job.RetainLast)
	}
	return rep, err
}

// nthNewestMain is the commit time of the n-th newest snapshot along main.
func nthNewestMain(job rewriter.ExpireJob, n int) (time.Time, bool) {
	if job.Tbl == nil {
		return time.Time{}, false
	}
	md := job.Tbl.Metadata()
	s := md.CurrentSnapshot()
	for i := 1; s != nil; i++ {
		if i == n {
			return time.UnixMilli(s.TimestampMs), true
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return time.Time{}, false
}

// threshold is the retention Trino is given for cutoff: now − cutoff plus
// [retentionMargin], rounded up to whole seconds, never negative.
func (e *Engine) threshold(cutoff time.Time) time.Duration {
	d := e.now().Sub(cutoff) + retentionMargin
	if d < 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// RemoveOrphans runs Trino's remove_orphan_files with retention_threshold
// = now − job.OlderThan, rounded up to whole seconds plus a minute (see
// [Engine.Expire]). Trino lists the table location itself; it cannot see
// floe's leases, which is why the control plane moves job.OlderThan before
// every live run. Trino refuses a threshold under
// iceberg.remove-orphan-files.min-retention (default 7d). Newer Trino
// returns metric rows (deleted_files_count, …), which become the report's
// Metrics.
func (e *Engine) RemoveOrphans(ctx context.Context, job rewriter.OrphanJob) (rewriter.StepReport, error) {
	rep, err := e.removeOrphans(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) removeOrphans(ctx context.Context, job rewriter.OrphanJob) (*rewriter.EngineReport, error) {
	if job.OlderThan.IsZero() {
		return nil, errors.New("remove orphans: the job has no cutoff (OlderThan)")
	}
	tbl, err := tableName(job.Table)
	if err != nil {
		return nil, err
	}
	stmt := "ALTER TABLE " + tbl + " EXECUTE remove_orphan_files(retention_threshold => '" + retention(e.threshold(job.OlderThan)) + "')"
	return e.runAll(ctx, "orphans", []string{stmt}, nil)
}

// RewriteManifests runs Trino's optimize_manifests (Trino 470 and later).
func (e *Engine) RewriteManifests(ctx context.Context, job rewriter.ManifestJob) (rewriter.StepReport, error) {
	rep, err := e.rewriteManifests(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) rewriteManifests(ctx context.Context, job rewriter.ManifestJob) (*rewriter.EngineReport, error) {
	tbl, err := tableName(job.Table)
	if err != nil {
		return nil, err
	}
	return e.runAll(ctx, "manifests", []string{"ALTER TABLE " + tbl + " EXECUTE optimize_manifests"}, nil)
}

// Ping runs SELECT 1.
func (e *Engine) Ping(ctx context.Context) error {
	_, _, _, err := e.run(ctx, "SELECT 1")
	return err
}

// Close closes the engine's connections.
func (e *Engine) Close() error {
	err := e.db.Close()
	e.transport.CloseIdleConnections()
	return err
}

// runAll runs stmts in order, stopping at the first failure, and reports
// them; the report is returned with the error too, listing what ran.
func (e *Engine) runAll(ctx context.Context, step string, stmts []string, notes []string) (*rewriter.EngineReport, error) {
	start := time.Now()
	rep := &rewriter.EngineReport{Engine: e.name, Kind: rewriter.KindTrino, Step: step, Metrics: map[string]int64{}, Notes: notes}
	for _, s := range stmts {
		st, cols, rows, err := e.run(ctx, s)
		rep.Statements = append(rep.Statements, st)
		if err != nil {
			rep.Duration = time.Since(start)
			return rep, err
		}
		addMetrics(rep.Metrics, cols, rows)
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// run runs one statement and reads every row it returns.
func (e *Engine) run(ctx context.Context, stmt string) (rewriter.EngineStatement, []string, [][]any, error) {
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	ctx, tr := withTrace(ctx)
	cols, rows, err := e.query(ctx, stmt)
	id, _, _ := tr.get()
	rec := rewriter.EngineStatement{SQL: stmt, QueryID: id, Rows: len(rows)}
	if err != nil {
		ctxErr := ctx.Err()
		if ctxErr != nil {
			e.cancel(ctx, tr)
		}
		return rec, nil, nil, e.red.wrap(queryError(e.name, stmt, id, err, ctxErr))
	}
	return rec, cols, rows, nil
}

func (e *Engine) query(ctx context.Context, stmt string) (cols []string, out [][]any, err error) {
	rows, err := e.db.QueryContext(ctx, stmt)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if cerr := rows.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for rows.Next() {
		if cols == nil {
			if cols, err = rows.Columns(); err != nil {
				return nil, nil, err
			}
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, err
	}
	return cols, out, nil
}

// cancel makes sure a statement cut short by ctx is cancelled on the
// coordinator. The client sends DELETE /v1/query/<id> itself when ctx ends
// while it polls; when it did not (ctx ended between two of its requests,
// or before it read the first page), the engine sends DELETE to the last
// nextUri, which Trino's protocol defines as cancelling the query.
func (e *Engine) cancel(ctx context.Context, tr *trace) {
	id, next, deleted := tr.get()
	if id == "" || next == "" || deleted {
		return
	}
	ctx, done := context.WithTimeout(context.WithoutCancel(ctx), trinodriver.DefaultCancelQueryTimeout)
	defer done()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, next, nil)
	if err != nil {
		return
	}
	req.Header.Set("X-Trino-User", e.user)
	if e.password != "" {
		req.SetBasicAuth(e.user, e.password)
	}
	resp, err := e.client.Do(req)
	if err == nil {
		_ = resp.Body.Close() // best effort: the query is abandoned either way
	}
}

// addMetrics adds a statement's result rows to m: rows of (metric_name,
// metric_value), as remove_orphan_files and newer optimize return them, or
// any integer column of other rows under its own name (older Trino
// reports an EXECUTE's update count as one "rows" column).
func addMetrics(m map[string]int64, cols []string, rows [][]any) {
	if len(cols) == 2 && strings.EqualFold(cols[0], "metric_name") && strings.EqualFold(cols[1], "metric_value") {
		for _, r := range rows {
			name, ok := r[0].(string)
			if n, isInt := toInt(r[1]); ok && isInt {
				m[name] += n
			}
		}
		return
	}
	for _, r := range rows {
		for i, c := range cols {
			if n, ok := toInt(r[i]); ok {
				m[strings.ToLower(c)] += n
			}
		}
	}
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// redactor removes the password from text: the configured one and any in
// the DSN, plain and URL-escaped.
type redactor Config

func (r redactor) secrets() []string {
	var out []string
	add := func(p string) {
		if p != "" {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p), url.UserPassword("u", p).String()[2:])
		}
	}
	add(r.Password)
	if u, err := url.Parse(r.DSN); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	return out
}

func (r redactor) redact(s string) string {
	for _, p := range r.secrets() {
		if p != "" {
			s = strings.ReplaceAll(s, p, "REDACTED")
		}
	}
	return s
}

// wrap returns err with the password redacted from its message; errors.Is
// and errors.As still see the cause.
func (r redactor) wrap(err error) error {
	if err == nil || len(r.secrets()) == 0 {
		return err
	}
	return redactedError{msg: r.redact(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }
