package oracle

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
)

// Position delete files' columns (spec, "Position Delete Files").
const (
	posDeletePathFieldID = 2147483546
	posDeletePosFieldID  = 2147483545
)

// LivePlan is the current snapshot of a table as the spec has a reader
// apply its deletes, planned by [PlanLive]: for every live data file, the
// row positions its deletion vector or position delete files delete and the
// equality delete files that apply to it.
type LivePlan struct {
	Files []LiveFile
}

// LiveFile is one live data file and the deletes that apply to it.
type LiveFile struct {
	Path string
	// Deleted are the positions deleted by the file's deletion vector, or,
	// when it has none, by the position delete files that apply to it.
	Deleted map[int64]bool
	// Equality are the equality delete files that apply to it.
	Equality []iceberg.DataFile
}

// PlanLive plans tbl's current snapshot by the spec's rules ("Scan
// Planning"), here and not by iceberg-go's planner; only the manifests are
// decoded by iceberg-go. A deletion vector applies to the data file it
// references; a data file with a vector takes no position delete file; a
// position delete file applies to the rows it lists of a data file of its
// partition (spec and values) whose data sequence number is not above its
// own; an equality delete file to the data files of its partition (any
// partition for an unpartitioned spec) with a data sequence number below its
// own. Vectors are decoded by iceberg-go's dv package (the blob format), the
// position delete files read here with arrow-go's Parquet reader.
func PlanLive(ctx context.Context, tbl *table.Table) (LivePlan, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return LivePlan{}, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return LivePlan{}, err
	}
	manifests, err := snap.Manifests(fio)
	if err != nil {
		return LivePlan{}, fmt.Errorf("manifest list of %s: %w", tbl.Location(), err)
	}
	type entry struct {
		df  iceberg.DataFile
		seq int64
	}
	var data, posDeletes, eqDeletes []entry
	vectors := map[string][]iceberg.DataFile{}
	for _, m := range manifests {
		for e, err := range m.Entries(fio, true) {
			if err != nil {
				return LivePlan{}, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
			}
			df := e.DataFile()
			en := entry{df, e.SequenceNum()}
			switch {
			case df.ContentType() == iceberg.EntryContentData:
				data = append(data, en)
			case df.ContentType() == iceberg.EntryContentEqDeletes:
				eqDeletes = append(eqDeletes, en)
			case df.FileFormat() == iceberg.PuffinFile:
				ref := df.ReferencedDataFile()
				if ref == nil {
					return LivePlan{}, fmt.Errorf("deletion vector in %s names no data file", df.FilePath())
				}
				vectors[*ref] = append(vectors[*ref], df)
			default:
				posDeletes = append(posDeletes, en)
			}
		}
	}
	posRead := map[string]map[string][]int64{}
	readPos := func(p string) (map[string][]int64, error) {
		if m, ok := posRead[p]; ok {
			return m, nil
		}
		m, err := readPositionDeletes(ctx, fio, p)
		if err != nil {
			return nil, fmt.Errorf("position delete file %s: %w", p, err)
		}
		posRead[p] = m
		return m, nil
	}
	unpartitioned := func(specID int32) bool {
		spec := tbl.Metadata().PartitionSpecByID(int(specID))
		return spec == nil || spec.IsUnpartitioned()
	}
	var plan LivePlan
	for _, d := range data {
		lf := LiveFile{Path: d.df.FilePath(), Deleted: map[int64]bool{}}
		switch vs := vectors[lf.Path]; len(vs) {
		case 0:
			for _, p := range posDeletes {
				if !samePartition(p.df, d.df) || d.seq > p.seq {
					continue
				}
				if r := p.df.ReferencedDataFile(); r != nil && *r != lf.Path {
					continue
				}
				rows, err := readPos(p.df.FilePath())
				if err != nil {
					return LivePlan{}, err
				}
				for _, n := range rows[lf.Path] {
					lf.Deleted[n] = true
				}
			}
		case 1:
			bm, err := dv.ReadDV(fio, vs[0])
			if err != nil {
				return LivePlan{}, fmt.Errorf("deletion vector of %s: %w", lf.Path, err)
			}
			for n := range bm.Positions() {
				lf.Deleted[int64(n)] = true
			}
		default:
			return LivePlan{}, fmt.Errorf("data file %s has %d deletion vectors, the spec allows one", lf.Path, len(vs))
		}
		for _, e := range eqDeletes {
			if d.seq < e.seq && (unpartitioned(e.df.SpecID()) || samePartition(e.df, d.df)) {
				lf.Equality = append(lf.Equality, e.df)
			}
		}
		plan.Files = append(plan.Files, lf)
	}
	return plan, nil
}

// samePartition reports whether two files have the same spec and partition
// values.
func samePartition(a, b iceberg.DataFile) bool {
	return a.SpecID() == b.SpecID() && partitionText(a.Partition()) == partitionText(b.Partition())
}

func partitionText(p map[int]any) string {
	ids := make([]int, 0, len(p))
	for id := range p {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%d=%v;", id, p[id])
	}
	return b.String()
}

