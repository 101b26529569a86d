package control_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// dayLake is a table partitioned by day(ts) with small partitions, its
// state store and a scheduler over it on a test clock.
type dayLake struct {
	schedFixture
	day0 time.Time
	// policies are the scheduler's floe.yaml policies.
	policies string
}

// newDayLake writes files[d] small files (ten rows each) into day d.
func newDayLake(t *testing.T, files []int, policies string) *dayLake {
	t.Helper()
	return newDayLakeProps(t, files, policies, nil)
}

// newDayLakeProps is [newDayLake] of a table created with props.
func newDayLakeProps(t *testing.T, files []int, policies string, props iceberg.Properties) *dayLake {
	t.Helper()
	w := testlake.New(t)
	if c, ok := w.Catalog.(catalog.Closer); ok {
		t.Cleanup(func() { require.NoError(t, c.Close()) })
	}
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	w.CreateTable(t, "db", "days", schema, &spec, props, nil)
	st, err := store.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	id := lake.Ident{Catalog: w.Name, Namespace: []string{"db"}, Name: "days"}
	dl := &dayLake{schedFixture: *newSchedulerOn(t, w, id, st, policies), day0: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), policies: policies}
	for d, n := range files {
		for range n {
			dl.appendDay(t, d)
		}
	}
	return dl
}

var nextID int64

