package rewrite

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/floe-project/floe/rewriter"
)

// Phase is a part of a rewrite's CPU time, as [ClassifyStack] tells it
// from the functions on a profile sample's stack.
type Phase string

// Phases of a rewrite, in the order results list them.
const (
	// PhaseDecode is reading the input Parquet: page decompression, value
	// decoding, Arrow arrays built from them, iceberg-go's scan.
	PhaseDecode Phase = "decode"
	// PhaseKey is computing layout keys (package layout's encoders) and
	// the sort entries that hold them.
	PhaseKey Phase = "key_encoding"
	// PhaseSort is ordering the entries (radix sort, comparison sort, the
	// merge's loser tree) and the external sort's spill files (Arrow IPC
	// written and read back).
	PhaseSort Phase = "sort"
	// PhaseGather is copying rows into key order: runs materialized,
	// merged rows gathered into batches or into the writer's scratch.
	PhaseGather Phase = "gather"
	// PhaseEncode is Parquet encoding of the output: dictionaries (and the
	// dictionary codes floe carries from the scan to build them), value
	// encoders, levels, statistics, page assembly.
	PhaseEncode Phase = "encode"
	// PhaseCompress is compressing output pages (zstd and the other
	// codecs). Decompressing input pages is decode.
	PhaseCompress Phase = "compression"
	// PhaseVerify is floe's content check: the digest of every row read
	// and the read back of every file written with its digest (on the
	// scan workers it starts too, by their pprof label).
	PhaseVerify Phase = "verify"
	// PhaseOther is the rest: the garbage collector's own workers, the
	// scheduler, system calls outside any phase.
	PhaseOther Phase = "other"
)

// Phases lists every phase, in the order results list them.
var Phases = []Phase{PhaseDecode, PhaseKey, PhaseSort, PhaseGather, PhaseEncode, PhaseCompress, PhaseVerify, PhaseOther}

// phaseRule gives a phase to the functions whose full name (import path,
// then receiver and name, as a profile names them) starts with prefix and,
// when contains is set, holds one of those words after the package.
type phaseRule struct {
	prefix   string
	contains []string
	phase    Phase
}

const (
	floePkg   = "github.com/floe-project/floe/"
	arrowPkg  = "github.com/apache/arrow-go/v18/"
	kpPkg     = "github.com/klauspost/compress/"
	icebergGo = "github.com/apache/iceberg-go/"
)

// enclosingRules name the functions that claim every sample under them,
// whatever is leaf-most: the content check reads the output back, and the
// decoding it does there is the price of the check, not of the rewrite.
var enclosingRules = []phaseRule{
	{prefix: floePkg + "rewriter.verifyContent", phase: PhaseVerify},
	{prefix: floePkg + "rewriter.readBack", phase: PhaseVerify},
	{prefix: floePkg + "rewriter.DigestTasks", phase: PhaseVerify},
}

