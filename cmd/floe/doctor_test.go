package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/testlake"
)

// TestDoctor runs floe doctor on the embedded default (every check passes,
// exit 0) and on REST catalogs that refuse connections or never answer:
// each fails within the timeout with a line naming the catalog and its
// URI, exit 1 with one line saying how many checks failed, and no secret
// of the catalog is printed in text or JSON, whose shape is pinned in
// testdata/json/doctor.json (go test -run TestDoctor -update rewrites it).
func TestDoctor(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	silent := testlake.SilentCatalogURI(t)
	embedded := func(t *testing.T) string {
		t.Helper()
		data := filepath.Join(t.TempDir(), "floe-data")
		return strings.Replace(string(config.DefaultYAML()), "data_dir: ./floe-data", "data_dir: "+data, 1)
	}
	rest := func(uri, extra string) func(*testing.T) string {
		return func(t *testing.T) string {
			return "data_dir: " + filepath.Join(t.TempDir(), "floe-data") + "\ncatalogs:\n  prod:\n    type: rest\n    uri: " + uri + "\n" + extra
		}
	}
	secrets := []string{"pa55word", "tok-s3cret-123"}
	for _, tc := range []struct {
		name   string
		config func(*testing.T) string
		args   []string
		code   int
		lines  []string // line prefixes, in order
		want   []string // in the output
		errOut string
	}{
		{name: "embedded default", config: embedded, code: exitOK,
			lines: []string{"✓ catalog local (sql, file:", "✓ object store file://", "✓ state store "},
			want:  []string{"0 namespaces; no table to load", "(catalog local): listed 0 entries", "schema version"}},
		{name: "embedded default with write", config: embedded, args: []string{"--write"}, code: exitOK,
			lines: []string{"✓ catalog local", "✓ object store file://", "✓ object store write file://", "✓ state store "},
			want:  []string{"wrote and deleted .floe-doctor-"}},
		{name: "connection refused", config: rest("http://127.0.0.1:1", ""), code: exitError,
			lines: []string{"✗ catalog prod (rest, http://127.0.0.1:1): open catalog prod:", "– object store catalog prod: not checked:", "✓ state store "},
			want:  []string{"connection refused"}, errOut: "floe: 1 of 2 checks failed, 1 not checked\n"},
		{name: "never answers", config: rest(silent, ""), code: exitError,
			lines: []string{"✗ catalog prod (rest, " + silent + "): ", "– object store", "✓ state store "},
			want:  []string{"no answer within 2s"}, errOut: "floe: 1 of 2 checks failed, 1 not checked\n"},
		{name: "never answers, with secrets", config: rest(strings.Replace(silent, "http://", "http://alice:pa55word@", 1), "    token: tok-s3cret-123\n"), code: exitError,
			lines: []string{"✗ catalog prod (rest, " + strings.Replace(silent, "http://", "http://alice:****@", 1) + "): ", "– object store", "✓ state store "},
			want:  []string{"no answer within 2s"}, errOut: "floe: 1 of 2 checks failed, 1 not checked\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(tc.config(t)), 0o644))
			for _, format := range []outputFormat{outputTable, outputJSON} {
				start := time.Now()
				out, errOut, code := run(t, dir, append([]string{"doctor", "--timeout", timeout.String(), "-o", string(format)}, tc.args...)...)
				took := time.Since(start)
				// The silent catalog never answers: without the timeout doctor would
				// hang. The slack is for a loaded machine (a run of the S3 suite
				// took 4.2 s at a 2 s timeout with every test in parallel).
				require.Less(t, took, 3*timeout, "floe doctor returns at the timeout")
				require.Equal(t, tc.code, code, "%s%s", out, errOut)
				require.Equal(t, tc.errOut, errOut, "the failures are printed once, on their lines")
				for _, s := range secrets {
					require.NotContains(t, out+errOut, s)
				}
				if format == outputJSON {
					checkShape(t, "doctor", out)
					var r struct {
						OK     bool            `json:"ok"`
						Checks []control.Check `json:"checks"`
					}
					require.NoError(t, json.Unmarshal([]byte(out), &r), out)
					require.Equal(t, tc.code == exitOK, r.OK)
					require.Len(t, r.Checks, len(tc.lines))
					continue
				}
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				require.Len(t, lines, len(tc.lines), out)
				for i, prefix := range tc.lines {
					require.True(t, strings.HasPrefix(lines[i], prefix), "line %d: %q, want %q…", i, lines[i], prefix)
				}
				for _, w := range tc.want {
					require.Contains(t, out, w)
				}
			}
		})
	}
}
