package rewriter_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

// The JSON forms of plans and results print paths as written: an encoder
// that does not escape HTML (floe's -o json) gets no \u0026 for the & of
// a file name, from any value nested in another.
func TestJSONFormsDoNotEscapeHTML(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	path := "s3://lake/db/t/data/a&b<c>.parquet"
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"orphan plan", rewriter.OrphanPlan{Files: []rewriter.OrphanFile{{Path: path, Size: 1, ModTime: at}}}},
		{"expire plan", rewriter.ExpirePlan{Files: []string{path}, Cutoff: at}},
		{"expire result", rewriter.ExpireResult{Deleted: []string{path}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(map[string]any{"report": tc.v}))
			require.Contains(t, b.String(), `a&b<c>.parquet`)
		})
	}
}
