package rewriter_test

import (
	"testing"

	"github.com/floe-project/floe/rewriter"
)

// FuzzNormalizeLocation feeds listed and referenced locations, which come
// from object stores and metadata files, to the path normalizer: it must
// not panic, must be idempotent, and must treat s3a/s3n as s3.
func FuzzNormalizeLocation(f *testing.F) {
	for _, s := range []string{
		"s3a://bucket/wh/t/data/f.parquet", "file:///tmp/wh/x", "file:/tmp//x", "/tmp/../x", "",
		"://", "s3://", "S3N://B/k/", "gs://b", "file://localhost/a", "abfss://c@acct.dfs.core.windows.net/p",
	} {
		f.Add(s)
	}
	schemes := map[string]string{"s3": "s3", "s3a": "s3", "s3n": "s3"}
	f.Fuzz(func(t *testing.T, loc string) {
		n := rewriter.NormalizeLocation(loc, schemes, nil)
		if again := rewriter.NormalizeLocation(n, schemes, nil); again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", loc, n, again)
		}
		for _, alias := range []string{"s3a://", "s3n://"} {
			if a, b := rewriter.NormalizeLocation(alias+loc, schemes, nil), rewriter.NormalizeLocation("s3://"+loc, schemes, nil); a != b {
				t.Fatalf("%q and s3:// differ: %q vs %q", alias+loc, a, b)
			}
		}
	})
}
