package simulator

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-project/floe/layout"
)

// DefaultTreeCacheEntries is how many trees a [TreeCache] keeps unless told otherwise.
const DefaultTreeCacheEntries = 32

// TreeCache keeps the trees [LearnTree] learned, so that projecting a tree layout again
// on the same sample for the same workload reuses the tree instead of learning it again:
// the train and eval projections of one table, or every pass of the daemon over a table
// whose data and workload did not change. A tree is keyed by the sample's rows (a digest
// of their values, not the sample's identity: two samples of the same rows share it), the
// learning workload (each query's weight and filter), the layout's columns and the
// learner's options (MinLeafRows, from the target file size, and MaxCutsPerColumn). The
// learner is deterministic, so a hit returns exactly the tree a miss would learn. It is
// safe for concurrent use; the oldest tree goes first when it is full.
type TreeCache struct {
	mu    sync.Mutex
	max   int
	trees map[string]*layout.Tree
	order []string
	stats TreeCacheStats
}

// TreeCacheStats counts a [TreeCache]'s lookups.
type TreeCacheStats struct {
	// Hits are the trees reused, Misses the trees learned.
	Hits, Misses int
}

// NewTreeCache returns a cache of at most entries trees (≤ 0: [DefaultTreeCacheEntries]).
func NewTreeCache(entries int) *TreeCache {
	if entries <= 0 {
		entries = DefaultTreeCacheEntries
	}
	return &TreeCache{max: entries, trees: map[string]*layout.Tree{}}
}

// Stats returns the lookups so far.
func (c *TreeCache) Stats() TreeCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// learn returns the cached tree for key, or learns it with fn and keeps it. Two callers
// missing the same key at once both learn it (the same tree).
func (c *TreeCache) learn(key string, fn func() (*layout.Tree, error)) (*layout.Tree, error) {
	c.mu.Lock()
	if t, ok := c.trees[key]; ok {
		c.stats.Hits++
		c.mu.Unlock()
		return t, nil
	}
	c.stats.Misses++
	c.mu.Unlock()
	t, err := fn()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.trees[key]; !ok {
		if len(c.order) >= c.max {
			delete(c.trees, c.order[0])
			c.order = c.order[1:]
		}
		c.trees[key] = t
		c.order = append(c.order, key)
	}
	return t, nil
}

// treeKey is the cache key of learning layout l's tree on s for queries with opts, or
// false when the sample cannot be digested (see [Sample.digest]).
func treeKey(s *Sample, l layout.Layout, queries []Query, opts TreeOptions) (string, bool, error) {
	h := sha256.New()
	fp, ok := s.digest()
	if !ok {
		return "", false, nil
	}
	h.Write(fp)
	for _, c := range l.Columns {
		fmt.Fprintf(h, "col %s\n", strings.ToLower(c.Name))
	}
	fmt.Fprintf(h, "opts %d %d\n", opts.MinLeafRows, opts.MaxCutsPerColumn)
	for _, q := range queries {
		f, err := json.Marshal(q.Filter)
		if err != nil {
			return "", false, fmt.Errorf("digest workload: %w", err)
		}
		fmt.Fprintf(h, "q %x %s\n", math.Float64bits(q.Weight), f)
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// digest returns a digest of the sampled rows: every column's name, type and values
// (its Arrow buffers, with each record's length and offset), columns in name order, so
// that two samples of the same rows give the same digest; false for a sample with a
// nested or dictionary-encoded column, whose values are not all in its own buffers.
// Computed once.
func (s *Sample) digest() ([]byte, bool) {
	s.digestOnce.Do(func() {
		h := sha256.New()
		var buf [8]byte
		num := func(n int) {
			binary.BigEndian.PutUint64(buf[:], uint64(n))
			h.Write(buf[:])
		}
		num(s.Rows)
		if len(s.Records) == 0 {
			s.digestSum = h.Sum(nil)
			return
		}
		sc := s.Records[0].Schema()
		idx := make([]int, sc.NumFields())
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(sc.Field(a).Name, sc.Field(b).Name) })
		for _, i := range idx {
			f := sc.Field(i)
			switch f.Type.(type) {
			case arrow.NestedType, *arrow.DictionaryType, arrow.ExtensionType:
				return
			}
			fmt.Fprintf(h, "%s %s\n", f.Name, f.Type.Fingerprint())
			for _, rec := range s.Records {
				d := rec.Column(i).Data()
				num(d.Len())
				num(d.Offset())
				for _, b := range d.Buffers() {
					if b == nil {
						num(-1)
						continue
					}
					num(b.Len())
					h.Write(b.Bytes())
				}
			}
		}
		s.digestSum = h.Sum(nil)
	})
	return s.digestSum, s.digestSum != nil
}
