package collectors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

// TestMetadataTable round-trips the evidence of a metadata-table access
// and keeps every other evidence a data access.
func TestMetadataTable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		evidence collectors.Evidence
		want     string
		ok       bool
	}{
		{"metadata table", collectors.MetadataEvidence("snapshots"), "snapshots", true},
		{"sql", collectors.EvidenceSQL, "", false},
		{"scan report", collectors.EvidenceScanReport, "", false},
		{"none", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := collectors.TableAccess{Name: "events", Evidence: tc.evidence}
			meta, ok := a.MetadataTable()
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, meta)
		})
	}
}
