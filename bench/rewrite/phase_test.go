package rewrite_test

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/bench/rewrite"
	"github.com/floe-project/floe/rewriter"
)

const (
	floe    = "github.com/floe-project/floe/"
	arrowGo = "github.com/apache/arrow-go/v18/"
	kp      = "github.com/klauspost/compress/"
)

// TestClassifyStack pins the phase of stacks as floe's and the floor's
// profiles hold them (leaf first): the leaf-most function a rule names
// wins, helpers take their caller's phase, and the content check claims
// everything under it.
func TestClassifyStack(t *testing.T) {
	cases := []struct {
		name  string
		stack []string
		want  rewrite.Phase
	}{
		{"zstd decompression of an input page", []string{
			kp + "zstd.sequenceDecs_decodeSync_bmi2", kp + "zstd.(*sequenceDecs).decodeSync", kp + "zstd.(*blockDec).decodeCompressed",
			floe + "rewriter.(*zstdPageCodec).Decode", arrowGo + "parquet/file.(*serializedPageReader).Next", floe + "rewriter.(*parquetFiles).read",
		}, rewrite.PhaseDecode},
		{"zstd compression of an output page", []string{
			kp + "zstd.(*fastEncoder).Encode", kp + "zstd.(*Encoder).EncodeAll", floe + "rewriter.(*zstdPageCodec).EncodeLevel",
			arrowGo + "parquet/file.(*serializedPageWriter).Compress", floe + "rewriter.(*columnFile).encode",
		}, rewrite.PhaseCompress},
		{"huff0 inside the encoder", []string{kp + "huff0.(*Scratch).compress4X", kp + "zstd.(*blockEnc).encode"}, rewrite.PhaseCompress},
		{"huff0 inside the decoder", []string{kp + "huff0.(*Decoder).Decompress4X", kp + "zstd.(*blockDec).decodeLiterals"}, rewrite.PhaseDecode},
		{"value decoding", []string{arrowGo + "parquet/internal/encoding.(*PlainInt64Decoder).Decode", arrowGo + "parquet/file.(*columnChunkReader).ReadBatch"}, rewrite.PhaseDecode},
		{"memmove under a record reader", []string{"runtime.memmove", arrowGo + "arrow/array.(*BinaryBuilder).Append", arrowGo + "parquet/pqarrow.(*leafReader).LoadBatch"}, rewrite.PhaseDecode},
		{"iceberg-go's scan", []string{"runtime.mallocgc", "github.com/apache/iceberg-go/table.ToRequestedSchema"}, rewrite.PhaseDecode},
		{"z-order key", []string{floe + "layout.(*zorderEncoder).AppendKey", floe + "rewriter.(*memRun).add", floe + "rewriter.(*Sorter).formRuns"}, rewrite.PhaseKey},
		{"entries added", []string{"runtime.memmove", floe + "rewriter.(*memRun).add"}, rewrite.PhaseKey},
		{"radix sort", []string{floe + "rewriter.radixSortEnts", floe + "rewriter.(*memRun).sort"}, rewrite.PhaseSort},
		{"comparison sort through slices", []string{floe + "rewriter.compareEnts", "slices.pdqsortCmpFunc[...]", floe + "rewriter.(*memRun).sort"}, rewrite.PhaseSort},
		{"slices' own code", []string{"slices.insertionSortCmpFunc[...]", floe + "rewriter.(*memRun).sort"}, rewrite.PhaseSort},
		{"merge", []string{floe + "rewriter.before", floe + "rewriter.(*merger).next"}, rewrite.PhaseSort},
		{"spill write", []string{"syscall.Syscall", "os.(*File).Write", arrowGo + "arrow/ipc.(*Writer).Write", floe + "rewriter.(*spillWriter).write"}, rewrite.PhaseSort},
		{"spill read", []string{arrowGo + "arrow/ipc.(*Reader).next", floe + "rewriter.(*fileSource).next", floe + "rewriter.(*merger).next"}, rewrite.PhaseSort},
		{"a footer's Arrow schema", []string{
			arrowGo + "arrow/ipc.typeFromFB", arrowGo + "arrow/ipc.NewReader", arrowGo + "arrow/flight.DeserializeSchema",
			arrowGo + "parquet/pqarrow.getOriginSchema", arrowGo + "parquet/pqarrow.NewFileReader", floe + "bench/rewrite.floorFile",
		}, rewrite.PhaseDecode},
		{"gather of a sorted run", []string{floe + "rewriter.gatherWords[go.shape.uint64]", floe + "rewriter.gatherFixed", floe + "rewriter.(*memRun).materialize"}, rewrite.PhaseGather},
		{"gather under the merge", []string{floe + "rewriter.gatherVarBinaryInto[go.shape.int32]", floe + "rewriter.(*merger).next"}, rewrite.PhaseGather},
		{"writer's scratch", []string{floe + "rewriter.gatherScratchBinary[go.shape.int32]", floe + "rewriter.(*columnFile).writePicked"}, rewrite.PhaseGather},
		{"compute.Take of a gather", []string{arrowGo + "arrow/compute.(*vectorExecutor).Execute", arrowGo + "arrow/compute.Take", floe + "rewriter.takeRecord"}, rewrite.PhaseGather},
		{"a cast in arrow-go's dictionary encoder", []string{
			arrowGo + "arrow/compute.getCastFunction", arrowGo + "arrow/compute.CastToType",
			arrowGo + "parquet/internal/encoding.(*typedDictEncoder[go.shape.int32]).PutDictionary", floe + "rewriter.(*dictColumn).writePage",
		}, rewrite.PhaseEncode},
		{"dictionary from codes", []string{floe + "rewriter.(*dictColumn).addCodes", floe + "rewriter.(*columnFile).writeColumn"}, rewrite.PhaseEncode},
		{"codes from the scan", []string{floe + "rewriter.encodeColumn", floe + "rewriter.(*columnCodes).encode", floe + "rewriter.(*parquetFiles).read"}, rewrite.PhaseEncode},
		{"arrow-go's encoder", []string{arrowGo + "parquet/internal/encoding.(*PlainByteArrayEncoder).Put", arrowGo + "parquet/file.(*ByteArrayColumnChunkWriter).WriteBatch"}, rewrite.PhaseEncode},
		{"statistics", []string{arrowGo + "parquet/metadata.(*Int64Statistics).Update", arrowGo + "parquet/file.(*columnWriter).commitWriteAndCheckPageLimit"}, rewrite.PhaseEncode},
		{"bit unpacking", []string{arrowGo + "parquet/internal/utils.unpack32Avx2", arrowGo + "parquet/internal/utils.(*BitReader).GetBatch"}, rewrite.PhaseDecode},
		{"the read back of the content check", []string{
			kp + "zstd.(*blockDec).decodeCompressed", arrowGo + "parquet/file.(*columnChunkReader).ReadBatch",
			"github.com/apache/iceberg-go/table.(*arrowScan).GetRecords", floe + "rewriter.readBack", floe + "rewriter.verifyContent",
		}, rewrite.PhaseVerify},
		{"the digest of the rows read", []string{floe + "internal/rowsum.(*Digest).Add", floe + "rewriter.digesting.func1"}, rewrite.PhaseVerify},
		{"decode pulled through the digest", []string{arrowGo + "parquet/file.(*columnChunkReader).ReadBatch", floe + "rewriter.digesting.func1"}, rewrite.PhaseDecode},
		{"the collector's workers", []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, rewrite.PhaseOther},
		{"the floor's read", []string{"runtime.memclrNoHeapPointers", floe + "bench/rewrite.floorFile"}, rewrite.PhaseDecode},
		{"floe's writer itself", []string{"runtime.memmove", floe + "rewriter.(*Writer).Write", floe + "bench/rewrite.floorFile"}, rewrite.PhaseEncode},
		{"empty stack", nil, rewrite.PhaseOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, rewrite.ClassifyStack(tc.stack))
		})
	}
}

