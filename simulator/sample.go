package simulator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/internal/sample"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// SampleOptions tunes [TakeSample]; the zero value uses the defaults. They
// are the options of the sampler the rewriter's quantile fit uses too
// (internal/sample), so that both sample the same rows.
type SampleOptions = sample.Options

// DefaultSampleOptions returns the defaults of [SampleOptions].
func DefaultSampleOptions() SampleOptions {
	return sample.DefaultOptions()
}

// Sample is a seeded sample of rows of a table's live data (deletes applied), holding only
// the columns a workload filters on and a layout orders by. Records are in arrival order:
// source files in data-sequence order, rows in file order.
type Sample struct {
	// Schema is the Iceberg schema of the table the sample was taken from.
	Schema *iceberg.Schema
	// Records hold the sampled rows; release them with [Sample.Release].
	Records []arrow.RecordBatch
	// Rows is the number of sampled rows.
	Rows int
	// Fraction is the expected share of the table's rows in the sample (1 when every row
	// was read).
	Fraction float64
	// TableRows and TableBytes are the table's live data rows (before deletes) and bytes.
	TableRows, TableBytes int64
	// FilesBefore is the number of live data files.
	FilesBefore int
	// Partitions are the partition keys rows belong to (their source file's), and
	// PartitionRows/PartitionBytes those partitions' rows and bytes in the table.
	Partitions                    []string
	PartitionRows, PartitionBytes []int64
	// PartitionFiles are the live data files of each partition, and
	// PartitionSampledRows the sampled rows of each.
	PartitionFiles, PartitionSampledRows []int
	// rowPart is the partition index of every sampled row, in record order, and
	// rowFile the index in files of the file it was read from.
	rowPart, rowFile []int32
	// files are the table's live data files in data-sequence order, partFiles the
	// indexes of each partition's files among them (in that order), and
	// partDeletes each partition's delete files: binpack is projected from them.
	files       []lake.File
	partFiles   [][]int
	partDeletes []int
	// wholeParts marks partitions whose every file was read (the bootstrap then
	// resamples rows, not files).
	wholeParts []bool
	// md is the table's metadata, for the partition view of projected files.
	md table.Metadata
	// columnBytes are the compressed bytes of each column (by field id) over the live
	// data files that report column sizes, and sizedBytes those files' bytes.
	columnBytes map[int]int64
	sizedBytes  int64
	sizedFiles  int
	// fileOverhead is the bytes each file takes beyond its rows (see fileOverhead).
	fileOverhead float64
	// rowGroupFooter is the footer bytes a row group of today's files adds,
	// inRowGroups the row groups today's files hold (see rowGroupShare).
	rowGroupFooter, inRowGroups float64
	// concat holds the sampled columns concatenated for the size model (see
	// concatColumns), built once.
	concatOnce sync.Once
	concat     []arrow.Array
	concatErr  error
	// coded holds each concatenated column in the size model's form (see
	// codedColumn), built on first use.
	coded []codedState
	// curPerm is the sample's rows in today's order (see currentPerm), built once.
	curPermOnce sync.Once
	curPerm     []int32
	// mu guards the per-column values and quantile fits below, which every
	// layout projected from the sample shares (see [Project], which projects
	// layouts concurrently).
	mu        sync.Mutex
	vals      map[int]*colVals
	quantiles map[string]*layout.Quantiles
	// digestSum is a digest of the sampled rows (see digest), built once.
	digestOnce sync.Once
	digestSum  []byte
	// metrics maps a column (lower-case name) to its bounds truncation length: 0 means
	// full bounds, -1 no bounds.
	metrics func(column string) int
}

// Release frees the sample's records.
func (s *Sample) Release() {
	for _, r := range s.Records {
		r.Release()
	}
	s.Records = nil
	for _, c := range s.concat {
		c.Release()
	}
	s.concat = nil
	for i := range s.coded {
		s.coded[i].c.release()
	}
	s.coded = nil
}

