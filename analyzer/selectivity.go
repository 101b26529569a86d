package analyzer

import (
	"encoding/binary"
	"github.com/floe-project/floe/expr"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/floe-project/floe/lake"
)

// Default selectivities used when a table's statistics cannot answer.
const (
	// DefaultStringNDV is the number of distinct values assumed for a string,
	// binary or UUID column: file bounds bound the values but say nothing
	// of how many there are. 100 sits between enums (a handful) and ids
	// (one per row), as System R's 1/10 is too coarse for ids and 1/rows
	// too fine for categories.
	DefaultStringNDV = 100
	// DefaultRangeSelectivity is the fraction of rows an open range
	// (x < ?, x >= ?) keeps when its literal is unknown (System R's 1/3).
	DefaultRangeSelectivity = 1.0 / 3
	// DefaultBetweenSelectivity is the fraction a closed range (between ?
	// and ?) keeps when a literal is unknown (System R's 1/4).
	DefaultBetweenSelectivity = 1.0 / 4
	// DefaultNullSelectivity is the fraction of rows assumed null when no
	// file records null counts for the column.
	DefaultNullSelectivity = 0.05
)

// class is how a column's values map onto the number line selectivity
// estimates work on.
type class int

const (
	clsOther  class = iota // no order usable for estimates
	clsInt                 // int, long: discrete
	clsDate                // days since the epoch: discrete
	clsBool                // 0/1: discrete
	clsTime                // time of day in microseconds
	clsTS                  // microseconds since the epoch (nanosecond columns too)
	clsFloat               // float, double, decimal
	clsString              // string, binary, fixed, uuid: first 8 bytes as a number
)

func (c class) discrete() bool { return c == clsInt || c == clsDate || c == clsBool }

func classOf(t iceberg.Type) class {
	switch t.(type) {
	case iceberg.Int32Type, iceberg.Int64Type:
		return clsInt
	case iceberg.DateType:
		return clsDate
	case iceberg.BooleanType:
		return clsBool
	case iceberg.TimeType:
		return clsTime
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return clsTS
	case iceberg.Float32Type, iceberg.Float64Type, iceberg.DecimalType:
		return clsFloat
	case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
		return clsString
	}
	return clsOther
}

// Stats are the column statistics of one table's current snapshot that
// selectivity estimates read: per data file, the record count, null count
// and lower/upper bounds of each column. Build them with [NewStats]; a
// Stats caches each column's summary on first use and is not safe for
// concurrent use.
type Stats struct {
	st     *lake.State
	rows   int64
	cols   map[int]*columnStats
	byName map[string]*columnStats // nil value: no such column
	parts  map[int]partitioning
}

// fileStats is one data file's view of one column.
type fileStats struct {
	lo, hi  float64
	records int64
	nonNull int64
	ndv     float64 // distinct values in the file, estimated
}

// columnStats summarizes one column over the live data files.
type columnStats struct {
	id       int
	name     string
	typ      iceberg.Type
	cls      class
	files    []fileStats // files with both bounds
	bounded  int64       // records of files with bounds
	nonNullB int64       // non-null records of files with bounds
	unknown  int64       // non-null records of files without bounds
	nulls    int64       // nulls, over files that record them
	nullRecs int64       // records of files that record null counts
	min, max float64
	ndv      float64 // distinct values of the column, estimated
}

// NewStats prepares estimates over st's live data files. A nil st (or one
// without metadata) gives a Stats that answers every question with the
// defaults.
func NewStats(st *lake.State) *Stats {
	if st != nil && st.Metadata == nil {
		st = nil // a State not loaded by lake.LoadState: no schema to read
	}
	s := &Stats{st: st, cols: map[int]*columnStats{}, byName: map[string]*columnStats{}, parts: map[int]partitioning{}}
	if st != nil {
		for i := range st.DataFiles {
			s.rows += st.DataFiles[i].Records
		}
	}
	return s
}

