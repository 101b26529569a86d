package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Bucket counts for [FitQuantiles].
const (
	// DefaultQuantileBuckets is the number of buckets FitQuantiles uses when asked for 0. It is
	// in line with Delta Lake's 1000 range ids (spark.databricks.io.skipping.mdc.rangeId.max).
	DefaultQuantileBuckets = 1024
	// MaxQuantileBuckets is the largest number of buckets per column, so that a coordinate
	// (bucket id plus a null slot) fits in 17 bits.
	MaxQuantileBuckets = 1 << 16
)

// Quantiles holds, per column, the boundaries that split a sample of its values into
// equal-count buckets. Rank-normalized z-order and Hilbert keys replace each value by its
// bucket id, so that every column spans the same coordinate range whatever its raw bit width or
// skew. Quantiles are immutable once fitted and safe for concurrent use.
type Quantiles struct {
	cols []*quantileCol
}

type quantileCol struct {
	name   string
	typ    arrow.DataType
	fn     valueFn
	bounds [][]byte // strictly increasing ascending encodings (see ascCodec)
	// For types whose encodings all have one width of at most 8 bytes (integers, dates,
	// floats), the bounds as big-endian integers: one integer compare per search step.
	width    int
	bounds64 []uint64
	// guide narrows the search in bounds64: the range bounds64[0] …
	// bounds64[last] is cut into len(guide)-1 equal slots of 1<<shift values,
	// and guide[s] is the number of bounds below slot s's first value, so a
	// value in slot s has between guide[s] and guide[s+1] bounds at or below
	// it. Nil when there are fewer than two bounds.
	guide []int32
	shift uint
}

// FitQuantiles fits bucket boundaries for the named columns (case-insensitive) on the rows of
// samples, which must agree on those columns' types. Nulls are left out of the fit; they get a
// slot of their own when keys are built. For n non-null sample values, the boundaries are the
// values of rank n·i/buckets (i = 1 … buckets-1); repeated values collapse, so a value that
// fills several buckets' worth of the sample gets one bucket and the column fewer buckets. A
// column with no non-null values has a single bucket. buckets 0 means
// [DefaultQuantileBuckets]; at most [MaxQuantileBuckets].
func FitQuantiles(samples []arrow.RecordBatch, columns []string, buckets int) (*Quantiles, error) {
	if buckets == 0 {
		buckets = DefaultQuantileBuckets
	}
	if buckets < 1 || buckets > MaxQuantileBuckets {
		return nil, fmt.Errorf("fit quantiles: buckets %d out of range [1, %d]", buckets, MaxQuantileBuckets)
	}
	if len(columns) == 0 {
		return nil, errors.New("fit quantiles: no columns")
	}
	if len(samples) == 0 {
		return nil, errors.New("fit quantiles: no sample records")
	}
	q := &Quantiles{}
	var errs []error
	seen := map[string]bool{}
	for _, name := range columns {
		if seen[strings.ToLower(name)] {
			errs = append(errs, fmt.Errorf("duplicate column %q", name))
			continue
		}
		seen[strings.ToLower(name)] = true
		qc, err := fitColumn(samples, name, buckets)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		q.cols = append(q.cols, qc)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("fit quantiles: %w", errors.Join(errs...))
	}
	return q, nil
}

func fitColumn(samples []arrow.RecordBatch, name string, buckets int) (*quantileCol, error) {
	var (
		qc    *quantileCol
		arena []byte
		ends  []int
	)
	for si, rec := range samples {
		if rec == nil {
			return nil, fmt.Errorf("sample %d is nil", si)
		}
		idx, err := findField(rec.Schema(), name)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", si, err)
		}
		f := rec.Schema().Field(idx)
		if qc == nil {
			fn, err := ascCodec(f.Type)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", f.Name, err)
			}
			qc = &quantileCol{name: f.Name, typ: f.Type, fn: fn}
		} else if !arrow.TypeEqual(qc.typ, f.Type) {
			return nil, fmt.Errorf("column %q is %s in sample %d but %s in sample 0", f.Name, f.Type, si, qc.typ)
		}
		arr := rec.Column(idx)
		for row := range int(rec.NumRows()) {
			if nullAt(arr, row) {
				continue
			}
			arena, err = qc.fn(arena, arr, row)
			if err != nil {
				return nil, fmt.Errorf("column %q sample %d row %d: %w", f.Name, si, row, err)
			}
			ends = append(ends, len(arena))
		}
	}
	vals := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		vals[i] = arena[start:end:end]
		start = end
	}
	slices.SortFunc(vals, bytes.Compare)
	n := len(vals)
	for i := 1; i < buckets && n > 0; i++ {
		v := vals[int(int64(n)*int64(i)/int64(buckets))]
		if len(qc.bounds) == 0 || bytes.Compare(v, qc.bounds[len(qc.bounds)-1]) > 0 {
			qc.bounds = append(qc.bounds, v)
		}
	}
	// The first boundary must leave something below it; a boundary equal to the minimum
	// would make bucket 0 empty.
	if len(qc.bounds) > 0 && bytes.Equal(qc.bounds[0], vals[0]) {
		qc.bounds = qc.bounds[1:]
	}
	qc.index64()
	return qc, nil
}

