package lake

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// DeleteKind is the kind of a delete file.
type DeleteKind string

// Delete file kinds.
const (
	PositionDeletes DeleteKind = "position"
	EqualityDeletes DeleteKind = "equality"
	// DeletionVector is a v3 Puffin deletion vector (a position delete
	// stored in a Puffin blob, referencing one data file).
	DeletionVector DeleteKind = "deletion-vector"
)

// File is one live data or delete file of the current snapshot, with the
// statistics its manifest entry carries. Bounds are decoded with the
// current schema's types; columns without stats are absent from the maps.
type File struct {
	Path      string
	Format    iceberg.FileFormat
	SizeBytes int64
	Records   int64
	SpecID    int32
	// Partition maps partition field id to the partition value.
	Partition map[int]any
	// PartitionKey is a printable, comparable key of SpecID and the
	// partition values, such as "ts_day=2026-11-01"; "" when unpartitioned.
	PartitionKey string
	Lower        map[int]iceberg.Literal
	Upper        map[int]iceberg.Literal
	NullCounts   map[int]int64
	ValueCounts  map[int]int64
	SortOrderID  *int
	// SequenceNumber is the data sequence number of the entry.
	SequenceNumber int64
	// SnapshotID is the snapshot that added the file.
	SnapshotID int64
	// DeleteKind is set for delete files only.
	DeleteKind DeleteKind
	// ReferencedDataFile is the one data file a deletion vector or
	// file-scoped position delete applies to, when known.
	ReferencedDataFile string
	// ContentOffset and ContentSizeBytes locate a deletion vector's blob
	// in its Puffin file; -1 for every other file. One Puffin file holds
	// the vectors of many data files, each its own manifest entry with the
	// file's path: a delete is named by its [DeleteKey], never by its path.
	ContentOffset    int64
	ContentSizeBytes int64
	// DataFile is iceberg-go's own value, for callers that commit changes.
	DataFile iceberg.DataFile
}

// Manifest is one manifest of the current snapshot.
type Manifest struct {
	Path        string
	LengthBytes int64
	SpecID      int32
	Content     iceberg.ManifestContent
	// AddedSnapshotID is the snapshot that wrote the manifest.
	AddedSnapshotID int64
	// LiveEntries counts added and existing entries (what a planner reads
	// and keeps), from the manifest's own entries.
	LiveEntries int
}

// Snapshot is one snapshot in the table's metadata.
type Snapshot struct {
	ID        int64
	ParentID  *int64
	Timestamp time.Time
	Operation string
	Summary   map[string]string
}

// Partition aggregates the live files of one partition.
type Partition struct {
	Key       string
	SpecID    int32
	DataFiles int
	Records   int64
	SizeBytes int64
	// DeleteFiles counts the partition's deletes: position and equality
	// delete files, and deletion vectors one each (a Puffin file holding
	// the vectors of 24 data files counts 24).
	DeleteFiles int
}

// State is what one table is made of at its current snapshot.
type State struct {
	Ident    Ident
	Table    *table.Table
	Metadata table.Metadata
	// Current is nil for a table with no snapshot.
	Current   *table.Snapshot
	DataFiles []File
	// DeleteFiles holds one entry per delete: a position or equality
	// delete file, or one deletion vector (several may share a Puffin
	// file's path; see [File.DeleteKey]).
	DeleteFiles []File
	// DeleteIssues are the deletes readers do not apply as their writer
	// meant them to (see [DeleteIssue]): floe keeps them and leaves the
	// data files they name alone.
	DeleteIssues []DeleteIssue
	Manifests    []Manifest
	Snapshots    []Snapshot
	Partitions   []Partition
	// Refs maps branch and tag names to snapshot ids.
	Refs map[string]int64
}

// LoadOptions tune [LoadState].
type LoadOptions struct {
	// Concurrency is the number of manifests read at once. Default:
	// 4 × GOMAXPROCS (manifest reads are IO-bound on object stores).
	Concurrency int
	// SkipBounds leaves File.Lower/Upper empty, for callers that need
	// counts and sizes only. Default: bounds are decoded.
	SkipBounds bool
	// Manifests reads the manifests, parsing each distinct manifest schema
	// once; a reader shared by the loads of many tables parses the schema
	// their manifests share once for all. Default: a reader for this load
	// alone.
	Manifests *ManifestReader
}