// Rows is the number of records in the table's live data files.
func (s *Stats) Rows() int64 { return s.rows }

// column returns the summary of column name (matched case-insensitively),
// or nil when the table has no such primitive column.
func (s *Stats) column(name string) *columnStats {
	if s.st == nil {
		return nil
	}
	if c, ok := s.byName[name]; ok {
		return c
	}
	c := s.lookup(name)
	s.byName[name] = c
	return c
}

func (s *Stats) lookup(name string) *columnStats {
	id, canon, ok := s.st.FieldID(name)
	if !ok {
		return nil
	}
	if c, ok := s.cols[id]; ok {
		return c
	}
	typ, ok := s.st.Metadata.CurrentSchema().FindTypeByID(id)
	if !ok {
		return nil
	}
	if _, prim := typ.(iceberg.PrimitiveType); !prim {
		s.cols[id] = nil
		return nil
	}
	c := &columnStats{id: id, name: canon, typ: typ, cls: classOf(typ), min: math.Inf(1), max: math.Inf(-1)}
	var maxFileNDV int64
	for i := range s.st.DataFiles {
		f := &s.st.DataFiles[i]
		nonNull := f.Records
		if n, ok := f.NullCounts[id]; ok {
			c.nulls += n
			c.nullRecs += f.Records
			nonNull = max(0, f.Records-n)
		}
		lo, okLo := literalNumber(f.Lower[id])
		hi, okHi := literalNumber(f.Upper[id])
		if !okLo || !okHi || c.cls == clsOther || hi < lo {
			if vc, ok := f.ValueCounts[id]; ok && vc == f.NullCounts[id] {
				continue // every value null: nothing to estimate from or for
			}
			c.unknown += nonNull
			continue
		}
		fs := fileStats{lo: lo, hi: hi, records: f.Records, nonNull: nonNull}
		if d, ok := distinctCount(f, id); ok {
			fs.ndv = float64(d)
			maxFileNDV = max(maxFileNDV, d)
		} else {
			fs.ndv = fileNDV(c.cls, lo, hi, nonNull)
		}
		c.files = append(c.files, fs)
		c.bounded += f.Records
		c.nonNullB += nonNull
		c.min = math.Min(c.min, lo)
		c.max = math.Max(c.max, hi)
	}
	nonNull := float64(c.nonNullB + c.unknown)
	switch {
	case maxFileNDV > 0:
		// Distinct counts per file give a lower bound of the column's
		// NDV; for the low-cardinality columns writers bother to count,
		// every file usually holds every value, so it is also the value.
		c.ndv = float64(maxFileNDV)
	case len(c.files) == 0:
		c.ndv = math.Min(DefaultStringNDV, math.Max(1, nonNull))
	default:
		c.ndv = fileNDV(c.cls, c.min, c.max, int64(nonNull))
	}
	s.cols[id] = c
	return c
}

func distinctCount(f *lake.File, id int) (int64, bool) {
	if f.DataFile == nil {
		return 0, false
	}
	d, ok := f.DataFile.DistinctValueCounts()[id]
	return d, ok && d > 0
}

// fileNDV estimates the distinct values among n non-null values bounded by
// [lo, hi]: one when the bounds are equal; for discrete types the width of
// the range capped by n; for continuous ones n (every value distinct); for
// strings DefaultStringNDV capped by n.
func fileNDV(cls class, lo, hi float64, n int64) float64 {
	if n <= 0 {
		return 1
	}
	if lo == hi {
		return 1
	}
	switch {
	case cls.discrete():
		return math.Max(1, math.Min(hi-lo+1, float64(n)))
	case cls == clsString:
		return math.Min(DefaultStringNDV, float64(n))
	}
	return float64(n)
}

// nullFraction is the fraction of rows that are null, and whether null
// counts were recorded.
func (c *columnStats) nullFraction() (float64, bool) {
	if c == nil || c.nullRecs == 0 {
		return DefaultNullSelectivity, false
	}
	return float64(c.nulls) / float64(c.nullRecs), true
}

