package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

func TestChooseEngine(t *testing.T) {
	const gib = int64(1) << 30
	p := policy.Default()
	require.Equal(t, policy.EngineNative, p.Engine, "the built-in engine is native")
	require.Equal(t, 100*gib, p.AutoEngineBytes, "auto_engine_bytes defaults to 100GiB")
	auto := p
	auto.Engine, auto.DistributedEngine = policy.EngineAuto, "spark"
	autoNone := auto
	autoNone.DistributedEngine = ""
	named := p
	named.Engine = "trino"
	for _, tc := range []struct {
		name     string
		p        policy.Policy
		bytes    int64
		override string
		want     string
	}{
		{"default is native", p, 500 * gib, "", "native"},
		{"a named engine", named, 1, "", "trino"},
		{"auto below the threshold", auto, 100*gib - 1, "", "native"},
		{"auto at the threshold", auto, 100 * gib, "", "spark"},
		{"auto with no distributed engine stays native", autoNone, 500 * gib, "", "native"},
		{"--engine beats the policy", named, 1, "Spark", "spark"},
		{"--engine native beats the policy", named, 1, "native", "native"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := control.ChooseEngine(tc.p, tc.bytes, tc.override)
			require.Equal(t, tc.want, c.Name)
			require.NotEmpty(t, c.Reason)
		})
	}
}

// clusterEngine stands in for a cluster: what it does to the table is
// done through floe's own rewriter (the engine's effect), and each step
// reports as a distributed engine does. lose, when set, makes the
// compaction drop two data files instead, losing their rows.
type clusterEngine struct {
	lose bool
	// corrupt rewrites two data files into one with one value changed,
	// as a replace snapshot: the row count holds, the content does not.
	corrupt bool
	write   map[layout.Strategy]bool
	calls   []string
}

func (e *clusterEngine) Name() string { return "cluster" }
func (e *clusterEngine) Kind() string { return rewriter.KindTrino }
func (e *clusterEngine) CanWrite(s layout.Strategy) bool {
	return e.write == nil || e.write[s]
}

func (e *clusterEngine) report(step string) rewriter.StepReport {
	return rewriter.StepReport{Engine: &rewriter.EngineReport{Engine: "cluster", Kind: rewriter.KindTrino, Step: step,
		Statements: []rewriter.EngineStatement{{SQL: step, QueryID: "q-" + step}}, Metrics: map[string]int64{}}}
}

func (e *clusterEngine) Compact(ctx context.Context, job rewriter.CompactJob) (rewriter.StepReport, error) {
	e.calls = append(e.calls, "compact "+job.Table.String())
	if e.corrupt {
		return e.report("compact"), corruptRewrite(ctx, job.State)
	}
	if e.lose {
		files := job.State.DataFiles
		tx := job.State.Table.NewTransaction()
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, []iceberg.DataFile{files[0].DataFile, files[1].DataFile}, nil, nil); err != nil {
			return rewriter.StepReport{}, err
		}
		if _, err := tx.Commit(ctx); err != nil {
			return rewriter.StepReport{}, err
		}
		return e.report("compact"), nil
	}
	res, err := rewriter.Compact(ctx, job.State, job.Plan, job.Options)
	if err != nil {
		return rewriter.StepReport{}, err
	}
	r := e.report("compact")
	r.Engine.Metrics["rewritten_data_files_count"] = int64(res.FilesIn)
	return r, nil
}

func (e *clusterEngine) Expire(ctx context.Context, job rewriter.ExpireJob) (rewriter.StepReport, error) {
	e.calls = append(e.calls, "expire")
	if _, err := rewriter.Expire(ctx, job.Catalog, job.Tbl, job.Plan, job.Options); err != nil {
		return rewriter.StepReport{}, err
	}
	return e.report("expire"), nil
}

func (e *clusterEngine) RemoveOrphans(ctx context.Context, job rewriter.OrphanJob) (rewriter.StepReport, error) {
	e.calls = append(e.calls, "orphans")
	return e.report("orphans"), nil
}

func (e *clusterEngine) RewriteManifests(ctx context.Context, job rewriter.ManifestJob) (rewriter.StepReport, error) {
	e.calls = append(e.calls, "manifests")
	if _, _, err := rewriter.RewriteManifests(ctx, job.Tbl, job.Options); err != nil {
		return rewriter.StepReport{}, err
	}
	return e.report("manifests"), nil
}

func (e *clusterEngine) Ping(context.Context) error { return nil }
func (e *clusterEngine) Close() error               { return nil }

// corruptRewrite reads st's first two data files, changes the first value
// of the name column, writes the rows to a new file with iceberg-go's writer
// and commits it as a replace of the two.
func corruptRewrite(ctx context.Context, st *lake.State) error {
	tbl := st.Table
	scan := tbl.Scan()
	defer scan.Close()
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return err
	}
	tasks = rewriter.CollapseTasks(tasks)[:2]
	schema, records, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return err
	}
	first := true
	changed := func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range records {
			if err == nil && first {
				first = false
				data := rec.Column(1).Data().Buffers()[2].Bytes()
				data[0] ^= 0x01
			}
			if !yield(rec, err) {
				return
			}
		}
	}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	for df, err := range table.WriteRecords(ctx, tbl, schema, changed) {
		if err != nil {
			return err
		}
		rw.AddDataFile(df)
	}
	for _, t := range tasks {
		rw.DeleteFile(t.File)
	}
	if err := rw.Commit(ctx); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

