package layout

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Encoder appends order-preserving keys: for rows x and y of records with the encoder's schema,
// bytes.Compare(key(x), key(y)) orders them the way the layout does. The rewriter's external
// sort and the simulator both sort rows by these keys.
//
// Encoders keep no per-call state and are safe for concurrent use. AppendKey only grows dst, so
// a caller that reuses one buffer per goroutine encodes without allocating.
type Encoder interface {
	// AppendKey appends the key of row row of rec to dst and returns the extended slice. rec
	// must have the schema the encoder was built for (checked; a mismatch is an error, never a
	// panic).
	AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error)
	// KeyColumns returns the key columns as the schema spells them, most significant first.
	KeyColumns() []string
}

// ZOrderMode selects how a zorder layout maps column values to the bits it interleaves.
type ZOrderMode int

const (
	// ZOrderIcebergExact (the zero value) reproduces Iceberg's Spark action byte for byte:
	// ZOrderByteUtils ordered bytes per column, interleaved by ZOrderByteUtils.interleaveBits,
	// as Iceberg main behaves in late 2026 (timestamp_ntz accepted, null booleans as zeros).
	// Use it to predict what rewrite_data_files(strategy => 'zorder') produces.
	ZOrderIcebergExact ZOrderMode = iota
	// ZOrderRank interleaves per-column quantile bucket ids ([Quantiles]), so every column gets
	// the same share of the key whatever its raw bit width. floe's own rewriter uses it.
	ZOrderRank
)

// String returns "iceberg-exact" or "rank".
func (m ZOrderMode) String() string {
	switch m {
	case ZOrderIcebergExact:
		return "iceberg-exact"
	case ZOrderRank:
		return "rank"
	default:
		return fmt.Sprintf("ZOrderMode(%d)", int(m))
	}
}

// ParseZOrderMode reads "iceberg-exact" (also "iceberg" or "exact") or "rank",
// case-insensitively; "" is the zero value, ZOrderIcebergExact.
func ParseZOrderMode(s string) (ZOrderMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "iceberg-exact", "iceberg", "exact":
		return ZOrderIcebergExact, nil
	case "rank":
		return ZOrderRank, nil
	}
	return 0, fmt.Errorf("unknown z-order mode %q (want iceberg-exact or rank)", s)
}

