package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
)

// SourceConfig is one telemetry source under telemetry.sources: where
// floe collects query telemetry by itself, on the source's own interval,
// in floe serve (and once per floe collect without arguments).
//
//	telemetry:
//	  sources:
//	    - name: spark-history
//	      kind: files
//	      paths: [/var/log/spark-events]
//	    - name: trino-prod
//	      kind: trino
//	      dsn: http://floe@trino.example.com:8080
//	      interval: 30s
//	      silence: 1h
//	    - name: athena
//	      kind: athena
//	      region: eu-west-1
//	      workgroup: analysts
//	    - name: snowflake
//	      kind: snowflake
//	      account: MYORG-MYACCOUNT
//	      user: FLOE
//	      warehouse: FLOE_WH
//
// The keys a kind takes are its own; a key of another kind is an error.
// Secrets come from the environment only ([SourceConfig.Password], the
// AWS keys, the Snowflake private key and OAuth token), never from the
// file.
type SourceConfig struct {
	// Name identifies the source in metrics, alerts, floe doctor and the
	// state store's cursor: lower case letters, digits, "-" and "_",
	// unique. Required.
	Name string `yaml:"name"`
	// Kind is files, trino, athena or snowflake ([SourceKinds]).
	// Required.
	Kind string `yaml:"kind"`
	// Interval is the time between two collections, as a Go duration.
	// Default: 1m for a polled kind, 5m for files (see
	// [SourceConfig.IntervalDuration]).
	Interval string `yaml:"interval"`
	// Silence is how long the source may deliver no new event before its
	// silent alert fires, as a Go duration, at least Interval; "off" (the
	// default) never alerts. What counts as quiet depends on the
	// workload (a nightly Spark job's history is silent all day), so floe
	// does not guess.
	Silence string `yaml:"silence"`

	// Paths are files, directories or globs, as floe collect takes them
	// (kind files).
	Paths []string `yaml:"paths"`
	// Format forces one format, as floe collect --source does (kind
	// files). Default: detect each file's.
	Format string `yaml:"format"`

	// DSN is a trino-go-client DSN, http[s]://user@host:port (kind
	// trino). Its password is better given as
	// FLOE_SOURCE__<NAME>__PASSWORD. Never printed.
	DSN Secret `yaml:"dsn"`

	// Region is the AWS region (kind athena). Required.
	Region string `yaml:"region"`
	// Workgroup is the Athena workgroup polled (kind athena). Default:
	// the caller's default workgroup, primary.
	Workgroup string `yaml:"workgroup"`
	// Endpoint replaces the service endpoint, such as a VPC endpoint
	// https://vpce-….athena.eu-west-1.vpce.amazonaws.com (kind athena).
	// Default: the region's.
	Endpoint string `yaml:"endpoint"`

	// Account is the Snowflake account identifier, MYORG-MYACCOUNT or an
	// account locator such as xy12345.us-east-1 (kind snowflake).
	// Required.
	Account string `yaml:"account"`
	// URL replaces the account's base URL,
	// https://<account>.snowflakecomputing.com, such as a private link's
	// (kind snowflake). Default: the account's.
	URL string `yaml:"url"`
	// User is the Snowflake user floe signs in as (kind snowflake).
	// Required with auth keypair.
	User string `yaml:"user"`
	// Warehouse and Role run the poll's statement (kind snowflake).
	// Default: the user's defaults.
	Warehouse string `yaml:"warehouse"`
	Role      string `yaml:"role"`
	// Auth is how floe signs in to Snowflake: keypair (a key-pair JWT,
	// from FLOE_SOURCE__<NAME>__PRIVATE_KEY or …__PRIVATE_KEY_FILE) or
	// oauth (FLOE_SOURCE__<NAME>__OAUTH_TOKEN) (kind snowflake). Default:
	// keypair.
	Auth string `yaml:"auth"`
	// Settle is how old a Snowflake query must be before it is read, as a
	// Go duration: ACCOUNT_USAGE views lag behind (kind snowflake; see
	// [SourceConfig.SettleDuration]). Default: the poller's, 45m.
	Settle string `yaml:"settle"`
	// BatchSize is the most queries one poll reads (kind snowflake).
	// Default (0): the poller's, 1000.
	BatchSize int `yaml:"batch_size"`

	// Password is the Trino password, from FLOE_SOURCE__<NAME>__PASSWORD
	// only; it replaces the DSN's.
	Password Secret `yaml:"-" env:"password=FLOE_SOURCE__<NAME>__PASSWORD"`
	// AccessKeyID, SecretAccessKey and SessionToken are static AWS
	// credentials, from FLOE_SOURCE__<NAME>__AWS_ACCESS_KEY_ID,
	// …__AWS_SECRET_ACCESS_KEY and …__AWS_SESSION_TOKEN only. Without them
	// the AWS SDK's default chain is used (environment, shared files, the
	// instance's or task's role).
	AccessKeyID     Secret `yaml:"-" env:"aws_access_key_id=FLOE_SOURCE__<NAME>__AWS_ACCESS_KEY_ID"`
	SecretAccessKey Secret `yaml:"-" env:"aws_secret_access_key=FLOE_SOURCE__<NAME>__AWS_SECRET_ACCESS_KEY"`
	SessionToken    Secret `yaml:"-" env:"aws_session_token=FLOE_SOURCE__<NAME>__AWS_SESSION_TOKEN"`
	// PrivateKey is the Snowflake user's unencrypted RSA private key in
	// PEM, from FLOE_SOURCE__<NAME>__PRIVATE_KEY only; PrivateKeyFile, from
	// FLOE_SOURCE__<NAME>__PRIVATE_KEY_FILE, is a file holding it instead,
	// read each time the source connects (auth keypair).
	PrivateKey     Secret `yaml:"-" env:"private_key=FLOE_SOURCE__<NAME>__PRIVATE_KEY"`
	PrivateKeyFile string `yaml:"-" env:"private_key_file=FLOE_SOURCE__<NAME>__PRIVATE_KEY_FILE"`
	// OAuthToken is a Snowflake OAuth access token, from
	// FLOE_SOURCE__<NAME>__OAUTH_TOKEN only (auth oauth).
	OAuthToken Secret `yaml:"-" env:"oauth_token=FLOE_SOURCE__<NAME>__OAUTH_TOKEN"`
}

