package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/floe-project/floe/control/policy"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the embedded default configuration file.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Config is floe's configuration.
type Config struct {
	// DataDir is where the embedded default keeps its catalog, warehouse and
	// state. "{data_dir}" in any catalog property or path is replaced by its
	// absolute form. Default: ./floe-data.
	DataDir string `yaml:"data_dir"`
	// DefaultCatalog is used for table names without a catalog part.
	// Default: the only catalog, if there is one.
	DefaultCatalog string `yaml:"default_catalog"`
	// Catalogs maps a floe catalog name to iceberg-go catalog properties
	// (type, uri, warehouse, s3.*, rest.*, sql.driver, …).
	Catalogs map[string]Props `yaml:"catalogs"`
	// State configures floe's own state store.
	State StateConfig `yaml:"state"`
	// Telemetry maps engine catalog names to floe catalogs: engine → engine
	// catalog → floe catalog, e.g. trino: {iceberg: local}.
	Telemetry TelemetryConfig `yaml:"telemetry"`
	// Health holds the defaults used by table health.
	Health HealthConfig `yaml:"health"`
	// Log configures floe's structured log on standard error.
	Log LogConfig `yaml:"log"`
	// Plan holds the defaults of floe plan.
	Plan PlanConfig `yaml:"plan"`
	// Alerts configures the daemon's alerts and their sinks.
	Alerts AlertsConfig `yaml:"alerts"`
	// Server configures floe serve's HTTP server.
	Server ServerConfig `yaml:"server"`
	// Engines are the distributed engines (Trino, Spark) a policy's engine
	// key can name, by name.
	Engines map[string]EngineConfig `yaml:"engines"`
	// PoliciesNode is the file's policies: section as written (a YAML
	// node); Parse reads it into Policies with the line of every key.
	PoliciesNode any `yaml:"policies"`
	// PoliciesFile is a file holding the policies instead (the same shape),
	// relative to the configuration file's directory.
	PoliciesFile string `yaml:"policies_file"`
	// Policies are the maintenance policies of policies: or policies_file,
	// laid over the embedded default's when the file names no catalogs of
	// its own (see docs/config.md); empty when there are none, so every
	// table gets the built-in policy.
	Policies *policy.Set `yaml:"-"`

	// Source is the file the configuration came from, or "(embedded default)".
	Source string `yaml:"-"`

	// origins says where each key was set (its path segments joined by
	// "."): a line of the embedded default or of the file; envKeys maps a
	// key an environment variable set to the variable. Both name where a
	// problem is, and floe config view where a value came from.
	origins map[string]origin
	envKeys map[string]string
	// problems are what decoding found (unknown keys, values of the wrong
	// shape), badKeys the keys they are about; envErr is what the
	// environment variables got wrong. Validate reports them with the rest.
	problems []error
	badKeys  map[string]bool
	envErr   error
	// basePolicies are the embedded default's policies, which the file's
	// are laid over ([policy.Set.Over]); nil once the file names catalogs
	// of its own.
	basePolicies *policy.Set
	// workDir is the directory relative paths were resolved in.
	workDir string
	// now is the clock validation judges schedules by (Options.Now).
	now func() time.Time
	// policiesErr is what is wrong with the policies as written, kept
	// for Validate to report with everything else.
	policiesErr error
}

// LogConfig configures the log floe writes to standard error.
type LogConfig struct {
	// Level is the least severe level logged: debug, info, warn or error.
	// Default: warn (floe serve: info, see [LogConfig.LevelOr]).
	Level string `yaml:"level"`
	// Format is text or json. Default: text.
	Format string `yaml:"format"`

	// defaulted says that neither the file nor the environment set Level.
	defaulted bool
}

// LevelOr is Level as configured, or def when neither floe.yaml nor
// FLOE_LOG_LEVEL set one: floe serve logs at info unless told otherwise,
// the verbs at warn.
func (l LogConfig) LevelOr(def string) string {
	if l.defaulted {
		return def
	}
	return l.Level
}

// LogLevels and LogFormats are the values of log.level and log.format.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"text", "json"}
)

// StateConfig locates the state store.
type StateConfig struct {
	// Driver is sqlite (one file, for one floe process or a few on one
	// machine) or postgres (a database several floe processes on several
	// machines share). Default: sqlite.
	Driver string `yaml:"driver"`
	// Path of the SQLite state database. sqlite only. Default:
	// {data_dir}/state.db.
	Path string `yaml:"path"`
	// DSN is the PostgreSQL connection string, a URL such as
	// postgres://floe@db:5432/floe?sslmode=require or key=value pairs.
	// postgres only. A password in it is never printed; better leave it
	// out and set FLOE_STATE_PASSWORD.
	DSN string `yaml:"dsn" redact:"uri"`
	// Password is the PostgreSQL password, from FLOE_STATE_PASSWORD only
	// (never the file); it replaces the DSN's.
	Password Secret `yaml:"-" env:"password=FLOE_STATE_PASSWORD"`
}

