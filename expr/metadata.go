package expr

import "strings"

// metadataTables are Iceberg's metadata table types: the suffix a
// metadata table's name carries, as <table>.<type> (Spark) or
// "<table>$<type>" (Trino).
var metadataTables = map[string]bool{
	"entries": true, "files": true, "data_files": true, "delete_files": true,
	"history": true, "metadata_log_entries": true, "snapshots": true, "refs": true,
	"manifests": true, "partitions": true, "position_deletes": true, "properties": true,
	"all_data_files": true, "all_delete_files": true, "all_files": true,
	"all_manifests": true, "all_entries": true,
}

// IsMetadataTable reports whether name (case-insensitively) is one of
// Iceberg's metadata table types, such as "snapshots" or "all_files".
func IsMetadataTable(name string) bool { return metadataTables[strings.ToLower(name)] }
