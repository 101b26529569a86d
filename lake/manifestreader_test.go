package lake_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// entryKinds counts the kinds of entries compared.
type entryKinds struct {
	deleted, existing, posDeletes, vectors, inheritedSeq, rowIDs int
}

// requireSameEntries reads every manifest of every snapshot of tbl with
// iceberg-go's reader and with r, keeping and discarding deleted entries,
// and requires the same entries, every field of each. It returns how many
// manifests it read, and adds the entries it compared to kinds.
func requireSameEntries(t *testing.T, tbl *table.Table, r *lake.ManifestReader, kinds *entryKinds) int {
	t.Helper()
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	md := tbl.Metadata()
	seen := map[string]bool{}
	for _, snap := range md.Snapshots() {
		list, err := snap.Manifests(fio)
		require.NoError(t, err)
		for _, m := range list {
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			for _, discard := range []bool{false, true} {
				var want []iceberg.ManifestEntry
				for e, err := range m.Entries(fio, discard) {
					require.NoError(t, err)
					want = append(want, e)
				}
				got, err := r.Entries(fio, m, md.PartitionSpecByID(int(m.PartitionSpecID())), discard)
				require.NoError(t, err)
				require.Len(t, got, len(want), "manifest %s", m.FilePath())
				for i := range want {
					requireSameEntry(t, want[i], got[i], fmt.Sprintf("manifest %s entry %d", m.FilePath(), i))
					if discard {
						continue
					}
					df := want[i].DataFile()
					switch {
					case want[i].Status() == iceberg.EntryStatusDELETED:
						kinds.deleted++
					case want[i].Status() == iceberg.EntryStatusEXISTING:
						kinds.existing++
					}
					switch {
					case df.FileFormat() == iceberg.PuffinFile:
						kinds.vectors++
					case df.ContentType() == iceberg.EntryContentPosDeletes:
						kinds.posDeletes++
					}
					if want[i].SequenceNum() > 0 {
						kinds.inheritedSeq++
					}
					if df.FirstRowID() != nil {
						kinds.rowIDs++
					}
				}
			}
		}
	}
	return len(seen)
}

func requireSameEntry(t *testing.T, want, got iceberg.ManifestEntry, where string) {
	t.Helper()
	require.Equal(t, want.Status(), got.Status(), where)
	require.Equal(t, want.SnapshotID(), got.SnapshotID(), where)
	require.Equal(t, want.SequenceNum(), got.SequenceNum(), where)
	require.Equal(t, want.FileSequenceNum(), got.FileSequenceNum(), where)
	w, g := want.DataFile(), got.DataFile()
	require.Equal(t, w.ContentType(), g.ContentType(), where)
	require.Equal(t, w.FilePath(), g.FilePath(), where)
	require.Equal(t, w.FileFormat(), g.FileFormat(), where)
	require.Equal(t, w.Partition(), g.Partition(), where)
	require.Equal(t, w.Count(), g.Count(), where)
	require.Equal(t, w.FileSizeBytes(), g.FileSizeBytes(), where)
	require.Equal(t, w.ColumnSizes(), g.ColumnSizes(), where)
	require.Equal(t, w.ValueCounts(), g.ValueCounts(), where)
	require.Equal(t, w.NullValueCounts(), g.NullValueCounts(), where)
	require.Equal(t, w.NaNValueCounts(), g.NaNValueCounts(), where)
	require.Equal(t, w.DistinctValueCounts(), g.DistinctValueCounts(), where)
	require.Equal(t, w.LowerBoundValues(), g.LowerBoundValues(), where)
	require.Equal(t, w.UpperBoundValues(), g.UpperBoundValues(), where)
	require.Equal(t, w.KeyMetadata(), g.KeyMetadata(), where)
	require.Equal(t, w.SplitOffsets(), g.SplitOffsets(), where)
	require.Equal(t, w.EqualityFieldIDs(), g.EqualityFieldIDs(), where)
	require.Equal(t, w.SortOrderID(), g.SortOrderID(), where)
	require.Equal(t, w.SpecID(), g.SpecID(), where)
	require.Equal(t, w.FirstRowID(), g.FirstRowID(), where)
	require.Equal(t, w.ReferencedDataFile(), g.ReferencedDataFile(), where)
	require.Equal(t, w.ContentOffset(), g.ContentOffset(), where)
	require.Equal(t, w.ContentSizeInBytes(), g.ContentSizeInBytes(), where)
}

