package spark_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/rewriter/spark"
	"github.com/floe-project/floe/rewriter/spark/sparktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var tbl = rewriter.EngineTable{Catalog: "lake", Namespace: []string{"db"}, Name: "events"}

func open(t *testing.T, srv *sparktest.Server, cfg spark.Config) *spark.Engine {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "spark"
	}
	if cfg.Remote == "" {
		cfg.Remote = srv.Remote()
	}
	e, err := spark.Open(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	return e
}

func compactJob(l layout.Layout, groups int) rewriter.CompactJob {
	return rewriter.CompactJob{
		Table: tbl,
		Plan:  rewriter.CompactPlan{Groups: make([]rewriter.PlannedGroup, groups), TargetFileSizeBytes: 134217728},
		Options: rewriter.CompactOptions{
			Layout: l, MinInputFiles: 5, GroupsPerBatch: 2,
		},
	}
}

var rewriteResult = sparktest.Rows(
	[]string{"rewritten_data_files_count", "added_data_files_count", "rewritten_bytes_count", "failed_data_files_count", "some_new_column"},
	[]any{int32(12), int32(2), int64(1 << 30), int32(0), "ignored"},
)

func TestCompactStatements(t *testing.T) {
	const opts = "options => map('target-file-size-bytes', '134217728', 'min-input-files', '5', 'partial-progress.enabled', 'true', 'partial-progress.max-commits', '3')"
	cases := []struct {
		name string
		l    layout.Layout
		want string
	}{
		{"binpack", layout.Layout{Strategy: layout.StrategyBinpack},
			"CALL `lake`.system.rewrite_data_files(table => '`db`.`events`', strategy => 'binpack', " + opts + ")"},
		{"default is binpack", layout.Layout{},
			"CALL `lake`.system.rewrite_data_files(table => '`db`.`events`', strategy => 'binpack', " + opts + ")"},
		{"sort", layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{{Name: "a", Desc: true, NullsLast: true}, {Name: "b"}}},
			"CALL `lake`.system.rewrite_data_files(table => '`db`.`events`', strategy => 'sort', sort_order => '`a` DESC NULLS LAST, `b` ASC NULLS FIRST', " + opts + ")"},
		{"zorder", layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}},
			"CALL `lake`.system.rewrite_data_files(table => '`db`.`events`', strategy => 'sort', sort_order => 'zorder(`a`, `b`)', " + opts + ")"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := sparktest.Start(t)
			srv.Handle("rewrite_data_files", rewriteResult)
			e := open(t, srv, spark.Config{})
			require.True(t, e.CanWrite(c.l.Strategy))
			out, err := e.Compact(t.Context(), compactJob(c.l, 5))
			require.NoError(t, err)
			require.Equal(t, []string{c.want}, srv.Statements())
			rep := out.Engine
			require.Equal(t, map[string]int64{
				"rewritten_data_files_count": 12, "added_data_files_count": 2,
				"rewritten_bytes_count": 1 << 30, "failed_data_files_count": 0,
			}, rep.Metrics)
			require.Len(t, rep.Statements, 1)
			require.Equal(t, c.want, rep.Statements[0].SQL)
			require.Equal(t, 1, rep.Statements[0].Rows)
			require.Equal(t, srv.Operations()[0].ID, rep.Statements[0].QueryID)
			require.Equal(t, "spark", rep.Engine)
			require.Equal(t, rewriter.KindSpark, rep.Kind)
			require.Len(t, srv.Operations()[0].Tags, 1, "each statement is tagged")
		})
	}
}

func TestCompactScopedWhere(t *testing.T) {
	srv := sparktest.Start(t)
	e := open(t, srv, spark.Config{})
	job := compactJob(layout.Layout{Strategy: layout.StrategyBinpack}, 2)
	job.Scope = []rewriter.PartitionScope{
		{Key: "region=eu/ts_day=2024-01-01", Fields: []rewriter.PartitionValue{
			{Column: "region", SourceType: "string", Transform: "identity", Value: "eu"},
			{Column: "ts", SourceType: "timestamptz", Transform: "day",
				Lower: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Upper: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)},
		}},
		{Key: "region=null/ts_day=2024-01-01", Fields: []rewriter.PartitionValue{
			{Column: "region", SourceType: "string", Transform: "identity", Null: true},
		}},
	}
	_, err := e.Compact(t.Context(), job)
	require.NoError(t, err)
	require.Equal(t, []string{"CALL `lake`.system.rewrite_data_files(table => '`db`.`events`', strategy => 'binpack', " +
		"options => map('target-file-size-bytes', '134217728', 'min-input-files', '5', 'partial-progress.enabled', 'true', 'partial-progress.max-commits', '1'), " +
		`where => '(` + "`region`" + ` = \'eu\' AND ` + "`ts`" + ` >= TIMESTAMP \'2024-01-01 00:00:00.000000Z\' AND ` + "`ts`" + ` < TIMESTAMP \'2024-01-02 00:00:00.000000Z\') OR (` + "`region`" + ` IS NULL)')`},
		srv.Statements())
}

