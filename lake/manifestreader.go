package lake

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/google/uuid"
	"github.com/twmb/avro"
	"github.com/twmb/avro/atype"
	"github.com/twmb/avro/ocf"
)

// ManifestReader reads the entries of manifests as iceberg-go v0.7.0's
// reader does (ManifestFile.Entries), parsing each distinct Avro writer
// schema once. iceberg-go parses the schema in every manifest's header,
// builds its node tree and compiles a decoder for it, for every manifest it
// opens: two thirds of the CPU of reading a small manifest (bench/manifests
// has the profile). The manifests of a
// table, and of every table with the same partition type and format
// version, carry the same schema text, so a ManifestReader parses it once
// and decodes every such manifest with the same compiled schema.
//
// A manifest this reader does not handle — a codec other than null,
// deflate and snappy, or an entry iceberg-go's DataFile builder refuses —
// is read by iceberg-go's own reader, so the entries are the same either
// way. A ManifestReader is safe for concurrent use; the zero value is not
// usable, use [NewManifestReader].
type ManifestReader struct {
	mu      sync.Mutex
	schemas map[string]*manifestSchema
	// days are the logical types of a schema's partition fields under a
	// manifest's partition spec: day transforms are dates.
	days      map[daysKey]map[int]string
	max       int
	parses    int
	delegated int
}

type daysKey struct {
	schema *manifestSchema
	spec   string
}

// DefaultManifestSchemas is how many distinct manifest schemas a
// [ManifestReader] keeps by default. A schema is one partition type (the
// partition fields' names, ids and types) at one format version, so a lake
// has a few per partition layout; a parsed one holds about 70 KB.
const DefaultManifestSchemas = 256

// NewManifestReader returns a reader that keeps up to maxSchemas parsed
// schemas (0: [DefaultManifestSchemas]); when full, it forgets them all and
// starts again.
func NewManifestReader(maxSchemas int) *ManifestReader {
	if maxSchemas <= 0 {
		maxSchemas = DefaultManifestSchemas
	}
	return &ManifestReader{schemas: map[string]*manifestSchema{}, days: map[daysKey]map[int]string{}, max: maxSchemas}
}

// manifestSchema is one parsed writer schema with what iceberg-go derives
// from it for every manifest: the partition fields' ids and logical types.
type manifestSchema struct {
	schema *avro.Schema
	// nameToID maps the partition record's field names to field ids.
	nameToID map[string]int
	// logical maps partition field ids to their Avro logical types.
	logical map[int]string
	scales  map[int]int
}

// maxManifestBlock bounds a manifest block once decompressed, as
// twmb/avro's OCF reader does by default.
const maxManifestBlock = 64 << 20

var avroMagic = []byte{'O', 'b', 'j', 1}

// errUnhandled marks a manifest this reader leaves to iceberg-go's.
var errUnhandled = errors.New("manifest not handled by floe's reader")

// Entries returns the entries of manifest m, read through fio, whose
// partition spec is spec (the table's spec of m's id), as iceberg-go's
// m.Entries(fio, discardDeleted) returns them: deleted entries left out
// when discardDeleted, sequence numbers, snapshot ids and first row ids
// inherited from the manifest list. With a nil spec iceberg-go reads m.
func (r *ManifestReader) Entries(fio iceio.IO, m iceberg.ManifestFile, spec *iceberg.PartitionSpec, discardDeleted bool) ([]iceberg.ManifestEntry, error) {
	data, err := readAll(fio, m.FilePath(), m.Length())
	if err != nil {
		return nil, err
	}
	if spec != nil {
		out, err := r.decode(data, m, *spec, discardDeleted)
		if !errors.Is(err, errUnhandled) {
			return out, err
		}
	}
	r.mu.Lock()
	r.delegated++
	r.mu.Unlock()
	return iceberg.ReadManifest(m, bytes.NewReader(data), discardDeleted)
}

// Parsed is how many manifest schemas r has parsed.
func (r *ManifestReader) Parsed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.parses
}

// Delegated is how many manifests r left to iceberg-go's reader.
func (r *ManifestReader) Delegated() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.delegated
}