// rewriteManifests rewrites the data manifests into one, whose entries
// are then existing ones.
func rewriteManifests(t *testing.T, tbl *table.Table) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	res, err := tx.RewriteManifests(t.Context())
	require.NoError(t, err)
	require.False(t, res.IsNoOp())
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}

// appendsTo commits n appends of ten rows to tbl, alternating regions,
// a day apart. An added column is left null: the batch has the first three
// columns.
func appendsTo(t *testing.T, tbl *table.Table, n int) *table.Table {
	t.Helper()
	sc := arrow.NewSchema(testlake.ArrowSchema(t, tbl).Fields()[:3], nil)
	for f := range int64(n) {
		tbl = testlake.Append(t, tbl, batch(t, sc, f*10, f*10+9, []string{"eu", "us"}[f%2], day0.Add(time.Duration(f)*24*time.Hour)))
	}
	return tbl
}

// addColumn evolves the schema: an optional column is added.
func addColumn(t *testing.T, tbl *table.Table, name string) *table.Table {
	t.Helper()
	tx := tbl.NewTransaction()
	us := tx.UpdateSchema(true, false)
	us.AddColumn([]string{name}, iceberg.PrimitiveTypes.Int64, "", false, nil)
	require.NoError(t, us.Commit())
	out, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return out
}