// appendDay commits one small file of ten rows into day d.
func (dl *dayLake) appendDay(t *testing.T, d int) {
	t.Helper()
	tbl, err := lake.LoadTable(t.Context(), dl.w.Catalog, dl.id)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for range 10 {
		nextID++
		b.Field(0).(*array.Int64Builder).Append(nextID)
		ts, err := arrow.TimestampFromTime(dl.day0.Add(time.Duration(d)*24*time.Hour+time.Duration(nextID)*time.Second), arrow.Microsecond)
		require.NoError(t, err)
		b.Field(1).(*array.TimestampBuilder).Append(ts)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	testlake.Append(t, tbl, rec)
}

func (dl *dayLake) runs(t *testing.T) []control.Run {
	t.Helper()
	runs, err := control.ListRuns(t.Context(), dl.st, dl.id.String(), 0)
	require.NoError(t, err)
	return runs
}

// compactDecision is what the table's policy decides for compaction now.
func (dl *dayLake) compactDecision(t *testing.T) control.StepDecision {
	t.Helper()
	return dl.decision(t, control.StepCompact)
}

// decision is what the table's triggers decide for step now.
func (dl *dayLake) decision(t *testing.T, step string) control.StepDecision {
	t.Helper()
	set, err := policy.ParseFile("floe.yaml", []byte(dl.policies))
	require.NoError(t, err)
	cfg := &config.Config{Catalogs: map[string]config.Props{dl.w.Name: {}}, Policies: set}
	svc, err := control.NewService(control.Deps{Config: cfg, Store: dl.st, Now: dl.clock.Now,
		Catalog: func(context.Context, string) (catalog.Catalog, error) { return dl.w.Catalog, nil }})
	require.NoError(t, err)
	ds, err := svc.Triggers(t.Context(), dl.id)
	require.NoError(t, err)
	return stepDecisionOf(t, ds, step)
}

func stepDecisionOf(t *testing.T, ds []control.StepDecision, step string) control.StepDecision {
	t.Helper()
	for _, d := range ds {
		if d.Step == step {
			return d
		}
	}
	t.Fatalf("no decision of %s", step)
	return control.StepDecision{}
}

const dayPolicy = "default:\n  layout: none\n  poll_interval: 10m\n"

// TestCompactedDayPartitionsAreDone is the case from the field: day
// partitions each smaller than 75% of the target. The small-file trigger
// fires, compaction bin-packs every day into one file, and every file is
// still "small". Judged per partition, a day that is one file has nothing
// left to merge, so the next pass neither compacts nor records a run.
func TestCompactedDayPartitionsAreDone(t *testing.T) {
	dl := newDayLake(t, []int{5, 5, 5, 5}, dayPolicy)
	p := dl.pass(t)
	require.Empty(t, p.Errors)
	require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Len(t, p.Runs, 1)
	require.Contains(t, p.Runs[0].Decision.Steps[2].Reason, "small-file ratio 1.00")
	compact := stepsOf(p.Runs[0].Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status)
	require.NotEqual(t, compact.Before.SnapshotID, compact.After.SnapshotID, "the compaction committed")
	require.Equal(t, 4, compact.After.Metrics.DataFiles, "one file per day")

	dl.clock.Add(11 * time.Minute)
	p = dl.pass(t)
	require.Empty(t, p.Errors)
	require.False(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Equal(t, "no trigger fired", p.Decisions[0].Reason)
	require.Empty(t, p.Runs)
	require.Len(t, dl.runs(t), 1, "no no-op run recorded")
	d := dl.compactDecision(t)
	require.False(t, d.Run)
	require.Contains(t, d.Reason, "small-file ratio 0.00")
}

// TestCompactionBelowItsFloorIsNotDue: days of three small files each
// fire the small-file trigger, but bin-pack wants five files per group, so
// a compaction would merge nothing. Before, the first run compacted
// nothing and backed off after; now compaction is not due from the start,
// with the reason: the first run does only the steps that change
// something (its manifest rewrite), the second pass runs nothing and
// records nothing, and commits that give a day five small files lift it.
func TestCompactionBelowItsFloorIsNotDue(t *testing.T) {
	dl := newDayLake(t, []int{3, 3, 3, 3}, dayPolicy)
	p := dl.pass(t)
	require.Empty(t, p.Errors)
	require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Len(t, p.Runs, 1)
	first := p.Runs[0].Run
	compact := stepsOf(first)[control.StepCompact]
	require.Equal(t, control.StatusNotDue, compact.Status)
	require.Contains(t, compact.Reason, "small-file ratio 1.00 ≥ triggers.small_file_ratio 0.30, but a compaction would merge no file: no partition has 5 small files")
	require.Equal(t, control.StatusDone, stepsOf(first)[control.StepManifests].Status, "the manifest rewrite still runs")

	dl.clock.Add(11 * time.Minute)
	p = dl.pass(t)
	require.Empty(t, p.Errors)
	require.False(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Empty(t, p.Runs)
	require.Len(t, dl.runs(t), 1, "no run that does nothing")
	d := dl.compactDecision(t)
	require.False(t, d.Run)
	require.Equal(t, control.StatusNotDue, d.Status)
	require.Contains(t, d.Reason, "but a compaction would merge no file")

	// One more small file in day 0 is four: still nothing to merge.
	dl.appendDay(t, 0)
	require.False(t, dl.compactDecision(t).Run)
	// A fifth is a group.
	dl.appendDay(t, 0)
	dl.clock.Add(11 * time.Minute)
	p = dl.pass(t)
	require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Contains(t, p.Decisions[0].Reason, "compact: small-file ratio")
	require.Len(t, dl.runs(t), 2)
	compact = stepsOf(p.Runs[0].Run)[control.StepCompact]
	require.Equal(t, control.StatusDone, compact.Status)
	require.NotEqual(t, compact.Before.SnapshotID, compact.After.SnapshotID, "day 0 merged")
}

// idlePasses runs n passes, each a poll interval after the last: none
// finds the table due, none runs or records a run.
func (dl *dayLake) idlePasses(t *testing.T, n int) {
	t.Helper()
	recorded := len(dl.runs(t))
	for range n {
		dl.clock.Add(11 * time.Minute)
		p := dl.pass(t)
		require.Empty(t, p.Errors)
		require.False(t, p.Decisions[0].Due, p.Decisions[0].Reason)
		require.Equal(t, "no trigger fired", p.Decisions[0].Reason)
		require.Empty(t, p.Runs)
	}
	require.Len(t, dl.runs(t), recorded, "no run that does nothing")
}

// stepDecision is the decision of step among a run's.
func stepDecision(t *testing.T, rr control.RunResult, step string) control.StepDecision {
	t.Helper()
	return stepDecisionOf(t, rr.Decision.Steps, step)
}

// TestExpireThatWouldRemoveNothingIsNotDue: an expire trigger fires, but
// the expiry would remove no snapshot — the policy keeps the newest ten of
// a table with five, or the snapshots are all younger than the expiry age.
// Before, a run expired nothing and listed the table's location at every
// poll; now expire is not due with the reason, and nothing runs until a
// snapshot can expire, which time alone may bring.
func TestExpireThatWouldRemoveNothingIsNotDue(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		// wait is how long after the first run the snapshots have aged
		// when the trigger fires.
		wait  time.Duration
		fired string
		// expiresLater: once the snapshots are older than the expiry age
		// (another six days on) the expiry removes some.
		expiresLater bool
	}{
		{"kept by retain_last", "snapshots:\n    retain_last: 10\n", 6 * 24 * time.Hour, "older than the 120 h expiry age", false},
		{"too young to expire", "triggers:\n    snapshots: 3\n", 0, "≥ triggers.snapshots 3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dl := newDayLake(t, []int{1, 1, 1, 1}, dayPolicy+"  "+tc.policy)
			// The first pass lists the orphans, as it does once a day.
			p := dl.pass(t)
			require.Empty(t, p.Errors)
			require.Len(t, p.Runs, 1)
			dl.clock.Add(tc.wait)
			if tc.wait > 0 {
				p = dl.pass(t)
				require.Len(t, p.Runs, 1, "the daily orphan listing: %s", p.Decisions[0].Reason)
				require.Contains(t, p.Decisions[0].Reason, "orphans:")
				d := stepDecision(t, p.Runs[0], control.StepExpire)
				require.False(t, d.Run)
				require.Contains(t, d.Reason, tc.fired+", but no snapshot can expire now")
			} else {
				d := stepDecision(t, p.Runs[0], control.StepExpire)
				require.False(t, d.Run, d.Reason)
				require.Contains(t, d.Reason, tc.fired+", but no snapshot can expire now")
			}
			dl.idlePasses(t, 3)
			d := dl.decision(t, control.StepExpire)
			require.Equal(t, control.StatusNotDue, d.Status)
			require.Contains(t, d.Reason, "not due until one can")

			// Six days on the snapshots are past the expiry age.
			dl.clock.Add(6 * 24 * time.Hour)
			p = dl.pass(t)
			require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
			require.Len(t, p.Runs, 1)
			if !tc.expiresLater {
				require.Contains(t, p.Decisions[0].Reason, "orphans:", "retain_last still keeps them all")
				require.False(t, stepDecision(t, p.Runs[0], control.StepExpire).Run)
				return
			}
			require.Contains(t, p.Decisions[0].Reason, "expire: ")
			expire := stepsOf(p.Runs[0].Run)[control.StepExpire]
			require.Equal(t, control.StatusDone, expire.Status, expire.Error)
			require.Less(t, expire.After.Metrics.Snapshots, expire.Before.Metrics.Snapshots, "the expiry removed snapshots")
		})
	}
}

// TestUnsatisfiableManifestTriggerBacksOff: a delete manifest beside one
// data manifest fires the manifests trigger of a small table (two
// manifests for ten data files), and a manifest rewrite merges data
// manifests only: it changes nothing. Before, that no-op run came back at
// every poll; now, after one, the step is not due until the table
// changes.
func TestUnsatisfiableManifestTriggerBacksOff(t *testing.T) {
	dl := newDayLakeProps(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, dayPolicy,
		iceberg.Properties{table.PropertyFormatVersion: "2", table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	tbl, err := lake.LoadTable(t.Context(), dl.w.Catalog, dl.id)
	require.NoError(t, err)
	_, err = tbl.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("id"), nextID), nil)
	require.NoError(t, err)

	// The first run merges the ten data manifests into one.
	p := dl.pass(t)
	require.Empty(t, p.Errors)
	require.Len(t, p.Runs, 1)
	manifests := stepsOf(p.Runs[0].Run)[control.StepManifests]
	require.Equal(t, control.StatusDone, manifests.Status, manifests.Error)
	require.NotEqual(t, manifests.Before.SnapshotID, manifests.After.SnapshotID)
	require.Equal(t, 2, manifests.After.Metrics.Manifests, "one data manifest and the delete manifest")

	// The trigger still fires; the rewrite finds nothing to merge.
	dl.clock.Add(11 * time.Minute)
	p = dl.pass(t)
	require.Contains(t, p.Decisions[0].Reason, "manifests: 200 manifests per 1,000 data files")
	require.Len(t, p.Runs, 1)
	noop := p.Runs[0].Run
	manifests = stepsOf(noop)[control.StepManifests]
	require.Equal(t, control.StatusDone, manifests.Status, manifests.Error)
	require.Equal(t, manifests.Before.SnapshotID, manifests.After.SnapshotID, "nothing to rewrite")
	dl.idlePasses(t, 3)
	d := dl.decision(t, control.StepManifests)
	require.Equal(t, control.StatusNotDue, d.Status)
	require.Contains(t, d.Reason, "but manifest rewrite run "+noop.ID+" changed nothing at this snapshot")

	// A commit changes the table: a second data manifest to merge.
	dl.appendDay(t, 10)
	dl.clock.Add(11 * time.Minute)
	p = dl.pass(t)
	require.True(t, p.Decisions[0].Due, p.Decisions[0].Reason)
	require.Contains(t, p.Decisions[0].Reason, "manifests: ")
	manifests = stepsOf(p.Runs[0].Run)[control.StepManifests]
	require.NotEqual(t, manifests.Before.SnapshotID, manifests.After.SnapshotID, "merged")
}

// TestSchedulerNeverRunsAScheduleThatNeverFires: robfig/cron parses
// "0 0 30 2 *" and its Next is the zero time, which the scheduler took for
// "due" at every pass. A policy that got past validation (the scheduler
// is built here on a set that was never validated) is an error of the
// table at every pass, and nothing runs.
func TestSchedulerNeverRunsAScheduleThatNeverFires(t *testing.T) {
	f := newScheduler(t, "default: {mode: scheduled, schedule: \"0 0 30 2 *\", layout: none}\n")
	for range 2 {
		p, err := f.s.RunPass(t.Context())
		require.NoError(t, err)
		require.Empty(t, p.Runs)
		require.Empty(t, p.Decisions)
		require.Len(t, p.Errors, 1)
		require.Contains(t, p.Errors[0], `schedule "0 0 30 2 *": schedule never fires`)
		f.clock.Add(time.Hour)
	}
	runs, err := control.ListRuns(t.Context(), f.st, f.id.String(), 0)
	require.NoError(t, err)
	require.Empty(t, runs)
}

// TestHistoryOf reads the newest compaction that ran to the end: one that
// left the table's snapshot as it found it is a no-op, remembered at the
// snapshot its run ended at; one that changed it, or an old record without
// snapshot ids, lifts any back-off.
func TestHistoryOf(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sh := func(id int64) *control.StepHealth { return &control.StepHealth{SnapshotID: id} }
	step := func(name string, status control.RunStatus, before, after *control.StepHealth) control.Step {
		return control.Step{Name: name, Status: status, Before: before, After: after, EndedAt: at}
	}
	noop := control.Run{ID: "r1", Steps: []control.Step{
		step(control.StepCompact, control.StatusDone, sh(7), sh(7)),
		step(control.StepManifests, control.StatusDone, sh(7), sh(8)),
	}}
	backedOff := control.Run{ID: "r2", Steps: []control.Step{step(control.StepCompact, control.StatusNotDue, nil, nil)}}
	changed := control.Run{ID: "r0", Steps: []control.Step{step(control.StepCompact, control.StatusDone, sh(5), sh(6))}}
	dry := control.Run{ID: "d", DryRun: true, Steps: []control.Step{step(control.StepCompact, control.StatusDone, sh(9), sh(9))}}
	legacy := control.Run{ID: "old", Steps: []control.Step{step(control.StepCompact, control.StatusDone, sh(0), sh(0))}}

	h := control.HistoryOf([]control.Run{dry, backedOff, noop, changed})
	require.NotNil(t, h.Unchanged)
	require.Equal(t, control.NoOpCompaction{RunID: "r1", SnapshotID: 8, At: at}, *h.Unchanged, "the snapshot the no-op's run ended at")
	require.Nil(t, control.HistoryOf([]control.Run{changed, noop}).Unchanged, "the newest compaction changed the table")
	require.Nil(t, control.HistoryOf([]control.Run{legacy, noop}).Unchanged)
	require.Nil(t, control.HistoryOf(nil).Unchanged)
	require.Nil(t, h.UnchangedDeletes, "no delete step ran")

	// The delete step's no-op is read the same way, apart from the
	// compaction's.
	deletes := control.Run{ID: "r3", Steps: []control.Step{
		step(control.StepCompact, control.StatusDone, sh(9), sh(10)),
		step(control.StepDeletes, control.StatusDone, sh(10), sh(10)),
		step(control.StepManifests, control.StatusDone, sh(10), sh(11)),
	}}
	hd := control.HistoryOf([]control.Run{deletes, noop})
	require.Nil(t, hd.Unchanged, "the newest compaction changed the table")
	require.Equal(t, &control.NoOpCompaction{RunID: "r3", SnapshotID: 11, At: at}, hd.UnchangedDeletes)

	// Decide backs off at that snapshot only.
	p := policy.Default()
	health := func(snap int64) lake.Health {
		return lake.Health{SnapshotID: snap, Metrics: lake.Metrics{DataFiles: 12, SmallFiles: 12, SmallFileRatio: 1}}
	}
	d := control.Decide(health(8), p, h)[2]
	require.False(t, d.Run)
	require.Equal(t, control.StatusNotDue, d.Status)
	require.Contains(t, d.Reason, "changed nothing at this snapshot (8)")
	require.True(t, control.Decide(health(9), p, h)[2].Run, "the table changed")
	require.True(t, control.Decide(health(8), p, control.History{})[2].Run)

	// The manifest rewrite's no-op is read and backed off from the same
	// way; the expiry by what it would remove now.
	manifests := control.Run{ID: "r4", Steps: []control.Step{step(control.StepManifests, control.StatusDone, sh(12), sh(12))}}
	hm := control.HistoryOf([]control.Run{manifests, noop})
	require.Equal(t, &control.NoOpCompaction{RunID: "r4", SnapshotID: 12, At: at}, hm.UnchangedManifests)
	piled := lake.Health{SnapshotID: 12, Metrics: lake.Metrics{DataFiles: 10, Manifests: 2, Snapshots: 600}}
	ds := control.Decide(piled, p, hm)
	require.Equal(t, control.StatusNotDue, ds[4].Status)
	require.Contains(t, ds[4].Reason, "but manifest rewrite run r4 changed nothing at this snapshot (12)")
	require.True(t, ds[0].Run, "nothing known of the expiry: the trigger decides")
	hm.Expirable = &control.Expirable{}
	ds = control.Decide(piled, p, hm)
	require.Equal(t, control.StatusNotDue, ds[0].Status)
	require.Contains(t, ds[0].Reason, "600 snapshots ≥ triggers.snapshots 500, but no snapshot can expire now")
	hm.Expirable = &control.Expirable{Refs: 1}
	require.True(t, control.Decide(piled, p, hm)[0].Run, "an old tag to remove")
}

// TestPolicyFloorsAreTheSteps: the bounds the policies put on a value are
// the ones the steps and health enforce.
func TestPolicyFloorsAreTheSteps(t *testing.T) {
	require.Equal(t, rewriter.MinOrphanAge, policy.MinOrphanAge)
	require.Equal(t, lake.MinTargetFileSizeBytes, policy.MinTargetFileSizeBytes)
}