// readAll reads the file at path, whose length the manifest list gives as
// size (a hint: a wrong one costs only a copy).
func readAll(fio iceio.IO, path string, size int64) (_ []byte, err error) {
	f, err := fio.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var buf bytes.Buffer
	if size > 0 && size < maxManifestBlock {
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// avroEntry is a manifest entry as the Avro schema of every format
// version names its fields; fields a version lacks stay zero.
type avroEntry struct {
	Status  iceberg.ManifestEntryStatus `avro:"status"`
	Snap    *int64                      `avro:"snapshot_id"`
	Seq     *int64                      `avro:"sequence_number"`
	FileSeq *int64                      `avro:"file_sequence_number"`
	Data    avroDataFile                `avro:"data_file"`
}

type avroKV[V any] struct {
	Key   int `avro:"key"`
	Value V   `avro:"value"`
}

type avroDataFile struct {
	Content          iceberg.ManifestEntryContent `avro:"content"`
	Path             string                       `avro:"file_path"`
	Format           iceberg.FileFormat           `avro:"file_format"`
	Partition        map[string]any               `avro:"partition"`
	Records          int64                        `avro:"record_count"`
	Size             int64                        `avro:"file_size_in_bytes"`
	BlockSize        int64                        `avro:"block_size_in_bytes"`
	ColSizes         *[]avroKV[int64]             `avro:"column_sizes"`
	ValueCounts      *[]avroKV[int64]             `avro:"value_counts"`
	NullCounts       *[]avroKV[int64]             `avro:"null_value_counts"`
	NaNCounts        *[]avroKV[int64]             `avro:"nan_value_counts"`
	DistinctCounts   *[]avroKV[int64]             `avro:"distinct_counts"`
	Lower            *[]avroKV[[]byte]            `avro:"lower_bounds"`
	Upper            *[]avroKV[[]byte]            `avro:"upper_bounds"`
	Key              *[]byte                      `avro:"key_metadata"`
	Splits           *[]int64                     `avro:"split_offsets"`
	EqualityIDs      *[]int                       `avro:"equality_ids"`
	SortOrder        *int                         `avro:"sort_order_id"`
	FirstRowID       *int64                       `avro:"first_row_id"`
	ReferencedFile   *string                      `avro:"referenced_data_file"`
	ContentOffset    *int64                       `avro:"content_offset"`
	ContentSizeBytes *int64                       `avro:"content_size_in_bytes"`
}

// decode reads the Avro object container data: its header (metadata and
// sync marker), then its blocks, decoding each entry with the cached
// writer schema. Checks are iceberg-go's: format version, content.
func (r *ManifestReader) decode(data []byte, m iceberg.ManifestFile, spec iceberg.PartitionSpec, discardDeleted bool) ([]iceberg.ManifestEntry, error) {
	if !bytes.HasPrefix(data, avroMagic) {
		return nil, fmt.Errorf("%w: no Avro magic", errUnhandled)
	}
	rest, meta, err := readMeta(data[len(avroMagic):])
	if err != nil {
		return nil, err
	}
	if len(rest) < 16 {
		return nil, fmt.Errorf("reading manifest header: %w", io.ErrUnexpectedEOF)
	}
	var syncMark [16]byte
	copy(syncMark[:], rest)
	rest = rest[16:]

	var codec ocf.Codec
	switch c := string(meta["avro.codec"]); c {
	case "", "null":
	case "deflate":
		codec = ocf.DeflateCodec(0)
	case "snappy":
		codec = ocf.SnappyCodec()
	default:
		return nil, fmt.Errorf("%w: codec %q", errUnhandled, c)
	}
	version := 1
	if raw := meta["format-version"]; len(raw) > 0 {
		if version, err = strconv.Atoi(string(raw)); err != nil {
			return nil, fmt.Errorf("manifest file's 'format-version' metadata is invalid: %w", err)
		}
	}
	if version < 1 || version > 3 {
		return nil, fmt.Errorf("unsupported manifest format version: %d", version)
	}
	if version > m.Version() {
		return nil, fmt.Errorf("manifest file's 'format-version' metadata indicates version %d, which is newer than the v%d manifest list referencing it", version, m.Version())
	}
	content := iceberg.ManifestContentData
	switch c := string(meta["content"]); c {
	case "":
		if version != 1 {
			return nil, fmt.Errorf("manifest file's 'content' metadata is missing and 'format-version' is %d, but the field is required for 'format-version' 2 and beyond", version)
		}
	case "data":
	case "deletes":
		content = iceberg.ManifestContentDeletes
	default:
		return nil, fmt.Errorf("manifest file's 'content' metadata is invalid, should be \"data\" or \"deletes\" but instead is %q", c)
	}
	if content != m.ManifestContent() {
		return nil, fmt.Errorf("manifest file's 'content' metadata indicates %q, but entry from manifest list indicates %q", content, m.ManifestContent())
	}
	ms, err := r.schema(meta["avro.schema"])
	if err != nil {
		return nil, err
	}
	logical := r.dayDates(ms, meta["partition-spec"])
	var nextRowID int64
	inheritRowIDs := content == iceberg.ManifestContentData && m.FirstRowID() != nil
	if inheritRowIDs {
		if nextRowID = *m.FirstRowID(); nextRowID < 0 {
			return nil, fmt.Errorf("%w: first row ID must be non-negative: %d", iceberg.ErrInvalidArgument, nextRowID)
		}
	}

	var out []iceberg.ManifestEntry
	for len(rest) > 0 {
		var count, size int64
		if count, rest, err = readLong(rest); err != nil {
			return nil, fmt.Errorf("reading manifest block count: %w", err)
		}
		if size, rest, err = readLong(rest); err != nil {
			return nil, fmt.Errorf("reading manifest block size: %w", err)
		}
		if count < 0 || size < 0 || size > int64(len(rest))-16 {
			return nil, fmt.Errorf("reading manifest block: count %d, size %d of %d bytes left", count, size, len(rest))
		}
		block := rest[:size]
		if !bytes.Equal(rest[size:size+16], syncMark[:]) {
			return nil, errors.New("reading manifest block: sync marker mismatch")
		}
		rest = rest[size+16:]
		if count == 0 {
			continue
		}
		if codec != nil {
			if block, err = codec.(ocf.BoundedDecompressor).DecompressBounded(block, maxManifestBlock); err != nil {
				return nil, fmt.Errorf("decompressing manifest block: %w", err)
			}
		}
		for range count {
			var e avroEntry
			if block, err = ms.schema.Decode(block, &e); err != nil {
				return nil, fmt.Errorf("decoding manifest entry: %w", err)
			}
			entry, err := ms.entry(&e, logical, m, spec, content, inheritRowIDs, &nextRowID)
			if err != nil {
				return nil, err
			}
			if discardDeleted && e.Status == iceberg.EntryStatusDELETED {
				continue
			}
			out = append(out, entry)
		}
	}
	return out, nil
}

// entry is e as iceberg-go's ManifestReader.ReadEntry returns it: checked,
// with what it inherits from manifest m.
func (ms *manifestSchema) entry(e *avroEntry, logical map[int]string, m iceberg.ManifestFile, spec iceberg.PartitionSpec, content iceberg.ManifestContent, inheritRowIDs bool, nextRowID *int64) (iceberg.ManifestEntry, error) {
	switch e.Status {
	case iceberg.EntryStatusEXISTING, iceberg.EntryStatusADDED, iceberg.EntryStatusDELETED:
	default:
		return nil, fmt.Errorf("manifest entry has invalid status: %d", e.Status)
	}
	d := &e.Data
	switch d.Content {
	case iceberg.EntryContentData:
		if content != iceberg.ManifestContentData {
			return nil, errors.New("data file found in delete manifest")
		}
	case iceberg.EntryContentPosDeletes, iceberg.EntryContentEqDeletes:
		if content != iceberg.ManifestContentDeletes {
			return nil, errors.New("delete file found in data manifest")
		}
	default:
		return nil, fmt.Errorf("manifest entry has invalid content: %d", d.Content)
	}
	snap := e.Snap
	if snap == nil {
		id := m.SnapshotID()
		snap = &id
	}
	seq, fileSeq := e.Seq, e.FileSeq
	if mseq := m.SequenceNum(); mseq != -1 && (mseq == 0 || e.Status == iceberg.EntryStatusADDED) {
		if seq == nil {
			seq = &mseq
		}
		if fileSeq == nil {
			fileSeq = &mseq
		}
	}
	if inheritRowIDs && e.Status != iceberg.EntryStatusDELETED && d.FirstRowID == nil {
		id := *nextRowID
		if d.Records < 0 {
			return nil, fmt.Errorf("cannot inherit first row ID for data file %q: %w: record count must be non-negative: %d", d.Path, iceberg.ErrInvalidArgument, d.Records)
		}
		if id > (1<<63-1)-d.Records {
			return nil, fmt.Errorf("cannot inherit first row ID for data file %q: %w: row ID overflow", d.Path, iceberg.ErrInvalidArgument)
		}
		d.FirstRowID = &id
		*nextRowID = id + d.Records
	}
	// iceberg-go's Partition() is nil for an unpartitioned file.
	var partition map[int]any
	if len(d.Partition) > 0 {
		partition = make(map[int]any, len(d.Partition))
	}
	for name, v := range d.Partition {
		if id, ok := ms.nameToID[name]; ok {
			partition[id] = ms.convert(v, id, logical)
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, d.Content, d.Path, d.Format, partition, logical, nil, d.Records, d.Size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUnhandled, err)
	}
	b.BlockSizeInBytes(d.BlockSize)
	setMap(b.ColumnSizes, d.ColSizes)
	setMap(b.ValueCounts, d.ValueCounts)
	setMap(b.NullValueCounts, d.NullCounts)
	setMap(b.NaNValueCounts, d.NaNCounts)
	setMap(b.DistinctValueCounts, d.DistinctCounts)
	setMap(b.LowerBoundValues, d.Lower)
	setMap(b.UpperBoundValues, d.Upper)
	if d.Key != nil {
		b.KeyMetadata(*d.Key)
	}
	if d.Splits != nil {
		b.SplitOffsets(*d.Splits)
	}
	if d.EqualityIDs != nil {
		b.EqualityFieldIDs(*d.EqualityIDs)
	}
	if d.SortOrder != nil {
		b.SortOrderID(*d.SortOrder)
	}
	if d.FirstRowID != nil {
		b.FirstRowID(*d.FirstRowID)
	}
	if d.ReferencedFile != nil {
		b.ReferencedDataFile(*d.ReferencedFile)
	}
	if d.ContentOffset != nil {
		b.ContentOffset(*d.ContentOffset)
	}
	if d.ContentSizeBytes != nil {
		b.ContentSizeInBytes(*d.ContentSizeBytes)
	}
	return iceberg.NewManifestEntry(e.Status, snap, seq, fileSeq, b.Build()), nil
}

// setMap hands the key-value pairs kv to set as a map: nil when absent,
// empty when present with no pair, as iceberg-go's accessors return them.
func setMap[V any](set func(map[int]V) *iceberg.DataFileBuilder, kv *[]avroKV[V]) {
	if kv == nil {
		return
	}
	m := make(map[int]V, len(*kv))
	for _, p := range *kv {
		m[p.Key] = p.Value
	}
	set(m)
}

// convert is iceberg-go's conversion of a decoded partition value of
// field id to its Iceberg value (dataFile.convertAvroValueToIcebergType):
// by the Avro logical type (logical: the manifest's, see
// [ManifestReader.dayDates]), the decoded value whichever Go type twmb/avro
// gives it (rich with a logical type, raw without).
func (ms *manifestSchema) convert(v any, id int, logical map[int]string) any {
	if v == nil {
		return nil
	}
	switch logical[id] {
	case atype.Date:
		switch val := v.(type) {
		case time.Time:
			return iceberg.Date(val.Truncate(24*time.Hour).Unix() / int64((24 * time.Hour).Seconds()))
		case int32:
			return iceberg.Date(val)
		}
	case atype.TimeMillis:
		if val, ok := v.(time.Duration); ok {
			return iceberg.Time(val.Microseconds())
		}
		if ms, ok := avroInt(v); ok {
			return iceberg.Time(ms * 1000)
		}
	case atype.TimeMicros:
		if val, ok := v.(time.Duration); ok {
			return iceberg.Time(val.Microseconds())
		}
		if us, ok := avroInt(v); ok {
			return iceberg.Time(us)
		}
	case atype.TimestampMillis:
		if val, ok := v.(time.Time); ok {
			return iceberg.Timestamp(val.UTC().UnixMicro())
		}
		if ms, ok := avroInt(v); ok {
			return iceberg.Timestamp(ms * 1000)
		}
	case atype.TimestampMicros:
		if val, ok := v.(time.Time); ok {
			return iceberg.Timestamp(val.UTC().UnixMicro())
		}
		if us, ok := avroInt(v); ok {
			return iceberg.Timestamp(us)
		}
	case atype.TimestampNanos:
		if val, ok := v.(time.Time); ok {
			return iceberg.TimestampNano(val.UTC().UnixNano())
		}
		if ns, ok := avroInt(v); ok {
			return iceberg.TimestampNano(ns)
		}
	case atype.Decimal:
		if rat, ok := v.(*big.Rat); ok {
			scale := ms.scales[id]
			unscaled := new(big.Int).Mul(rat.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
			unscaled.Div(unscaled, rat.Denom())
			return iceberg.DecimalLiteral{Scale: scale, Val: decimal128.FromBigInt(unscaled)}
		}
	case atype.UUID:
		if arr, ok := v.([16]byte); ok {
			return uuid.UUID(arr)
		}
	}
	return v
}

func avroInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	}
	return 0, false
}

// schema returns the parsed writer schema text, parsing it on first sight.
func (r *ManifestReader) schema(text []byte) (*manifestSchema, error) {
	r.mu.Lock()
	ms := r.schemas[string(text)]
	r.mu.Unlock()
	if ms != nil {
		return ms, nil
	}
	if len(text) == 0 {
		return nil, errors.New("reading manifest header: missing avro.schema")
	}
	sc, err := avro.Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("parsing manifest schema: %w", err)
	}
	ms = &manifestSchema{schema: sc, nameToID: map[string]int{}, logical: map[int]string{}, scales: map[int]int{}}
	part := field(field(sc.Root(), "data_file"), "partition")
	if part == nil {
		return nil, fmt.Errorf("%w: schema without data_file.partition", errUnhandled)
	}
	for _, f := range part.Fields {
		id, ok := avroFieldID(f)
		if !ok {
			continue
		}
		ms.nameToID[f.Name] = id
		typ := f.Type
		if typ.Type == atype.Union {
			typ = typ.Branches[len(typ.Branches)-1]
		}
		if typ.LogicalType != "" {
			ms.logical[id] = typ.LogicalType
			if typ.LogicalType == atype.Decimal {
				ms.scales[id] = typ.Scale
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cached := r.schemas[string(text)]; cached != nil {
		return cached, nil
	}
	if len(r.schemas) >= r.max {
		clear(r.schemas)
		clear(r.days)
	}
	r.schemas[string(text)] = ms
	r.parses++
	return ms, nil
}

// dayDates is the logical types of ms's partition fields in a manifest
// whose header carries the partition spec specJSON: a day transform's
// field is a date, as iceberg-go reads it, also when a writer wrote it as a
// plain int. A spec that cannot be read changes nothing, as in iceberg-go.
func (r *ManifestReader) dayDates(ms *manifestSchema, specJSON []byte) map[int]string {
	if len(specJSON) == 0 {
		return ms.logical
	}
	r.mu.Lock()
	logical, ok := r.days[daysKey{ms, string(specJSON)}]
	r.mu.Unlock()
	if ok {
		return logical
	}
	logical = ms.logical
	var fields []iceberg.PartitionField
	if json.Unmarshal(specJSON, &fields) == nil {
		cloned := false
		for _, f := range fields {
			if _, day := f.Transform.(iceberg.DayTransform); day && logical[f.FieldID] != atype.Date {
				if !cloned {
					logical, cloned = maps.Clone(ms.logical), true
				}
				logical[f.FieldID] = atype.Date
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.days) >= 16*r.max {
		clear(r.days)
	}
	r.days[daysKey{ms, string(specJSON)}] = logical
	return logical
}

// field is the type of the record field name of node, nil when node is
// nil or has no such field.
func field(node *avro.SchemaNode, name string) *avro.SchemaNode {
	if node == nil {
		return nil
	}
	for i := range node.Fields {
		if node.Fields[i].Name == name {
			return &node.Fields[i].Type
		}
	}
	return nil
}

// avroFieldID is the Iceberg field id of an Avro record field, as
// iceberg-go reads it.
func avroFieldID(f avro.SchemaField) (int, bool) {
	switch v := f.Props["field-id"].(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	}
	return 0, false
}

// readMeta reads the metadata map of an Avro object container's header:
// blocks of string keys and bytes values, a negative count followed by the
// block's size, until a zero count.
func readMeta(b []byte) ([]byte, map[string][]byte, error) {
	meta := map[string][]byte{}
	for {
		n, rest, err := readLong(b)
		if err != nil {
			return nil, nil, fmt.Errorf("reading manifest metadata: %w", err)
		}
		b = rest
		if n == 0 {
			return b, meta, nil
		}
		if n < 0 {
			n = -n
			if _, b, err = readLong(b); err != nil {
				return nil, nil, fmt.Errorf("reading manifest metadata: %w", err)
			}
		}
		for range n {
			var k, v []byte
			if k, b, err = readBytes(b); err != nil {
				return nil, nil, fmt.Errorf("reading manifest metadata: %w", err)
			}
			if v, b, err = readBytes(b); err != nil {
				return nil, nil, fmt.Errorf("reading manifest metadata: %w", err)
			}
			meta[string(k)] = v
		}
	}
}

// readLong reads an Avro long: a zig-zag varint.
func readLong(b []byte) (int64, []byte, error) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return v, b[n:], nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	n, b, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if n < 0 || n > int64(len(b)) {
		return nil, nil, io.ErrUnexpectedEOF
	}
	return b[:n], b[n:], nil
}
