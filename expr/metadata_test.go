package expr_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/expr"
)

// One list for the SQL parser, the scan-report collector and ingest; the
// copies disagreed (the scan-report one lacked properties).
func TestIsMetadataTable(t *testing.T) {
	for _, name := range []string{"history", "metadata_log_entries", "snapshots", "entries", "files", "data_files",
		"delete_files", "manifests", "partitions", "all_data_files", "all_delete_files", "all_files", "all_manifests",
		"all_entries", "refs", "position_deletes", "properties", "SNAPSHOTS"} {
		require.True(t, expr.IsMetadataTable(name), name)
	}
	for _, name := range []string{"events", "", "snapshot", "files_v2"} {
		require.False(t, expr.IsMetadataTable(name), name)
	}
}
