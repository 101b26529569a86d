package rowsum

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/cespare/xxhash/v2"
)

// Sum is an order-independent digest of a multiset of rows (see the package
// documentation). The zero Sum digests no rows.
type Sum struct {
	Rows int64 `json:"rows"`
	// Sum and Xor are the sum modulo 2^64 and the xor of the row hashes.
	Sum uint64 `json:"sum"`
	Xor uint64 `json:"xor"`
	// Columns are the per-column digests, in field id (else name) order.
	Columns []ColumnSum `json:"columns,omitempty"`
}

// ColumnSum is the sum modulo 2^64 of one column's value hashes.
type ColumnSum struct {
	Name string `json:"name"`
	// FieldID is the column's Iceberg field id; zero when the batches
	// carried none.
	FieldID int    `json:"field_id,omitempty"`
	Sum     uint64 `json:"sum"`
}

// Equal reports whether s and o digest the same multiset of rows.
func (s Sum) Equal(o Sum) bool {
	return s.Rows == o.Rows && s.Sum == o.Sum && s.Xor == o.Xor
}

// String renders the row digest (not the columns).
func (s Sum) String() string {
	return fmt.Sprintf("rows=%d sum=%016x xor=%016x", s.Rows, s.Sum, s.Xor)
}

// Plus is the digest of the rows of s and o together. Their columns must be
// the same (digests of batches of one schema); a column only one of them
// has is kept as it is.
func (s Sum) Plus(o Sum) Sum {
	out := Sum{Rows: s.Rows + o.Rows, Sum: s.Sum + o.Sum, Xor: s.Xor ^ o.Xor}
	byKey := map[string]int{}
	for _, c := range s.Columns {
		byKey[c.key()] = len(out.Columns)
		out.Columns = append(out.Columns, c)
	}
	for _, c := range o.Columns {
		if i, ok := byKey[c.key()]; ok {
			out.Columns[i].Sum += c.Sum
			continue
		}
		out.Columns = append(out.Columns, c)
	}
	slices.SortFunc(out.Columns, compareColumns)
	return out
}

// Diff describes how got differs from want, for an error message: the row
// counts, and the columns whose values differ; "" when they are equal.
func Diff(want, got Sum) string {
	if want.Equal(got) {
		return ""
	}
	var parts []string
	if want.Rows != got.Rows {
		parts = append(parts, fmt.Sprintf("%d rows, want %d", got.Rows, want.Rows))
	}
	w := map[string]ColumnSum{}
	for _, c := range want.Columns {
		w[c.key()] = c
	}
	var cols []string
	seen := map[string]bool{}
	for _, c := range got.Columns {
		seen[c.key()] = true
		if wc, ok := w[c.key()]; !ok || wc.Sum != c.Sum {
			cols = append(cols, c.label())
		}
	}
	for _, c := range want.Columns {
		if !seen[c.key()] {
			cols = append(cols, c.label()+" (missing)")
		}
	}
	switch {
	case len(cols) > 0:
		parts = append(parts, "values differ in column "+strings.Join(cols, ", "))
	case want.Rows == got.Rows:
		parts = append(parts, "every column holds the same values, but they are combined into other rows")
	}
	return strings.Join(parts, "; ")
}

func (c ColumnSum) key() string {
	if c.FieldID != 0 {
		return "#" + strconv.Itoa(c.FieldID)
	}
	return c.Name
}

func (c ColumnSum) label() string {
	if c.FieldID != 0 {
		return fmt.Sprintf("%s (field %d)", c.Name, c.FieldID)
	}
	return c.Name
}

func compareColumns(a, b ColumnSum) int {
	if a.FieldID != 0 || b.FieldID != 0 {
		// Columns with ids first, in id order.
		if c := cmp.Compare(uint(a.FieldID-1), uint(b.FieldID-1)); c != 0 {
			return c
		}
	}
	return strings.Compare(a.Name, b.Name)
}

// Digest accumulates the Sum of the batches added to it. Every batch must
// have the same columns (in any order). Not safe for concurrent use: digest
// parts of a stream apart and add their Sums with [Sum.Plus].
type Digest struct {
	cols  []ColumnSum // in key order
	order []int       // for the current schema: batch column of each of cols
	last  *arrow.Schema
	sum   Sum
	rowh  []uint64
	valh  []uint64
}

