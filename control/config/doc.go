// Package config loads floe.yaml: the named Iceberg catalogs (with
// iceberg-go's own property names), where floe keeps its state, the mapping
// from engine catalog names to floe catalogs used by telemetry, the health
// defaults, the log settings, the alert sinks ([AlertsConfig]) and floe
// serve's HTTP server (server:, whose tokens are [Secret]s that never print).
//
// Lookup order for the file: --config, $FLOE_CONFIG, then ./floe.yaml; a
// file named by --config or $FLOE_CONFIG that does not exist is an error.
// The file extends the embedded default (a SQL catalog on SQLite and a
// file:// warehouse under ./floe-data): its mappings merge into the
// default's key by key, its lists and single values replace the default's,
// and a file that names catalogs replaces the default's catalog set and
// what names it (default_catalog, telemetry.catalog_map, the default's
// policies), so a user's lake never gains the demo's local catalog. A file
// that names no catalog keeps them; its policies are laid over the
// default's rule by rule, key by key ([policy.Set.Over]). docs/config.md
// has the table. The file is decoded strictly by floe's own decoder: an
// unknown key or a value of the wrong shape is a problem naming the file,
// line and key in YAML's words, never a Go type. FLOE_* environment
// variables then override keys (see [Config.ApplyEnv]); flags override
// both. Every key remembers where it was set: [Config.Settings] is the
// effective configuration with each value's source (floe config view).
//
// Nothing is silently accepted: [Config.Validate] reports every problem at
// once — what decoding found, what the variables got wrong and what
// validation finds — each naming where it was set (file:line or the
// variable), and every error wraps [ErrInvalid] (the CLI exits 2). Besides the keys' values it
// refuses catalog property names that are neither known nor under one of
// [CatalogPropertyPrefixes], a catalog type floe does not link in, an
// environment variable for a catalog the file does not define, a state
// store outside data_dir in a directory that does not exist, and numbers
// out of their bounds. The policies get the one validation
// [CheckPoliciesFile] also gives a policies file (floe policy validate),
// judged by [Options.Now]: so the daemon and every verb accept exactly
// what policy validate passes.
//
// Webhook URLs and header values can hold secrets (a Slack incoming
// webhook's path is one): [RedactURL] is what every error and log line
// shows of a URL, and header values are never shown.
package config