// typicalEq is the selectivity of an equality with an unknown literal:
// the non-null fraction over the column's NDV.
func (c *columnStats) typicalEq() float64 {
	if c == nil {
		return 1.0 / DefaultStringNDV
	}
	nf, _ := c.nullFraction()
	return clamp01((1 - nf) / math.Max(1, c.ndv))
}

// interval is a range of column values in the column's number line. An
// unset end is unbounded.
type interval struct {
	lo, hi         float64
	loSet, hiSet   bool
	loIncl, hiIncl bool
}

func (iv interval) intersect(o interval) interval {
	if o.loSet && (!iv.loSet || o.lo > iv.lo || (o.lo == iv.lo && !o.loIncl)) {
		iv.lo, iv.loSet, iv.loIncl = o.lo, true, o.loIncl
	}
	if o.hiSet && (!iv.hiSet || o.hi < iv.hi || (o.hi == iv.hi && !o.hiIncl)) {
		iv.hi, iv.hiSet, iv.hiIncl = o.hi, true, o.hiIncl
	}
	return iv
}

// closed reports whether both ends are set.
func (iv interval) closed() bool { return iv.loSet && iv.hiSet }

// rangeFraction is the fraction of rows in iv under a piecewise-uniform
// model: within each file, values are spread evenly between its bounds.
func (c *columnStats) rangeFraction(iv interval, total int64) (float64, bool) {
	if c == nil || len(c.files) == 0 || total <= 0 {
		return 0, false
	}
	var kept float64
	for _, f := range c.files {
		kept += float64(f.nonNull) * overlap(c.cls, f.lo, f.hi, iv)
	}
	return c.extend(kept, total), true
}

// extend scales rows kept among files with bounds to the files without and
// divides by the table's rows.
func (c *columnStats) extend(kept float64, total int64) float64 {
	if c.nonNullB > 0 && c.unknown > 0 {
		kept += float64(c.unknown) * kept / float64(c.nonNullB)
	}
	return clamp01(kept / float64(total))
}

// overlap is the fraction of a file's values in [lo, hi] that fall in iv.
func overlap(cls class, lo, hi float64, iv interval) float64 {
	if cls.discrete() {
		a, b := lo, hi
		if iv.loSet {
			l := math.Ceil(iv.lo)
			if !iv.loIncl && l == iv.lo {
				l++
			}
			a = math.Max(a, l)
		}
		if iv.hiSet {
			h := math.Floor(iv.hi)
			if !iv.hiIncl && h == iv.hi {
				h--
			}
			b = math.Min(b, h)
		}
		if b < a {
			return 0
		}
		return (b - a + 1) / (hi - lo + 1)
	}
	if lo == hi {
		if iv.loSet && (lo < iv.lo || (lo == iv.lo && !iv.loIncl)) {
			return 0
		}
		if iv.hiSet && (lo > iv.hi || (lo == iv.hi && !iv.hiIncl)) {
			return 0
		}
		return 1
	}
	a, b := lo, hi
	if iv.loSet {
		a = math.Max(a, iv.lo)
	}
	if iv.hiSet {
		b = math.Min(b, iv.hi)
	}
	if b < a {
		return 0
	}
	if b == a { // a point of a continuous range: one value of the file
		return 0
	}
	return (b - a) / (hi - lo)
}

// eqFraction is the fraction of rows equal to v: over the files whose
// bounds contain v, non-null records over the file's NDV.
func (c *columnStats) eqFraction(v float64, total int64) (float64, bool) {
	if c == nil || len(c.files) == 0 || total <= 0 {
		return 0, false
	}
	var kept float64
	for _, f := range c.files {
		if v < f.lo || v > f.hi {
			continue
		}
		kept += float64(f.nonNull) / math.Max(1, f.ndv)
	}
	return c.extend(kept, total), true
}

