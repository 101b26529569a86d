package layout

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

// MaxExplainedCuts is how many cuts a [TreeExplanation] spells out: the top three
// levels of the tree, breadth first, when they are full.
const MaxExplainedCuts = 7

// TreeExplanation is a learned tree in terms a person can check: its size, how many
// rows its leaves hold and its top cuts in words, each with the rows on its two sides and
// the share of the workload's queries that skip a side thanks to it. The simulator
// computes it once, with the projection that learned the tree
// (simulator.ExplainTree); every renderer — floe simulate, floe plan show, the report
// and the dashboard — prints this one value, through [TreeExplanation.Summary] and
// [TreeCutExplanation.Sentence] for the words.
type TreeExplanation struct {
	// Leaves and Depth are the tree's leaf count and the depth of its deepest leaf (0
	// for a tree that is one leaf).
	Leaves int `json:"leaves"`
	Depth  int `json:"depth"`
	// RowsPerLeaf is the rows a leaf holds over the sample, scaled to the table's rows.
	RowsPerLeaf RowsPerLeaf `json:"rows_per_leaf"`
	// Cuts are the top cuts, breadth first (the root first, then its children left to
	// right, …), at most [MaxExplainedCuts]; empty for a tree that is one leaf.
	Cuts []TreeCutExplanation `json:"cuts"`
}

// RowsPerLeaf is the least, median and greatest rows of a tree's leaves (the median of
// an even count is the lower middle one), scaled from the sample to the table's rows.
type RowsPerLeaf struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
}

// TreeCutExplanation is one cut of a [TreeExplanation].
type TreeCutExplanation struct {
	// Predicate is the cut as a person writes it: the rows it is true of go left
	// (`l_shipdate < 1995-03-01`, `region <= 'eu-west'`; nulls go left too, NaN
	// right), or, for a set cut, `kind IN ('a', 'b')` (nulls go right, as the
	// predicate is not true of them).
	Predicate string `json:"predicate"`
	// Column is the column cut on, as the schema spells it.
	Column string `json:"column"`
	// Depth is the cut's level: 0 for the root.
	Depth int `json:"depth"`
	// Parent is the index in Cuts of the cut this one lies under (-1 for the root),
	// and Side which of its sides ("left" or "right"; "" for the root).
	Parent int    `json:"parent"`
	Side   string `json:"side"`
	// RowsLeft and RowsRight are the rows on each side, over the sample scaled to the
	// table's rows; LeavesLeft and LeavesRight the leaves under each side.
	RowsLeft    int64 `json:"rows_left"`
	RowsRight   int64 `json:"rows_right"`
	LeavesLeft  int   `json:"leaves_left"`
	LeavesRight int   `json:"leaves_right"`
	// QueryShare is the share (0 to 1) of the workload's queries, weighted by how
	// often they run, that would read the cut's rows as one file but can skip one of
	// its sides: replayed on the min/max of the sampled rows of the node and of each
	// side. QueryShareLeft and QueryShareRight are the shares that skip the left and
	// the right side: a query whose values fall between the two sides' ranges skips
	// both, so the two may add up to more than QueryShare.
	QueryShare      float64 `json:"query_share"`
	QueryShareLeft  float64 `json:"query_share_left"`
	QueryShareRight float64 `json:"query_share_right"`
}

// Summary is the explanation's first line: "12 leaves, 4 levels deep; 480k to 520k rows
// a leaf (median 500k)".
func (e TreeExplanation) Summary() string {
	levels := "levels"
	if e.Depth == 1 {
		levels = "level"
	}
	leaves := "leaves"
	if e.Leaves == 1 {
		leaves = "leaf"
	}
	r := e.RowsPerLeaf
	return fmt.Sprintf("%d %s, %d %s deep; %s to %s rows a leaf (median %s)",
		e.Leaves, leaves, e.Depth, levels, FormatCount(r.Min), FormatCount(r.Max), FormatCount(r.Median))
}

// Sentence says the cut in words: "l_shipdate < 1995-03-01: 2.9M rows left, 3.1M right;
// 40% of queries skip a side (25% the left, 15% the right)", the predicate then
// [TreeCutExplanation.Detail].
func (c TreeCutExplanation) Sentence() string { return c.Predicate + ": " + c.Detail() }