// Add digests the rows of rec.
func (d *Digest) Add(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if err := d.bind(rec.Schema()); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	d.rowh = grow(d.rowh, n)
	d.valh = grow(d.valh, n)
	for i := range d.rowh {
		d.rowh[i] = rowSeed
	}
	for k, c := range d.order {
		if err := hashArray(rec.Column(c), d.valh); err != nil {
			return fmt.Errorf("digest column %s: %w", d.cols[k].Name, err)
		}
		var s uint64
		for i, v := range d.valh {
			s += v
			d.rowh[i] = combine(d.rowh[i], v)
		}
		d.cols[k].Sum += s
	}
	for _, h := range d.rowh {
		h = mix(h ^ rowSalt)
		d.sum.Sum += h
		d.sum.Xor ^= h
	}
	d.sum.Rows += int64(n)
	return nil
}

// Sum returns the digest of every row added so far.
func (d *Digest) Sum() Sum {
	s := d.sum
	s.Columns = slices.Clone(d.cols)
	return s
}

// bind maps the columns of schema to the digest's, which the first batch
// sets.
func (d *Digest) bind(schema *arrow.Schema) error {
	if d.last != nil && (d.last == schema || d.last.Equal(schema)) {
		return nil
	}
	keyed := make([]ColumnSum, schema.NumFields())
	idx := make([]int, schema.NumFields())
	for i, f := range schema.Fields() {
		keyed[i] = ColumnSum{Name: f.Name, FieldID: fieldID(f)}
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return compareColumns(keyed[a], keyed[b]) })
	if d.cols == nil {
		d.cols = make([]ColumnSum, len(idx))
		for k, i := range idx {
			d.cols[k] = keyed[i]
		}
	}
	if len(idx) != len(d.cols) {
		return fmt.Errorf("digest: batch has %d columns, earlier batches %d", len(idx), len(d.cols))
	}
	for k, i := range idx {
		if keyed[i].key() != d.cols[k].key() {
			return fmt.Errorf("digest: batch column %s is not among the earlier batches' columns", keyed[i].label())
		}
	}
	d.order, d.last = idx, schema
	return nil
}

// fieldID reads the Iceberg field id Arrow fields carry in their metadata.
func fieldID(f arrow.Field) int {
	if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok {
		if id, err := strconv.Atoi(v); err == nil && id > 0 {
			return id
		}
	}
	return 0
}

func grow(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	return s[:n]
}

const (
	rowSeed  = 0x243f6a8885a308d3 // digits of pi: fixed, so sums compare across processes
	rowSalt  = 0x13198a2e03707344
	nullHash = 0xa4093822299f31d0
	intTag   = 0x082efa98ec4e6c89
	uintTag  = 0x452821e638d01377
	fltTag   = 0xbe5466cf34e90c6c
	timeTag  = 0xc0ac29b7c97c50dd
	dayTag   = 0x3f84d5b5b5470917
	decTag   = 0x9216d5d98979fb1b
	boolTag  = 0xd1310ba698dfb5ac
	listTag  = 0x2ffd72dbd01adfb7
	mapTag   = 0xb8e1afed6a267e96
	strTag   = 0xba7c9045f12c7f99
	otherTag = 0x24a19947b3916cf7
)

// mix is the splitmix64 finalizer.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// combine folds v into h, order-dependently.
func combine(h, v uint64) uint64 { return mix(h*0x9e3779b97f4a7c15 + v) }

func hashBytes(b []byte) uint64 { return mix(sum64(b) ^ strTag + uint64(len(b))) }