// State drivers.
const (
	StateSQLite   = "sqlite"
	StatePostgres = "postgres"
)

// StateDrivers are the values of state.driver.
var StateDrivers = []string{StateSQLite, StatePostgres}

// IsPostgres reports whether the state is in PostgreSQL.
func (s StateConfig) IsPostgres() bool { return strings.EqualFold(s.Driver, StatePostgres) }

// String names the state store for messages, without a password: the
// SQLite path, or "postgres " and the DSN redacted.
func (s StateConfig) String() string {
	if s.IsPostgres() {
		return "postgres " + RedactURI(s.DSN)
	}
	return s.Path
}

// GoString keeps %#v from printing the DSN's password.
func (s StateConfig) GoString() string {
	return fmt.Sprintf("config.StateConfig{Driver:%q, Path:%q, DSN:%q, Password:%q}", s.Driver, s.Path, RedactURI(s.DSN), s.Password.String())
}

// Secrets are the passwords the state configuration holds (FLOE_STATE_PASSWORD
// and the DSN's), to redact from text that may echo them.
func (s StateConfig) Secrets() []string {
	var out []string
	if s.Password != "" {
		out = append(out, s.Password.Reveal())
	}
	return append(out, URISecrets(s.DSN)...)
}

// PlanConfig holds the defaults of floe plan, before its flags.
type PlanConfig struct {
	// MinGainPP is the least gain over the current layout, in percentage
	// points of files skipped, a candidate needs to be proposed (plan
	// --min-gain). 0 to 100. Default: 5.
	MinGainPP *float64 `yaml:"min_gain_pp"`
}

// DefaultMinGainPP is plan.min_gain_pp's default.
const DefaultMinGainPP = 5.0

// MinGainPP is plan.min_gain_pp, or its default.
func (c *Config) MinGainPP() float64 {
	if c.Plan.MinGainPP == nil {
		return DefaultMinGainPP
	}
	return *c.Plan.MinGainPP
}

// TelemetryConfig configures how query logs are mapped to tables.
type TelemetryConfig struct {
	// CatalogMap maps engine → engine catalog name → floe catalog name.
	CatalogMap map[string]map[string]string `yaml:"catalog_map"`
	// Sources are where floe collects telemetry by itself: floe serve on
	// each source's interval, floe collect without arguments once. See
	// [SourceConfig] and docs/telemetry.md.
	Sources []SourceConfig `yaml:"sources"`
	// Retention is how long raw query events stay in the state store,
	// as a duration ("30d", "720h"; see [TelemetryConfig.RetentionDuration]):
	// the daemon folds older ones into what ranking and projection read of
	// them (store.Store.PruneEvents). Default: 30d; at least 1d, at
	// most 3650d.
	Retention string `yaml:"retention"`
	// History is how long folded query events stay in the state store,
	// as a duration (see [TelemetryConfig.HistoryDuration]): the daemon
	// deletes older ones (store.Store.DeleteFolded), so the store holds
	// at most Retention of raw events and History of folded ones. An
	// analysis whose --since reaches further back sees only History.
	// Default: 400d — more than a year, so that a year-long window (--since
	// 365d) is whole, and far more than the verbs' 30-day default — or
	// Retention when that is longer; at least Retention, at most 3650d.
	History string `yaml:"history"`
}

// Telemetry retention and history defaults and bounds.
const (
	DefaultTelemetryRetention = 30 * 24 * time.Hour
	MinTelemetryRetention     = 24 * time.Hour
	MaxTelemetryRetention     = 3650 * 24 * time.Hour
	DefaultTelemetryHistory   = 400 * 24 * time.Hour
	MaxTelemetryHistory       = 3650 * 24 * time.Hour
)

// RetentionDuration is the parsed telemetry.retention (validated when the
// configuration was loaded), or its default.
func (t TelemetryConfig) RetentionDuration() time.Duration {
	if strings.TrimSpace(t.Retention) == "" {
		return DefaultTelemetryRetention
	}
	d, err := policy.ParseDuration(t.Retention)
	if err != nil {
		return DefaultTelemetryRetention
	}
	return d
}