// LoadState reads the current snapshot of tbl: every manifest once, in
// parallel, and every live entry of each. It then looks for delete issues
// (see [DeleteIssue]), which reads the few delete files that may have one:
// a position delete file that applies to no live data file, and, on a table
// with deletion vectors, a position delete file that a vector may shadow.
func LoadState(ctx context.Context, id Ident, tbl *table.Table, opts LoadOptions) (*State, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4 * runtime.GOMAXPROCS(0)
	}
	if opts.Manifests == nil {
		opts.Manifests = NewManifestReader(0)
	}
	md := tbl.Metadata()
	st := &State{Ident: canonical(id, tbl), Table: tbl, Metadata: md, Current: md.CurrentSnapshot(), Refs: map[string]int64{}}
	for name, ref := range md.Refs() {
		st.Refs[name] = ref.SnapshotID
	}
	for _, s := range md.Snapshots() {
		snap := Snapshot{ID: s.SnapshotID, ParentID: s.ParentSnapshotID, Timestamp: time.UnixMilli(s.TimestampMs).UTC()}
		if s.Summary != nil {
			snap.Operation = string(s.Summary.Operation)
			snap.Summary = map[string]string(s.Summary.Properties)
		}
		st.Snapshots = append(st.Snapshots, snap)
	}
	sort.Slice(st.Snapshots, func(i, j int) bool { return st.Snapshots[i].Timestamp.Before(st.Snapshots[j].Timestamp) })
	if st.Current == nil {
		return st, nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("load state of %s: open table io: %w", id, err)
	}
	manifests, err := st.Current.Manifests(fio)
	if err != nil {
		return nil, fmt.Errorf("load state of %s: read manifest list: %w", id, err)
	}
	schema := md.CurrentSchema()
	results := make([][]File, len(manifests))
	st.Manifests = make([]Manifest, len(manifests))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, m := range manifests {
		st.Manifests[i] = Manifest{
			Path: m.FilePath(), LengthBytes: m.Length(), SpecID: m.PartitionSpecID(),
			Content: m.ManifestContent(), AddedSnapshotID: m.SnapshotID(),
		}
		g.Go(func() error {
			files, err := readManifest(gctx, fio, m, md, schema, opts)
			if err != nil {
				return fmt.Errorf("load state of %s: manifest %s: %w", id, m.FilePath(), err)
			}
			results[i] = files
			st.Manifests[i].LiveEntries = len(files)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	seenData := map[string]bool{}
	seenDeletes := map[DeleteKey]bool{}
	for _, files := range results {
		for _, f := range files {
			// A data file or delete listed twice (a manifest-rewrite race,
			// a duplicated add) is one to every reader; count it once. A
			// Puffin file's vectors share its path and are as many
			// deletes as it holds.
			if f.DeleteKind == "" {
				if !seenData[f.Path] {
					seenData[f.Path] = true
					st.DataFiles = append(st.DataFiles, f)
				}
				continue
			}
			if k := f.DeleteKey(); !seenDeletes[k] {
				seenDeletes[k] = true
				st.DeleteFiles = append(st.DeleteFiles, f)
			}
		}
	}
	st.Partitions = partitions(st.DataFiles, st.DeleteFiles)
	issues, err := findDeleteIssues(ctx, fio, st)
	if err != nil {
		return nil, fmt.Errorf("load state of %s: %w", id, err)
	}
	st.DeleteIssues = issues
	return st, nil
}

func readManifest(ctx context.Context, fio iceio.IO, m iceberg.ManifestFile, md table.Metadata, schema *iceberg.Schema, opts LoadOptions) ([]File, error) {
	entries, err := opts.Manifests.Entries(fio, m, md.PartitionSpecByID(int(m.PartitionSpecID())), true)
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(entries))
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, NewFile(e.DataFile(), e.SequenceNum(), e.SnapshotID(), md, schema, opts.SkipBounds))
	}
	return out, nil
}

