package control_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// tenDaysLater is a clock past every snapshot's default 5-day expiry age.
func tenDaysLater() time.Time { return time.Now().Add(10 * 24 * time.Hour) }

// The daemon's path for expiry: a restored backup of the catalog is
// configured beside it, the original entry is compacted, and ten days later
// the scheduler expires the original's snapshots. The backup entry's
// current snapshot is the one the compaction replaced; its manifest list
// and data files are reached, in the original's metadata, only by expired
// snapshots. The expire step must find the backup entry and keep them.
func TestSchedulerExpireKeepsWhatAnEntryOfAnotherCatalogReferences(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	want, err := oracle.ChecksumIceberg(ctx, mustTable(t, w, id))
	require.NoError(t, err)
	backup := backupCatalog(t, w)
	copied := lake.Ident{Catalog: "backup", Namespace: id.Namespace, Name: id.Name}
	copiedTbl, err := lake.LoadTable(ctx, backup, copied)
	require.NoError(t, err)
	copiedList := copiedTbl.CurrentSnapshot().ManifestList

	compactSorted(t, w, st, id)

	set, err := policy.ParseFile("floe.yaml", []byte("default: {mode: manual, layout: none, enabled: {orphans: false, compact: false, manifests: false}}\n"))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{w.Name: {}, "backup": {}}, Policies: set}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: st, Now: tenDaysLater,
		Catalog: func(_ context.Context, name string) (catalog.Catalog, error) {
			if name == "backup" {
				return backup, nil
			}
			return w.Catalog, nil
		}})
	require.NoError(t, err)
	rr, err := svc.Run(ctx, control.Request{Table: id, Trigger: control.TriggerAPI})
	require.NoError(t, err)
	got := rr.Run
	require.Equal(t, control.StatusDone, got.Status)
	var rep struct {
		Expired  []string `json:"expired_snapshot_ids"`
		Deleted  []string `json:"deleted"`
		Siblings []string `json:"siblings"`
		Shared   []string `json:"shared"`
	}
	for _, step := range got.Steps {
		if step.Name == control.StepExpire {
			require.Equal(t, control.StatusDone, step.Status)
			require.NoError(t, json.Unmarshal(reportJSON(t, step.Report), &rep))
		}
	}
	require.NotEmpty(t, rep.Expired, "the expire step ran")
	require.Equal(t, []string{copied.String()}, rep.Siblings)
	require.Contains(t, rep.Shared, copiedList)
	require.NotContains(t, rep.Deleted, copiedList)
	require.Len(t, mustTable(t, w, id).Metadata().Snapshots(), 1)
	testlake.RequireIntact(t, mustTable(t, w, id), want)
	copiedTbl, err = lake.LoadTable(ctx, backup, copied)
	require.NoError(t, err)
	testlake.RequireIntact(t, copiedTbl, want)
}