// quantilesJSON is the persisted form of Quantiles. Bounds are the ascending key encodings
// (base64 in JSON); Fingerprint is Arrow's type fingerprint, checked when loading.
type quantilesJSON struct {
	Columns []quantileColumnJSON `json:"columns"`
}

type quantileColumnJSON struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Fingerprint string   `json:"fingerprint"`
	Bounds      [][]byte `json:"bounds"`
}

// MarshalJSON persists the boundaries, so that a plan approved on a simulation can be
// rewritten with exactly the keys it was simulated with. Load them with [UnmarshalQuantiles].
func (q *Quantiles) MarshalJSON() ([]byte, error) {
	out := quantilesJSON{Columns: make([]quantileColumnJSON, len(q.cols))}
	for i, c := range q.cols {
		out.Columns[i] = quantileColumnJSON{Name: c.name, Type: c.typ.String(), Fingerprint: c.typ.Fingerprint(), Bounds: c.bounds}
		if out.Columns[i].Bounds == nil {
			out.Columns[i].Bounds = [][]byte{}
		}
	}
	return marshal(out)
}

// UnmarshalQuantiles loads quantiles written by [Quantiles.MarshalJSON], binding each column to
// the field of the same name (case-insensitive) in schema. It fails if a column is missing,
// its type changed since the fit, or the boundaries are not strictly increasing.
func UnmarshalQuantiles(data []byte, schema *arrow.Schema) (*Quantiles, error) {
	var in quantilesJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("load quantiles: %w", err)
	}
	if schema == nil {
		return nil, errors.New("load quantiles: nil schema")
	}
	q := &Quantiles{}
	var errs []error
	for _, c := range in.Columns {
		f, err := persistedField(schema, c.Name, c.Type, c.Fingerprint, "fitted")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fn, err := ascCodec(f.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", c.Name, err))
			continue
		}
		for i := 1; i < len(c.Bounds); i++ {
			if bytes.Compare(c.Bounds[i-1], c.Bounds[i]) >= 0 {
				errs = append(errs, fmt.Errorf("column %q: boundaries %d and %d are not increasing", c.Name, i-1, i))
				break
			}
		}
		if len(c.Bounds) > MaxQuantileBuckets-1 {
			errs = append(errs, fmt.Errorf("column %q: %d boundaries, at most %d", c.Name, len(c.Bounds), MaxQuantileBuckets-1))
		}
		qc := &quantileCol{name: f.Name, typ: f.Type, fn: fn, bounds: c.Bounds}
		if w := fixedEncodingWidth(f.Type); w > 0 && w <= 8 {
			for _, b := range c.Bounds {
				if len(b) != w {
					errs = append(errs, fmt.Errorf("column %q: a boundary of %d bytes for a %d-byte type", c.Name, len(b), w))
					break
				}
			}
		}
		qc.index64()
		q.cols = append(q.cols, qc)
	}
	if len(in.Columns) == 0 {
		errs = append(errs, errors.New("no columns"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load quantiles: %w", errors.Join(errs...))
	}
	return q, nil
}

// persistedField binds a column persisted with its type's name and fingerprint to the
// field of that name in schema, failing when the schema lacks it or its type changed
// since the column was (what:) fitted or learned.
func persistedField(schema *arrow.Schema, name, typ, fingerprint, what string) (arrow.Field, error) {
	idx, err := findField(schema, name)
	if err != nil {
		return arrow.Field{}, err
	}
	f := schema.Field(idx)
	if f.Type.Fingerprint() != fingerprint {
		return arrow.Field{}, fmt.Errorf("column %q was %s as %s, schema has %s", name, what, typ, f.Type)
	}
	return f, nil
}

// Columns returns the fitted columns as the sample schema spells them.
func (q *Quantiles) Columns() []string {
	names := make([]string, len(q.cols))
	for i, c := range q.cols {
		names[i] = c.name
	}
	return names
}

// Buckets returns the number of non-null buckets of column (case-insensitive), or false if the
// column was not fitted.
func (q *Quantiles) Buckets(column string) (int, bool) {
	c, err := q.column(column)
	if err != nil {
		return 0, false
	}
	return len(c.bounds) + 1, true
}

// Bucket returns the bucket of the value at row of rec in column: an id in
// [0, Buckets(column)), or null=true for a null value. Values equal to a boundary go to the
// bucket that the boundary starts; values outside the sample's range go to the first or last
// bucket.
func (q *Quantiles) Bucket(column string, rec arrow.RecordBatch, row int) (bucket int, null bool, err error) {
	c, err := q.column(column)
	if err != nil {
		return 0, false, err
	}
	idx, err := findField(rec.Schema(), c.name)
	if err != nil {
		return 0, false, err
	}
	if row < 0 || int64(row) >= rec.NumRows() {
		return 0, false, fmt.Errorf("%w: row %d out of range [0, %d)", ErrSchemaMismatch, row, rec.NumRows())
	}
	arr := rec.Column(idx)
	if !arrow.TypeEqual(arr.DataType(), c.typ) {
		return 0, false, fmt.Errorf("%w: column %q is %s, quantiles were fitted on %s", ErrSchemaMismatch, c.name, arr.DataType(), c.typ)
	}
	if nullAt(arr, row) {
		return 0, true, nil
	}
	enc, err := c.fn(nil, arr, row)
	if err != nil {
		return 0, false, err
	}
	return c.bucketOf(enc), false, nil
}

func (q *Quantiles) column(name string) (*quantileCol, error) {
	for _, c := range q.cols {
		if c.name == name {
			return c, nil
		}
	}
	for _, c := range q.cols {
		if strings.EqualFold(c.name, name) {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: no quantiles for column %q (fitted: %s)", ErrColumnNotFound, name, strings.Join(q.Columns(), ", "))
}

// index64 fills bounds64 when every boundary has the same width of at most 8 bytes and the
// type's encoding has a fixed width (so values have that width too).
func (c *quantileCol) index64() {
	w := fixedEncodingWidth(c.typ)
	if w == 0 || w > 8 {
		return
	}
	c.width = w
	c.bounds64 = make([]uint64, len(c.bounds))
	for i, b := range c.bounds {
		c.bounds64[i] = be64(b)
	}
	c.indexGuide()
}

// indexGuide builds c.guide: about four slots per bound, at most 1<<16.
func (c *quantileCol) indexGuide() {
	b := c.bounds64
	if len(b) < 2 {
		return
	}
	lo, span := b[0], b[len(b)-1]-b[0]
	slots := min(4*len(b), 1<<16)
	c.shift = 0
	for span>>c.shift >= uint64(slots) {
		c.shift++
	}
	n := int(span>>c.shift) + 1 // slots in use; the last holds b[len(b)-1]
	c.guide = make([]int32, n+1)
	i := 0
	for s := range n + 1 {
		start := lo + uint64(s)<<c.shift
		if s == n {
			i = len(b)
		}
		for i < len(b) && b[i] < start {
			i++
		}
		c.guide[s] = int32(i)
	}
}

// be64 reads up to 8 bytes as a big-endian integer, left-aligned so that order is kept.
func be64(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u << (8 * (8 - len(b)))
}

// fixedEncodingWidth is the width of ascCodec's encoding for fixed-width types, 0 otherwise.
func fixedEncodingWidth(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8, arrow.BOOL:
		return 1
	case arrow.INT16, arrow.UINT16:
		return 2
	case arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32, arrow.DECIMAL32, arrow.FLOAT16, arrow.FLOAT32:
		return 4
	case arrow.INT64, arrow.UINT64, arrow.DATE64, arrow.TIME64, arrow.DURATION, arrow.DECIMAL64, arrow.FLOAT64:
		return 8
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).Unit == arrow.Nanosecond {
			return 10
		}
		return 8
	}
	return 0
}

// bucketOf returns the number of boundaries <= enc.
func (c *quantileCol) bucketOf(enc []byte) int {
	if c.bounds64 != nil && len(enc) == c.width {
		v := be64(enc)
		lo, hi := 0, len(c.bounds64)
		if c.guide != nil {
			// Keys are looked up in arbitrary order and a binary search
			// over a thousand bounds mispredicts most of its ten steps:
			// the guide leaves a range of a bound or two.
			switch first := c.bounds64[0]; {
			case v < first:
				return 0
			case v >= c.bounds64[hi-1]:
				return hi
			default:
				s := (v - first) >> c.shift
				lo, hi = int(c.guide[s]), int(c.guide[s+1])
			}
		}
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if c.bounds64[mid] <= v {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return lo
	}
	lo, hi := 0, len(c.bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(c.bounds[mid], enc) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