func TestCompactNothingPlannedSendsNothing(t *testing.T) {
	srv := sparktest.Start(t)
	e := open(t, srv, spark.Config{})
	out, err := e.Compact(t.Context(), compactJob(layout.Layout{}, 0))
	require.NoError(t, err)
	require.Empty(t, out.Engine.Statements)
	job := compactJob(layout.Layout{}, 3)
	job.Scope = []rewriter.PartitionScope{}
	_, err = e.Compact(t.Context(), job)
	require.NoError(t, err)
	require.Empty(t, srv.Statements())
}

func TestHilbertAndTreeRefusedWithoutAStatement(t *testing.T) {
	srv := sparktest.Start(t)
	e := open(t, srv, spark.Config{})
	require.False(t, e.CanWrite(layout.StrategyHilbert))
	_, err := e.Compact(t.Context(), compactJob(layout.Layout{Strategy: layout.StrategyHilbert, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}, 3))
	require.ErrorIs(t, err, rewriter.ErrLayoutUnsupported)
	require.Contains(t, err.Error(), "native")

	require.False(t, e.CanWrite(layout.StrategyTree))
	_, err = e.Compact(t.Context(), compactJob(layout.Layout{Strategy: layout.StrategyTree, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}, 3))
	require.ErrorIs(t, err, rewriter.ErrLayoutUnsupported)
	require.ErrorContains(t, err, "Iceberg's Spark procedure has no tree strategy (engines that can: native)")

	job := compactJob(layout.Layout{Strategy: layout.StrategyZOrder, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}}, 3)
	job.Options.ZOrderMode = layout.ZOrderRank
	_, err = e.Compact(t.Context(), job)
	require.ErrorIs(t, err, rewriter.ErrLayoutUnsupported)
	require.Empty(t, srv.Statements())
	require.Empty(t, srv.Operations())
}

func TestExpire(t *testing.T) {
	srv := sparktest.Start(t)
	srv.Handle("expire_snapshots", sparktest.Rows(
		[]string{"deleted_data_files_count", "deleted_position_delete_files_count", "deleted_manifest_files_count", "deleted_manifest_lists_count"},
		[]any{int64(7), int64(1), int64(3), int64(2)}))
	e := open(t, srv, spark.Config{})
	out, err := e.Expire(t.Context(), rewriter.ExpireJob{
		Table: tbl, OlderThan: time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600)), RetainLast: 3,
	})
	require.NoError(t, err)
	require.Equal(t, []string{"CALL `lake`.system.expire_snapshots(table => '`db`.`events`', older_than => TIMESTAMP '2024-05-06 05:08:09.000000Z', retain_last => 3)"},
		srv.Statements())
	rep := out.Engine
	require.Equal(t, "expire", rep.Step)
	require.Equal(t, int64(7), rep.Metrics["deleted_data_files_count"])
	require.Equal(t, int64(2), rep.Metrics["deleted_manifest_lists_count"])
	require.NotContains(t, rep.Metrics, "deleted_statistics_files_count", "a column this Iceberg lacks is simply absent")
}

func TestRemoveOrphansDryRunThenDelete(t *testing.T) {
	srv := sparktest.Start(t)
	var rows [][]any
	for i := range rewriter.MaxReportedFiles + 5 {
		rows = append(rows, []any{fmt.Sprintf("s3://b/db/events/data/orphan-%04d.parquet", i)})
	}
	srv.Handle("dry_run => true", sparktest.Rows([]string{"orphan_file_location"}, rows...))
	srv.Handle("remove_orphan_files", sparktest.Rows([]string{"orphan_file_location"}, rows[:2]...))
	// Handlers added last win: put the dry run's back on top.
	srv.Handle("dry_run => true", sparktest.Rows([]string{"orphan_file_location"}, rows...))
	e := open(t, srv, spark.Config{})
	cutoff := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	out, err := e.RemoveOrphans(t.Context(), rewriter.OrphanJob{Table: tbl, OlderThan: cutoff})
	require.NoError(t, err)
	base := "CALL `lake`.system.remove_orphan_files(table => '`db`.`events`', older_than => TIMESTAMP '2024-01-02 03:04:05.000000Z'"
	require.Equal(t, []string{base + ", dry_run => true)", base + ")"}, srv.Statements())
	rep := out.Engine
	require.Equal(t, rewriter.MaxReportedFiles+5, rep.DryRunCount)
	require.Len(t, rep.DryRunFiles, rewriter.MaxReportedFiles)
	require.Equal(t, "s3://b/db/events/data/orphan-0000.parquet", rep.DryRunFiles[0])
	require.Equal(t, int64(rewriter.MaxReportedFiles+5), rep.Metrics["dry_run_orphan_files_count"])
	require.Equal(t, int64(2), rep.Metrics["removed_orphan_files_count"])
	require.Len(t, rep.Statements, 2)
	require.Equal(t, rewriter.MaxReportedFiles+5, rep.Statements[0].Rows)
}