// PlanExpire refuses, naming it, when an entry that may share the location
// cannot be loaded; optimize's dry run and its expire step refuse the same
// way. KeepFiles asks no entry, deletes nothing, and expires.
func TestPlanExpireRefusesWhenAnEntryCannotBeRead(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	tbl := mustTable(t, w, id)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	cats := localCatalogs(w)
	twin := w.Register(t, "db", "twin", tbl.MetadataLocation())
	twinID := lake.Ident{Catalog: w.Name, Namespace: id.Namespace, Name: "twin"}

	compactSorted(t, w, st, id)
	tbl = mustTable(t, w, id)

	plan, _, err := control.PlanExpire(ctx, cats, id, tbl, rewriter.ExpireOptions{Now: tenDaysLater})
	require.NoError(t, err)
	require.Equal(t, []string{twinID.String()}, plan.Siblings)
	require.NotContains(t, plan.Files, twin.CurrentSnapshot().ManifestList)

	// Catalogs that leave out the table's own are a caller's mistake.
	_, _, err = control.PlanExpire(ctx, control.Catalogs{}, id, tbl, rewriter.ExpireOptions{Now: tenDaysLater})
	require.ErrorContains(t, err, "do not include the table's own")

	// An entry whose metadata file is gone: its location is unknown.
	registerGone(t, w, tbl)
	_, _, err = control.PlanExpire(ctx, cats, id, tbl, rewriter.ExpireOptions{Now: tenDaysLater})
	require.ErrorIs(t, err, rewriter.ErrSiblingUnknown)
	var unreadable *control.UnreadableEntriesError
	require.ErrorAs(t, err, &unreadable)
	require.Equal(t, "local.db.gone", unreadable.Entries[0].Name)
	require.ErrorContains(t, err, "entry local.db.gone could not be loaded")

	skip := map[string]bool{control.StepOrphans: true, control.StepCompact: true, control.StepManifests: true}
	oo := control.OptimizeOptions{Now: tenDaysLater, Catalogs: cats, Skip: skip}
	_, err = control.PlanOptimize(ctx, w.Catalog, st, id, oo)
	require.ErrorContains(t, err, "entry local.db.gone could not be loaded")
	run, err := control.Optimize(ctx, w.Catalog, st, id, oo)
	require.ErrorContains(t, err, "entry local.db.gone could not be loaded")
	require.Equal(t, control.StatusFailed, run.Status)
	require.Greater(t, len(mustTable(t, w, id).Metadata().Snapshots()), 1, "nothing expired")

	oo.Expire.KeepFiles = true
	run, err = control.Optimize(ctx, w.Catalog, st, id, oo)
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Len(t, mustTable(t, w, id).Metadata().Snapshots(), 1)
	var rep struct {
		Deleted   []string `json:"deleted"`
		KeepFiles bool     `json:"keep_files"`
	}
	require.NoError(t, json.Unmarshal(reportJSON(t, run.Steps[0].Report), &rep))
	require.True(t, rep.KeepFiles)
	require.Empty(t, rep.Deleted)
	testlake.RequireIntact(t, mustTable(t, w, id), want)
	twin, err = lake.LoadTable(ctx, w.Catalog, twinID)
	require.NoError(t, err)
	testlake.RequireIntact(t, twin, want)
}

// A distributed engine's expiry deletes what the table's own metadata no
// longer reaches and knows nothing of the other entries on the location: a
// table with siblings is expired by floe itself, one without them by the
// engine; the optimize dry run names the siblings.
func TestDistributedEngineLeavesExpiryOfASharedLocationToFloe(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "shared"}[shared], func(t *testing.T) {
			ctx := context.Background()
			w, id, st := setup(t)
			tbl := mustTable(t, w, id)
			want, err := oracle.ChecksumIceberg(ctx, tbl)
			require.NoError(t, err)
			if shared {
				w.Register(t, "db", "twin", tbl.MetadataLocation())
			}
			eng := &clusterEngine{}
			p := policy.Default()
			p.Engine = "cluster"
			oo := control.OptimizeOptions{Now: tenDaysLater, Engine: control.EngineSelect{Engines: clusterEngines(eng), Policy: p},
				Skip: map[string]bool{control.StepOrphans: true, control.StepCompact: true, control.StepManifests: true}}
			dry, err := control.PlanOptimize(ctx, w.Catalog, st, id, oo)
			require.NoError(t, err)
			require.NotEmpty(t, dry.Steps[0].Expire.Snapshots)
			run, err := control.Optimize(ctx, w.Catalog, st, id, oo)
			require.NoError(t, err)
			require.Equal(t, control.StatusDone, run.Status)
			if !shared {
				require.Empty(t, dry.Steps[0].Expire.Siblings)
				require.Contains(t, eng.calls, "expire")
				return
			}
			require.Equal(t, []string{"local.db.twin"}, dry.Steps[0].Expire.Siblings)
			require.NotContains(t, eng.calls, "expire")
			var rep struct {
				Siblings []string `json:"siblings"`
				Shared   []string `json:"shared"`
				Deleted  []string `json:"deleted"`
			}
			require.NoError(t, json.Unmarshal(reportJSON(t, run.Steps[0].Report), &rep))
			require.Equal(t, []string{"local.db.twin"}, rep.Siblings)
			require.NotEmpty(t, rep.Shared)
			require.Empty(t, rep.Deleted, "every file the expired snapshots reach, the twin's current snapshot reads")
			twin, err := lake.LoadTable(ctx, w.Catalog, lake.Ident{Catalog: w.Name, Namespace: id.Namespace, Name: "twin"})
			require.NoError(t, err)
			testlake.RequireIntact(t, twin, want)
		})
	}
}
