package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Strategy names how a rewrite orders the rows of a table.
type Strategy string

// The strategies a [Layout] can name.
const (
	// StrategyBinpack only combines small files; it keeps the rows in the order they are read.
	StrategyBinpack Strategy = "binpack"
	// StrategySort is a linear (lexicographic) sort on one or more columns.
	StrategySort Strategy = "sort"
	// StrategyZOrder interleaves the bits of 2 to [MaxZOrderColumns] columns (a Z-order curve).
	StrategyZOrder Strategy = "zorder"
	// StrategyHilbert orders rows along a Hilbert curve over 2 to [MaxHilbertColumns] columns.
	StrategyHilbert Strategy = "hilbert"
	// StrategyTree routes every row to a leaf of a [Tree] of cuts learned from the
	// workload's own predicates on 1 to [MaxTreeColumns] columns, and sorts each leaf by its
	// best column. The layout names the columns the learner may cut on; the learned tree is
	// data, like [Quantiles], handed to [NewEncoder] in [EncoderOptions.Tree].
	StrategyTree Strategy = "tree"
	// StrategyCurrent is the table as it is today; it is the baseline every projection is compared with.
	StrategyCurrent Strategy = "current"
)

// Limits on the number of columns a layout may name.
const (
	// MaxSortColumns is the largest number of columns a sort layout may name.
	MaxSortColumns = 32
	// MaxZOrderColumns is the largest number of columns a zorder layout may name. Each extra
	// column dilutes the locality of every other one; beyond a handful a Z-order key is noise.
	MaxZOrderColumns = 8
	// MaxHilbertColumns is the largest number of columns a hilbert layout may name.
	MaxHilbertColumns = 4
	// MaxTreeColumns is the largest number of columns a tree layout may cut on.
	MaxTreeColumns = 8
)

// ErrInvalidLayout is returned (wrapped) by [Parse] and [Layout.Validate] for a layout
// that cannot be used; test with errors.Is.
var ErrInvalidLayout = errors.New("invalid layout")

// Column is one column of a layout key.
//
// Iceberg's defaults, which [Parse] applies when a column gives no nulls order, are:
// ascending → NULLS FIRST, descending → NULLS LAST. Z-order and Hilbert columns are always
// ascending (Desc is only allowed in sort); with rank-normalized keys NullsLast puts their
// nulls in the last quantile slot instead of the first, and Iceberg-exact z-order cannot
// express it (Iceberg encodes nulls as zero bytes).
type Column struct {
	// Name is the column name as written; it is matched case-insensitively against the schema.
	Name string `json:"name"`
	// Desc sorts the column in descending order.
	Desc bool `json:"desc"`
	// NullsLast places nulls after every non-null value (in either direction).
	NullsLast bool `json:"nulls_last"`
}

// Layout is a candidate or chosen physical layout of a table: how the rewrite orders rows and
// how large it makes files. Its text form is parsed by [Parse] and printed by
// [Layout.String].
type Layout struct {
	// Strategy is how rows are ordered.
	Strategy Strategy `json:"strategy"`
	// Columns are the key columns, most significant first for sort. Nil for binpack and current.
	Columns []Column `json:"columns,omitempty"`
	// TargetFileSizeBytes is the file size the rewrite aims at. Zero means "the table's
	// write.target-file-size-bytes" (Iceberg's default is 512 MiB).
	TargetFileSizeBytes int64 `json:"target_file_size_bytes,omitempty"`
}

// Validate checks a layout built in code with the same rules [Parse] applies, and reports
// every problem at once.
func (l Layout) Validate() error {
	var errs []error
	switch l.Strategy {
	case StrategyBinpack, StrategyCurrent:
		if len(l.Columns) > 0 {
			errs = append(errs, fmt.Errorf("%s takes no columns, got %d", l.Strategy, len(l.Columns)))
		}
	case StrategySort:
		if n := len(l.Columns); n < 1 || n > MaxSortColumns {
			errs = append(errs, fmt.Errorf("sort needs 1 to %d columns, got %d", MaxSortColumns, n))
		}
	case StrategyZOrder, StrategyHilbert, StrategyTree:
		lo, hi := columnLimits(l.Strategy)
		if n := len(l.Columns); n < lo || n > hi {
			errs = append(errs, fmt.Errorf("%s needs %d to %d columns, got %d", l.Strategy, lo, hi, n))
		}
		for _, c := range l.Columns {
			if c.Desc {
				errs = append(errs, fmt.Errorf("%s column %q: a direction is only allowed in sort", l.Strategy, c.Name))
			}
			if c.NullsLast && l.Strategy == StrategyTree {
				errs = append(errs, fmt.Errorf("tree column %q: nulls last is not allowed (a tree routes nulls below every value)", c.Name))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("unknown strategy %q (want binpack, sort, zorder, hilbert, tree or current)", l.Strategy))
	}
	seen := make(map[string]bool, len(l.Columns))
	for _, c := range l.Columns {
		if c.Name == "" {
			errs = append(errs, errors.New("empty column name"))
			continue
		}
		k := strings.ToLower(c.Name)
		if seen[k] {
			errs = append(errs, fmt.Errorf("duplicate column %q", c.Name))
		}
		seen[k] = true
	}
	if l.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("target file size %d is negative", l.TargetFileSizeBytes))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidLayout, errors.Join(errs...))
}

