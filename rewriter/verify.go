package rewriter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"iter"
	"path"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/internal/rowsum"
)

// ErrContentMismatch wraps [ErrInvariant]: the rows a rewrite wrote, read
// back from its output files, are not the rows it read from its inputs
// (deletes applied). The output files are kept, uncommitted, with an
// evidence record naming them (see [EvidenceDir]); nothing is committed.
// Returned by [RewriteGroup] (and so [RewriteGroups] and [Compact]); test
// with errors.Is. Never retry: it is a bug in floe or in a library it
// reads or writes with, or storage that changed what was written.
var ErrContentMismatch = fmt.Errorf("%w: rows written differ from rows read", ErrInvariant)

// ContentCheck is what a rewrite's content verification found: the digest
// of the live rows read from the inputs and of the rows read back from the
// outputs (see package internal/rowsum; equal digests mean the same multiset
// of rows in every column).
type ContentCheck struct {
	Read    rowsum.Sum `json:"read"`
	Written rowsum.Sum `json:"written"`
	// Duration is the time the read-back took.
	Duration time.Duration `json:"duration_ns"`
}

// covers checks that c is a passed check of the rows of outputs: the rows
// read back equal the rows read, and count every row the outputs' manifest
// entries will declare.
func (c ContentCheck) covers(outputs []iceberg.DataFile) error {
	var records int64
	for _, o := range outputs {
		records += o.Count()
	}
	switch {
	case len(outputs) == 0:
		return nil
	case c.Read.Rows == 0 && c.Written.Rows == 0:
		return fmt.Errorf("%d output files were never checked against the rows read: %w", len(outputs), ErrContentMismatch)
	case !c.Read.Equal(c.Written):
		return fmt.Errorf("rows read back (%s) differ from rows read (%s): %w", c.Written, c.Read, ErrContentMismatch)
	case c.Written.Rows != records:
		return fmt.Errorf("%d rows checked, the output files declare %d: %w", c.Written.Rows, records, ErrContentMismatch)
	}
	return nil
}

// plus is the check of c's rows and o's together.
func (c ContentCheck) plus(o ContentCheck) ContentCheck {
	return ContentCheck{Read: c.Read.Plus(o.Read), Written: c.Written.Plus(o.Written), Duration: c.Duration + o.Duration}
}

// EvidenceDir is where, under a table's location, a rewrite whose output
// failed its content check leaves a record of what it read and wrote
// (JSON, one file per failed group). The output files it names are kept
// for inspection: [PlanOrphans] never lists them while the record is there.
// Delete the record (and the files) once the failure is understood.
const EvidenceDir = ".floe/evidence"

// Evidence is the record of a rewrite that failed its content check.
type Evidence struct {
	Table     string       `json:"table"`
	RunID     string       `json:"run_id,omitempty"`
	Partition string       `json:"partition,omitempty"`
	At        time.Time    `json:"at"`
	Error     string       `json:"error"`
	Check     ContentCheck `json:"check"`
	// Inputs are the data files read (with the delete files that applied
	// to them); Outputs the files written and kept.
	Inputs  []EvidenceInput  `json:"inputs"`
	Outputs []EvidenceOutput `json:"outputs"`
	// OwnReads is how many of the outputs the check read back with its
	// own Parquet read (see readBack); iceberg-go's scan read the others.
	OwnReads int `json:"own_reads"`
}

// EvidenceInput is one input data file of a failed rewrite.
type EvidenceInput struct {
	Path        string   `json:"path"`
	Records     int64    `json:"records"`
	DeleteFiles []string `json:"delete_files,omitempty"`
}