// phaseRules are tried in order on one function; the first that matches
// gives its phase. Functions no rule names (the runtime's memmove and
// allocator, Arrow builders, slices' sorts, iterators) take the phase of
// the nearest caller that has one.
var phaseRules = []phaseRule{
	// floe's content check: the digest of rows as they are read.
	{prefix: floePkg + "internal/rowsum.", phase: PhaseVerify},
	{prefix: floePkg + "rewriter.digesting", phase: PhaseVerify},

	// Layout keys.
	{prefix: floePkg + "layout.", phase: PhaseKey},
	{prefix: floePkg + "rewriter.(*memRun).add", phase: PhaseKey},
	{prefix: floePkg + "rewriter.specKeyer", phase: PhaseKey},

	// Gathers into key order (gather.go, the writer's scratch).
	{prefix: floePkg + "rewriter.gather", phase: PhaseGather},
	{prefix: floePkg + "rewriter.appendSpans", phase: PhaseGather},
	{prefix: floePkg + "rewriter.pick", phase: PhaseGather},
	{prefix: floePkg + "rewriter.takeRecord", phase: PhaseGather},
	{prefix: floePkg + "rewriter.concatRecords", phase: PhaseGather},
	{prefix: floePkg + "rewriter.(*memRun).materialize", phase: PhaseGather},
	{prefix: floePkg + "rewriter.(*memSource)", phase: PhaseGather},
	{prefix: floePkg + "rewriter.(*pickBatch)", phase: PhaseGather},
	{prefix: floePkg + "rewriter.(*columnScratch)", phase: PhaseGather},
	{prefix: floePkg + "rewriter.(*columnFile).writePicked", phase: PhaseGather},
	// arrow-go's compute kernels and Concatenate have no rule of their
	// own: under floe's gathers above they are the gather's, under
	// arrow-go's dictionary encoder (which casts its dictionary) encode's.

	// Sort: entries ordered, runs merged, spill files written and read.
	{prefix: floePkg + "rewriter.radixSortEnts", phase: PhaseSort},
	{prefix: floePkg + "rewriter.digitOf", phase: PhaseSort},
	{prefix: floePkg + "rewriter.compareEnts", phase: PhaseSort},
	{prefix: floePkg + "rewriter.keyPrefix", phase: PhaseSort},
	{prefix: floePkg + "rewriter.before", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*cursor)", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*merger)", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*memRun)", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*spill", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*fileSource)", phase: PhaseSort},
	{prefix: floePkg + "rewriter.(*Sorter)", phase: PhaseSort},
	{prefix: floePkg + "rewriter.appendKey", phase: PhaseSort},
	// Arrow IPC has no rule of its own: under the spill functions above it
	// is the sort's, under pqarrow's reader (the ARROW:schema of a file's
	// footer) decode's, under the writer encode's.

	// Compression of output pages, decompression of input pages.
	{prefix: floePkg + "rewriter.(*zstdPageCodec).Encode", phase: PhaseCompress},
	{prefix: floePkg + "rewriter.(*zstdPageCodec).Decode", phase: PhaseDecode},
	{prefix: kpPkg + "zstd.", contains: []string{"Dec", "dec", "sequenceDecs", "(*history)"}, phase: PhaseDecode},
	{prefix: kpPkg + "huff0.", contains: []string{"Dec", "dec", "ReadTable"}, phase: PhaseDecode},
	{prefix: kpPkg + "fse.", contains: []string{"Dec", "dec"}, phase: PhaseDecode},
	{prefix: kpPkg + "s2.Decode", phase: PhaseDecode},
	{prefix: kpPkg + "snappy.Decode", phase: PhaseDecode},
	{prefix: kpPkg, phase: PhaseCompress},
	{prefix: "github.com/golang/snappy.Decode", phase: PhaseDecode},
	{prefix: "github.com/golang/snappy.", phase: PhaseCompress},
	{prefix: "github.com/pierrec/lz4", contains: []string{"Uncompress", "Reader", "decode"}, phase: PhaseDecode},
	{prefix: "github.com/pierrec/lz4", phase: PhaseCompress},
	{prefix: "github.com/andybalholm/brotli.", contains: []string{"Reader", "decode", "Decode"}, phase: PhaseDecode},
	{prefix: "github.com/andybalholm/brotli.", phase: PhaseCompress},
	{prefix: "compress/flate.(*decompressor)", phase: PhaseDecode},
	{prefix: "compress/gzip.(*Reader)", phase: PhaseDecode},
	{prefix: "compress/flate.", phase: PhaseCompress},
	{prefix: "compress/gzip.", phase: PhaseCompress},

	// Parquet encoding: floe's writer, its dictionaries and codes, and
	// arrow-go's writing side.
	{prefix: floePkg + "rewriter.(*dictColumn)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*bitsTable)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*columnFile)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*Writer)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*codebook)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*columnCodes)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.(*inputCoder)", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.encodeColumn", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.decodeColumn", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.plainColumn", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.buildBinary", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.binaryValues", phase: PhaseEncode},
	{prefix: floePkg + "rewriter.putOffset", phase: PhaseEncode},
	{prefix: floePkg + "internal/pqdict.", phase: PhaseEncode},

	// Parquet decoding: floe's own read and arrow-go's reading side.
	{prefix: floePkg + "rewriter.(*parquetFiles)", phase: PhaseDecode},
	{prefix: floePkg + "rewriter.(*groupReader)", phase: PhaseDecode},
	{prefix: floePkg + "rewriter.dictPagesOnly", phase: PhaseDecode},
	{prefix: floePkg + "bench/rewrite.floorFile", phase: PhaseDecode},

	// arrow-go's Parquet packages, by the side a function is on.
	{prefix: arrowPkg + "parquet", contains: []string{"Decod", "decod", "Read", "read", "unpack", "Unpack", "Scan", "Skip"}, phase: PhaseDecode},
	{prefix: arrowPkg + "parquet", contains: []string{"Encod", "encod", "Writ", "writ", "Put", "put", "Flush", "flush", "Statistics", "Memo", "hash", "Hash"}, phase: PhaseEncode},

	// iceberg-go's scan (its statistics of written files are encode).
	{prefix: icebergGo + "table.DataFileFromMetadata", phase: PhaseEncode},
	{prefix: icebergGo + "table.", contains: []string{"Statistics", "statistics", "Metrics", "metrics"}, phase: PhaseEncode},
	{prefix: icebergGo, phase: PhaseDecode},
}

