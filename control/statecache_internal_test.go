package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// TestStateCacheBound: the cache keeps a table's state for its metadata
// location only, holds at most its budget of files, evicting the table
// used longest ago, and keeps no table larger than the budget.
func TestStateCacheBound(t *testing.T) {
	state := func(files int) *lake.State { return &lake.State{DataFiles: make([]lake.File, files)} }
	c := newStateCache(10)
	a, b, big := state(4), state(4), state(11)
	c.put("a", "a1", a)
	c.put("b", "b1", b)
	require.Same(t, a, c.get("a", "a1"))
	require.Nil(t, c.get("a", "a2"), "another metadata location: the table moved")
	c.put("c", "c1", state(4)) // over budget: b is the least recently used
	require.Nil(t, c.get("b", "b1"))
	require.Same(t, a, c.get("a", "a1"))
	require.Equal(t, 8, c.files)
	c.put("a", "a2", state(2)) // the table moved: its old state goes
	require.Nil(t, c.get("a", "a1"))
	require.Equal(t, 6, c.files)
	c.put("d", "d1", big)
	require.Nil(t, c.get("d", "d1"), "larger than the budget")
	require.Equal(t, 6, c.files)
	c.put("e", "", state(1))
	require.Nil(t, c.get("e", ""), "no location, nothing to key by")

	var none *stateCache
	none.put("a", "a1", a)
	require.Nil(t, none.get("a", "a1"))
	require.Nil(t, newStateCache(-1), "negative keeps none")
}