// EvidenceOutput is one output file of a failed rewrite.
type EvidenceOutput struct {
	Path    string `json:"path"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
}

// digesting passes records on and digests the rows of each batch into d,
// before anything else sees them.
func digesting(records iter.Seq2[arrow.RecordBatch, error], d *rowsum.Digest) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range records {
			if err == nil {
				if derr := d.Add(rec); derr != nil {
					rec.Release()
					yield(nil, fmt.Errorf("digest the rows read: %w", derr))
					return
				}
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// readBack digests the rows of files, read as any Iceberg reader reads
// them: by the check's own Parquet read ([checkReader]), which keeps
// dictionary-coded strings coded, and where it does not take a file by
// iceberg-go's scan ([DigestTasks]); the two digest a file alike (the
// tests hold them to it). At most workers files are decoded at once, a
// file's columns on goroutines of their own when that leaves cores of
// par idle. It returns how many files the check's own read took.
//
// On a table with row lineage the files' _row_id and
// _last_updated_sequence_number are digested as stored, null where a file
// stores none: the files are not committed, so there is no manifest entry
// to inherit from, and DigestTasks, given tasks without FirstRowID and
// DataSequenceNumber as here, reads them the same way.
//
// Where the check's CPU goes (issue 47; bench/rewrite, 2M rows sorted,
// one CPU profile of floe alone before and after, both on a loaded
// machine): 0.93 CPU-s through iceberg-go's scan, 0.77 with the own read.
// Of the 0.77, reading back is 0.57: 0.18 zstd, about 0.2 the rest of
// arrow-go's decoding (the high-cardinality strings, which fall back to
// plain pages, still go value by value through a BinaryBuilder, as in any
// Arrow read), 0.18 hashing; the other 0.20 is hashing the rows read.
// Before, iceberg-go's decode had materialized every dictionary-coded
// string as a plain string (0.27 CPU-s of 0.9 in an earlier profile) for
// the digest to hash each again. In the full benchmark (10M rows, make
// bench-rewrite) the check went from 0.49–0.51 to 0.38–0.42 CPU-s per
// million rows; docs/rewriter-profile.md has the split of the latest run.
func readBack(ctx context.Context, tbl *table.Table, files []iceberg.DataFile, workers, par, batchRows int) (rowsum.Sum, int, error) {
	workers = max(workers, 1)
	var (
		s    rowsum.Sum
		rest = files
	)
	r, err := newCheckReader(ctx, tbl, batchRows, workers < par)
	if err != nil {
		return s, 0, fmt.Errorf("read back %d output files: %w", len(files), err)
	}
	if r != nil {
		if s, rest, err = r.digest(ctx, files, workers); err != nil {
			return s, 0, fmt.Errorf("read back %d output files: %w", len(files), err)
		}
	}
	if len(rest) == 0 {
		return s, len(files), nil
	}
	tasks := make([]table.FileScanTask, len(rest))
	for i, f := range rest {
		tasks[i] = table.FileScanTask{File: f, Start: 0, Length: f.FileSizeBytes()}
	}
	scanned, err := DigestTasks(ctx, tbl, tasks, workers, batchRows)
	if err != nil {
		return s, 0, fmt.Errorf("read back %d output files: %w", len(rest), err)
	}
	return s.Plus(scanned), len(files) - len(rest), nil
}

// DigestTasks digests the live rows of tasks (their deletes applied) as
// iceberg-go's scan of tbl reads them: columns by field id, in the table's
// schema, on arrow-go's Go allocator (not a rewrite's [PagePool]), with at
// most workers files decoded at once (0: one) in batches of batchRows rows
// (0: [DefaultScanBatchRows]). On a table of format version 3 or later the
// rows' lineage is digested too, _row_id and _last_updated_sequence_number
// as a reader of the table sees them (stored, else inherited from the
// task's FirstRowID and DataSequenceNumber), so the digests of a rewrite's
// inputs and outputs are equal only if every row kept its lineage.
func DigestTasks(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, workers, batchRows int) (rowsum.Sum, error) {
	var d rowsum.Digest
	if len(tasks) == 0 {
		return d.Sum(), nil
	}
	scan := tbl.Scan(readOptions(tbl, workers, batchRows)...)
	defer scan.Close()
	_, records, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return rowsum.Sum{}, err
	}
	for rec, err := range records {
		if err != nil {
			return rowsum.Sum{}, err
		}
		err = d.Add(rec)
		rec.Release()
		if err != nil {
			return rowsum.Sum{}, err
		}
	}
	return d.Sum(), nil
}

// verifyContent reads files back and compares their rows with read, the
// digest of the rows the group read. On a mismatch it leaves an evidence
// record under the table's location and returns [ErrContentMismatch]
// naming the files; the caller keeps them.
// ProfileLabelPhase is the pprof label the rewriter sets, with the value
// ProfilePhaseVerify, on the goroutines that read a group's output back
// for its content check, and that the goroutines they start (iceberg-go's
// scan workers) inherit: in a CPU profile their samples are the check's,
// whatever their stacks show (bench/rewrite splits its profiles by it).
const (
	ProfileLabelPhase  = "floe_phase"
	ProfilePhaseVerify = "verify"
)

func verifyContent(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, files []iceberg.DataFile, read rowsum.Sum, opts GroupOptions, run groupRun) (ContentCheck, error) {
	start := time.Now()
	check := ContentCheck{Read: read}
	// The outputs are of the target size, far larger than the inputs the
	// scan's workers were counted for: count them again, so that reading
	// back stays within the memory the rewrite was given.
	var maxOut int64
	for _, f := range files {
		maxOut = max(maxOut, f.FileSizeBytes())
	}
	var (
		written rowsum.Sum
		own     int
		err     error
	)
	// Labelled for CPU profiles: the scan's workers that decode the
	// outputs inherit the label, where their stacks do not show this
	// function (see [ProfileLabelPhase]).
	pprof.Do(ctx, pprof.Labels(ProfileLabelPhase, ProfilePhaseVerify), func(ctx context.Context) {
		written, own, err = readBack(ctx, tbl, files, readWorkers(maxOut, run.par, opts.MemoryBytes), run.par, run.batchRows)
	})
	check.Duration = time.Since(start)
	if err != nil {
		return check, err
	}
	check.Written = written
	diff := rowsum.Diff(read, written)
	if diff == "" {
		return check, nil
	}
	outs := make([]string, len(files))
	for i, f := range files {
		outs[i] = f.FilePath()
	}
	where := "data files " + strings.Join(outs, ", ")
	if run.partPath != "" {
		where += " (partition " + run.partPath + ")"
	}
	err = fmt.Errorf("%s, written from %d inputs, read back as %s, read as %s: %s: %w",
		where, len(tasks), written, read, diff, ErrContentMismatch)
	ev := Evidence{Table: tbl.Location(), RunID: opts.RunID, Partition: run.partPath, At: time.Now().UTC(), Error: err.Error(), Check: check, OwnReads: own}
	for _, t := range tasks {
		in := EvidenceInput{Path: t.File.FilePath(), Records: t.File.Count()}
		for _, d := range t.DeleteFiles {
			in.DeleteFiles = append(in.DeleteFiles, d.FilePath())
		}
		for _, d := range t.EqualityDeleteFiles {
			in.DeleteFiles = append(in.DeleteFiles, d.FilePath())
		}
		for _, d := range t.DeletionVectorFiles {
			in.DeleteFiles = append(in.DeleteFiles, d.FilePath())
		}
		ev.Inputs = append(ev.Inputs, in)
	}
	for _, f := range files {
		ev.Outputs = append(ev.Outputs, EvidenceOutput{Path: f.FilePath(), Records: f.Count(), Bytes: f.FileSizeBytes()})
	}
	loc, werr := writeEvidence(context.WithoutCancel(ctx), tbl, ev)
	if werr != nil {
		return check, errors.Join(err, fmt.Errorf("keep the evidence: %w", werr))
	}
	return check, fmt.Errorf("%w; output files kept, evidence in %s", err, loc)
}

// writeEvidence writes ev under the table's [EvidenceDir] and returns its
// location.
func writeEvidence(ctx context.Context, tbl *table.Table, ev Evidence) (string, error) {
	fio, err := tbl.FS(ctx)
	if err != nil {
		return "", err
	}
	w, ok := fio.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("io %T cannot write files", fio)
	}
	body, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return "", err
	}
	name := ev.At.Format("20060102T150405.000000000Z")
	if ev.RunID != "" {
		name = ev.RunID + "-" + name
	}
	loc := strings.TrimSuffix(tbl.Location(), "/") + "/" + path.Join(EvidenceDir, name+".json")
	if err := w.WriteFile(loc, body); err != nil {
		return "", err
	}
	return loc, nil
}

// evidenceKeys lists the evidence records under location and the files
// they name, as normalized keys: [PlanOrphans] and [DeleteOrphans] keep
// them all. A record that cannot be read keeps itself, and makes the
// listing fail: the files it names cannot be told.
func evidenceKeys(ctx context.Context, fio iceio.IO, location string, schemes, auths map[string]string) (map[string]bool, error) {
	lister, ok := fio.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("list evidence of %s: io %T cannot list files", location, fio)
	}
	dir := strings.TrimSuffix(location, "/") + "/" + EvidenceDir
	keys := map[string]bool{}
	err := lister.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		keys[NormalizeLocation(p, schemes, auths)] = true
		if !strings.HasSuffix(p, ".json") {
			return nil
		}
		ev, err := readEvidence(fio, p)
		if err != nil {
			return fmt.Errorf("read evidence record %s: %w", p, err)
		}
		for _, o := range ev.Outputs {
			keys[NormalizeLocation(o.Path, schemes, auths)] = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("list evidence under %s: %w", dir, err)
	}
	return keys, nil
}

func readEvidence(fio iceio.IO, p string) (Evidence, error) {
	f, err := fio.Open(p)
	if err != nil {
		return Evidence{}, err
	}
	var ev Evidence
	err = json.NewDecoder(f).Decode(&ev)
	return ev, errors.Join(err, f.Close())
}