// ScanTasks lists the tasks of scan, a scan of s.Table, one per live data
// file of s. A table without delete files needs nothing of iceberg-go's
// planner, which would read every manifest again for the files s already
// lists (0.7 s for bench/plan's 2,400 single-file manifests, timed alone:
// its Avro decoder compiles each manifest's schema anew): each file becomes
// the task the planner makes of it, the whole file with its row-lineage
// constants. With delete files, or a scan of another snapshot than s's, the
// planner runs, so that every task carries the deletes that apply to it. The
// scan must have no row filter: every file is listed.
func (s *State) ScanTasks(ctx context.Context, scan *table.Scan) ([]table.FileScanTask, error) {
	snap := scan.Snapshot()
	if len(s.DeleteFiles) > 0 || s.Current == nil || snap == nil || snap.SnapshotID != s.Current.SnapshotID {
		return scan.PlanFiles(ctx)
	}
	tasks := make([]table.FileScanTask, 0, len(s.DataFiles))
	for i := range s.DataFiles {
		f := &s.DataFiles[i]
		if f.DataFile == nil {
			return scan.PlanFiles(ctx)
		}
		t := table.FileScanTask{File: f.DataFile, Length: f.DataFile.FileSizeBytes(), FirstRowID: f.DataFile.FirstRowID()}
		if seq := f.SequenceNumber; seq >= 0 {
			t.DataSequenceNumber = &seq
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// NewFile describes one data or delete file of a table with metadata md and
// schema schema (md's current one, for the bounds' types), as [LoadState]
// lists it: seq and snapshotID are its manifest entry's data sequence number
// and snapshot. Bounds are decoded unless skipBounds. It serves callers that
// hold files not yet committed, such as a rewrite's output.
func NewFile(df iceberg.DataFile, seq, snapshotID int64, md table.Metadata, schema *iceberg.Schema, skipBounds bool) File {
	f := File{
		Path: df.FilePath(), Format: df.FileFormat(), SizeBytes: df.FileSizeBytes(), Records: df.Count(),
		SpecID: df.SpecID(), Partition: df.Partition(), NullCounts: df.NullValueCounts(),
		ValueCounts: df.ValueCounts(), SortOrderID: df.SortOrderID(), SequenceNumber: seq,
		SnapshotID: snapshotID, DataFile: df, ContentOffset: -1, ContentSizeBytes: -1,
	}
	switch df.ContentType() {
	case iceberg.EntryContentPosDeletes:
		f.DeleteKind = PositionDeletes
		if df.FileFormat() == iceberg.PuffinFile {
			f.DeleteKind = DeletionVector
			if o, n := df.ContentOffset(), df.ContentSizeInBytes(); o != nil && n != nil {
				f.ContentOffset, f.ContentSizeBytes = *o, *n
			}
		}
		if r := df.ReferencedDataFile(); r != nil {
			f.ReferencedDataFile = *r
		}
	case iceberg.EntryContentEqDeletes:
		f.DeleteKind = EqualityDeletes
	}
	f.PartitionKey = partitionKey(md.PartitionSpecByID(int(f.SpecID)), schema, f.SpecID, f.Partition)
	if !skipBounds && f.DeleteKind == "" {
		f.Lower = decodeBounds(schema, df.LowerBoundValues())
		f.Upper = decodeBounds(schema, df.UpperBoundValues())
	}
	return f
}

// decodeBounds decodes single-value serialized bounds with the schema's
// types. Bounds of columns no longer in the schema, of nested types, or that
// fail to decode are left out: a missing bound means "unknown" to every
// caller, which is always safe.
func decodeBounds(schema *iceberg.Schema, raw map[int][]byte) map[int]iceberg.Literal {
	if len(raw) == 0 {
		return nil
	}
	out := make(map[int]iceberg.Literal, len(raw))
	for id, b := range raw {
		typ, ok := schema.FindTypeByID(id)
		if !ok {
			continue
		}
		if _, prim := typ.(iceberg.PrimitiveType); !prim {
			continue
		}
		lit, err := iceberg.LiteralFromBytes(typ, b)
		if err != nil {
			continue
		}
		out[id] = lit
	}
	return out
}

func partitionKey(spec *iceberg.PartitionSpec, schema *iceberg.Schema, specID int32, values map[int]any) string {
	if spec == nil || spec.NumFields() == 0 {
		if specID != 0 {
			return fmt.Sprintf("spec=%d", specID)
		}
		return ""
	}
	parts := make([]string, 0, spec.NumFields()+1)
	for _, f := range spec.Fields() {
		v, ok := values[f.FieldID]
		s := "null"
		if ok && v != nil {
			s = fmt.Sprint(v)
			if len(f.SourceIDs) == 1 {
				if typ, ok := schema.FindTypeByID(f.SourceIDs[0]); ok {
					s = f.Transform.ToHumanStrType(typ, v)
				}
			}
		}
		parts = append(parts, f.Name+"="+s)
	}
	key := strings.Join(parts, "/")
	if specID != 0 {
		key = fmt.Sprintf("spec=%d/%s", specID, key)
	}
	return key
}

func partitions(data, deletes []File) []Partition {
	byKey := map[string]*Partition{}
	get := func(f File) *Partition {
		p := byKey[f.PartitionKey]
		if p == nil {
			p = &Partition{Key: f.PartitionKey, SpecID: f.SpecID}
			byKey[f.PartitionKey] = p
		}
		return p
	}
	for _, f := range data {
		p := get(f)
		p.DataFiles++
		p.Records += f.Records
		p.SizeBytes += f.SizeBytes
	}
	for _, f := range deletes {
		get(f).DeleteFiles++
	}
	out := make([]Partition, 0, len(byKey))
	for _, p := range byKey {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Partition) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// FieldID returns the id of a column of the current schema, matched
// case-insensitively; dotted names reach nested fields.
func (s *State) FieldID(column string) (int, string, bool) {
	schema := s.Metadata.CurrentSchema()
	f, ok := schema.FindFieldByNameCaseInsensitive(column)
	if !ok {
		return 0, "", false
	}
	name, _ := schema.FindColumnName(f.ID)
	return f.ID, name, true
}

// PropRewriteTargetFileSize is the table property in which a floe rewrite
// records the target file size it wrote to, in the same commit as the files:
// health and the next compaction judge the files against the size they were
// written for, rather than flagging every file of a table rewritten to a
// smaller target as small. floe records its own property instead of
// changing write.target-file-size-bytes, which Spark, Trino and Flink
// writers use for their own writes.
const PropRewriteTargetFileSize = "floe.rewrite.target-file-size-bytes"

// TargetFileSizeBytes is the target size the table's files are judged
// against: the size floe's last rewrite wrote to
// ([PropRewriteTargetFileSize]), else the table's
// write.target-file-size-bytes, else def (unset or unparseable values are
// skipped).
func (s *State) TargetFileSizeBytes(def int64) int64 {
	props := s.Metadata.Properties()
	for _, key := range []string{PropRewriteTargetFileSize, "write.target-file-size-bytes"} {
		var n int64
		if _, err := fmt.Sscan(props.Get(key, ""), &n); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// canonical is id spelled as the catalog spells tbl's name, when the two
// differ only in case ([LoadTable] finds a table so): runs, plans and
// reports then name the table as the catalog does.
func canonical(id Ident, tbl *table.Table) Ident {
	ti := tbl.Identifier()
	if len(ti) != len(id.Namespace)+1 {
		return id
	}
	for i, p := range ti[:len(ti)-1] {
		if !strings.EqualFold(p, id.Namespace[i]) {
			return id
		}
	}
	if !strings.EqualFold(ti[len(ti)-1], id.Name) {
		return id
	}
	id.Namespace = slices.Clone(ti[:len(ti)-1])
	id.Name = ti[len(ti)-1]
	return id
}