// TestSplitProfile builds a CPU profile as runtime/pprof writes one (gzipped
// protobuf, cpu/nanoseconds beside samples/count, inlined frames as extra
// lines of a location) and splits it.
func TestSplitProfile(t *testing.T) {
	var (
		fns  []*profile.Function
		locs []*profile.Location
	)
	fn := func(name string) *profile.Function {
		f := &profile.Function{ID: uint64(len(fns) + 1), Name: name}
		fns = append(fns, f)
		return f
	}
	loc := func(names ...string) *profile.Location {
		l := &profile.Location{ID: uint64(len(locs) + 1)}
		for _, n := range names {
			l.Line = append(l.Line, profile.Line{Function: fn(n)})
		}
		locs = append(locs, l)
		return l
	}
	radix := loc(floe+"rewriter.radixSortEnts", floe+"rewriter.(*memRun).sort") // inlined into its caller
	key := loc(floe + "layout.(*hilbertEncoder).AppendKey")
	add := loc(floe + "rewriter.(*memRun).add")
	gc := loc("runtime.gcBgMarkWorker")
	verify := loc(floe+"internal/rowsum.(*Digest).Add", floe+"rewriter.verifyContent")
	decode := loc(arrowGo+"parquet/file.(*columnChunkReader).ReadBatch", "github.com/apache/iceberg-go/table.(*arrowScan).GetRecords.func1")
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{radix}, Value: []int64{30, 300_000_000}},
			{Location: []*profile.Location{key, add}, Value: []int64{50, 500_000_000}},
			{Location: []*profile.Location{gc}, Value: []int64{10, 100_000_000}},
			{Location: []*profile.Location{verify}, Value: []int64{10, 100_000_000}},
			// A scan worker the content check started: its stack shows
			// decoding only, its label says whose it is.
			{Location: []*profile.Location{decode}, Value: []int64{20, 200_000_000}, Label: map[string][]string{rewriter.ProfileLabelPhase: {rewriter.ProfilePhaseVerify}}},
			{Location: []*profile.Location{decode}, Value: []int64{5, 50_000_000}},
			{Location: []*profile.Location{decode}, Value: []int64{5, 50_000_000}, Label: map[string][]string{rewriter.ProfileLabelPhase: {"not a phase"}}},
		},
		Location: locs,
		Function: fns,
	}
	var buf bytes.Buffer
	require.NoError(t, p.Write(&buf))
	split, err := rewrite.SplitProfile(&buf)
	require.NoError(t, err)
	require.InDelta(t, 1.3, split.Total, 1e-9)
	require.InDelta(t, 0.3, split.Seconds[rewrite.PhaseSort], 1e-9)
	require.InDelta(t, 0.5, split.Seconds[rewrite.PhaseKey], 1e-9)
	require.InDelta(t, 0.1, split.Seconds[rewrite.PhaseOther], 1e-9)
	require.InDelta(t, 0.3, split.Seconds[rewrite.PhaseVerify], 1e-9, "the labelled sample is the check's")
	require.InDelta(t, 0.1, split.Seconds[rewrite.PhaseDecode], 1e-9, "unlabelled, or labelled with no phase")
	require.InDelta(t, 0.5/1.3, split.Share(rewrite.PhaseKey), 1e-9)
	require.Zero(t, split.Share(rewrite.PhaseGather))

	m := rewrite.Measure{CPU: 2_600_000_000, Rows: 1_000_000} // 2.6 CPU-s per million rows
	require.InDelta(t, 1.0, rewrite.PhaseCPUPerMillionRows(m, split, rewrite.PhaseKey), 1e-9)

	_, err = rewrite.SplitProfile(bytes.NewReader([]byte("not a profile")))
	require.Error(t, err)
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	buf.Reset()
	require.NoError(t, heap.Write(&buf))
	_, err = rewrite.SplitProfile(&buf)
	require.ErrorContains(t, err, "no cpu/nanoseconds")
}