// everyType is a schema with a column of each type a partition can be of.
var everyType = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
	iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
	iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
	iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 6, Name: "dec", Type: iceberg.DecimalTypeOf(10, 2)},
	iceberg.NestedField{ID: 7, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 8, Name: "tm", Type: iceberg.PrimitiveTypes.Time},
	iceberg.NestedField{ID: 9, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	iceberg.NestedField{ID: 10, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 11, Name: "s", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 12, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
	iceberg.NestedField{ID: 13, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
	iceberg.NestedField{ID: 14, Name: "fx", Type: iceberg.FixedTypeOf(4)},
)

// everyTypeTable is a table of format version v partitioned by an
// identity of every column of everyType and by hour, day, year, bucket
// and truncate transforms,
// given files with every statistic a manifest entry carries, some with
// null partition values.
func everyTypeTable(t *testing.T, w *testlake.Warehouse, v int) *table.Table {
	t.Helper()
	var fields []iceberg.PartitionField
	for _, f := range everyType.Fields() {
		fields = append(fields, iceberg.PartitionField{SourceIDs: []int{f.ID}, FieldID: 1000 + f.ID, Name: f.Name + "_id", Transform: iceberg.IdentityTransform{}})
	}
	fields = append(fields,
		iceberg.PartitionField{SourceIDs: []int{10}, FieldID: 1100, Name: "tstz_hour", Transform: iceberg.HourTransform{}},
		iceberg.PartitionField{SourceIDs: []int{9}, FieldID: 1101, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{7}, FieldID: 1103, Name: "dt_year", Transform: iceberg.YearTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1104, Name: "l_bucket", Transform: iceberg.BucketTransform{NumBuckets: 8}},
		iceberg.PartitionField{SourceIDs: []int{11}, FieldID: 1105, Name: "s_trunc", Transform: iceberg.TruncateTransform{Width: 2}},
	)
	spec := iceberg.NewPartitionSpec(fields...)
	tbl := w.CreateTable(t, "db", fmt.Sprintf("every_v%d", v), everyType, &spec, iceberg.Properties{table.PropertyFormatVersion: fmt.Sprint(v)}, nil)
	spec = tbl.Spec() // with the field ids the catalog assigned
	ts := time.Date(2026, 3, 14, 15, 9, 26, 535000, time.UTC)
	for c := range 3 {
		var files []iceberg.DataFile
		for f := range 4 {
			n := int64(c*4 + f)
			byName := map[string]any{
				"b_id": n%2 == 0, "i_id": int32(n), "l_id": n * 1000, "f_id": float32(n) / 2, "d_id": float64(n) / 4,
				"dec_id": iceberg.DecimalLiteral{Scale: 2, Val: decimal128.FromI64(n*123 + 4)},
				"dt_id":  iceberg.Date(20000 + n), "tm_id": iceberg.Time(n * 1_000_000),
				"ts_id": iceberg.Timestamp(ts.UnixMicro() + n), "tstz_id": iceberg.Timestamp(ts.UnixMicro() + n*3_600_000_000),
				"s_id": fmt.Sprintf("s%02d", n), "u_id": uuid.UUID{byte(n), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
				"bin_id": []byte{byte(n), 2}, "fx_id": []byte{1, 2, 3, byte(n)},
				"tstz_hour": int32(493000 + n), "ts_day": iceberg.Date(20500 + n), "dt_year": int32(56), "l_bucket": int32(n % 8), "s_trunc": "s0",
			}
			part := map[int]any{}
			for i, pf := range spec.Fields() {
				v, ok := byName[pf.Name]
				require.True(t, ok, pf.Name)
				if f == 3 && i%3 == 0 {
					v = nil
				}
				part[pf.FieldID] = v
			}
			bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData,
				fmt.Sprintf("%s/data/c%d-f%d.parquet", tbl.Location(), c, f), iceberg.ParquetFile, part, nil, nil, 100+n, 4096+n)
			require.NoError(t, err)
			bld.ColumnSizes(map[int]int64{1: 10 + n, 3: 30}).ValueCounts(map[int]int64{1: 100 + n}).
				NullValueCounts(map[int]int64{1: 0, 3: n}).NaNValueCounts(map[int]int64{4: 1, 5: 0}).
				LowerBoundValues(map[int][]byte{3: {1, 0, 0, 0, 0, 0, 0, 0}}).UpperBoundValues(map[int][]byte{3: {byte(n), 1, 0, 0, 0, 0, 0, 0}}).
				SplitOffsets([]int64{4, 2048 + n}).SortOrderID(0)
			if v == 3 {
				bld.FirstRowID(n * 1000)
			}
			if f == 2 {
				bld.KeyMetadata([]byte("key")).ColumnSizes(map[int]int64{})
			}
			files = append(files, bld.Build())
		}
		tx := tbl.NewTransaction()
		require.NoError(t, tx.AddDataFiles(t.Context(), files, nil))
		var err error
		tbl, err = tx.Commit(t.Context())
		require.NoError(t, err)
	}
	return tbl
}

// floe's manifest reader returns what iceberg-go's reader returns, every
// field of every entry (deleted ones too), on tables of each format version
// written by iceberg-go: partitioned by every type and transform, with
// copy-on-write overwrites, position deletes, deletion vectors, row lineage
// inherited by manifests carried into v3, evolved schemas and specs, and
// rewritten manifests (existing entries).
func TestManifestReaderReadsWhatIcebergGoReads(t *testing.T) {
	daySpec := func() *iceberg.PartitionSpec {
		s := iceberg.NewPartitionSpec(
			iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
			iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}})
		return &s
	}
	cases := []struct {
		name string
		make func(t *testing.T, w *testlake.Warehouse) *table.Table
	}{
		{"v1 partitioned, overwritten, schema evolved, manifests rewritten", func(t *testing.T, w *testlake.Warehouse) *table.Table {
			tbl := w.CreateTable(t, "db", "v1", schema, daySpec(), iceberg.Properties{table.PropertyFormatVersion: "1"}, nil)
			tbl = appendsTo(t, tbl, 4)
			tbl = deleteIDs(t, tbl, 3, 14)
			tbl = addColumn(t, tbl, "extra")
			tbl = appendsTo(t, tbl, 2)
			return rewriteManifests(t, tbl)
		}},
		{"v2 unpartitioned", func(t *testing.T, w *testlake.Warehouse) *table.Table {
			return appendsTo(t, morTable(t, w, "v2flat", 2, false), 3)
		}},
		{"v2 merge-on-read, position deletes, spec and schema evolved, manifests rewritten", func(t *testing.T, w *testlake.Warehouse) *table.Table {
			tbl := appendsTo(t, morTable(t, w, "v2", 2, true), 4)
			tbl = deleteIDs(t, tbl, 3, 14)
			tbl = addIDBucket(t, tbl)
			tbl = addColumn(t, tbl, "extra")
			tbl = appendsTo(t, tbl, 2)
			tbl = deleteIDs(t, tbl, 0, 1)
			return rewriteManifests(t, tbl)
		}},
		{"v3 deletion vectors", func(t *testing.T, w *testlake.Warehouse) *table.Table {
			tbl := appendsTo(t, morTable(t, w, "v3", 3, true), 4)
			tbl = deleteIDs(t, tbl, 3, 14)
			return deleteIDs(t, tbl, 20, 21)
		}},
		{"v2 upgraded to v3: carried manifests inherit row ids", func(t *testing.T, w *testlake.Warehouse) *table.Table {
			tbl := appendsTo(t, morTable(t, w, "up", 2, true), 3)
			tbl = deleteIDs(t, tbl, 3, 4)
			tbl = upgradeTo3(t, tbl)
			tbl = appendsTo(t, tbl, 2)
			return deleteIDs(t, tbl, 30, 31)
		}},
		{"v1 every partition type", func(t *testing.T, w *testlake.Warehouse) *table.Table { return everyTypeTable(t, w, 1) }},
		{"v2 every partition type", func(t *testing.T, w *testlake.Warehouse) *table.Table { return everyTypeTable(t, w, 2) }},
		{"v3 every partition type", func(t *testing.T, w *testlake.Warehouse) *table.Table { return everyTypeTable(t, w, 3) }},
	}
	var kinds entryKinds
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl := c.make(t, testlake.New(t))
			r := lake.NewManifestReader(0)
			manifests := requireSameEntries(t, tbl, r, &kinds)
			require.Greater(t, manifests, 2)
			require.Zero(t, r.Delegated(), "every manifest is read by floe's reader, none left to iceberg-go's")
			require.Positive(t, r.Parsed())
		})
	}
	// The cases hold every kind of entry the reader must get right.
	require.Positive(t, kinds.deleted)
	require.Positive(t, kinds.existing)
	require.Positive(t, kinds.posDeletes)
	require.Positive(t, kinds.vectors)
	require.Positive(t, kinds.inheritedSeq)
	require.Positive(t, kinds.rowIDs)
	t.Logf("%+v", kinds)
}

