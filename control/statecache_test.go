package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestUnchangedTableIsNotReadAgain: a daemon's pass decides every table
// (its triggers) and measures it again for the alerts and the gauges. A
// table whose metadata location has not moved since is measured without
// reading its manifests again, pass after pass; a commit moves it, and the
// next measure reads the new manifests and sees the new file. A run reads
// its table afresh.
func TestUnchangedTableIsNotReadAgain(t *testing.T) {
	w, id, st := setup(t)
	cc := testlake.Count(w.Catalog)
	set, err := policy.ParseFile("floe.yaml", []byte("default:\n  layout: none\n  poll_interval: 1s\n"+
		"  enabled: {expire: false, orphans: false, compact: false, deletes: false, manifests: false}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}}, Policies: set}
	c := &clock{t: time.Now().UTC()}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Now: c.Now,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return cc, nil }})
	require.NoError(t, err)
	s := control.NewScheduler(control.SchedulerOptions{Service: svc})
	pass := func() {
		t.Helper()
		c.Add(2 * time.Second) // past the poll interval: the triggers are read
		p, err := s.RunPass(t.Context())
		require.NoError(t, err)
		require.Empty(t, p.Errors)
		require.Len(t, p.Decisions, 1)
		require.False(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	}
	health := func() int {
		t.Helper()
		h, err := svc.Health(t.Context(), id, control.HealthRequest{})
		require.NoError(t, err)
		return h.Metrics.DataFiles
	}

	pass()
	first := cc.ManifestReads()
	require.Positive(t, first, "the first pass reads the manifests")
	require.Equal(t, 8, health())
	for range 3 {
		pass()
		require.Equal(t, 8, health())
	}
	require.Equal(t, first, cc.ManifestReads(), "an unchanged table's manifests are not read again")

	// A commit moves the metadata location.
	tbl, err := lake.LoadTable(t.Context(), w.Catalog, id)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	b.Field(0).(*array.Int64Builder).Append(10_000)
	b.Field(1).(*array.StringBuilder).Append("new")
	rec := b.NewRecordBatch()
	b.Release()
	testlake.Append(t, tbl, rec)
	rec.Release()
	pass()
	require.Greater(t, cc.ManifestReads(), first, "the changed table is read")
	require.Equal(t, 9, health(), "and measured as it is now")
	after := cc.ManifestReads()
	pass()
	require.Equal(t, after, cc.ManifestReads())

	// A run decides on the table as it is, read afresh.
	_, err = svc.Decide(t.Context(), control.Request{Table: id})
	require.NoError(t, err)
	require.Greater(t, cc.ManifestReads(), after)
}
