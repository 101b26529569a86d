package layout

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Limits on a [Tree], so that a damaged or hostile tree file is refused, not obeyed.
const (
	// MaxTreeLeaves is the largest number of leaves a tree may have: a leaf's number is
	// written in 4 bytes, and a tree of more leaves than files is already too fine.
	MaxTreeLeaves = 1 << 16
	// MaxTreeDepth is the deepest a leaf may lie below the root: every row walks from the
	// root to its leaf, one comparison a level.
	MaxTreeDepth = 64
	// MaxTreeSetValues is the most values a set cut ([TreeCut.Set]) may hold: a row's
	// value is looked up by binary search, at most 8 comparisons, and a set cut is meant
	// for a low-cardinality column (a workload's IN list), not a lookup table.
	MaxTreeSetValues = 256
)

// ErrInvalidTree is returned (wrapped) by [NewTree] and [UnmarshalTree] for a tree that
// cannot be used; test with errors.Is.
var ErrInvalidTree = errors.New("invalid tree")

// TreeCut is the cut of an internal [TreeNode], in one of two forms.
//
// A range cut (Set empty): a row goes left when its value of Column, in the ascending
// sort-key encoding ([ValueKey]), compares below Value under bytes.Compare (at or below
// when Inclusive), and right otherwise. A null goes left (it sorts below every value); a
// NaN goes right (it sorts above +Inf).
//
// A set cut (Set not empty, Value empty): a row goes left when its value of Column, so
// encoded, is one of Set, and right otherwise. A null goes right: `kind IN ('a', 'b')` is
// not true of a null, and the left side then holds exactly the set's values, which is
// what lets a query on them (or on nulls) skip the other side's files. A set cut gathers
// values a range cut cannot without the values between them.
type TreeCut struct {
	// Column is a tree column (matched case-insensitively).
	Column string
	// Value is the ascending sort-key encoding of a range cut's literal ([ValueKey]).
	Value []byte
	// Inclusive sends rows equal to Value left: the cut is "column <= literal" instead of
	// "column < literal". Range cuts only.
	Inclusive bool
	// Set holds a set cut's values, each in the ascending sort-key encoding, at most
	// [MaxTreeSetValues]. [NewTree] keeps them sorted (by bytes.Compare) and without
	// duplicates, so [Tree.Root] returns them so.
	Set [][]byte
}

// TreeNode is one node of a tree as a learner builds it, or as [Tree.Root] returns it: an
// internal node has a Cut and both children; a leaf has neither and names the column its
// rows are sorted by.
type TreeNode struct {
	// Cut routes the node's rows to Left or Right; nil for a leaf.
	Cut         *TreeCut
	Left, Right *TreeNode
	// SortColumn is the tree column a leaf's rows are sorted by (ascending, nulls first,
	// unless Descending), so that the files of a leaf keep tight bounds on it. Leaves
	// only.
	SortColumn string
	// Descending sorts a leaf's rows by SortColumn descending, nulls last. Learners
	// once alternated it from leaf to leaf, while the rewrite cut files at the target
	// size and a file could hold the end of one leaf and the start of the next; the
	// rewrite now writes each leaf into files of its own, which hold the same rows
	// either way (but for a row at a file's edge), and the learner leaves it false.
	// Trees recorded with it load and route as they did. Leaves only.
	Descending bool
	// Rows is how many sampled rows reached the node when the tree was learned, to
	// explain the tree; the encoder does not use it.
	Rows int64
}

// Tree is a learned tree layout bound to a schema: internal nodes cut on one column each,
// leaves numbered 0, 1, … from left to right. Its keys ([NewEncoder] with
// [EncoderOptions.Tree]) are the leaf number, 4 bytes big-endian, followed by the sort key
// of the leaf's sort column, so that sorting rows by key groups them by leaf, leaves in
// order, and orders each leaf by its column. Build one with [NewTree]; persist it with
// [Tree.MarshalJSON] and load it with [UnmarshalTree]. A Tree is immutable and safe for
// concurrent use.
type Tree struct {
	cols   []treeCol
	nodes  []treeNode // pre-order: the root is 0, a left child follows its parent
	leaves int
	depth  int
}

