package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/floe-project/floe/control/policy"
)

// EnvPrefix starts every environment variable floe reads.
const EnvPrefix = "FLOE_"

func envForm(key string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// ApplyEnv overrides keys from FLOE_* variables given as KEY=VALUE:
//
//	FLOE_DATA_DIR, FLOE_DEFAULT_CATALOG, FLOE_STATE_PATH,
//	FLOE_STATE_DRIVER, FLOE_STATE_DSN, FLOE_STATE_PASSWORD,
//	FLOE_HEALTH_TARGET_FILE_SIZE, FLOE_LOG_LEVEL, FLOE_LOG_FORMAT,
//	FLOE_PLAN_MIN_GAIN_PP, FLOE_ALERTS_REPEAT,
//	FLOE_SERVER_LISTEN, FLOE_SERVER_TOKEN, FLOE_SERVER_READ_TOKEN,
//	FLOE_SERVER_PUBLIC_READ,
//	FLOE_SERVER_MAX_CONCURRENT_RUNS, FLOE_SERVER_SHUTDOWN_GRACE,
//	FLOE_SERVER_CHECK_INTERVAL, FLOE_SERVER_LEASE_TTL,
//	FLOE_CATALOG__<NAME>__<PROPERTY>   (catalogs.<name>.<property>)
//	FLOE_TELEMETRY__<ENGINE>__<ENGINE_CATALOG>=<floe catalog>
//	FLOE_ENGINE__<NAME>__PASSWORD, FLOE_ENGINE__<NAME>__TOKEN
//	                                   (engines.<name>.password / .token)
//	FLOE_SOURCE__<NAME>__PASSWORD      (a trino source's password)
//	FLOE_SOURCE__<NAME>__AWS_ACCESS_KEY_ID, …__AWS_SECRET_ACCESS_KEY,
//	FLOE_SOURCE__<NAME>__AWS_SESSION_TOKEN (an athena source's static keys)
//	FLOE_SOURCE__<NAME>__PRIVATE_KEY, …__PRIVATE_KEY_FILE,
//	FLOE_SOURCE__<NAME>__OAUTH_TOKEN   (a snowflake source's credentials)
//
// "__" separates path segments. A property segment matches an existing or
// known property with "." and "-" read as "_" (S3_ACCESS_KEY_ID →
// s3.access-key-id); a segment under one of [CatalogPropertyPrefixes] that
// matches none is read as the prefix, a dot, and the rest with "_" as "-"
// (HEADER_X_TENANT → header.x-tenant). Catalog and engine names are
// lower-cased. A catalog variable overrides a catalog of the file: it cannot
// define one, so a credential meant for a misspelt catalog is an error, not
// lost. FLOE_CONFIG only chooses the file, FLOE_NO_PROGRESS=1 turns progress
// bars off, and FLOE_TEST_PAUSE_AT is a hook of floe's own crash tests
// (docs/architecture.md), read by floe compact and nothing else, inert when
// unset; FLOE_TEST_STORE and FLOE_TEST_VERSITYGW choose the store of floe's
// own test suites and are ignored. An unknown FLOE_ variable, an unknown property and a bad value are
// errors, so a typo does not go unnoticed; empty values count as unset.
// Every problem is reported at once, one a line, each naming its variable;
// [Config.Validate] reports them again with the file's.
func (c *Config) ApplyEnv(environ []string) error {
	sort.Strings(environ)
	var errs []string
	set := func(key, env string, dst *string, v string) {
		if v == "" {
			return
		}
		*dst = v
		c.setBy(key, env)
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		rest := strings.TrimPrefix(k, EnvPrefix)
		switch {
		case rest == "CONFIG":
		case rest == "TEST_PAUSE_AT":
			// The test-only hook of floe's crash tests, read by the CLI's
			// compact verb (cmd/floe/testhook.go); not a setting.
		case rest == "TEST_STORE" || rest == "TEST_VERSITYGW":
			// The store of the test lake (internal/testlake), read by
			// floe's own tests only (make test-s3); not settings.
		case rest == "NO_PROGRESS":
			// Read by the CLI's terminal detection: any value turns bars off.
			if v != "" && v != "1" && !strings.EqualFold(v, "true") {
				errs = append(errs, fmt.Sprintf("%s=%s: set it to 1 to turn progress bars off, or unset it", k, v))
			}
		case rest == "DATA_DIR":
			set("data_dir", k, &c.DataDir, v)
		case rest == "DEFAULT_CATALOG":
			set("default_catalog", k, &c.DefaultCatalog, v)
		case rest == "STATE_PATH":
			set("state.path", k, &c.State.Path, v)
		case rest == "STATE_DRIVER":
			set("state.driver", k, &c.State.Driver, v)
		case rest == "STATE_DSN":
			set("state.dsn", k, &c.State.DSN, v)
		case rest == "STATE_PASSWORD":
			if v != "" {
				c.State.Password = Secret(v)
				c.setBy("state.password", k)
			}
		case rest == "HEALTH_TARGET_FILE_SIZE":
			set("health.target_file_size", k, &c.Health.TargetFileSize, v)
		case rest == "LOG_LEVEL":
			set("log.level", k, &c.Log.Level, v)
		case rest == "LOG_FORMAT":
			set("log.format", k, &c.Log.Format, v)
		case rest == "ALERTS_REPEAT":
			set("alerts.repeat", k, &c.Alerts.Repeat, v)
		case rest == "PLAN_MIN_GAIN_PP":
			g, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				errs = append(errs, k+": want a number of percentage points such as 5")
				continue
			}
			c.Plan.MinGainPP = &g
		case rest == "SERVER_LISTEN":
			set("server.listen", k, &c.Server.Listen, v)
		case rest == "SERVER_TOKEN":
			if v != "" {
				c.Server.Token = Secret(v)
				c.setBy("server.token", k)
			}
		case rest == "SERVER_READ_TOKEN":
			if v != "" {
				c.Server.ReadToken = Secret(v)
				c.setBy("server.read_token", k)
			}
		case rest == "SERVER_PUBLIC_READ":
			if v == "" {
				continue
			}
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%s: want true or false", k, v))
				continue
			}
			c.Server.PublicRead = b
			c.setBy("server.public_read", k)
		case rest == "SERVER_MAX_CONCURRENT_RUNS":
			if v == "" {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%s: want a whole number of runs such as 2", k, v))
				continue
			}
			c.Server.MaxConcurrentRuns = n
			c.setBy("server.max_concurrent_runs", k)
		case rest == "SERVER_SHUTDOWN_GRACE":
			set("server.shutdown_grace", k, &c.Server.ShutdownGrace, v)
		case rest == "SERVER_CHECK_INTERVAL":
			set("server.check_interval", k, &c.Server.CheckInterval, v)
		case rest == "SERVER_LEASE_TTL":
			set("server.lease_ttl", k, &c.Server.LeaseTTL, v)
		case rest == "SERVER_UNREACHABLE_AFTER":
			set("server.unreachable_after", k, &c.Server.UnreachableAfter, v)
		case rest == "SERVER_RUN_LATE_AFTER":
			set("server.run_late_after", k, &c.Server.RunLateAfter, v)
		case rest == "SERVER_RUN_RETENTION":
			set("server.run_retention", k, &c.Server.RunRetention, v)
		case strings.HasPrefix(rest, "CATALOG__"):
			parts := strings.Split(strings.TrimPrefix(rest, "CATALOG__"), "__")
			if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
				errs = append(errs, k+": want FLOE_CATALOG__<NAME>__<PROPERTY>")
				continue
			}
			name := strings.ToLower(parts[0])
			props, ok := c.Catalogs[name]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: no catalog %q in %s (catalogs: %s); a variable only overrides a catalog of the file, so define catalogs.%s there first",
					k, name, c.Source, strings.Join(c.CatalogNames(), ", "), name))
				continue
			}
			key := c.catalogKey(props, parts[1])
			if msg := checkCatalogKey(key); msg != "" {
				errs = append(errs, fmt.Sprintf("%s: %s: %s", k, key, msg))
				continue
			}
			if v == "" {
				continue
			}
			props[key] = v
			c.setBy("catalogs."+name+"."+key, k)
		case strings.HasPrefix(rest, "SOURCE__"):
			if msg := c.applySourceEnv(k, rest, v); msg != "" {
				errs = append(errs, msg)
			}
		case strings.HasPrefix(rest, "ENGINE__"):
			if msg := c.applyEngineEnv(k, rest, v); msg != "" {
				errs = append(errs, msg)
			}
		case strings.HasPrefix(rest, "TELEMETRY__"):
			parts := strings.Split(strings.TrimPrefix(rest, "TELEMETRY__"), "__")
			if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
				errs = append(errs, k+": want FLOE_TELEMETRY__<ENGINE>__<ENGINE_CATALOG>")
				continue
			}
			engine := strings.ToLower(strings.ReplaceAll(parts[0], "_", "-"))
			if c.Telemetry.CatalogMap == nil {
				c.Telemetry.CatalogMap = map[string]map[string]string{}
			}
			if c.Telemetry.CatalogMap[engine] == nil {
				c.Telemetry.CatalogMap[engine] = map[string]string{}
			}
			ec := strings.ToLower(parts[1])
			c.Telemetry.CatalogMap[engine][ec] = v
			c.setBy("telemetry.catalog_map."+engine+"."+ec, k)
		default:
			msg := k + ": unknown floe environment variable"
			if s := suggest(rest, envNames); s != "" {
				msg += " (did you mean FLOE_" + s + "?)"
			}
			errs = append(errs, msg)
		}
	}
	c.envErr = nil
	if len(errs) > 0 {
		es := make([]error, len(errs))
		for i, e := range errs {
			es[i] = errors.New(e)
		}
		c.envErr = errors.Join(es...)
		return fmt.Errorf("%w: %w", ErrInvalid, c.envErr)
	}
	return nil
}