// A reader parses each distinct manifest schema once: the manifests of a
// table share one per partition spec and content, and tables of the same
// partition type share theirs.
func TestManifestReaderParsesEachSchemaOnce(t *testing.T) {
	w := testlake.New(t)
	r := lake.NewManifestReader(0)
	var tables []*table.Table
	for i := range 3 {
		tbl := morTable(t, w, fmt.Sprintf("t%d", i), 2, true)
		sc := testlake.ArrowSchema(t, tbl)
		for f := range int64(5) {
			tbl = testlake.Append(t, tbl, batch(t, sc, f*10, f*10+9, "eu", day0))
		}
		tables = append(tables, deleteIDs(t, tbl, 3, 4))
	}
	manifests := 0
	for i, tbl := range tables {
		id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: fmt.Sprintf("t%d", i)}
		st, err := lake.LoadState(context.Background(), id, tbl, lake.LoadOptions{Manifests: r})
		require.NoError(t, err)
		require.Len(t, st.DataFiles, 5)
		require.Len(t, st.DeleteFiles, 1)
		manifests += len(st.Manifests)
	}
	require.Equal(t, 18, manifests)
	// iceberg-go writes data and delete manifests of one partition type
	// with the same Avro schema: one parse for the 18 manifests.
	require.Equal(t, 1, r.Parsed())
}

// withoutDateType rewrites the header of the Avro container data: the
// "date" logical type is taken off the schema's fields, which leaves their
// values plain ints of the same encoding, as some writers write day
// partitions.
func withoutDateType(t *testing.T, data []byte) []byte {
	t.Helper()
	long := func(b []byte) (int64, []byte) {
		v, n := binary.Varint(b)
		require.Positive(t, n)
		return v, b[n:]
	}
	require.Equal(t, "Obj\x01", string(data[:4]))
	rest := data[4:]
	var keys, values [][]byte
	for {
		var n int64
		n, rest = long(rest)
		if n == 0 {
			break
		}
		if n < 0 {
			n = -n
			_, rest = long(rest)
		}
		for range n {
			var kl, vl int64
			kl, rest = long(rest)
			keys, rest = append(keys, rest[:kl]), rest[kl:]
			vl, rest = long(rest)
			values, rest = append(values, rest[:vl]), rest[vl:]
		}
	}
	out := append([]byte("Obj\x01"), binary.AppendVarint(nil, int64(len(keys)))...)
	changed := false
	for i, k := range keys {
		v := values[i]
		if string(k) == "avro.schema" {
			s := strings.ReplaceAll(string(v), `{"logicalType":"date","type":"int"}`, `"int"`)
			changed = s != string(v)
			v = []byte(s)
		}
		out = binary.AppendVarint(out, int64(len(k)))
		out = append(out, k...)
		out = binary.AppendVarint(out, int64(len(v)))
		out = append(out, v...)
	}
	require.True(t, changed, "the schema has a date field")
	out = binary.AppendVarint(out, 0)
	return append(out, rest...) // the sync marker and the blocks
}