type treeCol struct {
	name string // as the schema spells it
	typ  arrow.DataType
	fn   valueFn
}

type treeNode struct {
	col       int // index into cols; -1 for a leaf
	value     []byte
	inclusive bool
	set       [][]byte // a set cut's values, sorted and distinct; nil for a range cut
	// setU holds the set as big-endian numbers (in the same order) when the column's
	// encoding is of a fixed width up to 8 bytes, so that a row is looked up by
	// comparing integers, not byte slices.
	setU        []uint64
	left, right int
	leaf        int  // leaf number, leaves only
	sort        int  // index into cols, leaves only
	desc        bool // sort descending, nulls last; leaves only
	rows        int64
}

// NewTree checks root against schema and returns the tree: every cut and sort column must
// be a column of schema whose type the sort key encodes, every cut value (and set value)
// a valid encoding of that type's width, a cut either a range or a set of at most
// [MaxTreeSetValues] values, and the tree at most [MaxTreeLeaves] leaves and
// [MaxTreeDepth] deep. Every problem is reported at once, wrapped in [ErrInvalidTree].
func NewTree(schema *arrow.Schema, root *TreeNode) (*Tree, error) {
	if schema == nil {
		return nil, fmt.Errorf("%w: nil schema", ErrInvalidTree)
	}
	if root == nil {
		return nil, fmt.Errorf("%w: no root", ErrInvalidTree)
	}
	t := &Tree{}
	var errs []error
	byName := map[string]int{}
	colOf := func(name string) int {
		if i, ok := byName[strings.ToLower(name)]; ok {
			return i
		}
		idx, err := findField(schema, name)
		if err != nil {
			errs = append(errs, err)
			return -1
		}
		f := schema.Field(idx)
		fn, err := ascCodec(f.Type)
		if err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", f.Name, err))
			return -1
		}
		t.cols = append(t.cols, treeCol{name: f.Name, typ: f.Type, fn: fn})
		byName[strings.ToLower(name)] = len(t.cols) - 1
		return len(t.cols) - 1
	}
	type item struct {
		n      *TreeNode
		parent int
		right  bool
		depth  int
	}
	stack := []item{{n: root, parent: -1}}
	for len(stack) > 0 && len(errs) < 16 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if n == nil {
			errs = append(errs, errors.New("an internal node lacks a child"))
			continue
		}
		if len(t.nodes) >= 2*MaxTreeLeaves {
			errs = append(errs, fmt.Errorf("more than %d leaves", MaxTreeLeaves))
			break
		}
		i := len(t.nodes)
		if it.parent >= 0 {
			if it.right {
				t.nodes[it.parent].right = i
			} else {
				t.nodes[it.parent].left = i
			}
		}
		t.depth = max(t.depth, it.depth)
		if it.depth > MaxTreeDepth {
			errs = append(errs, fmt.Errorf("deeper than %d levels", MaxTreeDepth))
			break
		}
		if n.Cut == nil {
			if n.Left != nil || n.Right != nil {
				errs = append(errs, errors.New("a node without a cut has children"))
			}
			if n.SortColumn == "" {
				errs = append(errs, fmt.Errorf("leaf %d has no sort column", t.leaves))
			}
			t.nodes = append(t.nodes, treeNode{col: -1, leaf: t.leaves, sort: colOf(n.SortColumn), desc: n.Descending, rows: n.Rows})
			t.leaves++
			continue
		}
		if n.Descending {
			errs = append(errs, errors.New("a node with a cut is marked descending"))
		}
		c := colOf(n.Cut.Column)
		node := treeNode{col: c, rows: n.Rows}
		if len(n.Cut.Set) == 0 {
			node.value, node.inclusive = bytes.Clone(n.Cut.Value), n.Cut.Inclusive
			if c >= 0 {
				if err := checkKeyValue(t.cols[c].typ, n.Cut.Value); err != nil {
					errs = append(errs, fmt.Errorf("cut on %q: %w", t.cols[c].name, err))
				}
			}
		} else {
			var err error
			if node.set, err = checkSet(n.Cut, c, t.cols); err != nil {
				errs = append(errs, fmt.Errorf("set cut on %q: %w", n.Cut.Column, err))
			} else if c >= 0 && fixedEncodingWidth(t.cols[c].typ) > 0 && fixedEncodingWidth(t.cols[c].typ) <= 8 {
				node.setU = make([]uint64, len(node.set))
				for i, v := range node.set {
					node.setU[i] = be64(v)
				}
			}
		}
		t.nodes = append(t.nodes, node)
		// Right is pushed first so that the left subtree is laid out (and its leaves
		// numbered) first.
		stack = append(stack, item{n: n.Right, parent: i, right: true, depth: it.depth + 1}, item{n: n.Left, parent: i, depth: it.depth + 1})
	}
	if t.leaves > MaxTreeLeaves {
		errs = append(errs, fmt.Errorf("%d leaves, at most %d", t.leaves, MaxTreeLeaves))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTree, errors.Join(errs...))
	}
	return t, nil
}

