package config

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
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
	// Plan holds the defaults of floe plan.
	Plan PlanConfig `yaml:"plan"`

	// Source is the file the configuration came from, or "(embedded default)".
	Source string `yaml:"-"`
}

// StateConfig locates the state store.
type StateConfig struct {
	// Path of the SQLite state database. Default: {data_dir}/state.db.
	Path string `yaml:"path"`
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

// Redacted returns a copy with secret values replaced by "****".
func (p Props) Redacted() Props {
	out := make(Props, len(p))
	for k, v := range p {
		if IsSecret(k) && v != "" {
			v = "****"
		}
		out[k] = v
	}
	return out
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
}

// Load finds, reads, decodes, overrides from FLOE_* variables, expands and
// validates the configuration.
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
	path := opts.Path
	if path == "" {
		path = opts.Getenv("FLOE_CONFIG")
	}
	if path == "" {
		if _, err := os.Stat(filepath.Join(opts.WorkDir, "floe.yaml")); err == nil {
			path = filepath.Join(opts.WorkDir, "floe.yaml")
		}
	}
	var (
		data   []byte
		source = "(embedded default)"
	)
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
		data, source = b, path
	} else {
		data = defaultYAML
	}
	cfg, err := Parse(source, data)
	if err != nil {
		return nil, err
	}
	if err := cfg.ApplyEnv(opts.Environ()); err != nil {
		return nil, err
	}
	if err := cfg.finish(opts.WorkDir); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse decodes a configuration file strictly. Errors name the source, the
// line and the key.
func Parse(source string, data []byte) (*Config, error) {
	cfg := &Config{Source: source}
	if len(strings.TrimSpace(string(data))) == 0 {
		return cfg, nil
	}
	if err := yaml.UnmarshalWithOptions(data, cfg, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("config %s: %s", source, formatYAMLError(err))
	}
	cfg.Source = source
	return cfg, nil
}

// formatYAMLError turns a go-yaml error into "line L: message" without the
// source excerpt and colours go-yaml prints by default.
func formatYAMLError(err error) string {
	msg := yaml.FormatError(err, false, false)
	// go-yaml prints "[3:5] unknown field "x"": make it "line 3, column 5: …".
	if strings.HasPrefix(msg, "[") {
		if end := strings.Index(msg, "]"); end > 0 {
			pos := msg[1:end]
			if l, c, ok := strings.Cut(pos, ":"); ok {
				msg = fmt.Sprintf("line %s, column %s: %s", l, c, strings.TrimSpace(msg[end+1:]))
			}
		}
	}
	return strings.TrimSpace(msg)
}

// ErrInvalid is returned (wrapped) when a configuration fails validation.
var ErrInvalid = errors.New("invalid configuration")

// finish fills defaults, expands {data_dir}, absolutizes paths and validates.
func (c *Config) finish(workDir string) error {
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
	if c.State.Path == "" {
		c.State.Path = "{data_dir}/state.db"
	}
	c.State.Path = expand(c.State.Path)
	if !filepath.IsAbs(c.State.Path) {
		c.State.Path = filepath.Join(workDir, c.State.Path)
	}
	if c.DefaultCatalog == "" && len(c.Catalogs) == 1 {
		for name := range c.Catalogs {
			c.DefaultCatalog = name
		}
	}
	if c.Health.TargetFileSize == "" {
		c.Health.TargetFileSize = "512MiB"
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

// Validate reports every problem at once, naming the key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", c.Source, key, fmt.Sprintf(format, args...)))
	}
	if len(c.Catalogs) == 0 {
		bad("catalogs", "at least one catalog is required")
	}
	names := make([]string, 0, len(c.Catalogs))
	for name := range c.Catalogs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		props := c.Catalogs[name]
		if strings.ContainsAny(name, ". ") || name == "" {
			bad("catalogs."+name, "catalog names may not be empty or contain dots or spaces")
		}
		if props["type"] == "" && !strings.Contains(props["uri"], "://") {
			bad("catalogs."+name+".type", "required (rest, sql, glue, hive or hadoop) unless uri has a scheme")
		}
	}
	if c.DefaultCatalog != "" {
		if _, ok := c.Catalogs[c.DefaultCatalog]; !ok {
			bad("default_catalog", "%q is not one of the catalogs (%s)", c.DefaultCatalog, strings.Join(names, ", "))
		}
	}
	if _, err := ParseSize(c.Health.TargetFileSize); err != nil {
		bad("health.target_file_size", "%v", err)
	}
	if g := c.Plan.MinGainPP; g != nil && (math.IsNaN(*g) || *g < 0 || *g > 100) {
		bad("plan.min_gain_pp", "%v: want 0 to 100 percentage points", *g)
	}
	for engine, m := range c.Telemetry.CatalogMap {
		for ec, fc := range m {
			if _, ok := c.Catalogs[fc]; !ok {
				bad("telemetry.catalog_map."+engine+"."+ec, "%q is not one of the catalogs", fc)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
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
// else the default catalog. ok is false when nothing fits.
func (c *Config) MapEngineCatalog(engine, engineCatalog string) (string, bool) {
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