// Source kinds, the values of telemetry.sources[].kind.
const (
	SourceFiles     = "files"
	SourceTrino     = "trino"
	SourceAthena    = "athena"
	SourceSnowflake = "snowflake"
)

// Values of telemetry.sources[].auth (kind snowflake).
const (
	SnowflakeAuthKeyPair = "keypair"
	SnowflakeAuthOAuth   = "oauth"
)

// Source defaults.
const (
	DefaultPolledSourceInterval = time.Minute
	DefaultFilesSourceInterval  = 5 * time.Minute
	MinSourceInterval           = time.Second
	MaxSourceInterval           = 24 * time.Hour
	MaxSourceSilence            = 30 * 24 * time.Hour
	// MaxSnowflakeSettle bounds settle: ACCESS_HISTORY, the slowest
	// ACCOUNT_USAGE view, lags up to 3 hours.
	MaxSnowflakeSettle = 24 * time.Hour
)

// sourceKind is what configuration knows of one kind of source: whether it
// is polled, the keys it takes, the secrets the environment may give it and
// what else it checks. Adding a kind is an entry here, its keys on
// [SourceConfig], and its collector in the control plane's source registry
// (control/sources.go).
type sourceKind struct {
	polled bool
	// keys are the kind's own keys (beside name, kind, interval, silence).
	keys []string
	// secrets are the FLOE_SOURCE__<NAME>__<SECRET> variables it takes.
	secrets []string
	check   func(s SourceConfig, bad func(key, format string, args ...any))
}