// HistoryDuration is the parsed telemetry.history (validated when the
// configuration was loaded), or its default: [DefaultTelemetryHistory],
// or the retention when that is longer.
func (t TelemetryConfig) HistoryDuration() time.Duration {
	if h := strings.TrimSpace(t.History); h != "" {
		if d, err := policy.ParseDuration(h); err == nil {
			return d
		}
	}
	return max(DefaultTelemetryHistory, t.RetentionDuration())
}

// validateRetention reports what is wrong with telemetry.retention and
// telemetry.history.
func (c *Config) validateRetention(bad func(segs []string, format string, args ...any)) {
	if r := strings.TrimSpace(c.Telemetry.Retention); r != "" {
		d, err := policy.ParseDuration(r)
		switch {
		case err != nil:
			bad([]string{"telemetry", "retention"}, "%q: %v", r, err)
		case d < MinTelemetryRetention || d > MaxTelemetryRetention:
			bad([]string{"telemetry", "retention"}, "%s: want at least 1d and at most 3650d", r)
		}
	}
	h := strings.TrimSpace(c.Telemetry.History)
	if h == "" {
		return
	}
	d, err := policy.ParseDuration(h)
	switch {
	case err != nil:
		bad([]string{"telemetry", "history"}, "%q: %v", h, err)
	case d < c.Telemetry.RetentionDuration() || d > MaxTelemetryHistory:
		bad([]string{"telemetry", "history"}, "%s: want at least telemetry.retention (%s) and at most 3650d: folded events are kept longer than raw ones",
			h, policy.FormatDuration(c.Telemetry.RetentionDuration()))
	}
}

// HealthConfig holds health defaults, before per-table policy.
type HealthConfig struct {
	// TargetFileSize is used when a table has no write.target-file-size-bytes,
	// as a size such as "512MiB". Default: 512MiB.
	TargetFileSize string `yaml:"target_file_size"`
}

// Props are catalog properties. Their String method redacts secrets.
type Props map[string]string

// secretKeys are property name fragments whose values are never printed.
var secretKeys = []string{"secret", "token", "password", "credential", "session-token", "key-id", "sas", "private"}

// IsSecret reports whether a property's value must not be printed or logged.
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Redacted returns a copy with secret values replaced by "****", and the
// secrets a URI property embeds (see [IsURIKey]) redacted by [RedactURI].
func (p Props) Redacted() Props {
	out := make(Props, len(p))
	for k, v := range p {
		switch {
		case IsSecret(k) && v != "":
			v = "****"
		case IsURIKey(k):
			v = RedactURI(v)
		}
		out[k] = v
	}
	return out
}

// Secrets returns the secret values the properties hold: every value
// whose key [IsSecret], and the secrets a URI property embeds
// ([URISecrets]), so that text echoing them (a library's error) can be
// redacted.
func (p Props) Secrets() []string {
	var out []string
	for k, v := range p {
		switch {
		case IsSecret(k) && v != "":
			out = append(out, v)
		case IsURIKey(k):
			out = append(out, URISecrets(v)...)
		}
	}
	return out
}

// IsURIKey reports whether a property holds a URI or DSN (uri,
// oauth2-server-uri, s3.signer.uri, …), which may embed a password.
func IsURIKey(key string) bool {
	k := strings.ToLower(key)
	return k == "uri" || k == "url" || strings.HasSuffix(k, "-uri") || strings.HasSuffix(k, ".uri") ||
		strings.HasSuffix(k, "-url") || strings.HasSuffix(k, ".url")
}

// dsnSecret matches key=value pairs of a DSN whose key names a secret
// (PostgreSQL's "host=db password=s3cret").
var dsnSecret = regexp.MustCompile(`(?i)([a-z0-9_.-]*(?:secret|token|password|passwd|pwd|credential|sas|private)[a-z0-9_.-]*)=('[^']*'|[^\s&;]+)`)

// RedactURI replaces the secrets a URI or DSN embeds with "****": the
// password of user:password@host, query parameters whose name [IsSecret]
// (or names a password), and key=value pairs of a DSN such as
// "host=db password=s3cret". Anything else is kept, so the result still
// says where the catalog is.
func RedactURI(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && !strings.ContainsAny(s, " ") {
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "****")
			}
		}
		if u.RawQuery != "" {
			q := u.Query()
			changed := false
			for k, vs := range q {
				if isSecretParam(k) {
					for i := range vs {
						vs[i] = "****"
					}
					changed = true
				}
			}
			if changed {
				u.RawQuery = q.Encode()
			}
		}
		// url.URL.String and url.Values.Encode escape the "*" of "****".
		return strings.ReplaceAll(u.String(), "%2A%2A%2A%2A", "****")
	}
	return dsnSecret.ReplaceAllString(s, "$1=****")
}