func columnLimits(s Strategy) (lo, hi int) {
	switch s {
	case StrategySort:
		return 1, MaxSortColumns
	case StrategyZOrder:
		return 2, MaxZOrderColumns
	case StrategyHilbert:
		return 2, MaxHilbertColumns
	case StrategyTree:
		return 1, MaxTreeColumns
	default:
		return 0, 0
	}
}

// String prints the layout in the syntax [Parse] reads, so that
// Parse(l.String()) returns l for every valid l. Default nulls orders are omitted and
// names that are not plain identifiers (or are keywords) are double-quoted.
func (l Layout) String() string {
	var b strings.Builder
	b.WriteString(string(l.Strategy))
	if len(l.Columns) > 0 {
		b.WriteByte('(')
		for i, c := range l.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(c.Name))
			if c.Desc {
				b.WriteString(" desc")
			}
			if c.NullsLast != c.Desc {
				if c.NullsLast {
					b.WriteString(" nulls last")
				} else {
					b.WriteString(" nulls first")
				}
			}
		}
		b.WriteByte(')')
	}
	if l.TargetFileSizeBytes > 0 {
		b.WriteString(" target ")
		b.WriteString(formatSize(l.TargetFileSizeBytes))
	}
	return b.String()
}

var keywords = map[string]bool{
	"asc": true, "desc": true, "nulls": true, "first": true, "last": true, "target": true,
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

func quoteIdent(name string) string {
	plain := name != "" && isIdentStart(name[0]) && !keywords[strings.ToLower(name)]
	for i := 1; plain && i < len(name); i++ {
		plain = isIdentPart(name[i])
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

var sizeUnits = []struct {
	name string
	mul  int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// formatSize prints n with the unit that divides it exactly and gives the shortest text.
func formatSize(n int64) string {
	best := strconv.FormatInt(n, 10)
	for _, u := range sizeUnits[:len(sizeUnits)-1] {
		if n%u.mul == 0 {
			if s := strconv.FormatInt(n/u.mul, 10) + u.name; len(s) < len(best) {
				best = s
			}
		}
	}
	return best
}

// Parse reads a layout such as
//
//	sort(tenant_id, ts desc nulls first)
//	zorder(a, b)
//	hilbert(a, b, c) target 256MiB
//	tree(ts, account_id, kind)
//	binpack
//	current
//
// Keywords are case-insensitive and whitespace is free. A column is a plain identifier
// ([A-Za-z_][A-Za-z0-9_]*) or a double-quoted name in which "" stands for one quote
// ("Weird Col"). Sort columns may be followed by asc|desc and nulls first|last; without a nulls
// order, Iceberg's default applies (ascending → nulls first, descending → nulls last).
// zorder and hilbert columns may only carry nulls first|last (default first); tree columns
// only nulls first. zorder takes 2 to [MaxZOrderColumns] columns, hilbert 2 to
// [MaxHilbertColumns], tree 1 to [MaxTreeColumns], sort 1 to [MaxSortColumns]. The optional "target <size>" sets TargetFileSizeBytes; the size is a byte
// count with an optional unit (KiB, MiB, GiB, TiB, or decimal KB, MB, GB, TB).
//
// Errors are [*SyntaxError] values (matching [ErrInvalidLayout] under errors.Is) that name the
// byte offset, as in `layout "zorder(a": expected ")" at offset 8`.
func Parse(s string) (Layout, error) {
	p := &layoutParser{src: s}
	l, err := p.parse()
	if err != nil {
		return Layout{}, err
	}
	return l, nil
}

type layoutParser struct {
	src string
	pos int
}

// SyntaxError is the error [Parse] returns for text it cannot read. It matches
// [ErrInvalidLayout] under errors.Is.
type SyntaxError struct {
	// Input is the whole text that was parsed.
	Input string
	// Offset is the byte offset in Input where the problem was found.
	Offset int
	// Msg says what was expected or wrong.
	Msg string
}

// Error formats the problem as `layout "zorder(a": expected ")" at offset 8`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("layout %q: %s at offset %d", e.Input, e.Msg, e.Offset)
}

// Is reports whether target is [ErrInvalidLayout].
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalidLayout }

func (p *layoutParser) errorf(at int, format string, args ...any) error {
	return &SyntaxError{Input: p.src, Offset: at, Msg: fmt.Sprintf(format, args...)}
}

func (p *layoutParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// word reads a plain identifier and returns it with its start offset; "" if none is there.
func (p *layoutParser) word() (string, int) {
	p.skipSpace()
	start := p.pos
	if p.pos < len(p.src) && isIdentStart(p.src[p.pos]) {
		p.pos++
		for p.pos < len(p.src) && isIdentPart(p.src[p.pos]) {
			p.pos++
		}
	}
	return p.src[start:p.pos], start
}

// peekWord returns the next plain identifier in lower case without consuming it.
func (p *layoutParser) peekWord() string {
	save := p.pos
	w, _ := p.word()
	p.pos = save
	return strings.ToLower(w)
}

func (p *layoutParser) peekByte() (byte, bool) {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos], true
	}
	return 0, false
}

func (p *layoutParser) describeNext() string {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r := p.src[p.pos:]
	if len(r) > 12 {
		r = r[:12] + "…"
	}
	return strconv.Quote(r)
}

func (p *layoutParser) parse() (Layout, error) {
	w, at := p.word()
	if w == "" {
		return Layout{}, p.errorf(at, "expected a strategy (binpack, sort, zorder, hilbert, tree, current), found %s", p.describeNext())
	}
	l := Layout{Strategy: Strategy(strings.ToLower(w))}
	switch l.Strategy {
	case StrategyBinpack, StrategyCurrent:
		if c, ok := p.peekByte(); ok && c == '(' {
			return Layout{}, p.errorf(p.pos, "%s takes no columns", l.Strategy)
		}
	case StrategySort, StrategyZOrder, StrategyHilbert, StrategyTree:
		cols, err := p.columns(l.Strategy)
		if err != nil {
			return Layout{}, err
		}
		l.Columns = cols
	default:
		return Layout{}, p.errorf(at, "unknown strategy %q (want binpack, sort, zorder, hilbert, tree or current)", w)
	}
	if p.peekWord() == "target" {
		p.word()
		n, err := p.size()
		if err != nil {
			return Layout{}, err
		}
		l.TargetFileSizeBytes = n
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return Layout{}, p.errorf(p.pos, "unexpected %s", p.describeNext())
	}
	return l, nil
}

func (p *layoutParser) expect(c byte) error {
	if got, ok := p.peekByte(); !ok || got != c {
		return p.errorf(p.pos, "expected %q, found %s", string(c), p.describeNext())
	}
	p.pos++
	return nil
}

func (p *layoutParser) columns(s Strategy) ([]Column, error) {
	open := p.pos
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var cols []Column
	seen := map[string]bool{}
	for {
		c, at, err := p.column(s)
		if err != nil {
			return nil, err
		}
		k := strings.ToLower(c.Name)
		if seen[k] {
			return nil, p.errorf(at, "duplicate column %q", c.Name)
		}
		seen[k] = true
		cols = append(cols, c)
		b, ok := p.peekByte()
		if ok && b == ',' {
			p.pos++
			continue
		}
		if ok && b == ')' {
			p.pos++
			break
		}
		if !ok {
			return nil, p.errorf(p.pos, `expected ")"`)
		}
		return nil, p.errorf(p.pos, `expected "," or ")", found %s`, p.describeNext())
	}
	lo, hi := columnLimits(s)
	if len(cols) < lo || len(cols) > hi {
		return nil, p.errorf(open, "%s needs %d to %d columns, got %d", s, lo, hi, len(cols))
	}
	return cols, nil
}

func (p *layoutParser) column(s Strategy) (Column, int, error) {
	p.skipSpace()
	at := p.pos
	var c Column
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		name, err := p.quoted()
		if err != nil {
			return Column{}, at, err
		}
		c.Name = name
	} else {
		w, _ := p.word()
		if w == "" {
			return Column{}, at, p.errorf(at, "expected a column name, found %s", p.describeNext())
		}
		// A dotted path (addr.city) names a nested column: it parses, so
		// that checking it against a schema can say what it is.
		for p.pos+1 < len(p.src) && p.src[p.pos] == '.' && isIdentStart(p.src[p.pos+1]) {
			p.pos++
			part, _ := p.word()
			w += "." + part
		}
		c.Name = w
	}
	explicitNulls := false
	for {
		kw := p.peekWord()
		switch kw {
		case "asc", "desc", "nulls":
		default:
			if !explicitNulls {
				c.NullsLast = c.Desc
			}
			return c, at, nil
		}
		_, kwAt := p.word()
		if s != StrategySort && kw != "nulls" {
			return Column{}, at, p.errorf(kwAt, "%q is only allowed in sort, not %s", kw, s)
		}
		switch kw {
		case "asc", "desc":
			c.Desc = kw == "desc"
		case "nulls":
			w, wAt := p.word()
			switch strings.ToLower(w) {
			case "first":
				c.NullsLast = false
			case "last":
				if s == StrategyTree {
					return Column{}, at, p.errorf(wAt, "nulls last is not allowed in tree (a tree routes nulls below every value)")
				}
				c.NullsLast = true
			default:
				p.pos = wAt
				return Column{}, at, p.errorf(wAt, `expected "first" or "last" after "nulls", found %s`, p.describeNext())
			}
			explicitNulls = true
		}
	}
}