// checkKeyValue reports whether v can be the ascending encoding of a value of type dt: of
// the type's width for fixed-width types.
func checkKeyValue(dt arrow.DataType, v []byte) error {
	if w := fixedEncodingWidth(dt); w > 0 && len(v) != w {
		return fmt.Errorf("a value of %d bytes for a %d-byte %s", len(v), w, dt)
	}
	if len(v) == 0 {
		return errors.New("an empty cut value")
	}
	return nil
}

// checkSet checks a set cut on tree column c (-1 when the column is unknown) and returns
// its values sorted and distinct.
func checkSet(cut *TreeCut, c int, cols []treeCol) ([][]byte, error) {
	var errs []error
	if len(cut.Value) > 0 || cut.Inclusive {
		errs = append(errs, errors.New("a cut is either a range (a value) or a set, not both"))
	}
	if len(cut.Set) > MaxTreeSetValues {
		return nil, errors.Join(append(errs, fmt.Errorf("%d values, at most %d", len(cut.Set), MaxTreeSetValues))...)
	}
	set := make([][]byte, len(cut.Set))
	for i, v := range cut.Set {
		if c >= 0 {
			if err := checkKeyValue(cols[c].typ, v); err != nil && len(errs) < 4 {
				errs = append(errs, fmt.Errorf("value %d: %w", i, err))
			}
		}
		set[i] = bytes.Clone(v)
	}
	slices.SortFunc(set, bytes.Compare)
	set = slices.CompactFunc(set, bytes.Equal)
	return set, errors.Join(errs...)
}

// ValueKey returns the ascending sort-key encoding of the non-null value at row of arr
// (the bytes a sort key holds after a column's marker byte): the form a [TreeCut] value
// takes. It fails for a null, a row out of range or a type the sort key cannot encode.
func ValueKey(arr arrow.Array, row int) ([]byte, error) {
	if arr == nil || row < 0 || row >= arr.Len() {
		return nil, fmt.Errorf("%w: row %d out of range", ErrSchemaMismatch, row)
	}
	if nullAt(arr, row) {
		return nil, errors.New("value key: the value is null")
	}
	fn, err := ascCodec(arr.DataType())
	if err != nil {
		return nil, fmt.Errorf("value key: %w", err)
	}
	return fn(nil, arr, row)
}

// Leaves returns the number of leaves.
func (t *Tree) Leaves() int { return t.leaves }

// Depth returns the depth of the deepest leaf (0 for a tree that is one leaf).
func (t *Tree) Depth() int { return t.depth }

// Columns returns the columns the tree cuts or sorts on, as the schema spells them.
func (t *Tree) Columns() []string {
	out := make([]string, len(t.cols))
	for i, c := range t.cols {
		out[i] = c.name
	}
	return out
}