func hashString(s string) uint64 {
	return hashBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// hashArray sets out[i] to the hash of arr's value i; len(out) is arr.Len().
func hashArray(arr arrow.Array, out []uint64) error {
	out = out[:arr.Len()]
	switch a := arr.(type) {
	case *array.Null:
		for i := range out {
			out[i] = nullHash
		}
		return nil
	case *array.Boolean:
		f, t := mix(0^boolTag), mix(1^boolTag)
		bits, off := bitmap(a.Data(), 1)
		for i := range out {
			if bitutil.BitIsSet(bits, off+i) {
				out[i] = t
			} else {
				out[i] = f
			}
		}
	case *array.Int8:
		ints(a.Values(), out)
	case *array.Int16:
		ints(a.Values(), out)
	case *array.Int32:
		ints(a.Values(), out)
	case *array.Int64:
		ints(a.Values(), out)
	case *array.Uint8:
		uints(a.Values(), out)
	case *array.Uint16:
		uints(a.Values(), out)
	case *array.Uint32:
		uints(a.Values(), out)
	case *array.Uint64:
		uints(a.Values(), out)
	case *array.Float32:
		for i, v := range a.Values() {
			out[i] = mix(math.Float64bits(float64(v)) ^ fltTag)
		}
	case *array.Float64:
		for i, v := range a.Values() {
			out[i] = mix(math.Float64bits(v) ^ fltTag)
		}
	case *array.Date32:
		for i, v := range a.Values() {
			out[i] = mix(uint64(int64(v)) ^ dayTag)
		}
	case *array.Date64:
		for i, v := range a.Values() {
			// Milliseconds of a whole day: the day, as date32 hashes.
			out[i] = mix(uint64(int64(v)/86_400_000) ^ dayTag)
		}
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		for i, v := range a.Values() {
			out[i] = instant(int64(v), unit)
		}
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		for i, v := range a.Values() {
			out[i] = instant(int64(v), unit)
		}
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		for i, v := range a.Values() {
			out[i] = instant(int64(v), unit)
		}
	case *array.Decimal128:
		scale := uint64(a.DataType().(*arrow.Decimal128Type).Scale)
		for i, v := range a.Values()[:len(out)] {
			out[i] = combine(combine(decTag^scale, uint64(v.HighBits())), v.LowBits())
		}
	case *array.Decimal256:
		scale := uint64(a.DataType().(*arrow.Decimal256Type).Scale)
		for i := range out {
			h := decTag ^ scale
			w := a.Value(i).Array()
			for j := 3; j >= 0; j-- {
				h = combine(h, w[j])
			}
			out[i] = h
		}
	case *array.String:
		varBytes(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.LargeString:
		varBytes(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.StringView:
		strs(a, out)
	case *array.Binary:
		varBytes(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.LargeBinary:
		varBytes(a.ValueOffsets(), a.ValueBytes(), out)
	case *array.BinaryView:
		byts(a, out)
	case *array.FixedSizeBinary:
		byts(a, out)
	case *array.Dictionary:
		dict := a.Dictionary()
		dh := make([]uint64, dict.Len())
		if err := hashArray(dict, dh); err != nil {
			return err
		}
		if err := lookup(a.Indices(), dh, out); err != nil {
			return err
		}
	case array.ExtensionArray:
		return hashArray(a.Storage(), out)
	case *array.Struct:
		for i := range out {
			out[i] = uint64(a.NumField())
		}
		ch := make([]uint64, len(out))
		for f := range a.NumField() {
			if err := hashArray(a.Field(f), ch); err != nil {
				return err
			}
			for i, v := range ch {
				out[i] = combine(out[i], v)
			}
		}
	case array.ListLike:
		tag := uint64(listTag)
		if _, ok := a.(*array.Map); ok {
			tag = mapTag
		}
		vals := a.ListValues()
		vh := make([]uint64, vals.Len())
		if err := hashArray(vals, vh); err != nil {
			return err
		}
		for i := range out {
			lo, hi := a.ValueOffsets(i)
			h := combine(tag, uint64(hi-lo))
			for _, v := range vh[lo:hi] {
				h = combine(h, v)
			}
			out[i] = h
		}
	default:
		// Intervals, durations, half floats, unions: their text form,
		// which is canonical within one type.
		for i := range out {
			if a.IsValid(i) {
				out[i] = mix(hashString(a.ValueStr(i)) ^ otherTag ^ uint64(a.DataType().ID()))
			}
		}
	}
	if arr.NullN() > 0 {
		nulls(arr.Data(), out)
	}
	return nil
}

// bitmap is the bitmap of buffer i of d and the bit offset of d's first
// element in it (nil when the buffer is absent).
func bitmap(d arrow.ArrayData, i int) ([]byte, int) {
	b := d.Buffers()[i]
	if b == nil {
		return nil, 0
	}
	return b.Bytes(), d.Offset()
}

// nulls sets out[i] to nullHash where d's element i is null, a byte of the
// validity bitmap at a time where it can.
func nulls(d arrow.ArrayData, out []uint64) {
	bits, off := bitmap(d, 0)
	if len(bits) == 0 {
		// No validity bitmap (unions, run-end encoded): no value is null
		// by it, as arrow's IsNull has it.
		return
	}
	i := 0
	for ; i < len(out) && (off+i)%8 != 0; i++ {
		if !bitutil.BitIsSet(bits, off+i) {
			out[i] = nullHash
		}
	}
	for ; i+8 <= len(out); i += 8 {
		b := bits[(off+i)/8]
		if b == 0xff {
			continue
		}
		for j := range 8 {
			if b&(1<<j) == 0 {
				out[i+j] = nullHash
			}
		}
	}
	for ; i < len(out); i++ {
		if !bitutil.BitIsSet(bits, off+i) {
			out[i] = nullHash
		}
	}
}

// varBytes hashes the values of a string or binary array from its offsets
// (len(out)+1 of them) and its value bytes, which start at offs[0].
func varBytes[O int32 | int64](offs []O, data []byte, out []uint64) {
	offs = offs[:len(out)+1]
	base := offs[0]
	for i := range out {
		out[i] = hashBytes(data[offs[i]-base : offs[i+1]-base])
	}
}

// lookup sets out[i] to the dictionary hash dh of index i of indices; a
// null index's out[i] is left for the null pass.
func lookup(indices arrow.Array, dh []uint64, out []uint64) error {
	switch ix := indices.(type) {
	case *array.Int8:
		return look(ix, ix.Values(), dh, out)
	case *array.Int16:
		return look(ix, ix.Values(), dh, out)
	case *array.Int32:
		return look(ix, ix.Values(), dh, out)
	case *array.Int64:
		return look(ix, ix.Values(), dh, out)
	case *array.Uint8:
		return look(ix, ix.Values(), dh, out)
	case *array.Uint16:
		return look(ix, ix.Values(), dh, out)
	case *array.Uint32:
		return look(ix, ix.Values(), dh, out)
	case *array.Uint64:
		return look(ix, ix.Values(), dh, out)
	}
	return fmt.Errorf("dictionary index type %s", indices.DataType())
}

func look[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](ix arrow.Array, vals []T, dh []uint64, out []uint64) error {
	vals = vals[:len(out)]
	if ix.NullN() == 0 {
		for i, v := range vals {
			if uint64(v) >= uint64(len(dh)) {
				return fmt.Errorf("dictionary index %d out of range (%d values)", v, len(dh))
			}
			out[i] = dh[v]
		}
		return nil
	}
	for i, v := range vals {
		if ix.IsValid(i) {
			if uint64(v) >= uint64(len(dh)) {
				return fmt.Errorf("dictionary index %d out of range (%d values)", v, len(dh))
			}
			out[i] = dh[v]
		}
	}
	return nil
}

func strs[A interface{ Value(int) string }](a A, out []uint64) {
	for i := range out {
		out[i] = hashString(a.Value(i))
	}
}

func byts[A interface{ Value(int) []byte }](a A, out []uint64) {
	for i := range out {
		out[i] = hashBytes(a.Value(i))
	}
}

func ints[T int8 | int16 | int32 | int64](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = mix(uint64(int64(v)) ^ intTag)
	}
}

func uints[T uint8 | uint16 | uint32 | uint64](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = mix(uint64(v) ^ uintTag)
	}
}

// instant hashes a time value as the instant it names: the value in the
// coarsest unit that holds it exactly, so 1,000 ms and 1 s hash alike.
func instant(v int64, unit arrow.TimeUnit) uint64 {
	for unit > arrow.Second && v%1000 == 0 {
		v /= 1000
		unit--
	}
	return combine(timeTag^uint64(unit), uint64(v))
}

// xxhash64's primes, for [sum64].
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// sum64 is xxhash.Sum64(b), computed here in Go for values under 32 bytes:
// most values of a table's string columns are that short, and for them the
// call into the library's assembly costs about as much as the hash.
func sum64(b []byte) uint64 {
	n := len(b)
	if n >= 32 {
		return xxhash.Sum64(b)
	}
	h := prime5 + uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		k := binary.LittleEndian.Uint64(b) * prime2
		k = bits.RotateLeft64(k, 31) * prime1
		h ^= k
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}