// ChecksumApplied digests the live rows of tbl's current snapshot over the
// current schema's columns, with every delete applied here ([PlanLive])
// rather than by iceberg-go's scan: each data file is read with arrow-go's
// Parquet reader, its columns matched by field id (a column the file lacks
// reads as null), and a row is left out when its position is deleted or an
// equality delete that applies to the file holds its values. Rows hash as
// [ChecksumIceberg] hashes them, so the two sums of one table are equal
// when iceberg-go reads the same rows with the same Arrow types; the current
// schema must be flat.
func ChecksumApplied(ctx context.Context, tbl *table.Table) (Sum, error) {
	var s Sum
	plan, err := PlanLive(ctx, tbl)
	if err != nil {
		return s, fmt.Errorf("plan %s: %w", tbl.Location(), err)
	}
	if len(plan.Files) == 0 {
		return s, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return s, err
	}
	schema := tbl.Schema()
	ids := make([]int, 0, schema.NumFields())
	for _, f := range schema.Fields() {
		if _, nested := f.Type.(iceberg.NestedType); nested {
			return s, fmt.Errorf("column %s is nested: only flat schemas are read", f.Name)
		}
		ids = append(ids, f.ID)
	}
	eqSets := map[string]map[string]bool{} // per equality delete file: its rows' keys
	buf := make([]byte, 0, 256)
	for _, lf := range plan.Files {
		cols, n, release, err := readColumns(ctx, fio, lf.Path, ids)
		if err != nil {
			return s, fmt.Errorf("data file %s: %w", lf.Path, err)
		}
		var eqs []eqFilter
		for _, e := range lf.Equality {
			set, ok := eqSets[e.FilePath()]
			if !ok {
				if set, err = readEqualityDeletes(ctx, fio, e); err != nil {
					release()
					return s, fmt.Errorf("equality delete file %s: %w", e.FilePath(), err)
				}
				eqSets[e.FilePath()] = set
			}
			eqs = append(eqs, eqFilter{fieldIDs: e.EqualityFieldIDs(), keys: set})
		}
		for row := range n {
			if lf.Deleted[row] || equalityDeleted(eqs, ids, cols, int(row)) {
				continue
			}
			buf = buf[:0]
			for _, c := range cols {
				buf = appendCell(buf, c, int(row))
			}
			h := fnv.New64a()
			_, _ = h.Write(buf) // hash.Hash never fails
			v := mix(h.Sum64())
			s.Rows++
			s.Sum += v
			s.Xor ^= v
		}
		release()
	}
	return s, nil
}

// appendCell is appendValue, with a missing column (nil) as null.
func appendCell(dst []byte, c arrow.Array, row int) []byte {
	if c == nil {
		return append(dst, 0)
	}
	return appendValue(dst, c, row)
}

type eqFilter struct {
	fieldIDs []int
	keys     map[string]bool
}

// equalityDeleted reports whether an equality delete holds the row's values
// of its equality columns (nulls equal to nulls, as the spec has it).
func equalityDeleted(eqs []eqFilter, ids []int, cols []arrow.Array, row int) bool {
	for _, e := range eqs {
		var key []byte
		for _, id := range e.fieldIDs {
			i := slices.Index(ids, id)
			if i < 0 {
				key = append(key, 0)
				continue
			}
			key = appendCell(key, cols[i], row)
		}
		if e.keys[string(key)] {
			return true
		}
	}
	return false
}

// readEqualityDeletes returns the keys (appendValue of the equality columns,
// in the file's equality_ids order) of every row of an equality delete file.
func readEqualityDeletes(ctx context.Context, fio iceio.IO, df iceberg.DataFile) (map[string]bool, error) {
	ids := df.EqualityFieldIDs()
	if len(ids) == 0 {
		return nil, fmt.Errorf("no equality_ids")
	}
	cols, n, release, err := readColumns(ctx, fio, df.FilePath(), ids)
	if err != nil {
		return nil, err
	}
	defer release()
	out := make(map[string]bool, n)
	for row := range n {
		var key []byte
		for _, c := range cols {
			key = appendCell(key, c, int(row))
		}
		out[string(key)] = true
	}
	return out, nil
}

// readColumns reads the top-level columns of the Parquet file at path with
// the given field ids, in that order (nil for a column the file lacks), as
// single arrays, and the file's row count.
func readColumns(ctx context.Context, fio iceio.IO, path string, ids []int) ([]arrow.Array, int64, func(), error) {
	f, err := fio.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, 0, nil, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, 0, nil, err
	}
	sch, err := fr.Schema()
	if err != nil {
		return nil, 0, nil, err
	}
	at, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	defer at.Release()
	byID := map[int]int{}
	for i, fld := range sch.Fields() {
		if v, ok := fld.Metadata.GetValue("PARQUET:field_id"); ok {
			if id, err := strconv.Atoi(v); err == nil {
				byID[id] = i
			}
		}
	}
	cols := make([]arrow.Array, len(ids))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for j, id := range ids {
		i, ok := byID[id]
		if !ok {
			continue
		}
		chunks := at.Column(i).Data().Chunks()
		if len(chunks) == 1 {
			chunks[0].Retain()
			cols[j] = chunks[0]
			continue
		}
		c, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			release()
			return nil, 0, nil, err
		}
		cols[j] = c
	}
	return cols, at.NumRows(), release, nil
}

// readPositionDeletes reads a position delete file: the positions it
// deletes per data file path.
func readPositionDeletes(ctx context.Context, fio iceio.IO, path string) (map[string][]int64, error) {
	cols, n, release, err := readColumns(ctx, fio, path, []int{posDeletePathFieldID, posDeletePosFieldID})
	if err != nil {
		return nil, err
	}
	defer release()
	if cols[0] == nil || cols[1] == nil {
		return nil, fmt.Errorf("no file_path and pos columns (field ids %d, %d)", posDeletePathFieldID, posDeletePosFieldID)
	}
	pos, ok := cols[1].(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("pos is %s, not int64", cols[1].DataType())
	}
	out := map[string][]int64{}
	for row := range int(n) {
		var p string
		switch a := cols[0].(type) {
		case *array.String:
			p = a.Value(row)
		case *array.LargeString:
			p = a.Value(row)
		default:
			return nil, fmt.Errorf("file_path is %s, not a string", cols[0].DataType())
		}
		out[p] = append(out[p], pos.Value(row))
	}
	return out, nil
}