// A day partition written as a plain Avro int, without the date logical
// type, is a date all the same: iceberg-go reads it so from the manifest's
// partition spec, and so does floe's reader.
func TestManifestReaderReadsPlainIntDaysAsDates(t *testing.T) {
	w := testlake.New(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	tbl := w.CreateTable(t, "db", "days", schema, &spec, iceberg.Properties{table.PropertyFormatVersion: "2"}, nil)
	tbl = testlake.Append(t, tbl, batch(t, testlake.ArrowSchema(t, tbl), 0, 9, "eu", day0))
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	list, err := tbl.CurrentSnapshot().Manifests(fio)
	require.NoError(t, err)
	require.Len(t, list, 1)
	m := list[0]
	data := withoutDateType(t, w.Read(t, m.FilePath()))
	path := strings.TrimSuffix(m.FilePath(), ".avro") + "-plain-days.avro"
	w.Plant(t, path, data, time.Now())
	plain := iceberg.NewManifestFile(2, path, int64(len(data)), m.PartitionSpecID(), m.SnapshotID()).
		SequenceNum(m.SequenceNum(), m.MinSequenceNum()).Content(m.ManifestContent()).
		AddedFiles(m.AddedDataFiles()).AddedRows(m.AddedRows()).Build()

	var want []iceberg.ManifestEntry
	for e, err := range plain.Entries(fio, true) {
		require.NoError(t, err)
		want = append(want, e)
	}
	r := lake.NewManifestReader(0)
	got, err := r.Entries(fio, plain, tbl.Metadata().PartitionSpecByID(int(m.PartitionSpecID())), true)
	require.NoError(t, err)
	require.Zero(t, r.Delegated())
	require.Len(t, got, 1)
	require.Len(t, want, 1)
	requireSameEntry(t, want[0], got[0], path)
	require.Equal(t, map[int]any{1000: iceberg.Date(day0.Unix() / 86400)}, got[0].DataFile().Partition())
}

// A manifest cut short anywhere is an error to floe's reader exactly when
// it is one to iceberg-go's (a cut right after the header leaves a
// container with no block, which both read as no entry), never a panic.
func TestManifestReaderRefusesTruncatedManifests(t *testing.T) {
	w := testlake.New(t)
	tbl := appendsTo(t, morTable(t, w, "cut", 2, true), 3)
	fio, err := tbl.FS(t.Context())
	require.NoError(t, err)
	list, err := tbl.CurrentSnapshot().Manifests(fio)
	require.NoError(t, err)
	m := list[0]
	spec := tbl.Metadata().PartitionSpecByID(int(m.PartitionSpecID()))
	data := w.Read(t, m.FilePath())
	r := lake.NewManifestReader(0)
	errs := 0
	for cut := 0; cut < len(data); cut += 1 + cut/64 {
		path := fmt.Sprintf("%s-cut%d.avro", strings.TrimSuffix(m.FilePath(), ".avro"), cut)
		w.Plant(t, path, data[:cut], time.Now())
		short := iceberg.NewManifestFile(2, path, int64(cut), m.PartitionSpecID(), m.SnapshotID()).
			SequenceNum(m.SequenceNum(), m.MinSequenceNum()).Content(m.ManifestContent()).Build()
		_, wantErr := iceberg.ReadManifest(short, bytes.NewReader(data[:cut]), true)
		got, err := r.Entries(fio, short, spec, true)
		if wantErr != nil {
			require.Error(t, err, "cut at %d of %d: iceberg-go: %v", cut, len(data), wantErr)
			errs++
			continue
		}
		require.NoError(t, err, "cut at %d of %d", cut, len(data))
		require.Empty(t, got, "cut at %d of %d", cut, len(data))
	}
	require.Greater(t, errs, 50)
}
