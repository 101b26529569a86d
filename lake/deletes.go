package lake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"golang.org/x/sync/errgroup"
)

// DeleteKey names one delete of a table: a position or equality delete
// file by its path, a deletion vector by its Puffin file's path, the data
// file it references and its blob's offset. iceberg-go (as Java Iceberg)
// writes the vectors of every data file one delete touches into one Puffin
// file, each vector its own manifest entry with the same path: counted,
// checked or removed by path, 23 of 24 vectors would go unseen.
type DeleteKey struct {
	Path               string `json:"path"`
	ReferencedDataFile string `json:"referenced_data_file"`
	// ContentOffset is the blob's offset of a deletion vector; -1 for a
	// delete file.
	ContentOffset int64 `json:"offset"`
}

// String renders the key for messages: the path, and for a vector the
// data file it references and its offset.
func (k DeleteKey) String() string {
	if k.ContentOffset < 0 {
		return k.Path
	}
	return fmt.Sprintf("%s (vector of %s at offset %d)", k.Path, k.ReferencedDataFile, k.ContentOffset)
}

// DeleteKey is the key of a delete file or deletion vector f.
func (f *File) DeleteKey() DeleteKey {
	return DeleteKey{Path: f.Path, ReferencedDataFile: f.ReferencedDataFile, ContentOffset: f.ContentOffset}
}

// DeleteIssueKind is what is wrong with a delete.
type DeleteIssueKind string

// Delete issue kinds.
const (
	// DeleteMisfiled is a delete filed under a partition (spec and values)
	// that is not the partition of the data files it deletes from, or that
	// no data file of its spec can have. The spec has readers apply a
	// position delete only to data files of its own partition, so the rows
	// it deletes are visible. iceberg-go v0.7.0 writes such files for a
	// merge-on-read delete on a format-2 table whose partition spec
	// evolved: the files of the old spec get position deletes tagged with
	// the new spec and a null partition.
	DeleteMisfiled DeleteIssueKind = "misfiled"
	// DeleteShadowed is a position delete file that deletes rows of a data
	// file that also has a deletion vector, which lacks those positions.
	// The spec has readers skip position delete files for a data file with
	// a vector (the vector's writer must merge them in), so the rows are
	// visible. iceberg-go v0.7.0 writes such vectors for a merge-on-read
	// delete on a table upgraded from format 2 to 3.
	DeleteShadowed DeleteIssueKind = "shadowed"
)

// DeleteIssue is a delete that readers do not apply as its writer meant:
// the rows it was written to delete are visible. The table's live rows are
// what readers see, so floe leaves the intent where it is: it never removes
// such a delete (the rows it names can still be deleted by hand, or by a
// fixed writer, as long as both it and its data files are there) and never
// rewrites the data files in Targets, whose rows would otherwise move to
// new files that no delete names.
type DeleteIssue struct {
	Kind   DeleteIssueKind `json:"kind"`
	Delete DeleteKey       `json:"delete"`
	// Reason says what is wrong, naming the files.
	Reason string `json:"reason"`
	// Targets are the live data files whose rows it deletes in intent but
	// not in effect; empty when they cannot be told (an equality delete).
	Targets []string `json:"targets,omitempty"`
}

// DeleteIssue returns the issue of the delete named k, or nil.
func (s *State) DeleteIssue(k DeleteKey) *DeleteIssue {
	for i := range s.DeleteIssues {
		if s.DeleteIssues[i].Delete == k {
			return &s.DeleteIssues[i]
		}
	}
	return nil
}

// HeldBack maps each live data file that a [DeleteIssue] names to the
// issue: a rewrite must leave it alone.
func (s *State) HeldBack() map[string]*DeleteIssue {
	out := map[string]*DeleteIssue{}
	for i := range s.DeleteIssues {
		for _, p := range s.DeleteIssues[i].Targets {
			if _, ok := out[p]; !ok {
				out[p] = &s.DeleteIssues[i]
			}
		}
	}
	return out
}

// Position delete files' columns (spec, "Position Delete Files").
const (
	posDeletePathFieldID = 2147483546
	posDeletePosFieldID  = 2147483545
)