// envNames are the fixed FLOE_ variables, without the prefix, for
// suggestions.
var envNames = []string{"CONFIG", "NO_PROGRESS", "DATA_DIR", "DEFAULT_CATALOG", "STATE_PATH", "STATE_DRIVER", "STATE_DSN", "STATE_PASSWORD",
	"HEALTH_TARGET_FILE_SIZE", "LOG_LEVEL", "LOG_FORMAT", "PLAN_MIN_GAIN_PP", "ALERTS_REPEAT", "SERVER_LISTEN", "SERVER_TOKEN", "SERVER_READ_TOKEN",
	"SERVER_PUBLIC_READ", "SERVER_MAX_CONCURRENT_RUNS", "SERVER_SHUTDOWN_GRACE", "SERVER_CHECK_INTERVAL", "SERVER_LEASE_TTL", "CATALOG__", "TELEMETRY__", "ENGINE__", "SOURCE__"}

// setBy records that the environment variable env set key, so that a bad
// value is reported under the variable's name.
func (c *Config) setBy(key, env string) {
	if c.envKeys == nil {
		c.envKeys = map[string]string{}
	}
	c.envKeys[key] = env
}

// catalogKey is the property an environment segment names: an existing or
// known property in environment form, else the prefix form (see
// [Config.ApplyEnv]), else the segment lower-cased.
func (c *Config) catalogKey(props Props, seg string) string {
	for k := range props {
		if envForm(k) == seg {
			return k
		}
	}
	for _, k := range knownCatalogKeys {
		if envForm(k) == seg {
			return k
		}
	}
	for _, p := range CatalogPropertyPrefixes {
		if rest, ok := strings.CutPrefix(seg, envForm(p)); ok && rest != "" {
			return p + strings.ToLower(strings.ReplaceAll(rest, "_", "-"))
		}
	}
	return strings.ToLower(seg)
}

// ParseSize parses a byte size such as "512MiB", "1GiB", "128 MB" or a plain
// number of bytes (see [policy.ParseSize]).
func ParseSize(s string) (int64, error) { return policy.ParseSize(s) }

// FormatSize prints a byte count in IEC units (1.5 MiB).
func FormatSize(n int64) string {
	if n < 0 {
		return "-" + humanize.IBytes(uint64(-n))
	}
	return humanize.IBytes(uint64(n))
}