func clusterEngines(eng *clusterEngine) *control.Engines {
	cfg := &config.Config{Engines: map[string]config.EngineConfig{"cluster": {Type: "trino", Catalogs: map[string]string{"local": "iceberg"}}}}
	return control.NewEngines(cfg, func(context.Context, string, config.EngineConfig) (rewriter.Engine, error) { return eng, nil })
}

func TestOptimizeOnDistributedEngineVerifies(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	want, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	sort, err := layout.Parse("sort(id)")
	require.NoError(t, err)
	eng := &clusterEngine{}
	p := policy.Default()
	p.Engine = "cluster"
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Expire:  rewriter.ExpireOptions{OlderThan: time.Millisecond},
		Compact: rewriter.CompactOptions{Layout: sort},
		Engine:  control.EngineSelect{Engines: clusterEngines(eng), Policy: p},
	})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, run.Status)
	require.Contains(t, eng.calls, "compact iceberg.db.t", "the compaction went to the engine, as the engine names the table")
	require.Contains(t, eng.calls, "expire")
	require.Contains(t, eng.calls, "manifests")

	var compact control.Step
	for _, s := range run.Steps {
		if s.Name == control.StepCompact {
			compact = s
		}
	}
	var rep control.DistributedReport
	require.NoError(t, json.Unmarshal(reportJSON(t, compact.Report), &rep))
	require.Equal(t, "cluster", rep.Engine)
	require.Equal(t, "q-compact", rep.Statements[0].QueryID)
	require.Equal(t, "cluster", rep.Choice.Name)
	require.True(t, rep.Verified.RowsChecked)
	require.Equal(t, int64(4000), rep.Verified.RowsBefore)
	require.Equal(t, rep.Verified.RowsBefore, rep.Verified.RowsAfter)
	require.Positive(t, rep.Verified.FilesReplaced)
	require.False(t, rep.Verified.NothingToDo)

	tbl, err = lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	got, err := oracle.ChecksumIceberg(ctx, tbl)
	require.NoError(t, err)
	require.Equal(t, want, got, "independent read: same rows after the engine's run")
}

func TestDistributedRewriteThatLosesRowsFails(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	p := policy.Default()
	p.Engine = "cluster"
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Skip:   map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepManifests: true},
		Engine: control.EngineSelect{Engines: clusterEngines(&clusterEngine{lose: true}), Policy: p},
	})
	require.Error(t, err)
	require.ErrorIs(t, err, rewriter.ErrInvariant)
	require.ErrorContains(t, err, "floe cannot tell whether the engine or another writer removed those rows")
	require.Equal(t, control.StatusFailed, run.Status)
	stored, err := control.GetRun(ctx, st, run.ID)
	require.NoError(t, err)
	require.Equal(t, control.StatusFailed, stored.Status, "the failed check is recorded")
}

// A distributed engine that commits other rows than it replaced, with the
// same count, fails floe's read-back: the step fails with ErrInvariant,
// naming the column and the snapshot to go back to.
func TestDistributedRewriteThatChangesAValueFails(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	tbl, err := lake.LoadTable(ctx, w.Catalog, id)
	require.NoError(t, err)
	before := tbl.CurrentSnapshot().SnapshotID
	p := policy.Default()
	p.Engine = "cluster"
	run, err := control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Skip:   map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepManifests: true},
		Engine: control.EngineSelect{Engines: clusterEngines(&clusterEngine{corrupt: true}), Policy: p},
	})
	require.ErrorIs(t, err, rewriter.ErrInvariant)
	require.ErrorContains(t, err, "values differ in column name")
	require.ErrorContains(t, err, fmt.Sprintf("the table's previous snapshot is %d", before))
	require.Equal(t, control.StatusFailed, run.Status)
	var rep control.DistributedReport
	for _, s := range run.Steps {
		if s.Name == control.StepCompact {
			require.NoError(t, json.Unmarshal(reportJSON(t, s.Report), &rep))
		}
	}
	require.True(t, rep.Verified.RowsChecked, "the row count alone holds")
	require.Equal(t, rep.Verified.RowsBefore, rep.Verified.RowsAfter)
	require.NotNil(t, rep.Verified.Content)
	require.True(t, rep.Verified.Content.Checked)
	require.Equal(t, int64(1000), rep.Verified.Content.Read.Rows)
	require.Equal(t, rep.Verified.Content.BytesReplaced, rep.Verified.Content.BytesChecked)
}

func TestDistributedEngineRefusesLayoutItCannotWrite(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	z, err := layout.Parse("zorder(id, name)")
	require.NoError(t, err)
	eng := &clusterEngine{write: map[layout.Strategy]bool{layout.StrategyBinpack: true, layout.StrategySort: true}}
	_, err = control.Optimize(ctx, w.Catalog, st, id, control.OptimizeOptions{
		Skip:    map[string]bool{control.StepExpire: true, control.StepOrphans: true, control.StepManifests: true},
		Compact: rewriter.CompactOptions{Layout: z},
		Engine:  control.EngineSelect{Engines: clusterEngines(eng), Override: "cluster"},
	})
	require.ErrorIs(t, err, rewriter.ErrLayoutUnsupported)
	require.ErrorContains(t, err, "engines that can: native")
	require.Empty(t, eng.calls, "nothing was sent to the engine")
}

func TestEnginesUnknownName(t *testing.T) {
	_, err := clusterEngines(&clusterEngine{}).Get(context.Background(), "nope")
	require.True(t, errors.Is(err, config.ErrInvalid))
	require.ErrorContains(t, err, "engines: native, cluster")
}