// findDeleteIssues finds the [DeleteIssue]s of st. Metadata decides most
// cases; it reads a position delete file only when the spec would apply it
// to no live data file (it is dead, or misfiled: only its content tells),
// or when a deletion vector may shadow it (only the two contents tell), and
// a vector only in the second case.
func findDeleteIssues(ctx context.Context, fio iceio.IO, st *State) ([]DeleteIssue, error) {
	if len(st.DeleteFiles) == 0 {
		return nil, nil
	}
	data := make(map[string]*File, len(st.DataFiles))
	minSeq := map[string]int64{} // per partition key
	for i := range st.DataFiles {
		f := &st.DataFiles[i]
		data[f.Path] = f
		if m, ok := minSeq[f.PartitionKey]; !ok || f.SequenceNumber < m {
			minSeq[f.PartitionKey] = f.SequenceNumber
		}
	}
	vectors := map[string]*File{}      // deletion vector per referenced data file
	withVector := map[string][]*File{} // live data files with a vector, per partition key
	for i := range st.DeleteFiles {
		if d := &st.DeleteFiles[i]; d.DeleteKind == DeletionVector && d.ReferencedDataFile != "" {
			vectors[d.ReferencedDataFile] = d
			if f := data[d.ReferencedDataFile]; f != nil {
				withVector[f.PartitionKey] = append(withVector[f.PartitionKey], f)
			}
		}
	}
	schema := st.Metadata.CurrentSchema()

	var issues []DeleteIssue
	type pending struct {
		d *File
		// shadowed are the data files with a vector whose rows d may
		// delete; dead is whether d applies to no live data file.
		shadowed []*File
		dead     bool
	}
	var reads []pending
	for i := range st.DeleteFiles {
		d := &st.DeleteFiles[i]
		if d.DeleteKind == EqualityDeletes {
			// Which rows it was meant for cannot be told: it is reported
			// and kept, and holds no data file back.
			if why := impossiblePartition(st, schema, d); why != "" {
				issues = append(issues, DeleteIssue{Kind: DeleteMisfiled, Delete: d.DeleteKey(),
					Reason: fmt.Sprintf("equality delete %s is filed under %s, which %s", d.Path, partitionName(d), why)})
			}
			continue
		}
		if d.ReferencedDataFile != "" {
			// A vector or file-scoped position delete: its data file is
			// named in the metadata.
			f := data[d.ReferencedDataFile]
			if f != nil && f.PartitionKey != d.PartitionKey {
				issues = append(issues, DeleteIssue{Kind: DeleteMisfiled, Delete: d.DeleteKey(), Targets: []string{f.Path},
					Reason: fmt.Sprintf("%s %s is filed under %s, its data file %s under %s", d.DeleteKind, d.DeleteKey(), partitionName(d), f.Path, partitionName(f))})
				continue
			}
			if d.DeleteKind == DeletionVector || f == nil || vectors[f.Path] == nil {
				continue
			}
		}
		p := pending{d: d}
		if m, ok := minSeq[d.PartitionKey]; !ok || m > d.SequenceNumber {
			p.dead = true
		}
		if !p.dead {
			for _, f := range withVector[d.PartitionKey] {
				// d applies to f but for the vector, which readers
				// take instead, whichever was written first.
				if f.SequenceNumber <= d.SequenceNumber && (d.ReferencedDataFile == "" || d.ReferencedDataFile == f.Path) && mayName(d, f.Path) {
					p.shadowed = append(p.shadowed, f)
				}
			}
		}
		if p.dead || len(p.shadowed) > 0 {
			reads = append(reads, p)
		}
	}
	if len(reads) == 0 {
		return issues, nil
	}
	found := make([][]DeleteIssue, len(reads))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, p := range reads {
		g.Go(func() error {
			named, err := ReadPositionDeletes(gctx, fio, p.d.Path)
			if err != nil {
				return fmt.Errorf("read position delete file %s: %w", p.d.Path, err)
			}
			if p.dead {
				var targets []string
				for path := range named {
					if data[path] != nil {
						targets = append(targets, path)
					}
				}
				if len(targets) == 0 {
					return nil // dead indeed
				}
				slices.Sort(targets)
				found[i] = append(found[i], DeleteIssue{Kind: DeleteMisfiled, Delete: p.d.DeleteKey(), Targets: targets,
					Reason: fmt.Sprintf("position delete file %s is filed under %s, but deletes rows of %d data files of other partitions (%s under %s)",
						p.d.Path, partitionName(p.d), len(targets), targets[0], partitionName(data[targets[0]]))})
				return nil
			}
			for _, f := range p.shadowed {
				pos := named[f.Path]
				if len(pos) == 0 {
					continue
				}
				v := vectors[f.Path]
				bm, err := dv.ReadDV(fio, v.DataFile)
				if err != nil {
					return fmt.Errorf("read deletion vector %s: %w", v.DeleteKey(), err)
				}
				missing := 0
				for _, n := range pos {
					if n < 0 || !bm.Contains(uint64(n)) {
						missing++
					}
				}
				if missing == 0 {
					continue
				}
				found[i] = append(found[i], DeleteIssue{Kind: DeleteShadowed, Delete: p.d.DeleteKey(), Targets: []string{f.Path},
					Reason: fmt.Sprintf("position delete file %s deletes %d rows of %s that its deletion vector %s lacks; readers skip position deletes of a file with a vector",
						p.d.Path, missing, f.Path, v.DeleteKey())})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("check delete files: %w", err)
	}
	for _, f := range found {
		issues = append(issues, f...)
	}
	return issues, nil
}

// impossiblePartition says why no data file of d's spec can have d's
// partition values ("" when one can): an unknown spec, a field the spec
// does not have, or a null value where the field's source column is
// required and its transform maps every value to a non-null one.
func impossiblePartition(st *State, schema *iceberg.Schema, d *File) string {
	spec := st.Metadata.PartitionSpecByID(int(d.SpecID))
	if spec == nil {
		return fmt.Sprintf("is of partition spec %d, which the table does not have", d.SpecID)
	}
	fields := map[int]bool{}
	for _, pf := range spec.Fields() {
		fields[pf.FieldID] = true
		switch pf.Transform.(type) {
		case iceberg.VoidTransform, iceberg.UnknownTransform:
			continue
		}
		if v, ok := d.Partition[pf.FieldID]; ok && v != nil {
			continue
		}
		if len(pf.SourceIDs) != 1 {
			continue
		}
		if src, ok := schema.FindFieldByID(pf.SourceIDs[0]); ok && src.Required {
			return fmt.Sprintf("no data file of spec %d can have: %s is null, and column %s is required", d.SpecID, pf.Name, src.Name)
		}
	}
	for id := range d.Partition {
		if !fields[id] {
			return fmt.Sprintf("no data file of spec %d can have: partition field %d is not in the spec", d.SpecID, id)
		}
	}
	return ""
}

// mayName reports whether position delete file d may name data file path,
// from its file_path bounds: they can only rule a file out (a writer may
// truncate them, as iceberg-go does to 16 characters).
func mayName(d *File, path string) bool {
	df := d.DataFile
	if df == nil {
		return true
	}
	lo, hi := df.LowerBoundValues()[posDeletePathFieldID], df.UpperBoundValues()[posDeletePathFieldID]
	if lo != nil && path < string(lo) {
		return false
	}
	if hi != nil && path > string(hi) && !strings.HasPrefix(path, string(hi)) {
		return false
	}
	return true
}

// partitionName is how messages name f's partition.
func partitionName(f *File) string {
	if f.PartitionKey == "" {
		return "the unpartitioned spec"
	}
	return "partition " + f.PartitionKey
}

// ReadPositionDeletes reads a position delete file (Parquet, columns
// file_path and pos) and returns the positions it deletes per data file.
func ReadPositionDeletes(ctx context.Context, fio iceio.IO, path string) (map[string][]int64, error) {
	f, err := fio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	sch := rdr.MetaData().Schema
	pathCol, posCol := -1, -1
	for i := range sch.NumColumns() {
		c := sch.Column(i)
		switch id := c.SchemaNode().FieldID(); {
		case id == posDeletePathFieldID || (id <= 0 && c.Name() == "file_path"):
			pathCol = i
		case id == posDeletePosFieldID || (id <= 0 && c.Name() == "pos"):
			posCol = i
		}
	}
	if pathCol < 0 || posCol < 0 {
		return nil, fmt.Errorf("no file_path and pos columns: not a position delete file")
	}
	rr, err := fr.GetRecordReader(ctx, []int{pathCol, posCol}, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	out := map[string][]int64{}
	for rr.Next() {
		rec := rr.RecordBatch()
		paths, pos := rec.Column(0), rec.Column(1)
		p64, ok := pos.(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("pos column is %s, not int64", pos.DataType())
		}
		for i := range int(rec.NumRows()) {
			if paths.IsNull(i) || p64.IsNull(i) {
				continue
			}
			s, err := stringAt(paths, i)
			if err != nil {
				return nil, err
			}
			out[s] = append(out[s], p64.Value(i))
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func stringAt(a arrow.Array, i int) (string, error) {
	switch s := a.(type) {
	case *array.String:
		return s.Value(i), nil
	case *array.LargeString:
		return s.Value(i), nil
	case *array.Binary:
		return string(s.Value(i)), nil
	}
	return "", fmt.Errorf("file_path column is %s, not a string", a.DataType())
}