// TakeSample reads a seeded sample of the named columns from the live data files of st
// (deletes applied), stratified by partition: every partition gets
// RowsPerProjectedFile rows per file the rewrite is expected to write in it (and at least
// MinFraction of its rows), the whole capped at MaxRows; a partition whose share is half
// its rows or more is read whole. Within a partition a share of its files is read, chosen
// with probability proportional to their rows, and thinned so that every row of the
// partition is equally likely to be sampled. The rows are read by package
// internal/sample, which the rewriter's quantile fit reads through too.
func TakeSample(ctx context.Context, st *lake.State, columns []string, opts SampleOptions) (*Sample, error) {
	schema := st.Metadata.CurrentSchema()
	s := &Sample{Schema: schema, FilesBefore: len(st.DataFiles), metrics: metricsModes(st.Metadata.Properties()), columnBytes: map[int]int64{}, md: st.Metadata}
	s.files = slices.Clone(st.DataFiles)
	slices.SortStableFunc(s.files, func(a, b lake.File) int { return compareInt64(a.SequenceNumber, b.SequenceNumber) })
	partIdx := map[string]int32{}
	fileIdx := make(map[string]int32, len(s.files))
	for i := range s.files {
		f := &s.files[i]
		fileIdx[f.Path] = int32(i)
		s.TableRows += f.Records
		s.TableBytes += f.SizeBytes
		if f.DataFile != nil {
			if cs := f.DataFile.ColumnSizes(); len(cs) > 0 {
				for id, n := range cs {
					s.columnBytes[id] += n
				}
				s.sizedBytes += f.SizeBytes
				s.sizedFiles++
			}
		}
		pi, ok := partIdx[f.PartitionKey]
		if !ok {
			pi = int32(len(s.Partitions))
			partIdx[f.PartitionKey] = pi
			s.Partitions = append(s.Partitions, f.PartitionKey)
			s.PartitionRows = append(s.PartitionRows, 0)
			s.PartitionBytes = append(s.PartitionBytes, 0)
			s.PartitionFiles = append(s.PartitionFiles, 0)
			s.partFiles = append(s.partFiles, nil)
		}
		s.PartitionRows[pi] += f.Records
		s.PartitionBytes[pi] += f.SizeBytes
		s.PartitionFiles[pi]++
		s.partFiles[pi] = append(s.partFiles[pi], i)
	}
	s.fileOverhead, s.rowGroupFooter, s.inRowGroups = fileOverheads(s.files)
	s.PartitionSampledRows = make([]int, len(s.Partitions))
	s.partDeletes = make([]int, len(s.Partitions))
	for _, d := range st.DeleteFiles {
		if pi, ok := partIdx[d.PartitionKey]; ok {
			s.partDeletes[pi]++
		}
	}
	read := make([]map[int32]bool, len(s.Partitions))
	frac, err := sample.Read(ctx, st, columns, opts, func(f *lake.File, rec arrow.RecordBatch) {
		pi, fi := int32(0), int32(-1)
		if f != nil {
			pi, fi = partIdx[f.PartitionKey], fileIdx[f.Path]
		}
		n := int(rec.NumRows())
		s.Records = append(s.Records, rec)
		s.Rows += n
		if len(s.PartitionSampledRows) > int(pi) {
			s.PartitionSampledRows[pi] += n
			if read[pi] == nil {
				read[pi] = map[int32]bool{}
			}
			read[pi][fi] = true
		}
		for range n {
			s.rowPart = append(s.rowPart, pi)
			s.rowFile = append(s.rowFile, fi)
		}
	})
	if err != nil {
		s.Release()
		return nil, err
	}
	s.Fraction = frac
	s.wholeParts = make([]bool, len(s.Partitions))
	for pi := range s.wholeParts {
		s.wholeParts[pi] = frac >= 1 || len(read[pi]) >= s.PartitionFiles[pi]
	}
	return s, nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// metricsModes reads the table's write.metadata.metrics.* properties: the returned
// function gives a column's bounds truncation length (0 full, -1 no bounds).
func metricsModes(props iceberg.Properties) func(string) int {
	parse := func(m string) int {
		m = strings.ToLower(strings.TrimSpace(m))
		switch {
		case m == "full":
			return 0
		case m == "none" || m == "counts":
			return -1
		case strings.HasPrefix(m, "truncate(") && strings.HasSuffix(m, ")"):
			var n int
			if _, err := fmt.Sscanf(m, "truncate(%d)", &n); err == nil && n > 0 {
				return n
			}
		}
		return 16
	}
	def := parse(props.Get("write.metadata.metrics.default", "truncate(16)"))
	cols := map[string]int{}
	for k, v := range props {
		if c, ok := strings.CutPrefix(k, "write.metadata.metrics.column."); ok {
			cols[strings.ToLower(c)] = parse(v)
		}
	}
	return func(c string) int {
		if n, ok := cols[strings.ToLower(c)]; ok {
			return n
		}
		return def
	}
}

// errNoSample is returned when a layout other than current must be projected from a
// table that has no rows.
var errNoSample = errors.New("table has no rows to sample")
