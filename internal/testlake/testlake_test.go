package testlake_test

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/internal/testlake/gcslake"
)

// TestWarehouseStores writes a table and plants an aged file on each store,
// then reads both back through iceberg-go's IO. The stores open in
// parallel: none may need process environment (t.Setenv).
func TestWarehouseStores(t *testing.T) {
	for _, tc := range []struct {
		name   string
		open   func(testing.TB) *testlake.Warehouse
		scheme string
	}{
		{"local", testlake.NewLocal, "file://"},
		{"s3", testlake.NewS3, "s3://floe/"},
		{"versitygw", testlake.NewVersitygw, "s3://floe/"},
		{"gcs", func(t testing.TB) *testlake.Warehouse { w, _ := gcslake.New(t); return w }, "gs://floe/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.name == "versitygw" && os.Getenv(testlake.EnvStore) != "versitygw" && os.Getenv(testlake.EnvVersitygw) == "" {
				t.Skipf("versitygw runs under make test-s3 (%s=versitygw or %s set): building it takes minutes", testlake.EnvStore, testlake.EnvVersitygw)
			}
			ctx := context.Background()
			w := tc.open(t)
			schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
			tbl := w.CreateTable(t, "web", "events", schema, nil, nil, nil)
			require.Contains(t, tbl.Location(), tc.scheme)

			b := array.NewInt64Builder(memory.DefaultAllocator)
			b.AppendValues([]int64{1, 2, 3}, nil)
			col := b.NewArray()
			defer col.Release()
			rec := array.NewRecordBatch(testlake.ArrowSchema(t, tbl), []arrow.Array{col}, 3)
			defer rec.Release()
			tbl = testlake.Append(t, tbl, rec)
			want, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			testlake.RequireIntact(t, tbl, want)

			old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
			loc := tbl.Location() + "/data/orphan.parquet"
			require.False(t, w.Exists(t, loc))
			w.Plant(t, loc, []byte("planted"), old)
			require.True(t, w.Exists(t, loc))
			newer := old.Add(24 * time.Hour)
			w.Age(t, loc, newer)

			fio, err := tbl.FS(ctx)
			require.NoError(t, err)
			var seen bool
			require.NoError(t, fio.(iceio.ListableIO).WalkDir(tbl.Location()+"/data", func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				// LocalFS walks plain paths, blobfs full URIs.
				if strings.TrimPrefix(p, "file://") != strings.TrimPrefix(loc, "file://") {
					return nil
				}
				seen = true
				info, err := d.Info()
				require.NoError(t, err)
				require.WithinDuration(t, newer, info.ModTime(), time.Second)
				require.EqualValues(t, len("planted"), info.Size())
				return nil
			}))
			require.True(t, seen, "%s not listed", loc)
			require.Equal(t, w.Location("x/y"), w.Props["warehouse"]+"/x/y")
		})
	}
}

// TestVersitygwVersion keeps the version the harness names in step with
// the tools module that builds the binary.
func TestVersitygwVersion(t *testing.T) {
	mod, err := os.ReadFile("../tools/versitygw/go.mod")
	require.NoError(t, err)
	require.Contains(t, string(mod), "github.com/versity/versitygw "+testlake.VersitygwVersion+" ")
}
