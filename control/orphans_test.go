package control_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/scalelake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// backupCatalog copies w's catalog into a catalog called backup, as a
// restored catalog backup configured beside the original is, and opens it.
func backupCatalog(t *testing.T, w *testlake.Warehouse) catalog.Catalog {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	w.CopyCatalog(t, "backup", path)
	props := map[string]string{}
	for k, v := range w.Props {
		props[k] = v
	}
	props["uri"] = "file:" + path
	backup, err := lake.OpenCatalog(context.Background(), "backup", props)
	require.NoError(t, err)
	if c, ok := backup.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	return backup
}

// compactSorted compacts table id into sort(id) with an optimize run of
// that step alone.
func compactSorted(t *testing.T, w *testlake.Warehouse, st *store.Store, id lake.Ident) {
	t.Helper()
	l, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	run, err := control.Optimize(context.Background(), w.Catalog, st, id, control.OptimizeOptions{Compact: rewriter.CompactOptions{Layout: l},
		Skip: map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepManifests: true}})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
}

// localCatalogs are the warehouse's one catalog, as floe sees it.
func localCatalogs(w *testlake.Warehouse) control.Catalogs {
	return control.Catalogs{Names: []string{w.Name}, Open: func(context.Context, string) (catalog.Catalog, error) { return w.Catalog, nil }}
}

// registerGone registers db.gone with a copy of tbl's metadata file, then
// removes the copy: an entry floe cannot load.
func registerGone(t *testing.T, w *testlake.Warehouse, tbl *table.Table) {
	t.Helper()
	copied := tbl.Location() + "/metadata/99999-gone.metadata.json"
	w.Plant(t, copied, w.Read(t, tbl.MetadataLocation()), time.Now())
	w.Register(t, "db", "gone", copied)
	w.Remove(t, copied)
}

// The daemon's path: a restored backup of the catalog is configured beside
// it, the original entry is compacted, and ten days later the scheduler
// runs the backup entry's maintenance. The compaction's outputs are old by
// then and the backup entry's metadata never references them; the orphans
// step must find the original entry in the other catalog and keep them.
func TestSchedulerOrphansKeepWhatAnEntryOfAnotherCatalogReferences(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	want, err := oracle.ChecksumIceberg(ctx, mustTable(t, w, id))
	require.NoError(t, err)
	backup := backupCatalog(t, w)
	copied := lake.Ident{Catalog: "backup", Namespace: id.Namespace, Name: id.Name}
	_, err = lake.LoadTable(ctx, backup, copied)
	require.NoError(t, err)
	compactSorted(t, w, st, id)

	set, err := policy.ParseFile("floe.yaml", []byte("default: {mode: manual, layout: none, enabled: {expire: false, compact: false, manifests: false}}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}, "backup": {}}, Policies: set}
	later := func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Now: later,
		Catalog: func(_ context.Context, name string) (catalog.Catalog, error) {
			if name == "backup" {
				return backup, nil
			}
			return w.Catalog, nil
		}})
	require.NoError(t, err)
	rr, err := svc.Run(ctx, control.Request{Table: copied, Trigger: control.TriggerAPI})
	require.NoError(t, err)
	got := rr.Run
	require.Equal(t, control.StatusDone, got.Status)
	var orphans rewriter.OrphanPlan
	for _, step := range got.Steps {
		if step.Name == control.StepOrphans {
			require.Equal(t, control.StatusDone, step.Status)
			var rep struct {
				Files    []json.RawMessage `json:"files"`
				Siblings []string          `json:"siblings"`
				Shared   int               `json:"shared"`
			}
			require.NoError(t, json.Unmarshal(reportJSON(t, step.Report), &rep))
			require.Equal(t, []string{id.String()}, rep.Siblings)
			require.Positive(t, rep.Shared)
			require.Empty(t, rep.Files)
			orphans.Shared = rep.Shared
		}
	}
	require.Positive(t, orphans.Shared, "the orphans step ran")
	testlake.RequireIntact(t, mustTable(t, w, id), want)
	copiedTbl, err := lake.LoadTable(ctx, backup, copied)
	require.NoError(t, err)
	testlake.RequireIntact(t, copiedTbl, want)
}