// MarshalText returns the name String gives, so modes read well in JSON and YAML.
func (m ZOrderMode) MarshalText() ([]byte, error) {
	if m != ZOrderIcebergExact && m != ZOrderRank {
		return nil, fmt.Errorf("unknown z-order mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads what [ParseZOrderMode] accepts.
func (m *ZOrderMode) UnmarshalText(b []byte) error {
	v, err := ParseZOrderMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// DefaultVarLengthContribution is the number of bytes a string or binary column contributes to
// an Iceberg z-order value, Iceberg's var-length-contribution default
// (ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE).
const DefaultVarLengthContribution = 8

// EncoderOptions tunes [NewEncoder]. The zero value encodes sort layouts, Iceberg-exact
// z-order with Iceberg's defaults, and refuses hilbert (which needs Quantiles).
type EncoderOptions struct {
	// ZOrderMode selects Iceberg-exact (zero value) or rank-normalized z-order.
	ZOrderMode ZOrderMode
	// Quantiles holds the per-column bucket boundaries fitted by [FitQuantiles]. Required for
	// hilbert and for ZOrderRank; it must cover every key column, with the schema's types.
	Quantiles *Quantiles
	// VarLengthContribution is the number of bytes a string or binary column contributes in
	// Iceberg-exact z-order (Iceberg's var-length-contribution option). Zero means
	// [DefaultVarLengthContribution].
	VarLengthContribution int
	// MaxOutputBytes caps the length of an Iceberg-exact z-order value (Iceberg's
	// max-output-size option). Zero means no cap (Iceberg's default, Integer.MAX_VALUE).
	MaxOutputBytes int
	// IcebergLegacyFloatBytes reproduces the float/double bytes of Iceberg releases built
	// before PR #17071 (merged in 2026; 1.10.x and earlier), whose sign mask shifted by 31
	// instead of 63 and so garbles the low 32 bits. False (the default) matches current
	// Iceberg. Only used by Iceberg-exact z-order.
	IcebergLegacyFloatBytes bool
	// Tree is the learned tree of a tree layout ([NewTree], [UnmarshalTree]). Required for
	// tree; every column it cuts or sorts on must be one the layout names.
	Tree *Tree
}

// Errors returned (wrapped) by [NewEncoder], [FitQuantiles] and AppendKey; test with errors.Is.
var (
	// ErrColumnNotFound means a layout names a column the schema does not have.
	ErrColumnNotFound = errors.New("column not found")
	// ErrUnsupportedType means a key column's type cannot be encoded by the chosen layout.
	ErrUnsupportedType = errors.New("unsupported column type")
	// ErrSchemaMismatch means AppendKey was given a record whose columns differ from the
	// schema the encoder was built for, or a row out of range.
	ErrSchemaMismatch = errors.New("record does not match encoder")
)

// NewEncoder builds the key encoder of layout l for records with the given schema. Columns are
// looked up by name, case-insensitively (an exact match wins). binpack and current have no key:
// their encoder appends nothing, so a stable sort by key keeps the input order.
func NewEncoder(l Layout, schema *arrow.Schema, opts EncoderOptions) (Encoder, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if schema == nil {
		return nil, errors.New("new encoder: nil schema")
	}
	if opts.VarLengthContribution < 0 || opts.MaxOutputBytes < 0 {
		return nil, fmt.Errorf("new encoder: VarLengthContribution (%d) and MaxOutputBytes (%d) must not be negative",
			opts.VarLengthContribution, opts.MaxOutputBytes)
	}
	cols, err := resolveColumns(l.Columns, schema)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", l, err)
	}
	b := keyBase{schema: schema, cols: cols, checked: new(atomic.Pointer[arrow.Schema])}
	var enc Encoder
	switch l.Strategy {
	case StrategyBinpack, StrategyCurrent:
		return &b, nil
	case StrategySort:
		enc, err = newSortEncoder(b)
	case StrategyZOrder:
		if opts.ZOrderMode == ZOrderRank {
			enc, err = newRankZOrderEncoder(b, opts.Quantiles)
		} else {
			enc, err = newIcebergZOrderEncoder(b, opts)
		}
	case StrategyHilbert:
		enc, err = newHilbertEncoder(b, opts.Quantiles)
	case StrategyTree:
		enc, err = newTreeEncoder(l, schema, opts.Tree)
	}
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", l, err)
	}
	return enc, nil
}

// keyCol is one layout column bound to its place in the schema.
type keyCol struct {
	spec  Column
	name  string // as the schema spells it
	index int
	typ   arrow.DataType
}

// keyBase holds what every encoder shares; on its own it is the empty key of binpack/current.
type keyBase struct {
	schema *arrow.Schema
	cols   []keyCol
	// checked is the schema of the last record whose key columns check
	// found in place; nil in a keyBase built by hand. The rows of one batch
	// share its schema, which is seldom the encoder's own (a scan builds
	// one per batch), and comparing the key columns' types for every row
	// cost 1% of bench/rewrite's partitioned sort. A record's columns have
	// its schema's types (arrow-go checks that when the record is built),
	// so a schema that passed once passes again.
	checked *atomic.Pointer[arrow.Schema]
}

func (b *keyBase) KeyColumns() []string {
	names := make([]string, len(b.cols))
	for i, c := range b.cols {
		names[i] = c.name
	}
	return names
}

// AppendKey of the base encoder appends nothing after checking its arguments.
func (b *keyBase) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	return dst, b.check(rec, row)
}

// check verifies that rec has the encoder's key columns and that row is in range.
func (b *keyBase) check(rec arrow.RecordBatch, row int) error {
	if rec == nil {
		return fmt.Errorf("%w: nil record", ErrSchemaMismatch)
	}
	if row < 0 || int64(row) >= rec.NumRows() {
		return fmt.Errorf("%w: row %d out of range [0, %d)", ErrSchemaMismatch, row, rec.NumRows())
	}
	s := rec.Schema()
	if s == b.schema || (b.checked != nil && b.checked.Load() == s) {
		return nil
	}
	for _, c := range b.cols {
		if c.index >= int(rec.NumCols()) || !arrow.TypeEqual(rec.Column(c.index).DataType(), c.typ) {
			return fmt.Errorf("%w: key column %q (#%d, %s) is not in the record", ErrSchemaMismatch, c.name, c.index, c.typ)
		}
	}
	if b.checked != nil {
		b.checked.Store(s)
	}
	return nil
}

// findField looks name up in schema, case-insensitively; an exact match wins over others.
func findField(schema *arrow.Schema, name string) (int, error) {
	if idx := schema.FieldIndices(name); len(idx) == 1 {
		return idx[0], nil
	}
	match := -1
	for i, f := range schema.Fields() {
		if strings.EqualFold(f.Name, name) {
			if match >= 0 {
				return 0, fmt.Errorf("column %q is ambiguous: %q and %q both match", name, schema.Field(match).Name, f.Name)
			}
			match = i
		}
	}
	if match < 0 {
		names := make([]string, schema.NumFields())
		for i, f := range schema.Fields() {
			names[i] = f.Name
		}
		return 0, fmt.Errorf("%w: %q (schema has %s)", ErrColumnNotFound, name, strings.Join(names, ", "))
	}
	return match, nil
}

func resolveColumns(cols []Column, schema *arrow.Schema) ([]keyCol, error) {
	out := make([]keyCol, 0, len(cols))
	var errs []error
	for _, c := range cols {
		i, err := findField(schema, c.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := schema.Field(i)
		out = append(out, keyCol{spec: c, name: f.Name, index: i, typ: f.Type})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// valueFn appends the ascending memcomparable encoding of the non-null value at row of arr.
type valueFn func(dst []byte, arr arrow.Array, row int) ([]byte, error)

// nullAt reports whether the value at row is null, looking through dictionaries.
func nullAt(arr arrow.Array, row int) bool {
	if arr.IsNull(row) {
		return true
	}
	if d, ok := arr.(*array.Dictionary); ok {
		return d.Dictionary().IsNull(d.GetValueIndex(row))
	}
	return false
}

func mismatch(arr arrow.Array, want string) error {
	return fmt.Errorf("%w: got %s array, want %s", ErrSchemaMismatch, arr.DataType(), want)
}

// sortEncoder builds memcomparable keys: per column one marker byte (0x00 null first, 0xFF null
// last, 0x01 value) followed by the value's encoding; descending columns are complemented.
type sortEncoder struct {
	keyBase
	fns []valueFn
}

func newSortEncoder(b keyBase) (*sortEncoder, error) {
	e := &sortEncoder{keyBase: b, fns: make([]valueFn, len(b.cols))}
	var errs []error
	for i, c := range b.cols {
		fn, err := ascCodec(c.typ)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", c.name, err))
			continue
		}
		e.fns[i] = fn
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return e, nil
}

// Markers of the sort key. They are chosen after complementing, so that null first (0x00)
// and null last (0xFF) bracket both 0x01 (ascending value) and 0xFE (descending value).
const (
	markNullFirst byte = 0x00
	markValue     byte = 0x01
	markNullLast  byte = 0xFF
)

func (e *sortEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	if err := e.check(rec, row); err != nil {
		return dst, err
	}
	base := len(dst)
	for i, c := range e.cols {
		arr := rec.Column(c.index)
		if nullAt(arr, row) {
			if c.spec.NullsLast {
				dst = append(dst, markNullLast)
			} else {
				dst = append(dst, markNullFirst)
			}
			continue
		}
		start := len(dst)
		dst = append(dst, markValue)
		var err error
		dst, err = e.fns[i](dst, arr, row)
		if err != nil {
			return dst[:base], fmt.Errorf("encode column %q row %d: %w", c.name, row, err)
		}
		if c.spec.Desc {
			complement(dst[start:])
		}
	}
	return dst, nil
}

func complement(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// grow makes room for n more bytes without changing len(dst).
func grow(dst []byte, n int) []byte { return slices.Grow(dst, n) }
