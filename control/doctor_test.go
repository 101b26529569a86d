package control_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/internal/testlake"
)

// doctorConfig loads file (the embedded default when "") as floe would in
// a fresh directory, with no environment.
func doctorConfig(t *testing.T, file string) *config.Config {
	t.Helper()
	return doctorConfigEnv(t, file)
}

// doctorConfigEnv is [doctorConfig] with environ as the environment
// (KEY=VALUE: a source's secrets, say).
func doctorConfigEnv(t *testing.T, file string, environ ...string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	opts := config.Options{WorkDir: dir, Getenv: func(string) string { return "" }, Environ: func() []string { return environ }}
	if file != "" {
		opts.Path = filepath.Join(dir, "floe.yaml")
		require.NoError(t, os.WriteFile(opts.Path, []byte(file), 0o644))
	}
	cfg, err := config.Load(opts)
	require.NoError(t, err)
	return cfg
}

func names(checks []control.Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.Name + " " + c.Target
	}
	return out
}

// TestDoctorPasses runs every check on configurations that work: the
// embedded default on a fresh machine, and a warehouse with a table,
// listing and (with Write) writing and deleting a probe.
func TestDoctorPasses(t *testing.T) {
	// Local on every store: the cases are the embedded default, a local
	// warehouse under data_dir (TestDoctorWritesOnS3 covers S3).
	w := testlake.NewLocal(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	w.CreateTable(t, "db", "flat", schema, nil, nil, nil)
	// The embedded default, with its data_dir holding the table.
	withTable := strings.Replace(string(config.DefaultYAML()), "data_dir: ./floe-data", "data_dir: "+w.Dir, 1)
	for _, tc := range []struct {
		name   string
		file   string
		write  bool
		want   []string // the checks, in order
		detail string   // in the catalog check's detail
		listed string   // the object store check's detail
	}{
		{name: "embedded default", want: []string{control.CheckCatalog, control.CheckObjectStore, control.CheckStateStore},
			detail: "0 namespaces; no table to load", listed: "listed 0 entries"},
		{name: "embedded default with write", write: true,
			want: []string{control.CheckCatalog, control.CheckObjectStore, control.CheckObjectStoreWrite, control.CheckStateStore}},
		{name: "warehouse with a table", file: withTable, write: true,
			want:   []string{control.CheckCatalog, control.CheckObjectStore, control.CheckObjectStoreWrite, control.CheckDeletes, control.CheckStateStore},
			detail: "1 namespace; loaded db.flat", listed: "listed 1 entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := doctorConfig(t, tc.file)
			checks := control.Doctor(t.Context(), cfg, control.DoctorOptions{Timeout: 10 * time.Second, Write: tc.write})
			got := make([]string, len(checks))
			for i, c := range checks {
				got[i] = c.Name
				require.True(t, c.OK, "%s %s: %s", c.Name, c.Target, c.Error)
				require.False(t, c.Skipped)
				require.Empty(t, c.Error)
				require.NotEmpty(t, c.Detail)
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, "local (sql, file:"+filepath.Join(cfg.DataDir, "catalog.db")+")", checks[0].Target)
			require.Contains(t, checks[0].Detail, tc.detail)
			require.Contains(t, checks[1].Detail, tc.listed)
			require.Equal(t, cfg.State.Path, checks[len(checks)-1].Target)
			require.Contains(t, checks[len(checks)-1].Detail, "(current)")
			if tc.write {
				require.Contains(t, checks[2].Detail, "wrote and deleted .floe-doctor-")
			}
			wh := strings.TrimPrefix(cfg.Catalogs["local"]["warehouse"], "file://")
			entries, err := os.ReadDir(wh)
			require.NoError(t, err)
			for _, e := range entries {
				require.NotContains(t, e.Name(), ".floe-doctor-", "the probe is deleted")
			}
		})
	}
}

// TestDoctorReportsMisfiledDeletes: the deletes check fails on a table
// where iceberg-go filed a merge-on-read delete under the new partition
// spec (docs/iceberg-go-pitfalls.md, reproduction 1), naming the delete;
// the table's rows and deletes are left as they are.
func TestDoctorReportsMisfiledDeletes(t *testing.T) {
	ctx := t.Context()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl := w.CreateTable(t, "db", "evolved", schema, &spec, iceberg.Properties{"format-version": "2", "write.delete.mode": "merge-on-read"}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	for i := range 20 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("eu")
	}
	rec := b.NewRecordBatch()
	b.Release()
	tbl = testlake.Append(t, tbl, rec)
	rec.Release()
	tx := tbl.NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket").Commit())
	tbl, err := tx.Commit(ctx)
	require.NoError(t, err)
	_, err = tbl.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(5)), nil)
	require.NoError(t, err)

	cfg := doctorConfig(t, w.ConfigYAML(""))
	checks := control.Doctor(ctx, cfg, control.DoctorOptions{Timeout: 10 * time.Second})
	var del *control.Check
	for i := range checks {
		if checks[i].Name == control.CheckDeletes {
			del = &checks[i]
		}
	}
	require.NotNil(t, del, "%v", names(checks))
	require.True(t, del.Failed())
	require.Equal(t, "table local.db.evolved", del.Target)
	require.Contains(t, del.Error, "1 delete no reader applies")
	require.Contains(t, del.Error, "misfiled delete")
}