// Root rebuilds the tree as linked nodes, to explain or re-learn it.
func (t *Tree) Root() *TreeNode {
	var build func(i int) *TreeNode
	build = func(i int) *TreeNode {
		n := t.nodes[i]
		if n.col < 0 {
			return &TreeNode{SortColumn: t.cols[n.sort].name, Descending: n.desc, Rows: n.rows}
		}
		cut := &TreeCut{Column: t.cols[n.col].name, Value: bytes.Clone(n.value), Inclusive: n.inclusive}
		if n.set != nil {
			cut.Set = make([][]byte, len(n.set))
			for i, v := range n.set {
				cut.Set[i] = bytes.Clone(v)
			}
		}
		return &TreeNode{Cut: cut, Left: build(n.left), Right: build(n.right), Rows: n.rows}
	}
	return build(0)
}

// treeJSON is the persisted form of a Tree: its columns with their types (checked on
// load, as [Quantiles] are) and its nodes in pre-order, each internal node's left child
// right after it.
type treeJSON struct {
	Columns []treeColumnJSON `json:"columns"`
	Nodes   []treeNodeJSON   `json:"nodes"`
}

type treeColumnJSON struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
}

type treeNodeJSON struct {
	// Cut nodes: the column index, the value (base64 in JSON), <= instead of <, and the
	// index of the right child; a set cut has its values (each base64) instead of a
	// value. A tree without set cuts has no "set" field, as before set cuts existed.
	Column    *int     `json:"column,omitempty"`
	Value     []byte   `json:"value,omitempty"`
	Inclusive bool     `json:"inclusive,omitempty"`
	Set       [][]byte `json:"set,omitempty"`
	Right     int      `json:"right,omitempty"`
	// Leaves: the sort column's index, and whether the leaf is sorted descending.
	Sort *int  `json:"sort,omitempty"`
	Desc bool  `json:"desc,omitempty"`
	Rows int64 `json:"rows"`
}

// MarshalJSON persists the tree, so that a plan approved on a simulation is rewritten with
// exactly the leaves that were projected. Load it with [UnmarshalTree].
func (t *Tree) MarshalJSON() ([]byte, error) {
	out := treeJSON{Columns: make([]treeColumnJSON, len(t.cols)), Nodes: make([]treeNodeJSON, len(t.nodes))}
	for i, c := range t.cols {
		out.Columns[i] = treeColumnJSON{Name: c.name, Type: c.typ.String(), Fingerprint: c.typ.Fingerprint()}
	}
	for i, n := range t.nodes {
		if n.col < 0 {
			s := n.sort
			out.Nodes[i] = treeNodeJSON{Sort: &s, Desc: n.desc, Rows: n.rows}
			continue
		}
		c := n.col
		out.Nodes[i] = treeNodeJSON{Column: &c, Value: n.value, Inclusive: n.inclusive, Set: n.set, Right: n.right, Rows: n.rows}
	}
	return marshal(out)
}