var sourceKinds = map[string]sourceKind{
	SourceFiles: {keys: []string{"paths", "format"}, check: func(s SourceConfig, bad func(key, format string, args ...any)) {
		if len(s.Paths) == 0 {
			bad("paths", "required for kind files: files, directories or globs, such as [/var/log/spark-events]")
		}
		for i, p := range s.Paths {
			if strings.TrimSpace(p) == "" {
				bad("paths["+strconv.Itoa(i)+"]", "empty")
			}
		}
	}},
	SourceTrino: {polled: true, keys: []string{"dsn"}, secrets: []string{"PASSWORD"}, check: func(s SourceConfig, bad func(key, format string, args ...any)) {
		if s.DSN == "" {
			bad("dsn", "required for kind trino: a trino-go-client DSN such as http://floe@trino.example.com:8080")
		} else if u, err := url.Parse(s.DSN.Reveal()); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User.Username() == "" {
			// The value is not echoed: it may hold a password.
			bad("dsn", "want http://user@host:port or https://user@host:port (the user is required)")
		}
	}},
	SourceAthena: {polled: true, keys: []string{"region", "workgroup", "endpoint"},
		secrets: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
		check: func(s SourceConfig, bad func(key, format string, args ...any)) {
			if s.Region == "" {
				bad("region", "required for kind athena: the AWS region, such as eu-west-1")
			}
			if s.Endpoint != "" {
				if u, err := url.Parse(s.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					bad("endpoint", "%q: want https://host[:port]", s.Endpoint)
				}
			}
			if (s.AccessKeyID == "") != (s.SecretAccessKey == "") {
				bad("aws_access_key_id", "static AWS credentials need both FLOE_SOURCE__%[1]s__AWS_ACCESS_KEY_ID and FLOE_SOURCE__%[1]s__AWS_SECRET_ACCESS_KEY", envForm(s.Name))
			}
			if s.SessionToken != "" && s.AccessKeyID == "" {
				bad("aws_session_token", "set without FLOE_SOURCE__%s__AWS_ACCESS_KEY_ID", envForm(s.Name))
			}
		}},
	SourceSnowflake: {polled: true, keys: []string{"account", "url", "user", "warehouse", "role", "auth", "settle", "batch_size"},
		secrets: []string{"PRIVATE_KEY", "PRIVATE_KEY_FILE", "OAUTH_TOKEN"}, check: checkSnowflakeSource},
}

// snowflakeAccount is an account identifier: an organization and account
// name joined by "-" or "_", or an account locator with its region and
// cloud after dots.
var snowflakeAccount = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// checkSnowflakeSource checks a snowflake source's keys and that its
// secrets match its auth.
func checkSnowflakeSource(s SourceConfig, bad func(key, format string, args ...any)) {
	env := "FLOE_SOURCE__" + envForm(s.Name) + "__"
	switch {
	case s.Account == "":
		bad("account", "required for kind snowflake: the account identifier, such as MYORG-MYACCOUNT")
	case strings.Contains(s.Account, "://") || strings.Contains(strings.ToLower(s.Account), "snowflakecomputing"):
		bad("account", "%q: want the account identifier, such as MYORG-MYACCOUNT, not its URL (a URL other than the account's goes in url)", s.Account)
	case !snowflakeAccount.MatchString(s.Account):
		bad("account", "%q: want an account identifier such as MYORG-MYACCOUNT or xy12345.us-east-1", s.Account)
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			bad("url", "want https://host[:port] (no user or password)")
		}
	}
	switch s.Auth {
	case "", SnowflakeAuthKeyPair:
		if s.User == "" {
			bad("user", "required with auth keypair: the Snowflake user the key belongs to")
		}
		switch {
		case s.PrivateKey == "" && s.PrivateKeyFile == "":
			bad("private_key", "auth keypair needs %[1]sPRIVATE_KEY (the PEM) or %[1]sPRIVATE_KEY_FILE (a file holding it)", env)
		case s.PrivateKey != "" && s.PrivateKeyFile != "":
			bad("private_key_file", "set with %sPRIVATE_KEY: give one of the two", env)
		}
		if s.OAuthToken != "" {
			bad("oauth_token", "set, but auth is keypair: set auth: oauth to use the token, or unset it")
		}
	case SnowflakeAuthOAuth:
		if s.OAuthToken == "" {
			bad("oauth_token", "auth oauth needs %sOAUTH_TOKEN", env)
		}
		if s.PrivateKey != "" || s.PrivateKeyFile != "" {
			key := "private_key"
			if s.PrivateKey == "" {
				key = "private_key_file"
			}
			bad(key, "set, but auth is oauth: set auth: keypair to use the key, or unset it")
		}
	default:
		bad("auth", "%q: want %s", s.Auth, orList([]string{SnowflakeAuthKeyPair, SnowflakeAuthOAuth}))
	}
	if s.Settle != "" {
		if v, err := time.ParseDuration(strings.TrimSpace(s.Settle)); err != nil || v <= 0 || v > MaxSnowflakeSettle {
			bad("settle", "%q: want a positive duration of at most %s, such as 45m", s.Settle, policy.FormatDuration(MaxSnowflakeSettle))
		}
	}
	if s.BatchSize < 0 {
		bad("batch_size", "%d: want a positive number of queries, such as 1000", s.BatchSize)
	}
}