// URISecrets returns the secrets a URI or DSN embeds, the parts
// [RedactURI] replaces, so that text echoing the URI (a library's error)
// can be redacted too.
func URISecrets(s string) []string {
	var out []string
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && !strings.ContainsAny(s, " ") {
		if u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" {
				out = append(out, p, url.PathEscape(p))
			}
		}
		for k, vs := range u.Query() {
			if isSecretParam(k) {
				for _, v := range vs {
					out = append(out, v, url.QueryEscape(v))
				}
			}
		}
		return out
	}
	for _, m := range dsnSecret.FindAllStringSubmatch(s, -1) {
		out = append(out, strings.Trim(m[2], "'"))
	}
	return out
}

// isSecretParam reports whether a URI query parameter holds a secret.
func isSecretParam(k string) bool {
	lk := strings.ToLower(k)
	return IsSecret(k) || strings.Contains(lk, "passwd") || lk == "pwd" || lk == "sig"
}

// String prints the properties sorted by key, secrets redacted.
func (p Props) String() string {
	r := p.Redacted()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", k, r[k])
	}
	return b.String()
}

// Options say where to look for the configuration file.
type Options struct {
	// Path is the --config flag; empty means look further.
	Path string
	// Getenv reads environment variables. Default: os.Getenv.
	Getenv func(string) string
	// Environ lists the environment as KEY=VALUE. Default: os.Environ.
	Environ func() []string
	// WorkDir resolves relative paths. Default: the current directory.
	WorkDir string
	// Now is the clock validation judges the policies' schedules by (one
	// that never fires in the next five years is refused). Default:
	// time.Now.
	Now func() time.Time
}

// Load finds the file, decodes it over the embedded default (see the
// package doc and docs/config.md for what a file overrides), overrides
// keys from FLOE_* variables, expands and validates the configuration.
// Every problem is reported at once in one error wrapping [ErrInvalid],
// but for a file that is no YAML at all.
func Load(opts Options) (*Config, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.WorkDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
		opts.WorkDir = wd
	}
	path, from := opts.Path, "--config"
	if path == "" {
		path, from = opts.Getenv("FLOE_CONFIG"), "FLOE_CONFIG"
	}
	if path == "" {
		from = ""
		if _, err := os.Stat(filepath.Join(opts.WorkDir, "floe.yaml")); err == nil {
			path = filepath.Join(opts.WorkDir, "floe.yaml")
		}
	}
	cfg := &Config{Source: EmbeddedSource, now: opts.Now}
	if err := cfg.decode(EmbeddedSource, defaultYAML, true); err != nil {
		return nil, err
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) && from != "" {
			return nil, fmt.Errorf("%w: config file %s (from %s) does not exist", ErrInvalid, path, from)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: read config: %w", ErrInvalid, err)
		}
		cfg.Source = path
		if err := cfg.decode(path, b, false); err != nil {
			return nil, err
		}
	}
	// What the variables get wrong is reported by Validate, with the
	// file's problems, in one error.
	_ = cfg.ApplyEnv(opts.Environ())
	if err := cfg.finish(opts.WorkDir); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse decodes one configuration file strictly, as it is: without the