func TestRemoveOrphansKeepsExcludedPrefixes(t *testing.T) {
	srv := sparktest.Start(t)
	srv.Handle("dry_run => true", sparktest.Rows([]string{"orphan_file_location"}, []any{"s3://b/keep/x.parquet"}))
	e := open(t, srv, spark.Config{})
	_, err := e.RemoveOrphans(t.Context(), rewriter.OrphanJob{
		Table: tbl, OlderThan: time.Now().Add(-72 * time.Hour),
		Options: rewriter.OrphanOptions{ExcludePrefixes: []string{"s3://b/keep/"}},
	})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
	require.Len(t, srv.Statements(), 1, "only the dry run ran")
}

func TestRewriteManifests(t *testing.T) {
	srv := sparktest.Start(t)
	srv.Handle("rewrite_manifests", sparktest.Rows([]string{"rewritten_manifests_count", "added_manifests_count"}, []any{int32(40), int32(4)}))
	e := open(t, srv, spark.Config{})
	out, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: tbl})
	require.NoError(t, err)
	require.Equal(t, []string{"CALL `lake`.system.rewrite_manifests(table => '`db`.`events`')"}, srv.Statements())
	require.Equal(t, map[string]int64{"rewritten_manifests_count": 40, "added_manifests_count": 4}, out.Engine.Metrics)
}

func TestPingAndClose(t *testing.T) {
	srv := sparktest.Start(t)
	e, err := spark.Open(t.Context(), spark.Config{Name: "spark", Remote: srv.Remote()})
	require.NoError(t, err)
	require.NoError(t, e.Ping(t.Context()))
	require.Equal(t, []string{"SELECT 1"}, srv.Statements())
	require.NoError(t, e.Close())
	ops := srv.Operations()
	require.Equal(t, []string{ops[0].SessionID}, srv.Released())
}

func TestEngineErrorCarriesSparksMessage(t *testing.T) {
	srv := sparktest.Start(t)
	srv.Handle("rewrite_data_files", sparktest.Result{Err: &sparktest.Error{
		ErrorClass: "TABLE_OR_VIEW_NOT_FOUND", SQLState: "42P01",
		Message: "[TABLE_OR_VIEW_NOT_FOUND] The table or view `db`.`events` cannot be found.",
	}})
	e := open(t, srv, spark.Config{})
	_, err := e.Compact(t.Context(), compactJob(layout.Layout{}, 1))
	var se *spark.StatementError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "TABLE_OR_VIEW_NOT_FOUND", se.ErrorClass)
	require.Equal(t, "42P01", se.SQLState)
	require.Equal(t, srv.Operations()[0].ID, se.OperationID)
	require.Contains(t, err.Error(), "cannot be found")
	require.Contains(t, err.Error(), se.OperationID)
	require.Contains(t, err.Error(), "rewrite_data_files on lake.db.events")
}