// classifyFunc is the phase of one function, "" when no rule names it.
func classifyFunc(name string) Phase {
	for _, r := range phaseRules {
		if r.matches(name) {
			return r.phase
		}
	}
	return ""
}

func (r phaseRule) matches(name string) bool {
	if !strings.HasPrefix(name, r.prefix) {
		return false
	}
	if len(r.contains) == 0 {
		return true
	}
	// The words are looked for after the package path, in the receiver
	// and function name ("parquet/file" itself holds no word, but
	// "parquet/internal/encoding" would hold "encod").
	rest := name[strings.LastIndexByte(name, '/')+1:]
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	for _, w := range r.contains {
		if strings.Contains(rest, w) {
			return true
		}
	}
	return false
}

// ClassifyStack is the phase of a sample whose stack holds funcs, the
// leaf (where the CPU was) first ([SplitProfile] first looks for the
// rewriter's phase label on the sample). A function of an enclosing rule
// (floe's content check) anywhere on the stack claims the sample;
// otherwise the leaf-most function a rule names gives the phase, so time
// in a helper (memmove, the allocator, an Arrow builder) counts for the
// phase that called it; a stack no rule names is [PhaseOther].
func ClassifyStack(funcs []string) Phase {
	for _, f := range funcs {
		for _, r := range enclosingRules {
			if r.matches(f) {
				return r.phase
			}
		}
	}
	for _, f := range funcs {
		if p := classifyFunc(f); p != "" {
			return p
		}
	}
	return PhaseOther
}

// classifySample is [ClassifyStack] of funcs, unless the sample carries
// the rewriter's phase label (rewriter.ProfileLabelPhase) naming a phase:
// goroutines that floe's content check starts (iceberg-go's scan workers
// reading the output back) inherit the label but not the stack that shows
// the check.
func classifySample(funcs []string, labels map[string][]string) Phase {
	if v := labels[rewriter.ProfileLabelPhase]; len(v) == 1 && slices.Contains(Phases, Phase(v[0])) {
		return Phase(v[0])
	}
	return ClassifyStack(funcs)
}

// PhaseSplit is a CPU profile's time by phase.
type PhaseSplit struct {
	// Seconds is the CPU time sampled in each phase.
	Seconds map[Phase]float64
	// Total is all the CPU time sampled.
	Total float64
}

// Share is phase's part of the sampled time (0 when nothing was sampled).
func (s PhaseSplit) Share(p Phase) float64 {
	if s.Total <= 0 {
		return 0
	}
	return s.Seconds[p] / s.Total
}

// PhaseCPUPerMillionRows is CPU-seconds per million rows spent in phase p
// by m, whose profile split is split: p's share of the sampled time times
// m's measured CPU-seconds per million rows, so that the phases add up to
// the measured figure. 0 without a profile.
func PhaseCPUPerMillionRows(m Measure, split PhaseSplit, p Phase) float64 {
	return split.Share(p) * m.CPUPerMillionRows()
}

// SplitProfile reads a CPU profile (runtime/pprof's, gzipped protobuf) and
// splits its sampled CPU time by phase ([ClassifyStack]).
func SplitProfile(r io.Reader) (PhaseSplit, error) {
	prof, err := profile.Parse(r)
	if err != nil {
		return PhaseSplit{}, fmt.Errorf("parse cpu profile: %w", err)
	}
	vi := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return PhaseSplit{}, fmt.Errorf("parse cpu profile: no cpu/nanoseconds sample type among %d", len(prof.SampleType))
	}
	split := PhaseSplit{Seconds: map[Phase]float64{}}
	var funcs []string
	for _, s := range prof.Sample {
		funcs = funcs[:0]
		for _, loc := range s.Location {
			// Lines of a location run from the innermost inlined
			// function out.
			for _, ln := range loc.Line {
				if ln.Function != nil {
					funcs = append(funcs, ln.Function.Name)
				}
			}
		}
		sec := float64(s.Value[vi]) / 1e9
		split.Seconds[classifySample(funcs, s.Label)] += sec
		split.Total += sec
	}
	return split, nil
}