func (p *layoutParser) quoted() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		if c != '"' {
			b.WriteByte(c)
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '"' {
			b.WriteByte('"')
			p.pos++
			continue
		}
		if b.Len() == 0 {
			return "", p.errorf(start, "empty quoted column name")
		}
		return b.String(), nil
	}
	return "", p.errorf(p.pos, "unterminated quoted name starting at offset %d: expected '\"'", start)
}

func (p *layoutParser) size() (int64, error) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, p.errorf(start, "expected a size after \"target\", found %s", p.describeNext())
	}
	n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
	if err != nil {
		return 0, p.errorf(start, "size %s is out of range", p.src[start:p.pos])
	}
	unitAt := p.pos
	unit := ""
	for p.pos < len(p.src) && isIdentPart(p.src[p.pos]) {
		p.pos++
	}
	unit = p.src[unitAt:p.pos]
	mul := int64(1)
	if unit != "" {
		found := false
		for _, u := range sizeUnits {
			if strings.EqualFold(unit, u.name) {
				mul, found = u.mul, true
				break
			}
		}
		if !found {
			return 0, p.errorf(unitAt, "unknown size unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", unit)
		}
	}
	if n <= 0 {
		return 0, p.errorf(start, "target size must be positive")
	}
	if n > (1<<63-1)/mul {
		return 0, p.errorf(start, "size %s%s is out of range", p.src[start:unitAt], unit)
	}
	return n * mul, nil
}

