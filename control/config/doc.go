// Package config loads floe.yaml: the named Iceberg catalogs (with
// iceberg-go's own property names), where floe keeps its state, the mapping
// from engine catalog names to floe catalogs used by telemetry, and the
// health defaults.
//
// Lookup order for the file: --config, $FLOE_CONFIG, ./floe.yaml, then the
// embedded default (a SQL catalog on SQLite and a file:// warehouse under
// ./floe-data). The file is decoded strictly: an unknown key or a value of the
// wrong type is an error naming the file, line and key. FLOE_* environment
// variables then override keys (see [ApplyEnv]); flags override both.
package config