// A file a floe run wrote and never committed is taken at once only on the
// table the run's record names; on another entry sharing the location it
// is judged by its age. An entry that cannot be loaded refuses the plan,
// named.
func TestPlanOrphansJudgesARunsFilesByItsRecord(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	tbl := mustTable(t, w, id)
	twinID := lake.Ident{Catalog: w.Name, Namespace: id.Namespace, Name: "twin"}
	twin := w.Register(t, "db", "twin", tbl.MetadataLocation())
	cats := localCatalogs(w)

	const runID = "20261201T000000Z-0a1b2c3d"
	now := time.Now().UTC()
	require.NoError(t, st.StartRun(ctx, store.RunRecord{ID: runID, Table: id.String(), Status: "running", StartedAt: now.Add(-time.Minute)}))
	require.NoError(t, st.EndRun(ctx, runID, string(control.StatusCancelled), "interrupted", now))
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	written, _, err := rewriter.RewriteGroup(ctx, tbl, tasks, rewriter.GroupOptions{RunID: runID})
	require.NoError(t, err)
	require.NotEmpty(t, written)

	plan, err := control.PlanOrphans(ctx, cats, st, id, tbl, rewriter.OrphanOptions{})
	require.NoError(t, err)
	require.Len(t, plan.Files, len(written))
	for _, f := range plan.Files {
		require.Equal(t, runID, f.RunID)
	}
	require.Equal(t, []string{twinID.String()}, plan.Siblings)

	plan, err = control.PlanOrphans(ctx, cats, st, twinID, twin, rewriter.OrphanOptions{})
	require.NoError(t, err)
	require.Empty(t, plan.Files, "the run was on db.t, not on db.twin")
	require.Equal(t, len(written), plan.Young)

	// Without the state store nothing says which table the run was on.
	plan, err = control.PlanOrphans(ctx, cats, nil, id, tbl, rewriter.OrphanOptions{})
	require.NoError(t, err)
	require.Empty(t, plan.Files)

	// Catalogs that leave out the table's own are a caller's mistake.
	_, err = control.PlanOrphans(ctx, control.Catalogs{}, st, id, tbl, rewriter.OrphanOptions{})
	require.ErrorContains(t, err, "do not include the table's own")

	// An entry whose metadata file is gone: its location is unknown.
	registerGone(t, w, tbl)
	_, err = control.PlanOrphans(ctx, cats, st, id, tbl, rewriter.OrphanOptions{})
	require.ErrorIs(t, err, rewriter.ErrSiblingUnknown)
	var unreadable *control.UnreadableEntriesError
	require.ErrorAs(t, err, &unreadable)
	require.Len(t, unreadable.Entries, 1)
	require.Equal(t, "local.db.gone", unreadable.Entries[0].Name)
	require.ErrorContains(t, err, "entry local.db.gone could not be loaded")
}

// A distributed engine's orphan removal lists the location itself and
// knows nothing of the other entries on it: a table with siblings is
// cleaned by floe's own deletion, one without them by the engine.
func TestDistributedEngineLeavesASharedLocationToFloe(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "shared"}[shared], func(t *testing.T) {
			ctx := context.Background()
			w, id, st := setup(t)
			tbl := mustTable(t, w, id)
			if shared {
				w.Register(t, "db", "twin", tbl.MetadataLocation())
			}
			stray := tbl.Location() + "/data/stray.parquet"
			w.Plant(t, stray, []byte("stray"), time.Now())
			eng := &clusterEngine{}
			p := policy.Default()
			p.Engine = "cluster"
			later := func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }
			run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{Now: later,
				Engine: control.EngineSelect{Engines: clusterEngines(eng), Policy: p},
				Skip:   map[string]bool{control.StepExpire: true, control.StepCompact: true, control.StepManifests: true}})
			require.NoError(t, err)
			require.Equal(t, control.StatusDone, run.Status)
			if !shared {
				require.Contains(t, eng.calls, "orphans")
				return
			}
			require.NotContains(t, eng.calls, "orphans")
			var rep struct {
				Deleted []string `json:"deleted"`
			}
			require.NoError(t, json.Unmarshal(reportJSON(t, run.Steps[1].Report), &rep))
			// A local IO reports plain paths.
			require.Len(t, rep.Deleted, 1)
			require.Equal(t, strings.TrimPrefix(stray, "file://"), strings.TrimPrefix(rep.Deleted[0], "file://"))
			require.False(t, w.Exists(t, stray))
		})
	}
}

// A sibling search by a service that has measured the lake (as every
// daemon pass does) reads only the entries whose location it does not
// know or that could share the table's files: at 10,000 tables an orphan
// run no longer reads the whole lake's metadata. It finds the same
// siblings as a search that reads every entry.
func TestSiblingSearchReadsOnlyEntriesThatCouldOverlap(t *testing.T) {
	ctx := t.Context()
	w, id, _ := setup(t)
	others, err := scalelake.Generate(ctx, w.Catalog, w.Name, scalelake.Options{Tables: 6, Namespaces: 2})
	require.NoError(t, err)
	backup := backupCatalog(t, w)
	copied := lake.Ident{Catalog: "backup", Namespace: id.Namespace, Name: id.Name}
	counted := testlake.Count(w.Catalog)
	set, err := policy.ParseFile("floe.yaml", []byte("default: {layout: none}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}, "backup": {}}, Policies: set}
	svc, err := control.NewService(control.Deps{Config: cfg,
		Catalog: func(_ context.Context, name string) (catalog.Catalog, error) {
			if name == "backup" {
				return backup, nil
			}
			return counted, nil
		}})
	require.NoError(t, err)
	find := svc.Catalogs().Siblings(copied, mustTable(t, w, id).Location(), rewriter.OrphanOptions{})
	names := func(sibs []rewriter.Sibling) []string {
		var out []string
		for _, s := range sibs {
			out = append(out, s.Name)
		}
		return out
	}

	sibs, err := find(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{id.String()}, names(sibs))
	require.EqualValues(t, 1+len(others), counted.MetadataReads(), "a service that knows no table reads every entry")

	for _, other := range append([]lake.Ident{id}, others...) {
		_, err := svc.Health(ctx, other, control.HealthRequest{})
		require.NoError(t, err)
	}
	counted.Reset()
	sibs, err = find(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{id.String()}, names(sibs))
	require.EqualValues(t, 1, counted.MetadataReads(), "only the entry sharing the location is read")
}