// MarshalJSON writes the layout as one object, the same in every JSON output of floe:
// spec, the text [Parse] reads (as in "sort(tenant_id) target 268435456"), followed by its
// parts. Every key is always present: columns is [] for binpack and current,
// target_file_size_bytes is 0 for "the table's write.target-file-size-bytes", and each
// column has desc and nulls_last.
func (l Layout) MarshalJSON() ([]byte, error) {
	cols := l.Columns
	if cols == nil {
		cols = []Column{}
	}
	b, err := marshal(struct {
		Spec                string   `json:"spec"`
		Strategy            Strategy `json:"strategy"`
		Columns             []Column `json:"columns"`
		TargetFileSizeBytes int64    `json:"target_file_size_bytes"`
	}{l.String(), l.Strategy, cols, l.TargetFileSizeBytes})
	if err != nil {
		return nil, fmt.Errorf("encoding layout %s: %w", l, err)
	}
	return b, nil
}

// marshal is json.Marshal without HTML escaping, as floe's
// internal/jsonenc.Marshal (which layout, importing nothing of floe,
// cannot use): an encoder that embeds a value does not unescape what its
// MarshalJSON returns.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads what [Layout.MarshalJSON] writes, or a bare spec
// string (as records written before layouts were objects hold them). When
// both a spec and parts are given, the spec decides; "" is the zero Layout.
func (l *Layout) UnmarshalJSON(b []byte) error {
	spec := ""
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &spec); err != nil {
			return err
		}
		if spec == "" {
			*l = Layout{}
			return nil
		}
	} else {
		type parts Layout
		var v struct {
			Spec string `json:"spec"`
			parts
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		if v.Spec == "" {
			*l = Layout(v.parts)
			return nil
		}
		spec = v.Spec
	}
	p, err := Parse(spec)
	if err != nil {
		return err
	}
	*l = p
	return nil
}
