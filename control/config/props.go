package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/internal/editdist"
)

// catalogTimeoutKey is lake.PropCatalogTimeout, floe's own catalog
// property (config does not import lake and its catalog backends).
const catalogTimeoutKey = "floe.timeout"

// ioTimeoutKey is lake.PropIOTimeout: the longest one object-store request
// may go without progress.
const ioTimeoutKey = "floe.io-timeout"

// retriesKey is lake.PropRetries: how many times a REST catalog request the
// server turned away (429, or 5xx on a read) is sent again.
const retriesKey = "floe.retries"

// MaxRetries is the most floe.retries a catalog may have.
const MaxRetries = 20

// MaxCatalogTimeout is the longest floe.timeout a catalog may have: a day.
const MaxCatalogTimeout = 24 * time.Hour

// CatalogTypes are the catalog types floe links in (lake's backends).
var CatalogTypes = []string{"rest", "sql", "glue", "hive", "hadoop"}

// knownCatalogKeys are the catalog properties floe accepts by name:
// iceberg-go's own (catalog/rest, catalog/sql, catalog/glue, catalog/hive,
// catalog/hadoop and io, v0.7) and floe's catalogTimeoutKey, ioTimeoutKey
// and retriesKey. They
// also let FLOE_CATALOG__NAME__S3_ACCESS_KEY_ID find s3.access-key-id:
// environment names cannot hold dots or dashes, so they are matched with
// both read as "_".
var knownCatalogKeys = []string{
	// every catalog
	"type", "uri", "warehouse", catalogTimeoutKey, ioTimeoutKey, retriesKey,
	// rest
	"credential", "token", "scope", "audience", "resource", "prefix", "oauth2-server-uri",
	"namespace-separator", "snapshot-loading-mode", "view-endpoints-supported",
	"rest-metrics-reporting-enabled", "rest-metrics-reporting-timeout-ms",
	"rest.sigv4-enabled", "rest.signing-region", "rest.signing-name", "rest.authorization-url",
	"rest.tls.skip-verify", "rest.metrics-reporting-enabled",
	"header.x-iceberg-access-delegation",
	// sql
	"sql.driver", "sql.dialect", "init_catalog_tables", "jdbc.schema-version",
	// glue
	"glue.id", "glue.region", "glue.endpoint", "glue.access-key-id", "glue.secret-access-key",
	"glue.session-token", "glue.max-retries", "glue.retry-mode", "glue.skip-archive",
	// hive
	"lock-check-retries", "lock-check-min-wait-time", "lock-check-max-wait-time",
	"iceberg.hive.lock-check-min-wait-ms", "iceberg.hive.lock-check-max-wait-ms",
	// hadoop
	"allow-unsafe-commits",
	// storage (io)
	"s3.region", "s3.endpoint", "s3.access-key-id", "s3.secret-access-key", "s3.session-token",
	"s3.proxy-uri", "s3.connect-timeout", "s3.signer.uri", "s3.remote-signing-enabled",
	"s3.force-virtual-addressing", "s3.compat-mode", "client.region",
	"gcs.endpoint", "gcs.service.host", "gcs.keypath", "gcs.jsonkey", "gcs.credtype",
	"gcs.usejsonapi", "gcs.oauth2.token", "gcs.no-auth",
	"adls.auth.shared-key.account.name", "adls.auth.shared-key.account.key", "adls.endpoint",
	"adls.protocol", "adls.auth.managed-identity.enabled", "adls.client-id", "adls.client-secret",
	"adls.tenant-id",
}

// CatalogPropertyPrefixes are the property namespaces floe passes on to
// iceberg-go without knowing each name: REST catalog options and headers
// (header.X-Name: value is sent with every request), storage options
// (s3., gcs., adls., client.) and Glue options. A key outside them that is
// not one of the known names is an error, so that a typo (warehous) does
// not go unnoticed.
var CatalogPropertyPrefixes = []string{"rest.", "header.", "s3.", "gcs.", "adls.", "client.", "glue."}

// checkCatalogKey says what is wrong with a catalog property name, or "".
func checkCatalogKey(key string) string {
	if slices.Contains(knownCatalogKeys, key) {
		return ""
	}
	near := suggest(key, knownCatalogKeys)
	for _, p := range CatalogPropertyPrefixes {
		// A name under a prefix passes unless it is a near miss of a known
		// one (s3.regoin).
		if strings.HasPrefix(key, p) && len(key) > len(p) && (near == "" || editdist.Distance(key, near) > 2) {
			return ""
		}
	}
	msg := "unknown catalog property"
	if near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return msg + "; floe takes iceberg-go's property names (type, uri, warehouse, credential, …) and any under " +
		strings.Join(CatalogPropertyPrefixes, ", ")
}

// checkCatalogValue says what is wrong with the value of a catalog
// property floe reads itself, or "".
func checkCatalogValue(key, v string) string {
	switch key {
	case "type":
		if v != "" && !slices.Contains(CatalogTypes, v) {
			msg := fmt.Sprintf("%q is not a catalog type", v)
			if s := suggest(v, CatalogTypes); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			return msg + "; want " + orList(CatalogTypes)
		}
	case catalogTimeoutKey, ioTimeoutKey:
		if d, err := time.ParseDuration(v); err != nil || d < 0 || d > MaxCatalogTimeout {
			return fmt.Sprintf("%q: want a duration of at most %s such as 30s, or 0 for none", v, policy.FormatDuration(MaxCatalogTimeout))
		}
	case retriesKey:
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > MaxRetries {
			return fmt.Sprintf("%q: want a count from 0 to %d", v, MaxRetries)
		}
	}
	return ""
}

// orList prints "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// suggest is [policy.Suggest]: the candidate s is likely a typo of, or "".
func suggest(s string, candidates []string) string { return policy.Suggest(s, candidates) }
