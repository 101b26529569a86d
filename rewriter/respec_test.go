package rewriter_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// evolveBoth changes the partition spec of both tables.
func (tt *twinTables) evolveBoth(t testing.TB, change func(*table.UpdateSpec)) {
	t.Helper()
	evolve := func(tbl *table.Table) *table.Table {
		fresh := *tbl
		require.NoError(t, fresh.Refresh(context.Background()))
		tx := fresh.NewTransaction()
		u := tx.UpdateSpec(true)
		change(u)
		require.NoError(t, u.Commit())
		out, err := tx.Commit(context.Background())
		require.NoError(t, err)
		return out
	}
	tt.tbl, tt.twin = evolve(tt.tbl), evolve(tt.twin)
}

// Spec evolutions of the commit tests' table (identity(region)).
var (
	addIDBucket = func(u *table.UpdateSpec) { u.AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket") }
	dropRegion  = func(u *table.UpdateSpec) { u.RemoveField("region") }
	bucketOnly  = func(u *table.UpdateSpec) {
		u.RemoveField("region")
		u.AddField("id", iceberg.BucketTransform{NumBuckets: 4}, "id_bucket")
	}
)

// A table whose partition spec evolved holds files of both specs. Every
// partition the plan lists — old-spec ones included — is compacted, and
// its files are rewritten into the current spec, an old partition's rows
// split by the current spec's partition values: the run commits one
// snapshot per planned group, no file of the old spec is left, every new
// file's rows are of the partition the file claims, and the rows are those
// of the twin by every reader, deletes applied. On format versions 1, 2 and
// 3, in every layout.
func TestCompactEvolvedPartitionSpec(t *testing.T) {
	type tcase struct {
		name    string
		version int
		evolve  func(*table.UpdateSpec)
		layout  string
	}
	var cases []tcase
	for _, v := range []int{1, 2, 3} {
		for _, l := range []string{"binpack", "sort(id)", "zorder(id, v)", "hilbert(v, id)"} {
			cases = append(cases, tcase{fmt.Sprintf("v%d/add-bucket/%s", v, l), v, addIDBucket, l})
		}
		cases = append(cases, tcase{fmt.Sprintf("v%d/drop-region/binpack", v), v, dropRegion, "binpack"})
	}
	cases = append(cases, tcase{"v2/bucket-instead-of-region/sort(id)", 2, bucketOnly, "sort(id)"},
		tcase{"v3/bucket-instead-of-region/binpack", 3, bucketOnly, "binpack"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			props := iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(tc.version)}
			if tc.version == 1 {
				props[table.WriteDeleteModeKey] = table.WriteModeCopyOnWrite // v1 has no delete files
			}
			tt := newTwinTables(t, props)
			for i := range 3 {
				tt.appendBoth(t, i*100, 100, "eu")
				tt.appendBoth(t, 1000+i*100, 100, "us")
			}
			if tc.version == 3 {
				// Deletion vectors on files of the old spec.
				tt.deleteIDsBoth(t, 5, 150, 1020)
			}
			tt.evolveBoth(t, tc.evolve)
			for i := range 3 {
				tt.appendBoth(t, 5000+i*100, 100, "eu")
				tt.appendBoth(t, 6000+i*100, 100, "us")
			}
			if tc.version >= 2 {
				// Deletes of rows of files of the current spec.
				tt.deleteIDsBoth(t, 5007, 6105)
			}
			st := tt.state(t, tt.tbl)
			current := int32(st.Metadata.DefaultPartitionSpec())
			require.Positive(t, current)
			oldFiles := 0
			for _, f := range st.DataFiles {
				if f.SpecID != current {
					oldFiles++
				}
			}
			require.Equal(t, 6, oldFiles)
			require.Empty(t, st.DeleteIssues)

			l, err := layout.Parse(tc.layout)
			require.NoError(t, err)
			opts := rewriter.CompactOptions{Layout: l, MinInputFiles: 2, TargetFileSizeBytes: 1 << 20,
				Group: rewriter.GroupOptions{TempDir: t.TempDir()}, Commit: rewriter.CommitOptions{Sleep: instantSleep}}
			plan, err := rewriter.PlanCompaction(st, opts)
			require.NoError(t, err)
			var oldGroups []string
			for _, g := range plan.Groups {
				if slices.Contains(g.Reasons, fmt.Sprintf("partition spec 0, rewritten into the current spec %d", current)) {
					oldGroups = append(oldGroups, g.Partition)
				}
			}
			require.ElementsMatch(t, []string{"region=eu", "region=us"}, oldGroups, "%s", groupSummary(plan))

			res, err := rewriter.Compact(ctx, st, plan, opts)
			require.NoError(t, err)
			require.Empty(t, res.Skipped)
			require.Len(t, res.Commits, len(plan.Groups), "the run commits every group the plan lists")
			require.Equal(t, plan.InputFiles, res.FilesIn)
			tt.tbl = res.Table
			tt.requireSameRowsApplied(t)
			tt.requireSameRowsIceberg(t)

			after := tt.state(t, tt.tbl)
			require.Equal(t, tc.version, after.Metadata.Version())
			for _, f := range after.DataFiles {
				require.Equal(t, current, f.SpecID, "file %s of an old spec is left", f.Path)
				requireRowsInPartition(t, after, f)
			}
			again, err := rewriter.PlanCompaction(after, opts)
			require.NoError(t, err)
			for _, g := range again.Groups {
				require.NotContains(t, oldGroups, g.Partition, "%s", groupSummary(again))
			}
		})
	}
}

// requireRowsInPartition reads data file f with arrow-go's Parquet reader
// and checks that every row's partition in f's spec, computed here with the
// spec's transforms, is the partition f's manifest entry claims.
func requireRowsInPartition(t testing.TB, st *lake.State, f lake.File) {
	t.Helper()
	spec := st.Metadata.PartitionSpecByID(int(f.SpecID))
	require.NotNil(t, spec)
	rdr := openTableParquet(t, st.Table, f.Path)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	at, err := fr.ReadTable(t.Context())
	require.NoError(t, err)
	defer at.Release()
	col := func(name string) []any {
		for i, fld := range at.Schema().Fields() {
			if fld.Name != name {
				continue
			}
			var out []any
			for _, ch := range at.Column(i).Data().Chunks() {
				switch a := ch.(type) {
				case *array.Int64:
					for j := range a.Len() {
						out = append(out, a.Value(j))
					}
				case *array.String:
					for j := range a.Len() {
						out = append(out, a.Value(j))
					}
				default:
					t.Fatalf("column %s is %s", name, ch.DataType())
				}
			}
			return out
		}
		t.Fatalf("no column %s in %s", name, f.Path)
		return nil
	}
	for _, pf := range spec.Fields() {
		if _, void := pf.Transform.(iceberg.VoidTransform); void {
			continue
		}
		src, ok := st.Metadata.CurrentSchema().FindColumnName(pf.SourceIDs[0])
		require.True(t, ok)
		for row, v := range col(src) {
			var lit iceberg.Literal
			switch x := v.(type) {
			case int64:
				lit = iceberg.NewLiteral(x)
			case string:
				lit = iceberg.NewLiteral(x)
			}
			got := pf.Transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
			require.True(t, got.Valid)
			require.Equal(t, f.Partition[pf.FieldID], got.Val.Any(), "row %d of %s: %s=%v is not in the file's partition", row, f.Path, src, v)
		}
	}
}