func TestCancelInterruptsTheOperation(t *testing.T) {
	for _, viaTimeout := range []bool{false, true} {
		t.Run(fmt.Sprintf("timeout=%v", viaTimeout), func(t *testing.T) {
			srv := sparktest.Start(t)
			srv.Handle("rewrite_data_files", sparktest.Result{Block: true})
			cfg := spark.Config{}
			if viaTimeout {
				cfg.Timeout = 200 * time.Millisecond
			}
			e := open(t, srv, cfg)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if !viaTimeout {
				go func() {
					select {
					case <-srv.Blocked():
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			_, err := e.Compact(ctx, compactJob(layout.Layout{}, 1))
			require.Error(t, err)
			if viaTimeout {
				require.ErrorIs(t, err, context.DeadlineExceeded)
			} else {
				require.ErrorIs(t, err, context.Canceled)
			}
			ops := srv.Operations()
			require.Len(t, ops, 1)
			require.Contains(t, err.Error(), ops[0].ID)
			ins := srv.Interrupts()
			require.Len(t, ins, 1)
			require.Equal(t, "INTERRUPT_TYPE_OPERATION_ID", ins[0].Type)
			require.Equal(t, ops[0].ID, ins[0].OperationID)
			require.Equal(t, ops[0].SessionID, ins[0].SessionID)
			// The cancelled stream and the Interrupt race on the server;
			// either stops the operation.
			require.True(t, ops[0].Cancelled || ops[0].Interrupted, "%+v", ops[0])
		})
	}
}

func TestCancelledBeforeStartSendsNothing(t *testing.T) {
	srv := sparktest.Start(t)
	e := open(t, srv, spark.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := e.Expire(ctx, rewriter.ExpireJob{Table: tbl, RetainLast: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, srv.Operations())
}

func TestHostileIdentifiers(t *testing.T) {
	srv := sparktest.Start(t)
	e := open(t, srv, spark.Config{})
	hostile := rewriter.EngineTable{Catalog: "c`at", Namespace: []string{"d'b", "x;--"}, Name: "t\n/*`'\\"}
	_, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: hostile})
	require.NoError(t, err)
	require.Equal(t, []string{"CALL `c``at`.system.rewrite_manifests(table => '`d\\'b`.`x;--`.`t\n/*``\\'\\\\`')"}, srv.Statements())

	_, err = e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: rewriter.EngineTable{Catalog: "c", Namespace: []string{"d"}, Name: "t\x00"}})
	require.ErrorIs(t, err, rewriter.ErrInvalidOptions)
	require.Len(t, srv.Statements(), 1)
}

func TestTokenNeverPrinted(t *testing.T) {
	const token = "s3cr3t-t0ken"
	srv := sparktest.Start(t, sparktest.WithTLS(), sparktest.WithToken(token))
	srv.Handle("rewrite_manifests", sparktest.Result{Err: &sparktest.Error{ErrorClass: "X", Message: "boom"}})
	cfg := spark.Config{Name: "spark", Remote: srv.Remote("user_id=floe-test"), Token: token, TLS: srv.ClientTLS()}
	require.NotContains(t, cfg.String(), token)
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg), token)
	e := open(t, srv, cfg)
	require.NoError(t, e.Ping(t.Context()))
	require.Contains(t, srv.Authorizations(), "Bearer "+token)
	_, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: tbl})
	require.ErrorContains(t, err, "boom")
	require.NotContains(t, fmt.Sprintf("%v %+v", err, err), token)

	// A wrong token, and a token inside the connection string.
	bad, err := spark.Open(t.Context(), spark.Config{Name: "bad", Remote: srv.Remote(), Token: "wrong-" + token, TLS: srv.ClientTLS()})
	require.NoError(t, err)
	err = bad.Ping(t.Context())
	require.ErrorContains(t, err, "Unauthenticated")
	require.NotContains(t, fmt.Sprintf("%v %+v", err, err), token)
	err = bad.Close() // the release is refused too
	require.NotContains(t, fmt.Sprintf("%v", err), token)

	inRemote := spark.Config{Name: "r", Remote: "sc://no-such-host.invalid:1/;token=" + token + ";x=y"}
	require.NotContains(t, inRemote.String(), token)
	e2, err := spark.Open(t.Context(), inRemote)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	err = e2.Ping(ctx)
	require.Error(t, err)
	require.NotContains(t, fmt.Sprintf("%v %+v", err, err), token)
	require.NoError(t, e2.Close())

	_, err = spark.Open(t.Context(), spark.Config{Name: "r", Remote: "http://h/;token=" + token})
	require.Error(t, err)
	require.NotContains(t, err.Error(), token)
}

func TestConfigValidate(t *testing.T) {
	err := spark.Config{Remote: "sc://h:notaport", Timeout: -1}.Validate()
	require.Error(t, err)
	for _, want := range []string{"name is empty", "port", "timeout"} {
		require.Contains(t, err.Error(), want)
	}
	require.NoError(t, spark.Config{Name: "s", Remote: "sc://h"}.Validate())
	require.NoError(t, spark.Config{Name: "s", Remote: "sc://[::1]:15002/;use_ssl=false;user_id=u"}.Validate())
	require.Error(t, spark.Config{Name: "s", Remote: "sc://h/;use_ssl=maybe"}.Validate())
	require.False(t, strings.Contains(spark.Config{Name: "s", Remote: "sc://h/;token=abc"}.String(), "abc"))
}