// embedded default under it, the environment or validation. Errors wrap
// [ErrInvalid] and name every problem at once, each with the source, the
// line and the key.
func Parse(source string, data []byte) (*Config, error) {
	cfg := &Config{Source: source}
	if err := cfg.decode(source, data, false); err != nil {
		return nil, err
	}
	errs := slices.Clone(cfg.problems)
	if cfg.policiesErr != nil {
		errs = append(errs, cfg.policiesErr)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	if cfg.Policies == nil {
		cfg.Policies = &policy.Set{}
	}
	return cfg, nil
}

// loadPoliciesFile reads policies_file, relative to the configuration
// file's directory (the working directory for the embedded default). Its
// errors are for Validate to report (it wraps them in [ErrInvalid]).
func (c *Config) loadPoliciesFile(workDir string) error {
	if c.PoliciesFile == "" {
		return nil
	}
	if c.PoliciesNode != nil {
		return fmt.Errorf("%s: policies_file: set policies or policies_file, not both", c.where("policies_file"))
	}
	path := c.PoliciesFile
	if !filepath.IsAbs(path) {
		base := workDir
		if !strings.HasPrefix(c.Source, "(") {
			base = filepath.Dir(c.Source)
		}
		path = filepath.Join(base, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: policies_file: %w", c.where("policies_file"), err)
	}
	set, err := policy.ParseFile(path, data)
	if set != nil {
		// What could be read, so that Validate checks it too.
		c.PoliciesFile, c.Policies = path, set
	}
	return err
}

// formatYAMLError turns a go-yaml error into "file:line:column: message"
// without the source excerpt and colours go-yaml prints by default.
func formatYAMLError(source string, err error) string {
	msg := strings.TrimSpace(yaml.FormatError(err, false, false))
	// go-yaml prints "[3:5] unknown field "x"" and an excerpt below it.
	msg, _, _ = strings.Cut(msg, "\n")
	if strings.HasPrefix(msg, "[") {
		if end := strings.Index(msg, "]"); end > 0 {
			return source + ":" + msg[1:end] + ": " + strings.TrimSpace(msg[end+1:])
		}
	}
	return source + ": " + msg
}

// hasKey reports whether the file or an environment variable set key
// (its path segments); a key only the embedded default sets does not count.
func (c *Config) hasKey(segs ...string) bool {
	k := strings.Join(segs, ".")
	if _, ok := c.envKeys[k]; ok {
		return true
	}
	o, ok := c.origins[k]
	return ok && o.file != ""
}

// where is the place to report a problem with key (its path segments):
// the environment variable that set it, else "file:line" (or the embedded
// default) where it was set; a key nobody set (a required one) is reported
// at its parent's line when the parent is more than the top level, else
// at the file.
func (c *Config) where(segs ...string) string {
	if env, ok := c.envKeys[strings.Join(segs, ".")]; ok {
		return env
	}
	for ; len(segs) > 0; segs = segs[:len(segs)-1] {
		if o, ok := c.origins[strings.Join(segs, ".")]; ok {
			return o.String()
		}
		if len(segs) <= 2 {
			break
		}
	}
	return c.Source
}

// keyName prints a key's segments as floe's messages do:
// alerts.webhooks[0].url.
func keyName(segs []string) string {
	return strings.ReplaceAll(strings.Join(segs, "."), ".[", "[")
}

// ErrInvalid is returned (wrapped) when a configuration fails validation.
var ErrInvalid = errors.New("invalid configuration")

// finish fills defaults, expands {data_dir}, absolutizes paths and validates.
func (c *Config) finish(workDir string) error {
	c.workDir = workDir
	if c.DataDir == "" {
		c.DataDir = "./floe-data"
	}
	if !filepath.IsAbs(c.DataDir) {
		c.DataDir = filepath.Join(workDir, c.DataDir)
	}
	expand := func(s string) string { return strings.ReplaceAll(s, "{data_dir}", c.DataDir) }
	for name, props := range c.Catalogs {
		for k, v := range props {
			props[k] = expand(v)
		}
		if wh := props["warehouse"]; strings.HasPrefix(wh, "file://") && !strings.HasPrefix(wh, "file:///") {
			props["warehouse"] = "file://" + filepath.Join(workDir, strings.TrimPrefix(wh, "file://"))
		}
		if props["type"] == "sql" && strings.EqualFold(props["sql.driver"], "sqlite") {
			props["uri"] = sqliteDSN(props["uri"], workDir)
		}
		c.Catalogs[name] = props
	}
	if c.State.Driver == "" {
		c.State.Driver = StateSQLite
	}
	if c.State.Path == "" && !c.State.IsPostgres() {
		c.State.Path = "{data_dir}/state.db"
	}
	if c.State.Path != "" {
		c.State.Path = expand(c.State.Path)
		if !filepath.IsAbs(c.State.Path) {
			c.State.Path = filepath.Join(workDir, c.State.Path)
		}
	}
	if c.DefaultCatalog == "" && len(c.Catalogs) == 1 {
		for name := range c.Catalogs {
			c.DefaultCatalog = name
		}
	}
	if c.Plan.MinGainPP == nil {
		g := DefaultMinGainPP
		c.Plan.MinGainPP = &g
	}
	if c.Health.TargetFileSize == "" {
		c.Health.TargetFileSize = "512MiB"
	}
	if c.Log.Level == "" {
		c.Log.Level, c.Log.defaulted = "warn", true
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if c.Alerts.Repeat == "" {
		c.Alerts.Repeat = "6h"
	}
	for i := range c.Alerts.Webhooks {
		if c.Alerts.Webhooks[i].Format == "" {
			c.Alerts.Webhooks[i].Format = FormatJSON
		}
	}
	c.serverDefaults()
	if err := c.loadPoliciesFile(workDir); err != nil {
		c.policiesErr = err
	}
	c.Policies = c.Policies.Over(c.basePolicies)
	if c.Policies == nil {
		c.Policies = &policy.Set{}
	}
	return c.Validate()
}

// sqliteDSN absolutizes a SQLite path and adds busy_timeout and WAL pragmas
// unless the DSN sets pragmas itself: concurrent writers (floe and the
// engines it maintains for) otherwise see SQLITE_BUSY at once.
func sqliteDSN(uri, workDir string) string {
	path, query, _ := strings.Cut(strings.TrimPrefix(uri, "file:"), "?")
	if path != "" && path != ":memory:" && !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	if !strings.Contains(query, "_pragma") {
		if query != "" {
			query += "&"
		}
		query += "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	}
	return "file:" + path + "?" + query
}

// Validate reports every problem at once, naming the key and where it was
// set (file and line, or the environment variable). Besides the keys'
// values it checks that catalog property names are known (see
// [CatalogPropertyPrefixes]) and that the state store's directory exists
// unless it is inside data_dir, which floe creates.
func (c *Config) Validate() error {
	// What decoding and the environment found comes first; a key they
	// reported is not reported again (as missing, say).
	errs := slices.Clone(c.problems)
	if c.envErr != nil {
		errs = append(errs, c.envErr)
	}
	bad := func(segs []string, format string, args ...any) {
		if c.reported(segs) {
			return
		}
		errs = append(errs, fmt.Errorf("%s: %s: %s", c.where(segs...), keyName(segs), fmt.Sprintf(format, args...)))
	}
	key := func(segs ...string) []string { return segs }
	if len(c.Catalogs) == 0 {
		bad(key("catalogs"), "at least one catalog is required")
	}
	names := c.CatalogNames()
	for _, name := range names {
		props := c.Catalogs[name]
		if strings.ContainsAny(name, ". ") || name == "" {
			bad(key("catalogs", name), "catalog names may not be empty or contain dots or spaces")
		}
		if props["type"] == "" && !strings.Contains(props["uri"], "://") {
			bad(key("catalogs", name, "type"), "required (%s) unless uri has a scheme", orList(CatalogTypes))
		}
		pkeys := make([]string, 0, len(props))
		for k := range props {
			pkeys = append(pkeys, k)
		}
		sort.Strings(pkeys)
		for _, k := range pkeys {
			if msg := checkCatalogKey(k); msg != "" {
				bad(key("catalogs", name, k), "%s", msg)
			} else if msg := checkCatalogValue(k, props[k]); msg != "" {
				bad(key("catalogs", name, k), "%s", msg)
			}
		}
	}
	if c.DefaultCatalog != "" {
		if _, ok := c.Catalogs[c.DefaultCatalog]; !ok {
			bad(key("default_catalog"), "%q is not one of the catalogs (%s)", c.DefaultCatalog, strings.Join(names, ", "))
		}
	}
	if n, err := ParseSize(c.Health.TargetFileSize); err != nil {
		bad(key("health", "target_file_size"), "%v", err)
	} else if err := policy.CheckTargetFileSize(n, false, "a policy's target_file_size with allow_small_target_file_size: true (this key only stands in for tables without a target of their own)"); err != nil {
		bad(key("health", "target_file_size"), "%v", err)
	}
	if !slices.Contains(LogLevels, strings.ToLower(c.Log.Level)) {
		bad(key("log", "level"), "%q: want %s", c.Log.Level, orList(LogLevels))
	}
	if !slices.Contains(LogFormats, strings.ToLower(c.Log.Format)) {
		bad(key("log", "format"), "%q: want %s", c.Log.Format, orList(LogFormats))
	}
	c.checkState(bad)
	if g := c.Plan.MinGainPP; g != nil && (math.IsNaN(*g) || *g < 0 || *g > 100) {
		bad(key("plan", "min_gain_pp"), "%v: want 0 to 100 percentage points", *g)
	}
	engines := make([]string, 0, len(c.Telemetry.CatalogMap))
	for e := range c.Telemetry.CatalogMap {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	for _, engine := range engines {
		m := c.Telemetry.CatalogMap[engine]
		ecs := make([]string, 0, len(m))
		for ec := range m {
			ecs = append(ecs, ec)
		}
		sort.Strings(ecs)
		for _, ec := range ecs {
			if _, ok := c.Catalogs[m[ec]]; !ok {
				bad(key("telemetry", "catalog_map", engine, ec), "%q is not one of the catalogs (%s)", m[ec], strings.Join(names, ", "))
			}
		}
	}
	c.validateSources(bad)
	c.validateRetention(bad)
	c.checkAlerts(bad)
	c.validateServer(bad)
	c.validateEngines(bad)
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	errs = append(errs, policyErrors(c, c.Policies, c.policiesErr, now())...)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

// reported reports whether decoding found a problem with key (its path
// segments) or a key above it.
func (c *Config) reported(segs []string) bool {
	for i := len(segs); i > 0; i-- {
		if c.badKeys[keyName(segs[:i])] {
			return true
		}
	}
	return false
}

// CheckPoliciesFile reads a policies file (the shape [policy.ParseFile]
// takes) and checks it as loading a configuration checks its policies:
// floe policy validate FILE runs it, so a file it passes is one the
// daemon and every verb accept. Every problem is reported at once with
// file:line and key: what reading finds (unknown keys, values out of their
// bounds), what the policies' tables would get ([policy.Set.Validate]:
// schedules that do not fire within five years of now, a target below the
// floor nothing forces, rules that tie) and, against cfg, rules for
// catalogs that are not configured and engines that are not defined. cfg
// may be nil when no configuration loads: then only the policies
// themselves are checked. The set is what could be read.
func CheckPoliciesFile(cfg *Config, path string, data []byte, now time.Time) (*policy.Set, error) {
	set, err := policy.ParseFile(path, data)
	if errs := policyErrors(cfg, set, err, now); len(errs) > 0 {
		return set, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return set, nil
}

// policyErrors are the problems of a policy set as read (readErr is what
// reading it found), checked as [CheckPoliciesFile] says: the policies'
// own problems as one error wrapping [policy.ErrInvalid], then the
// configuration's.
func policyErrors(cfg *Config, set *policy.Set, readErr error, now time.Time) []error {
	var errs, problems []error
	if errors.Is(readErr, policy.ErrInvalid) {
		problems = append(problems, policy.Problems(readErr)...)
	} else if readErr != nil {
		errs = append(errs, readErr) // the file could not be read
	}
	if set != nil {
		problems = append(problems, policy.Problems(set.Validate(now))...)
		if cfg != nil {
			errs = append(errs, cfg.checkPolicyNames(set)...)
		}
	}
	if len(problems) > 0 {
		errs = append([]error{policy.Invalid(problems...)}, errs...)
	}
	return errs
}

// checkPolicyNames reports policy rules for catalogs that are not
// configured: a catalog rule's name, and the catalog part of a namespace
// or table pattern (which may itself be a glob).
func (c *Config) checkPolicyNames(set *policy.Set) []error {
	if set == nil {
		return nil
	}
	var errs []error
	names := c.CatalogNames()
	check := func(r policy.Rule, cat string) {
		for _, n := range names {
			if policy.Match(cat, n) {
				return
			}
		}
		errs = append(errs, fmt.Errorf("%s: policies.%ss.%s: no configured catalog matches %q (catalogs: %s)",
			r.Where, r.Level, r.Pattern, cat, strings.Join(names, ", ")))
	}
	for _, r := range set.Catalogs {
		check(r, r.Pattern)
	}
	for _, rules := range [][]policy.Rule{set.Namespaces, set.Tables} {
		for _, r := range rules {
			cat, _, _ := strings.Cut(r.Pattern, ".")
			if !strings.Contains(cat, "*") {
				check(r, cat)
			}
		}
	}
	return append(errs, c.checkPolicyEngines(set)...)
}

// checkPolicyEngines reports engine and distributed_engine values that
// name no engine under engines:.
func (c *Config) checkPolicyEngines(set *policy.Set) []error {
	var errs []error
	rules := slices.Concat(set.Catalogs, set.Namespaces, set.Tables)
	if set.Default != nil {
		rules = append([]policy.Rule{*set.Default}, rules...)
	}
	for _, r := range rules {
		for _, k := range []string{"engine", "distributed_engine"} {
			v, ok := r.Values[k]
			if !ok {
				continue
			}
			name := strings.ToLower(strings.TrimSpace(v.Raw))
			if _, ok := c.Engines[name]; ok {
				continue
			}
			if k == "engine" && (name == policy.EngineNative || name == policy.EngineAuto) {
				continue
			}
			want := "native, auto or an engine under engines:"
			if k == "distributed_engine" {
				want = "an engine under engines:"
			}
			have := "none are configured"
			if names := c.EngineNames(); len(names) > 0 {
				have = "engines: " + strings.Join(names, ", ")
			}
			errs = append(errs, fmt.Errorf("%s: %s: %q is not %s (%s)", v.Where, k, v.Raw, want, have))
		}
	}
	return errs
}

// checkState reports what is wrong with the state: section.
func (c *Config) checkState(bad func(segs []string, format string, args ...any)) {
	st := c.State
	switch {
	case !slices.Contains(StateDrivers, strings.ToLower(st.Driver)):
		bad([]string{"state", "driver"}, "%q: want %s", st.Driver, orList(StateDrivers))
	case st.IsPostgres():
		if c.hasKey("state", "path") {
			bad([]string{"state", "path"}, "is for the sqlite driver; with driver postgres the state is where state.dsn says")
		}
		if st.DSN == "" {
			bad([]string{"state", "dsn"}, "required with driver postgres: a URL such as postgres://floe@db.example.com:5432/floe?sslmode=require")
		} else if msg := checkPostgresDSN(st.DSN); msg != "" {
			bad([]string{"state", "dsn"}, "%s", msg)
		}
	default:
		if st.DSN != "" {
			bad([]string{"state", "dsn"}, "is for the postgres driver; set state.driver: postgres, or use state.path with sqlite")
		}
		if st.Password != "" {
			bad([]string{"state", "password"}, "is for the postgres driver, and state.driver is %s", st.Driver)
		}
		if msg := c.checkStatePath(); msg != "" {
			bad([]string{"state", "path"}, "%s", msg)
		}
	}
}

// checkPostgresDSN says what is wrong with a PostgreSQL connection
// string, or "", never repeating it (it may hold a password).
func checkPostgresDSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "not a valid URL"
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return fmt.Sprintf("scheme %q: want postgres://user@host:5432/database", u.Scheme)
		}
		if strings.Trim(u.Path, "/") == "" {
			return "names no database: want postgres://user@host:5432/database"
		}
		return ""
	}
	if !strings.Contains(dsn, "=") {
		return "not a connection string: want a URL postgres://user@host:5432/database or key=value pairs (host=db dbname=floe)"
	}
	return ""
}

// checkStatePath says what is wrong with state.path, or "". floe creates
// data_dir and directories inside it on first use (the embedded default
// must work on a fresh machine); a path elsewhere must be in a directory
// that exists, so that a typo does not start an empty state store.
func (c *Config) checkStatePath() string {
	p := c.State.Path
	if p == "" {
		return "required"
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return fmt.Sprintf("%s is a directory; name the database file, such as %s", p, filepath.Join(p, "state.db"))
	}
	dir := filepath.Dir(p)
	if c.DataDir != "" {
		if rel, err := filepath.Rel(c.DataDir, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return ""
		}
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Sprintf("directory %s does not exist; create it, or put the state under data_dir (%s), which floe creates", dir, c.DataDir)
	case !fi.IsDir():
		return fmt.Sprintf("%s is not a directory", dir)
	}
	return ""
}

// TargetFileSizeBytes is the parsed health.target_file_size.
func (c *Config) TargetFileSizeBytes() int64 {
	n, err := ParseSize(c.Health.TargetFileSize)
	if err != nil {
		return 512 << 20
	}
	return n
}

// CatalogNames lists the configured catalogs, sorted.
func (c *Config) CatalogNames() []string {
	names := make([]string, 0, len(c.Catalogs))
	for n := range c.Catalogs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MapEngineCatalog returns the floe catalog an engine's catalog name maps
// to: the telemetry.catalog_map entry, else a floe catalog of the same name,
// else the default catalog. An empty engineCatalog (a table name without a
// catalog part) maps to the default catalog. ok is false when nothing fits.
// With [Config.CatalogNames] it is what telemetry ingestion needs of the
// configuration (collectors/ingest's Catalogs).
func (c *Config) MapEngineCatalog(engine, engineCatalog string) (string, bool) {
	if engineCatalog == "" {
		return c.DefaultCatalog, c.DefaultCatalog != ""
	}
	for e, m := range c.Telemetry.CatalogMap {
		if !strings.EqualFold(e, engine) {
			continue
		}
		for ec, fc := range m {
			if strings.EqualFold(ec, engineCatalog) {
				return fc, true
			}
		}
	}
	for name := range c.Catalogs {
		if strings.EqualFold(name, engineCatalog) {
			return name, true
		}
	}
	if c.DefaultCatalog != "" {
		return c.DefaultCatalog, true
	}
	return "", false
}