// Fingerprint names the tree in 16 hex digits: a hash of its persisted form
// ([Tree.MarshalJSON]: columns and their types, cuts with their values or sets, leaves with their sort columns and
// sampled row counts). Two trees with the same fingerprint route every row to the same
// leaf; a tree loaded back with [UnmarshalTree] keeps its fingerprint. A rewrite records
// it with the files it writes, so that a later compaction tells the files of this tree
// from those of a tree learned before it on the same columns.
func (t *Tree) Fingerprint() string {
	data, err := t.MarshalJSON()
	if err != nil {
		// Every field of the persisted form marshals: only a bug gets here.
		panic(fmt.Sprintf("layout: marshal tree: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// UnmarshalTree loads a tree written by [Tree.MarshalJSON], binding its columns to the
// fields of the same name (case-insensitive) in schema. It fails, never panics, on JSON
// that is not such a tree: a column missing from schema or whose type changed since the
// tree was learned, a node index out of order or range, a node both cut and leaf or
// neither, a value of the wrong width, a set cut with a value too or with more than
// [MaxTreeSetValues] values, or more than [MaxTreeLeaves] leaves. A tree written before
// set cuts existed loads as it did.
func UnmarshalTree(data []byte, schema *arrow.Schema) (*Tree, error) {
	var in treeJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("load tree: %w", err)
	}
	if schema == nil {
		return nil, errors.New("load tree: nil schema")
	}
	var errs []error
	for _, c := range in.Columns {
		if _, err := persistedField(schema, c.Name, c.Type, c.Fingerprint, "learned"); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case len(in.Nodes) == 0:
		errs = append(errs, errors.New("no nodes"))
	case len(in.Nodes) >= 2*MaxTreeLeaves:
		errs = append(errs, fmt.Errorf("%d nodes, at most %d", len(in.Nodes), 2*MaxTreeLeaves-1))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load tree: %w: %w", ErrInvalidTree, errors.Join(errs...))
	}
	name := func(i *int) (string, error) {
		if *i < 0 || *i >= len(in.Columns) {
			return "", fmt.Errorf("column index %d out of range [0, %d)", *i, len(in.Columns))
		}
		return in.Columns[*i].Name, nil
	}
	// Rebuild the linked tree: node i's left child is i+1 and its right child comes after
	// the left subtree, which must end exactly there.
	seen := make([]bool, len(in.Nodes))
	var build func(i, depth int) (*TreeNode, int, error)
	build = func(i, depth int) (*TreeNode, int, error) {
		if i >= len(in.Nodes) {
			return nil, 0, fmt.Errorf("node %d out of range [0, %d)", i, len(in.Nodes))
		}
		if depth > MaxTreeDepth {
			return nil, 0, fmt.Errorf("deeper than %d levels", MaxTreeDepth)
		}
		if seen[i] {
			return nil, 0, fmt.Errorf("node %d is reached twice", i)
		}
		seen[i] = true
		n := in.Nodes[i]
		switch {
		case n.Column != nil && n.Sort != nil:
			return nil, 0, fmt.Errorf("node %d is both a cut and a leaf", i)
		case n.Column != nil && n.Desc:
			return nil, 0, fmt.Errorf("node %d is a cut marked descending", i)
		case n.Sort != nil:
			s, err := name(n.Sort)
			if err != nil {
				return nil, 0, fmt.Errorf("node %d: %w", i, err)
			}
			return &TreeNode{SortColumn: s, Descending: n.Desc, Rows: n.Rows}, i + 1, nil
		case n.Column == nil:
			return nil, 0, fmt.Errorf("node %d is neither a cut nor a leaf", i)
		}
		c, err := name(n.Column)
		if err != nil {
			return nil, 0, fmt.Errorf("node %d: %w", i, err)
		}
		left, next, err := build(i+1, depth+1)
		if err != nil {
			return nil, 0, err
		}
		if n.Right != next {
			return nil, 0, fmt.Errorf("node %d: right child %d, but its left subtree ends at %d", i, n.Right, next)
		}
		right, next, err := build(next, depth+1)
		if err != nil {
			return nil, 0, err
		}
		if len(n.Set) > MaxTreeSetValues {
			// Refused here too, before a hostile set is copied.
			return nil, 0, fmt.Errorf("node %d: a set cut of %d values, at most %d", i, len(n.Set), MaxTreeSetValues)
		}
		return &TreeNode{Cut: &TreeCut{Column: c, Value: n.Value, Inclusive: n.Inclusive, Set: n.Set}, Left: left, Right: right, Rows: n.Rows}, next, nil
	}
	root, end, err := build(0, 0)
	if err == nil && end != len(in.Nodes) {
		err = fmt.Errorf("nodes %d to %d are not in the tree", end, len(in.Nodes)-1)
	}
	if err != nil {
		return nil, fmt.Errorf("load tree: %w: %w", ErrInvalidTree, err)
	}
	t, err := NewTree(schema, root)
	if err != nil {
		return nil, fmt.Errorf("load tree: %w", err)
	}
	return t, nil
}

// shortSet is the largest set cut whose values a row is compared with one by one (for
// equality) rather than by binary search.
const shortSet = 8

// treeEncoder keys rows by leaf number, then by the leaf's sort column.
type treeEncoder struct {
	keyBase
	tree *Tree
	// idx maps the tree's columns to the record's columns (the schema's indexes).
	idx []int
}

// Tree returns the tree the encoder routes rows by: every key it appends begins with the
// row's leaf number ([LeafOfKey]), so that a sorter can tell where one leaf's rows end.
func (e *treeEncoder) Tree() *Tree { return e.tree }

func newTreeEncoder(l Layout, schema *arrow.Schema, t *Tree) (*treeEncoder, error) {
	if t == nil {
		return nil, errors.New("a tree layout needs the learned tree (EncoderOptions.Tree): learn it with a simulation of the workload (floe simulate, floe plan)")
	}
	var errs []error
	allowed := map[string]bool{}
	for _, c := range l.Columns {
		allowed[strings.ToLower(c.Name)] = true
	}
	e := &treeEncoder{tree: t}
	var cols []keyCol
	for _, c := range t.cols {
		if !allowed[strings.ToLower(c.name)] {
			errs = append(errs, fmt.Errorf("the tree cuts or sorts on %q, which the layout does not name", c.name))
			continue
		}
		i, err := findField(schema, c.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := schema.Field(i)
		if !arrow.TypeEqual(f.Type, c.typ) {
			errs = append(errs, fmt.Errorf("column %q is %s, the tree was learned on %s", f.Name, f.Type, c.typ))
			continue
		}
		cols = append(cols, keyCol{spec: Column{Name: f.Name}, name: f.Name, index: i, typ: f.Type})
		e.idx = append(e.idx, i)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	e.keyBase = keyBase{schema: schema, cols: cols, checked: new(atomic.Pointer[arrow.Schema])}
	return e, nil
}

// AppendKey routes the row from the root to its leaf (a range cut is one bytes.Compare of
// the row's value key, a set cut a binary search of the set for it) and appends the
// leaf's number (4 bytes, big-endian) and the memcomparable key
// of the leaf's sort column (a marker byte, 0x00 for null, 0x01 and the value otherwise;
// for a descending leaf 0xFF for null, and the complement of 0x01 and the value
// otherwise, as a descending sort column's key is).
func (e *treeEncoder) AppendKey(dst []byte, rec arrow.RecordBatch, row int) ([]byte, error) {
	if err := e.check(rec, row); err != nil {
		return dst, err
	}
	base := len(dst)
	t := e.tree
	i := 0
	for t.nodes[i].col >= 0 {
		n := &t.nodes[i]
		c := &t.cols[n.col]
		arr := rec.Column(e.idx[n.col])
		// A null goes left of a range cut (it sorts first) and right of a set cut (it
		// is in no set).
		left := n.set == nil
		if !nullAt(arr, row) {
			var err error
			mark := len(dst)
			dst, err = c.fn(dst, arr, row)
			if err != nil {
				return dst[:base], fmt.Errorf("encode column %q row %d: %w", c.name, row, err)
			}
			switch {
			case n.setU != nil:
				_, left = slices.BinarySearch(n.setU, be64(dst[mark:]))
			case n.set != nil && len(n.set) <= shortSet:
				// A few values: compared for equality, cheaper than ordering them.
				left = false
				for _, v := range n.set {
					if bytes.Equal(v, dst[mark:]) {
						left = true
						break
					}
				}
			case n.set != nil:
				_, left = slices.BinarySearchFunc(n.set, dst[mark:], bytes.Compare)
			default:
				cmp := bytes.Compare(dst[mark:], n.value)
				left = cmp < 0 || cmp == 0 && n.inclusive
			}
			dst = dst[:mark]
		}
		if left {
			i = n.left
		} else {
			i = n.right
		}
	}
	n := &t.nodes[i]
	dst = binary.BigEndian.AppendUint32(dst, uint32(n.leaf))
	c := &t.cols[n.sort]
	arr := rec.Column(e.idx[n.sort])
	if nullAt(arr, row) {
		if n.desc {
			return append(dst, markNullLast), nil
		}
		return append(dst, markNullFirst), nil
	}
	start := len(dst)
	dst = append(dst, markValue)
	dst, err := c.fn(dst, arr, row)
	if err != nil {
		return dst[:base], fmt.Errorf("encode column %q row %d: %w", c.name, row, err)
	}
	if n.desc {
		complement(dst[start:])
	}
	return dst, nil
}

// LeafOfKey returns the leaf number a tree layout's key starts with, or false for a key
// too short to be one.
func LeafOfKey(key []byte) (int, bool) {
	if len(key) < 4 {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(key)), true
}