// Detail is the sentence after the predicate: "2.9M rows left, 3.1M right; 40% of
// queries skip a side (25% the left, 15% the right)".
func (c TreeCutExplanation) Detail() string {
	return fmt.Sprintf("%s rows left, %s right; %s of queries skip a side (%s the left, %s the right)",
		FormatCount(c.RowsLeft), FormatCount(c.RowsRight),
		FormatShare(c.QueryShare), FormatShare(c.QueryShareLeft), FormatShare(c.QueryShareRight))
}

// OutlineItem is one cut of [TreeExplanation.Outline] with its level in the outline.
type OutlineItem struct {
	Level int
	Cut   TreeCutExplanation
}

// Outline orders the first maxCuts cuts (all when maxCuts <= 0; the first are the top
// levels) as an outline: each cut right after the cut whose side it cuts, left side
// first, its Level one more than that cut's.
func (e TreeExplanation) Outline(maxCuts int) []OutlineItem {
	n := len(e.Cuts)
	if maxCuts > 0 {
		n = min(n, maxCuts)
	}
	kids := make([][]int, n)
	var roots []int
	for i := range n {
		if p := e.Cuts[i].Parent; p >= 0 && p < i {
			kids[p] = append(kids[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	var out []OutlineItem
	var walk func(i, level int)
	walk = func(i, level int) {
		out = append(out, OutlineItem{Level: level, Cut: e.Cuts[i]})
		slices.SortStableFunc(kids[i], func(a, b int) int { return strings.Compare(e.Cuts[a].Side, e.Cuts[b].Side) })
		for _, k := range kids[i] {
			walk(k, level+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

// Lines is the explanation in words, one line each: the summary, then the outline of
// the first maxCuts cuts ([TreeExplanation.Outline]), each indented two spaces a level
// and prefixed with the side of the cut above it:
//
//	3 leaves, 2 levels deep; 30 to 40 rows a leaf (median 30)
//	id < 40: 40 rows left, 60 right; 50% of queries skip a side (17% the left, 33% the right)
//	  right: n <= 4: 30 rows left, 30 right; 17% of queries skip a side (17% the left, 0% the right)
func (e TreeExplanation) Lines(maxCuts int) []string {
	out := []string{e.Summary()}
	for _, it := range e.Outline(maxCuts) {
		out = append(out, strings.Repeat("  ", it.Level)+it.Cut.SidePrefix()+it.Cut.Sentence())
	}
	return out
}

// SidePrefix is "left: " or "right: ", the side of the cut above this one, or "" for the
// root.
func (c TreeCutExplanation) SidePrefix() string {
	if c.Side == "" {
		return ""
	}
	return c.Side + ": "
}

// FormatShare prints a share of 0 to 1 as a whole percentage, "<1%" for a share above 0
// that rounds to 0.
func FormatShare(s float64) string {
	p := math.Round(s * 100)
	if p == 0 && s > 0 {
		return "<1%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// FormatCount prints a count the way a person reads it: exactly below 10,000, then with
// a k, M or B suffix and 3 significant digits ("12.3k", "480k", "3.1M").
func FormatCount(n int64) string {
	if n < 0 {
		return "-" + FormatCount(-n)
	}
	if n < 10_000 {
		return strconv.FormatInt(n, 10)
	}
	v := float64(n)
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if v < u.div {
			continue
		}
		x := v / u.div
		switch {
		case x >= 100:
			return strconv.FormatFloat(math.Round(x), 'f', 0, 64) + u.suffix
		case x >= 10:
			return strconv.FormatFloat(x, 'f', 1, 64) + u.suffix
		default:
			return strconv.FormatFloat(x, 'f', 2, 64) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// MaxPrintedSetValues is how many of a set cut's values [Tree.CutPredicate] prints; the
// rest are counted: `kind IN ('a', 'b', …, 'h', and 4 more)`.
const MaxPrintedSetValues = 8

// CutPredicate is cut c as a person writes it, with its value as a literal of the cut
// column's type: `l_shipdate < 1995-03-01`, `amount <= 90.5`, `region < 'eu-west'`; a set
// cut as `kind IN ('a', 'b')` (`kind = 'a'` for a set of one), its values in the sort
// key's order, at most [MaxPrintedSetValues] of them and then how many more.
func (t *Tree) CutPredicate(c TreeCut) (string, error) {
	var typ arrow.DataType
	for _, col := range t.cols {
		if strings.EqualFold(col.name, c.Column) {
			typ = col.typ
		}
	}
	if typ == nil {
		return "", fmt.Errorf("cut on %q: not a column of the tree", c.Column)
	}
	if len(c.Set) > 0 {
		set := slices.Clone(c.Set)
		slices.SortFunc(set, bytes.Compare)
		set = slices.CompactFunc(set, bytes.Equal)
		vals := make([]string, 0, min(len(set), MaxPrintedSetValues)+1)
		for _, k := range set[:min(len(set), MaxPrintedSetValues)] {
			v, err := FormatValueKey(typ, k)
			if err != nil {
				return "", fmt.Errorf("set cut on %q: %w", c.Column, err)
			}
			vals = append(vals, v)
		}
		if len(set) == 1 {
			return c.Column + " = " + vals[0], nil
		}
		if n := len(set) - MaxPrintedSetValues; n > 0 {
			vals = append(vals, fmt.Sprintf("… and %d more", n))
		}
		return c.Column + " IN (" + strings.Join(vals, ", ") + ")", nil
	}
	v, err := FormatValueKey(typ, c.Value)
	if err != nil {
		return "", fmt.Errorf("cut on %q: %w", c.Column, err)
	}
	op := "<"
	if c.Inclusive {
		op = "<="
	}
	return c.Column + " " + op + " " + v, nil
}

// FormatValueKey decodes key, the ascending sort-key encoding of a value of type dt
// ([ValueKey]), and prints the value as a SQL literal a person would write: numbers as
// numbers, dates as 1995-03-01, timestamps as '2026-11-03 12:00:00' (UTC), strings
// single-quoted with quotes doubled, binaries as X'0a1b'.
func FormatValueKey(dt arrow.DataType, key []byte) (string, error) {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return FormatValueKey(t.ValueType, key)
	case arrow.ExtensionType:
		return FormatValueKey(t.StorageType(), key)
	case *arrow.TimestampType:
		if len(key) < 8 {
			return "", errShortKey(dt, key)
		}
		us := int64(binary.BigEndian.Uint64(key) ^ 1<<63)
		ts := time.UnixMicro(us).UTC()
		if t.Unit == arrow.Nanosecond && len(key) >= 10 {
			ts = ts.Add(time.Duration(binary.BigEndian.Uint16(key[8:])))
		}
		return "'" + ts.Format("2006-01-02 15:04:05.999999999") + "'", nil
	case *arrow.Decimal32Type:
		v, err := signedKey(key, 4)
		return decimalText(strconv.FormatInt(v, 10), t.Scale), err
	case *arrow.Decimal64Type:
		v, err := signedKey(key, 8)
		return decimalText(strconv.FormatInt(v, 10), t.Scale), err
	case *arrow.Decimal128Type:
		if len(key) != 16 {
			return "", errShortKey(dt, key)
		}
		n := decimal128.New(int64(binary.BigEndian.Uint64(key)^1<<63), binary.BigEndian.Uint64(key[8:]))
		return n.ToString(t.Scale), nil
	case *arrow.Decimal256Type:
		if len(key) != 32 {
			return "", errShortKey(dt, key)
		}
		n := decimal256.New(binary.BigEndian.Uint64(key[:8])^1<<63, binary.BigEndian.Uint64(key[8:16]),
			binary.BigEndian.Uint64(key[16:24]), binary.BigEndian.Uint64(key[24:]))
		return n.ToString(t.Scale), nil
	}
	if w := fixedEncodingWidth(dt); w > 0 && len(key) != w {
		return "", errShortKey(dt, key)
	}
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DURATION:
		v, err := signedKey(key, len(key))
		return strconv.FormatInt(v, 10), err
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		v, err := unsignedKey(key)
		return strconv.FormatUint(v, 10), err
	case arrow.DATE32:
		v, err := signedKey(key, 4)
		return time.Unix(v*86400, 0).UTC().Format(time.DateOnly), err
	case arrow.DATE64:
		v, err := signedKey(key, 8)
		d := time.UnixMilli(v).UTC()
		if d.Truncate(24*time.Hour).Equal(d) || err != nil {
			return d.Format(time.DateOnly), err
		}
		return "'" + d.Format("2006-01-02 15:04:05.999") + "'", nil
	case arrow.TIME32, arrow.TIME64:
		v, err := signedKey(key, len(key))
		if err != nil {
			return "", err
		}
		var d time.Duration
		switch u := dt.(type) {
		case *arrow.Time32Type:
			d = time.Duration(v) * u.Unit.Multiplier()
		case *arrow.Time64Type:
			d = time.Duration(v) * u.Unit.Multiplier()
		}
		return "'" + time.Unix(0, 0).UTC().Add(d).Format("15:04:05.999999999") + "'", nil
	case arrow.FLOAT16, arrow.FLOAT32:
		if len(key) != 4 {
			return "", errShortKey(dt, key)
		}
		u := binary.BigEndian.Uint32(key)
		if u>>31 == 1 {
			u &^= 1 << 31
		} else {
			u = ^u
		}
		return strconv.FormatFloat(float64(math.Float32frombits(u)), 'g', -1, 32), nil
	case arrow.FLOAT64:
		if len(key) != 8 {
			return "", errShortKey(dt, key)
		}
		u := binary.BigEndian.Uint64(key)
		if u>>63 == 1 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		return strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64), nil
	case arrow.BOOL:
		if len(key) != 1 {
			return "", errShortKey(dt, key)
		}
		return strconv.FormatBool(key[0] != 0), nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		s, err := unescapeKey(key)
		return "'" + strings.ReplaceAll(string(s), "'", "''") + "'", err
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		s, err := unescapeKey(key)
		return "X'" + hex.EncodeToString(s) + "'", err
	case arrow.FIXED_SIZE_BINARY:
		return "X'" + hex.EncodeToString(key) + "'", nil
	}
	return "", fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
}

func errShortKey(dt arrow.DataType, key []byte) error {
	return fmt.Errorf("a %d-byte key is not a %s value", len(key), dt)
}

// signedKey decodes a big-endian two's complement of width bytes (1, 2, 4 or 8) with its
// sign bit flipped.
func signedKey(key []byte, width int) (int64, error) {
	if len(key) != width {
		return 0, fmt.Errorf("a %d-byte key is not a %d-byte integer", len(key), width)
	}
	u, err := unsignedKey(key)
	if err != nil {
		return 0, err
	}
	shift := 64 - 8*uint(width)
	return int64((u^1<<(8*uint(width)-1))<<shift) >> shift, nil
}

func unsignedKey(key []byte) (uint64, error) {
	switch len(key) {
	case 1:
		return uint64(key[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(key)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(key)), nil
	case 8:
		return binary.BigEndian.Uint64(key), nil
	}
	return 0, fmt.Errorf("a %d-byte key is not an integer", len(key))
}

// unescapeKey undoes appendEscaped: 0x00 0xFF is 0x00, 0x00 0x00 ends the value.
func unescapeKey(key []byte) ([]byte, error) {
	var out []byte
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c != 0 {
			out = append(out, c)
			continue
		}
		if i+1 >= len(key) {
			break
		}
		switch key[i+1] {
		case 0xFF:
			out = append(out, 0)
			i++
		case 0:
			return out, nil
		}
	}
	return out, errors.New("an escaped key without its terminator")
}

// decimalText places a decimal point scale digits from the right of an unscaled integer.
func decimalText(unscaled string, scale int32) string {
	if scale <= 0 {
		return unscaled
	}
	neg := strings.HasPrefix(unscaled, "-")
	digits := strings.TrimPrefix(unscaled, "-")
	for int32(len(digits)) <= scale {
		digits = "0" + digits
	}
	out := digits[:int32(len(digits))-scale] + "." + digits[int32(len(digits))-scale:]
	if neg {
		out = "-" + out
	}
	return out
}