// SourceKinds are the values of telemetry.sources[].kind, sorted.
func SourceKinds() []string {
	out := make([]string, 0, len(sourceKinds))
	for k := range sourceKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Polled reports whether the source is polled from a service (and keeps a
// cursor) rather than read from files.
func (s SourceConfig) Polled() bool { return sourceKinds[s.Kind].polled }

// IntervalDuration is the parsed interval, or the kind's default
// (validated when the configuration loads).
func (s SourceConfig) IntervalDuration() time.Duration {
	def := DefaultFilesSourceInterval
	if s.Polled() {
		def = DefaultPolledSourceInterval
	}
	return parseDurationOr(s.Interval, def)
}

// SettleDuration is the parsed settle of a snowflake source; 0 (the
// poller's default) when unset.
func (s SourceConfig) SettleDuration() time.Duration { return parseDurationOr(s.Settle, 0) }

// SilenceDuration is the parsed silence; 0 when it is off.
func (s SourceConfig) SilenceDuration() time.Duration {
	if isOff(s.Silence) {
		return 0
	}
	return parseDurationOr(s.Silence, 0)
}

// Secrets are the secret values the source holds (the environment's and
// the DSN's password), to redact from text that may echo them.
func (s SourceConfig) Secrets() []string {
	var out []string
	for _, v := range []Secret{s.Password, s.AccessKeyID, s.SecretAccessKey, s.SessionToken, s.PrivateKey, s.OAuthToken} {
		if v != "" {
			out = append(out, v.Reveal())
		}
	}
	if s.DSN != "" {
		out = append(out, URISecrets(s.DSN.Reveal())...)
	}
	return out
}

// Target names the source for messages without its secrets: "trino-prod
// (trino http://floe@trino:8080)", "spark (files /var/log/spark-events)",
// "snow (snowflake MYORG-MYACCOUNT user FLOE)".
func (s SourceConfig) Target() string {
	var where string
	switch s.Kind {
	case SourceFiles:
		where = strings.Join(s.Paths, ", ")
	case SourceTrino:
		where = "(address not shown)"
		if u, err := url.Parse(s.DSN.Reveal()); err == nil && u.Host != "" {
			where = u.Scheme + "://" + u.Host
			if u.User != nil {
				where = u.Scheme + "://" + u.User.Username() + "@" + u.Host
			}
		}
	case SourceAthena:
		where = s.Region
		if s.Workgroup != "" {
			where += " workgroup " + s.Workgroup
		}
	case SourceSnowflake:
		where = s.Account
		if s.User != "" {
			where += " user " + s.User
		}
		if u, err := url.Parse(s.URL); err == nil && u.Host != "" {
			where += " at " + u.Scheme + "://" + u.Host
		}
	}
	return fmt.Sprintf("%s (%s %s)", s.Name, s.Kind, where)
}

// String is [SourceConfig.Target]: a source prints without its secrets.
func (s SourceConfig) String() string { return s.Target() }

// GoString keeps %#v from printing the DSN's password.
func (s SourceConfig) GoString() string { return "config.SourceConfig{" + s.Target() + "}" }

func isOff(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "" || v == "off" || v == "0" || v == "0s"
}

// TelemetrySource returns the telemetry source named name.
func (c *Config) TelemetrySource(name string) (SourceConfig, bool) {
	for _, s := range c.Telemetry.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return SourceConfig{}, false
}

var sourceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// validateSources reports what is wrong with telemetry.sources.
func (c *Config) validateSources(bad func(segs []string, format string, args ...any)) {
	seen := map[string]int{}
	for i, s := range c.Telemetry.Sources {
		at := func(key string) []string {
			return []string{"telemetry", "sources", "[" + strconv.Itoa(i) + "]", key}
		}
		sbad := func(key, format string, args ...any) { bad(at(key), format, args...) }
		switch {
		case s.Name == "":
			sbad("name", "required: a name for metrics, alerts and floe doctor, such as trino-prod")
		case !sourceName.MatchString(s.Name):
			sbad("name", "%q: lower case letters, digits, - and _ only", s.Name)
		default:
			if j, ok := seen[s.Name]; ok {
				sbad("name", "%q names telemetry.sources[%d] too; names are unique", s.Name, j)
			}
			seen[s.Name] = i
		}
		kind, ok := sourceKinds[s.Kind]
		if !ok {
			if s.Kind == "" {
				sbad("kind", "required: %s", orList(SourceKinds()))
			} else {
				sbad("kind", "%q: want %s", s.Kind, orList(SourceKinds()))
			}
			continue
		}
		for _, k := range s.setKeys() {
			if slices.Contains(kind.keys, k) {
				continue
			}
			owner := ""
			for _, name := range SourceKinds() {
				if slices.Contains(sourceKinds[name].keys, k) {
					owner = name
				}
			}
			sbad(k, "is for kind %s; kind %s takes %s", owner, s.Kind, orList(kind.keys))
		}
		if v, err := time.ParseDuration(strings.TrimSpace(s.Interval)); s.Interval != "" && (err != nil || v < MinSourceInterval || v > MaxSourceInterval) {
			sbad("interval", "%q: want a duration of at least %s and at most %s, such as 1m", s.Interval, MinSourceInterval, policy.FormatDuration(MaxSourceInterval))
		}
		if !isOff(s.Silence) {
			v, err := time.ParseDuration(strings.TrimSpace(s.Silence))
			switch {
			case err != nil || v <= 0 || v > MaxSourceSilence:
				sbad("silence", "%q: want off or a positive duration of at most %s, such as 1h", s.Silence, policy.FormatDuration(MaxSourceSilence))
			case v < s.IntervalDuration():
				sbad("silence", "%s is shorter than the interval (%s): the source would be silent between two collections", s.Silence, s.IntervalDuration())
			}
		}
		kind.check(s, sbad)
	}
}

// setKeys are the kind-specific keys s sets.
func (s SourceConfig) setKeys() []string {
	var out []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"paths", len(s.Paths) > 0}, {"format", s.Format != ""}, {"dsn", s.DSN != ""},
		{"region", s.Region != ""}, {"workgroup", s.Workgroup != ""}, {"endpoint", s.Endpoint != ""},
		{"account", s.Account != ""}, {"url", s.URL != ""}, {"user", s.User != ""}, {"warehouse", s.Warehouse != ""},
		{"role", s.Role != ""}, {"auth", s.Auth != ""}, {"settle", s.Settle != ""}, {"batch_size", s.BatchSize != 0},
	} {
		if k.set {
			out = append(out, k.name)
		}
	}
	return out
}

