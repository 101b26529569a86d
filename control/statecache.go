package control

import (
	"context"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/lake"
)

// DefaultStateCacheFiles is [Deps.StateCacheFiles]' default: the data and
// delete files whose loaded state a service keeps between calls.
const DefaultStateCacheFiles = 100_000

// stateCache keeps, per table, the state last loaded for measuring its
// health and the metadata location it was loaded from. Iceberg metadata
// files are immutable and every commit writes a new one, so a table whose
// metadata location has not moved has the same snapshots, manifests and
// files: its state is not read again. That is what makes a daemon's pass
// over an unchanged lake cheap: the scheduler's triggers, the alerts'
// backlog and the metrics' gauges each measure every table, and only the
// first of them after a commit reads its manifests.
//
// It holds at most maxFiles data and delete files, evicting the least
// recently used tables first; a table larger than that is not kept. A nil
// cache keeps nothing.
type stateCache struct {
	mu       sync.Mutex
	maxFiles int
	files    int
	tick     uint64
	entries  map[string]*cachedState
	// homes are the tables' locations (where their data lives) by key,
	// with the metadata location each was read at: kept for every table
	// put, also those evicted or too large to keep, since a sibling search
	// needs no more of a table ([Catalogs].Located).
	homes map[string]home
}

// home is a table's location as read from its metadata at metadata.
type home struct{ metadata, location string }

type cachedState struct {
	location string
	state    *lake.State
	files    int
	used     uint64
}

// newStateCache returns a cache of at most maxFiles files; nil when
// maxFiles is not positive.
func newStateCache(maxFiles int) *stateCache {
	if maxFiles <= 0 {
		return nil
	}
	return &stateCache{maxFiles: maxFiles, entries: map[string]*cachedState{}, homes: map[string]home{}}
}

// get is the state of table key loaded from location, or nil.
func (c *stateCache) get(key, location string) *lake.State {
	if c == nil || location == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil || e.location != location {
		return nil
	}
	c.tick++
	e.used = c.tick
	return e.state
}

// put keeps st, loaded from location, as table key's state, replacing the
// one loaded from an older location.
func (c *stateCache) put(key, location string, st *lake.State) {
	if c == nil || location == "" {
		return
	}
	n := len(st.DataFiles) + len(st.DeleteFiles)
	c.mu.Lock()
	defer c.mu.Unlock()
	if st.Metadata != nil {
		c.homes[key] = home{metadata: location, location: st.Metadata.Location()}
	}
	if old := c.entries[key]; old != nil {
		c.files -= old.files
		delete(c.entries, key)
	}
	if n > c.maxFiles {
		return
	}
	for c.files+n > c.maxFiles {
		var lru string
		for k, e := range c.entries {
			if lru == "" || e.used < c.entries[lru].used {
				lru = k
			}
		}
		c.files -= c.entries[lru].files
		delete(c.entries, lru)
	}
	c.tick++
	c.entries[key] = &cachedState{location: location, state: st, files: n, used: c.tick}
	c.files += n
}

// location is the metadata location table key's kept state was loaded
// from, "" when none is kept.
func (c *stateCache) location(key string) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e.location
	}
	return ""
}

// measuredState is table id's state for measuring its health. When known
// is the location the service's kept state was loaded from (a catalog's
// listing said the table is still there), nothing is read. Otherwise the
// catalog gives the table's metadata location (one read of its metadata
// file), and the manifests are read only when that location moved since
// the service last loaded the table. Runs never use it: a run loads its
// table afresh under its lease.
func (s *Service) measuredState(ctx context.Context, cat catalog.Catalog, id lake.Ident, known string) (*lake.State, error) {
	key := strings.ToLower(id.String())
	if st := s.states.get(key, known); st != nil {
		return st, nil
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return nil, err
	}
	loc := tbl.MetadataLocation()
	if st := s.states.get(key, loc); st != nil {
		return st, nil
	}
	st, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{Manifests: s.manifests})
	if err != nil {
		return nil, err
	}
	s.states.put(key, loc, st)
	return st, nil
}

// knownLocation is the metadata location the service last measured table
// id at, "" when it keeps no state of it.
func (s *Service) knownLocation(id lake.Ident) string {
	return s.states.location(strings.ToLower(id.String()))
}

// home is table key's location as read from its metadata at metadata
// location loc, when the cache saw it read there.
func (c *stateCache) home(key, loc string) (string, bool) {
	if c == nil || loc == "" {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.homes[key]
	if !ok || h.metadata != loc {
		return "", false
	}
	return h.location, true
}

// keptLocation is table id's location (where its data lives) as the
// service read it from metadata location loc ([Catalogs].Located).
func (s *Service) keptLocation(id lake.Ident, loc string) (string, bool) {
	return s.states.home(strings.ToLower(id.String()), loc)
}