// TestDoctorFailsWithinTimeout checks that a REST catalog that refuses
// connections, and one that accepts them and never answers, fail at the
// timeout with a line naming the catalog and its URI, while the other
// checks still pass; and that no secret of the catalog is printed.
func TestDoctorFailsWithinTimeout(t *testing.T) {
	const timeout = 2 * time.Second
	silent := testlake.SilentCatalogURI(t)
	for _, tc := range []struct {
		name      string
		uri       string
		extra     string
		wantError string
	}{
		{name: "connection refused", uri: "http://127.0.0.1:1", wantError: "127.0.0.1:1"},
		{name: "never answers", uri: silent, wantError: "no answer within 2s"},
		{name: "never answers, with secrets", uri: strings.Replace(silent, "http://", "http://alice:pa55word@", 1),
			extra: "    token: tok-s3cret-123\n    credential: client:cred-s3cret-456\n    warehouse: analytics\n", wantError: "no answer within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := doctorConfig(t, "catalogs:\n  prod:\n    type: rest\n    uri: "+tc.uri+"\n"+tc.extra)
			start := time.Now()
			checks := control.Doctor(t.Context(), cfg, control.DoctorOptions{Timeout: timeout, Write: true})
			took := time.Since(start)
			require.Less(t, took, 3*timeout/2, "doctor returns at the timeout")
			require.Len(t, checks, 3, "%v", names(checks))

			cat := checks[0]
			require.Equal(t, control.CheckCatalog, cat.Name)
			require.False(t, cat.OK)
			require.True(t, cat.Failed())
			require.Equal(t, "prod (rest, "+config.RedactURI(tc.uri)+")", cat.Target)
			require.Contains(t, cat.Error, tc.wantError)
			require.Contains(t, cat.Error, "prod")

			st := checks[1]
			require.Equal(t, control.CheckObjectStore, st.Name)
			require.True(t, st.Skipped, "the warehouse location is only known to the catalog")
			require.False(t, st.Failed())
			require.Contains(t, st.Detail, "the catalog check failed")

			require.Equal(t, control.CheckStateStore, checks[2].Name)
			require.True(t, checks[2].OK, checks[2].Error)

			b, err := json.Marshal(checks)
			require.NoError(t, err)
			for _, secret := range []string{"pa55word", "tok-s3cret-123", "cred-s3cret-456"} {
				require.NotContains(t, string(b), secret)
			}
		})
	}
}

// catalogYAML is a floe.yaml with catalog name and props.
func catalogYAML(name string, props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("catalogs:\n  " + name + ":\n")
	for _, k := range keys {
		b.WriteString("    " + k + ": " + strconv.Quote(props[k]) + "\n")
	}
	return b.String()
}

// TestDoctorWritesOnS3: on an S3 warehouse, the write probe is written and
// deleted, not refused because it reused the listing check's cancelled
// context (issue 42: "PutObject, context canceled").
func TestDoctorWritesOnS3(t *testing.T) {
	w := testlake.NewS3(t)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	w.CreateTable(t, "db", "flat", schema, nil, nil, nil)
	cfg := doctorConfig(t, catalogYAML(w.Name, w.Props))
	checks := control.Doctor(t.Context(), cfg, control.DoctorOptions{Timeout: 10 * time.Second, Write: true})
	require.Equal(t, []string{control.CheckCatalog, control.CheckObjectStore, control.CheckObjectStoreWrite, control.CheckDeletes, control.CheckStateStore},
		func() []string {
			out := make([]string, len(checks))
			for i, c := range checks {
				out[i] = c.Name
			}
			return out
		}())
	for _, c := range checks {
		require.True(t, c.OK, "%s %s: %s", c.Name, c.Target, c.Error)
	}
	require.Contains(t, checks[1].Target, "s3://floe/warehouse")
	require.Contains(t, checks[2].Detail, "wrote and deleted .floe-doctor-")
	probe := strings.TrimPrefix(checks[2].Detail, "wrote and deleted ")
	require.False(t, w.Exists(t, w.Location(probe)), "the probe is deleted")
}
