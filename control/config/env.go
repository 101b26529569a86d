package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// EnvPrefix starts every environment variable floe reads.
const EnvPrefix = "FLOE_"

// knownCatalogKeys lets FLOE_CATALOG__NAME__S3_ACCESS_KEY_ID find the
// property s3.access-key-id when the file does not set it: environment
// names cannot hold dots or dashes, so they are matched with both as "_".
var knownCatalogKeys = []string{
	"type", "uri", "warehouse", "credential", "token", "scope", "prefix",
	"sql.driver", "sql.dialect", "init_catalog_tables",
	"s3.region", "s3.endpoint", "s3.access-key-id", "s3.secret-access-key", "s3.session-token",
	"s3.force-virtual-addressing", "s3.remote-signing-enabled",
	"gcs.project-id", "gcs.endpoint", "gcs.keypath", "gcs.jsonkey", "gcs.use-json-api",
	"adls.account-name", "adls.account-key", "adls.sas-token", "adls.connection-string", "adls.endpoint",
	"glue.region", "glue.endpoint", "glue.id", "glue.access-key-id", "glue.secret-access-key", "glue.session-token", "glue.profile",
	"rest.sigv4-enabled", "rest.signing-region", "rest.signing-name", "rest.access-key-id", "rest.secret-access-key",
	"header.x-iceberg-access-delegation", "oauth2-server-uri", "audience", "resource",
}

func envForm(key string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// ApplyEnv overrides keys from FLOE_* variables given as KEY=VALUE:
//
//	FLOE_DATA_DIR, FLOE_DEFAULT_CATALOG, FLOE_STATE_PATH,
//	FLOE_HEALTH_TARGET_FILE_SIZE, FLOE_PLAN_MIN_GAIN_PP,
//	FLOE_CATALOG__<NAME>__<PROPERTY>   (catalogs.<name>.<property>)
//	FLOE_TELEMETRY__<ENGINE>__<ENGINE_CATALOG>=<floe catalog>
//
// "__" separates path segments. A property segment matches an existing or
// well-known property with "." and "-" read as "_" (S3_ACCESS_KEY_ID →
// s3.access-key-id); otherwise it is lower-cased as is. Catalog and engine
// names are lower-cased. FLOE_CONFIG only chooses the file. An unknown
// FLOE_ variable is an error, so a typo does not go unnoticed.
func (c *Config) ApplyEnv(environ []string) error {
	sort.Strings(environ)
	var errs []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		rest := strings.TrimPrefix(k, EnvPrefix)
		switch {
		case rest == "CONFIG":
		case rest == "DATA_DIR":
			c.DataDir = v
		case rest == "DEFAULT_CATALOG":
			c.DefaultCatalog = v
		case rest == "STATE_PATH":
			c.State.Path = v
		case rest == "HEALTH_TARGET_FILE_SIZE":
			c.Health.TargetFileSize = v
		case rest == "PLAN_MIN_GAIN_PP":
			g, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				errs = append(errs, k+": want a number of percentage points such as 5")
				continue
			}
			c.Plan.MinGainPP = &g
		case strings.HasPrefix(rest, "CATALOG__"):
			parts := strings.Split(strings.TrimPrefix(rest, "CATALOG__"), "__")
			if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
				errs = append(errs, k+": want FLOE_CATALOG__<NAME>__<PROPERTY>")
				continue
			}
			name := strings.ToLower(parts[0])
			if c.Catalogs == nil {
				c.Catalogs = map[string]Props{}
			}
			props := c.Catalogs[name]
			if props == nil {
				props = Props{}
				c.Catalogs[name] = props
			}
			props[c.catalogKey(props, parts[1])] = v
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
			c.Telemetry.CatalogMap[engine][strings.ToLower(parts[1])] = v
		default:
			// Variables owned by other parts of floe (logging, output) are
			// read where they are used.
			if !isOwnedElsewhere(rest) {
				errs = append(errs, k+": unknown floe environment variable")
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: environment: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}

// isOwnedElsewhere lists FLOE_ variables that are not configuration keys.
func isOwnedElsewhere(rest string) bool {
	switch rest {
	case "LOG_LEVEL", "LOG_FORMAT", "OUTPUT", "NO_PROGRESS":
		return true
	}
	return false
}

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
	return strings.ToLower(seg)
}

// ParseSize parses a byte size such as "512MiB", "1GiB", "128 MB" or a plain
// number of bytes.
func ParseSize(s string) (int64, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number with an optional unit such as 512MiB", s)
	}
	if n == 0 || n > 1<<62 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	return int64(n), nil
}

// FormatSize prints a byte count in IEC units (1.5 MiB).
func FormatSize(n int64) string {
	if n < 0 {
		return "-" + humanize.IBytes(uint64(-n))
	}
	return humanize.IBytes(uint64(n))
}