// width is the span of iv clamped to the column's global bounds, in
// column units; false when the column has no bounds.
func (c *columnStats) width(iv interval) (float64, bool) {
	if c == nil || len(c.files) == 0 {
		return 0, false
	}
	lo, hi := c.min, c.max
	if iv.loSet {
		lo = math.Max(lo, iv.lo)
	}
	if iv.hiSet {
		hi = math.Min(hi, iv.hi)
	}
	return math.Max(0, hi-lo), true
}

// literalNumber maps a file bound to the column's number line.
func literalNumber(l iceberg.Literal) (float64, bool) {
	switch x := l.(type) {
	case nil:
		return 0, false
	case iceberg.BoolLiteral:
		if x {
			return 1, true
		}
		return 0, true
	case iceberg.Int32Literal:
		return float64(x), true
	case iceberg.Int64Literal:
		return float64(x), true
	case iceberg.Float32Literal:
		return finite(float64(x))
	case iceberg.Float64Literal:
		return finite(float64(x))
	case iceberg.DateLiteral:
		return float64(x), true
	case iceberg.TimeLiteral:
		return float64(x), true
	case iceberg.TimestampLiteral:
		return float64(x), true
	case iceberg.TimestampNsLiteral:
		return math.Floor(float64(x) / 1000), true
	case iceberg.DecimalLiteral:
		return finite(x.Val.ToFloat64(int32(x.Scale)))
	case iceberg.StringLiteral:
		return stringKey([]byte(x)), true
	case iceberg.BinaryLiteral:
		return stringKey(x), true
	case iceberg.FixedLiteral:
		return stringKey(x), true
	case iceberg.UUIDLiteral:
		return stringKey(x[:]), true
	}
	return 0, false
}

func finite(f float64) (float64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// stringKey maps bytes to a number that preserves their order on the
// first 8 bytes (shorter values are zero-padded).
func stringKey(b []byte) float64 {
	var buf [8]byte
	copy(buf[:], b)
	return float64(binary.BigEndian.Uint64(buf[:]))
}

// valueNumber parses a predicate literal against the column's class.
func valueNumber(v expr.Value, cls class) (float64, bool) {
	switch v.Kind {
	case expr.KindParam, expr.KindUnknown, expr.KindNull, expr.KindInterval:
		return 0, false
	}
	text := strings.TrimSpace(v.Text)
	switch cls {
	case clsInt, clsFloat:
		if v.Kind != expr.KindNumber && v.Kind != expr.KindString {
			return 0, false
		}
		text = strings.ReplaceAll(text, "_", "")
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return finite(f)
		}
		if n, err := strconv.ParseInt(text, 0, 64); err == nil {
			return float64(n), true
		}
	case clsBool:
		switch strings.ToLower(text) {
		case "true", "1":
			return 1, true
		case "false", "0":
			return 0, true
		}
	case clsDate:
		if t, ok := parseTimeValue(v); ok {
			return math.Floor(float64(t.Unix()) / 86400), true
		}
	case clsTS:
		if t, ok := parseTimeValue(v); ok {
			return float64(t.UnixMicro()), true
		}
	case clsTime:
		for _, layout := range []string{"15:04:05.999999999", "15:04"} {
			if t, err := time.Parse(layout, text); err == nil {
				return float64(t.Hour()*3600+t.Minute()*60+t.Second())*1e6 + float64(t.Nanosecond()/1000), true
			}
		}
	case clsString:
		return stringKey([]byte(v.Text)), true
	}
	return 0, false
}

// parseTimeValue reads a date, timestamp or date-like string literal, in
// UTC when it has no zone.
func parseTimeValue(v expr.Value) (time.Time, bool) {
	switch v.Kind {
	case expr.KindDate, expr.KindTimestamp, expr.KindString:
		return expr.ParseTime(v.Text)
	}
	return time.Time{}, false
}

func clamp01(f float64) float64 {
	switch {
	case math.IsNaN(f) || f < 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}