// applySourceEnv sets a source's secret from
// FLOE_SOURCE__<NAME>__<SECRET>; it returns a problem or "".
func (c *Config) applySourceEnv(k, rest, v string) string {
	parts := strings.Split(strings.TrimPrefix(rest, "SOURCE__"), "__")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return k + ": want FLOE_SOURCE__<NAME>__<SECRET>, such as FLOE_SOURCE__TRINO_PROD__PASSWORD"
	}
	i := slices.IndexFunc(c.Telemetry.Sources, func(s SourceConfig) bool { return envForm(s.Name) == parts[0] })
	if i < 0 {
		names := make([]string, 0, len(c.Telemetry.Sources))
		for _, s := range c.Telemetry.Sources {
			names = append(names, s.Name)
		}
		return fmt.Sprintf("%s: no source %q in %s (telemetry.sources: %s); define it there first",
			k, strings.ToLower(parts[0]), c.Source, strings.Join(names, ", "))
	}
	s := &c.Telemetry.Sources[i]
	kind := sourceKinds[s.Kind]
	if !slices.Contains(kind.secrets, parts[1]) {
		want := "none"
		if len(kind.secrets) > 0 {
			want = strings.Join(kind.secrets, ", ")
		}
		return fmt.Sprintf("%s: source %s (kind %s) takes no secret %s from the environment (it takes: %s)", k, s.Name, s.Kind, parts[1], want)
	}
	if v == "" {
		return ""
	}
	c.setBy(strings.Join([]string{"telemetry", "sources", "[" + strconv.Itoa(i) + "]", strings.ToLower(parts[1])}, "."), k)
	switch parts[1] {
	case "PASSWORD":
		s.Password = Secret(v)
	case "AWS_ACCESS_KEY_ID":
		s.AccessKeyID = Secret(v)
	case "AWS_SECRET_ACCESS_KEY":
		s.SecretAccessKey = Secret(v)
	case "AWS_SESSION_TOKEN":
		s.SessionToken = Secret(v)
	case "PRIVATE_KEY":
		s.PrivateKey = Secret(v)
	case "PRIVATE_KEY_FILE":
		s.PrivateKeyFile = v
	case "OAUTH_TOKEN":
		s.OAuthToken = Secret(v)
	}
	return ""
}
