package trino_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
	"github.com/floe-project/floe/rewriter/trino"
	"github.com/floe-project/floe/rewriter/trino/trinotest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// testlake's SQLite catalog stays open for the test binary's life.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

var events = rewriter.EngineTable{Catalog: "iceberg", Namespace: []string{"db"}, Name: "events"}

func open(t *testing.T, fake *trinotest.Server, cfg trino.Config) *trino.Engine {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "trino"
	}
	if cfg.DSN == "" {
		cfg.DSN = fake.DSN("floe", "catalog=iceberg")
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return now }
	}
	e, err := trino.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	return e
}

var done = trinotest.Response{UpdateType: "ALTER TABLE EXECUTE"}

func report(t *testing.T, v rewriter.StepReport) *rewriter.EngineReport {
	t.Helper()
	require.NotNil(t, v.Engine, "report %+v", v)
	return v.Engine
}

func TestCompactSortSetsTheSortOrderThenOptimizes(t *testing.T) {
	fake := trinotest.New(t)
	setProps := `ALTER TABLE "iceberg"."db"."events" SET PROPERTIES sorted_by = ARRAY['"region" ASC NULLS FIRST', '"ts" DESC NULLS LAST']`
	opt := `ALTER TABLE "iceberg"."db"."events" EXECUTE optimize(file_size_threshold => '128MB')`
	fake.Expect(setProps, trinotest.Response{UpdateType: "SET PROPERTIES"})
	fake.Expect(opt, trinotest.Response{
		Columns: []trinotest.Column{{Name: "metric_name", Type: "varchar"}, {Name: "metric_value", Type: "bigint"}},
		Rows:    [][]any{{"rewritten_data_files_count", 12}, {"added_data_files_count", 2}},
	})
	e := open(t, fake, trino.Config{})
	got, err := e.Compact(t.Context(), rewriter.CompactJob{
		Table: events,
		Plan:  rewriter.CompactPlan{TargetFileSizeBytes: 128 << 20},
		Options: rewriter.CompactOptions{Layout: layout.Layout{Strategy: layout.StrategySort, Columns: []layout.Column{
			{Name: "region"}, {Name: "ts", Desc: true, NullsLast: true},
		}}},
	})
	require.NoError(t, err)
	require.Equal(t, []string{setProps, opt}, fake.Statements())
	rep := report(t, got)
	require.Equal(t, "compact", rep.Step)
	require.Equal(t, rewriter.KindTrino, rep.Kind)
	require.Equal(t, map[string]int64{"rewritten_data_files_count": 12, "added_data_files_count": 2}, rep.Metrics)
	recv := fake.Received()
	require.Len(t, rep.Statements, 2)
	for i, st := range rep.Statements {
		require.Equal(t, recv[i].SQL, st.SQL)
		require.Equal(t, recv[i].QueryID, st.QueryID)
		require.Equal(t, "floe", recv[i].User)
	}
	require.Equal(t, 2, rep.Statements[1].Rows)
}

func TestCompactBinpackOnlyOptimizes(t *testing.T) {
	fake := trinotest.New(t)
	opt := `ALTER TABLE "iceberg"."db"."events" EXECUTE optimize(file_size_threshold => '1000000B')`
	fake.Expect(opt, trinotest.Response{UpdateType: "ALTER TABLE EXECUTE", Columns: []trinotest.Column{{Name: "rows", Type: "bigint"}}, Rows: [][]any{{4200}}})
	e := open(t, fake, trino.Config{})
	got, err := e.Compact(t.Context(), rewriter.CompactJob{Table: events, Options: rewriter.CompactOptions{TargetFileSizeBytes: 1_000_000}})
	require.NoError(t, err)
	require.Equal(t, []string{opt}, fake.Statements())
	require.Equal(t, map[string]int64{"rows": 4200}, report(t, got).Metrics)
}

// partitionedState builds a real table partitioned by day(ts) and region
// and loads its state.
func partitionedState(t *testing.T) *lake.State {
	t.Helper()
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}},
	)
	w := testlake.New(t)
	tbl := w.CreateTable(t, "db", "events", schema, &spec, nil, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
	defer b.Release()
	for i, r := range []struct {
		day    int
		region string
	}{{1, "eu"}, {1, "it's"}, {2, "eu"}, {2, ""}} {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(time.Date(2026, 11, r.day, 10, 0, 0, 0, time.UTC).UnixMicro()))
		if r.region == "" {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(r.region)
		}
	}
	tbl = testlake.Append(t, tbl, b.NewRecordBatch())
	st, err := lake.LoadState(t.Context(), lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "events"}, tbl, lake.LoadOptions{})
	require.NoError(t, err)
	return st
}

func TestCompactScopedSelectsThePartitionsBySourceColumns(t *testing.T) {
	st := partitionedState(t)
	scope, err := rewriter.PartitionScopes(st, []string{
		"ts_day=2026-11-01/region=it's",
		"ts_day=2026-11-02/region=null",
	})
	require.NoError(t, err)

	fake := trinotest.New(t)
	opt := `ALTER TABLE "iceberg"."db"."events" EXECUTE optimize(file_size_threshold => '512MB') WHERE ` +
		`("ts" >= TIMESTAMP '2026-11-01 00:00:00.000000 UTC' AND "ts" < TIMESTAMP '2026-11-02 00:00:00.000000 UTC' AND "region" = 'it''s') OR ` +
		`("ts" >= TIMESTAMP '2026-11-02 00:00:00.000000 UTC' AND "ts" < TIMESTAMP '2026-11-03 00:00:00.000000 UTC' AND "region" IS NULL)`
	fake.Expect(opt, done)
	e := open(t, fake, trino.Config{})
	_, err = e.Compact(t.Context(), rewriter.CompactJob{Table: events, State: st, Scope: scope})
	require.NoError(t, err)
	require.Equal(t, []string{opt}, fake.Statements())
}

func TestCompactRefusesZOrderWithoutSendingAnything(t *testing.T) {
	fake := trinotest.New(t)
	e := open(t, fake, trino.Config{})
	for s, can := range map[layout.Strategy]string{
		layout.StrategyZOrder:  "engines that can: native, spark",
		layout.StrategyHilbert: "engines that can: native",
		layout.StrategyTree:    "Trino cannot write tree layouts; engines that can: native",
	} {
		require.False(t, e.CanWrite(s))
		_, err := e.Compact(t.Context(), rewriter.CompactJob{Table: events, Options: rewriter.CompactOptions{
			Layout: layout.Layout{Strategy: s, Columns: []layout.Column{{Name: "a"}, {Name: "b"}}},
		}})
		require.ErrorIs(t, err, rewriter.ErrLayoutUnsupported)
		require.ErrorContains(t, err, can)
		if s != layout.StrategyZOrder {
			require.NotContains(t, err.Error(), "spark", "Spark's procedure writes no %s", s)
		}
	}
	for _, s := range []layout.Strategy{layout.StrategyBinpack, layout.StrategySort, layout.StrategyCurrent} {
		require.True(t, e.CanWrite(s))
	}
	require.Empty(t, fake.Statements())
}

func TestExpireOrphansManifests(t *testing.T) {
	fake := trinotest.New(t)
	// 7 days before now, plus the engine's minute of margin.
	expire := `ALTER TABLE "iceberg"."db"."events" EXECUTE expire_snapshots(retention_threshold => '604860s')`
	orphans := `ALTER TABLE "iceberg"."db"."events" EXECUTE remove_orphan_files(retention_threshold => '259261s')`
	manifests := `ALTER TABLE "iceberg"."db"."events" EXECUTE optimize_manifests`
	fake.Expect(expire, done)
	fake.Expect(orphans, trinotest.Response{
		Columns: []trinotest.Column{{Name: "metric_name", Type: "varchar"}, {Name: "metric_value", Type: "bigint"}},
		Rows:    [][]any{{"processed_manifests_count", 2}, {"deleted_files_count", 3}, {"deleted_bytes", 4096}},
	})
	fake.Expect(manifests, done)
	e := open(t, fake, trino.Config{})

	got, err := e.Expire(t.Context(), rewriter.ExpireJob{Table: events, OlderThan: now.Add(-7 * 24 * time.Hour), RetainLast: 3})
	require.NoError(t, err)
	rep := report(t, got)
	require.Equal(t, int64(3), rep.Metrics["retain_last_requested"])
	require.Len(t, rep.Notes, 1)
	require.Contains(t, rep.Notes[0], "no retain_last")
	require.Contains(t, rep.Notes[0], "not enforced")

	// Half a second more is rounded up: Trino's cutoff never passes floe's.
	got, err = e.RemoveOrphans(t.Context(), rewriter.OrphanJob{Table: events, OlderThan: now.Add(-3*24*time.Hour - 500*time.Millisecond)})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"processed_manifests_count": 2, "deleted_files_count": 3, "deleted_bytes": 4096}, report(t, got).Metrics)

	_, err = e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: events})
	require.NoError(t, err)
	require.Equal(t, []string{expire, orphans, manifests}, fake.Statements())
}

func TestExpireKeepsRetainLastByMovingTheCutoff(t *testing.T) {
	w := testlake.New(t)
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	tbl := w.CreateTable(t, "db", "snaps", schema, nil, nil, nil)
	for i := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, testlake.ArrowSchema(t, tbl))
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		tbl = testlake.Append(t, tbl, b.NewRecordBatch())
		b.Release()
	}
	second := secondNewest(t, tbl)
	// The snapshots were committed just now, by the real clock.
	later := time.Now().Add(time.Hour)
	fake := trinotest.New(t)
	e := open(t, fake, trino.Config{Now: func() time.Time { return later }})
	fake.Expect(`ALTER TABLE "iceberg"."db"."events" EXECUTE expire_snapshots(retention_threshold => '`+
		thresholdFor(later, second)+`')`, done)
	// A cutoff after every snapshot would expire all but the current one.
	got, err := e.Expire(t.Context(), rewriter.ExpireJob{Table: events, Tbl: tbl, OlderThan: later, RetainLast: 2})
	require.NoError(t, err, "statements: %q", fake.Statements())
	require.Contains(t, report(t, got).Notes[0], "moving the cutoff back")
}

func secondNewest(t *testing.T, tbl *table.Table) time.Time {
	t.Helper()
	md := tbl.Metadata()
	cur := md.CurrentSnapshot()
	require.NotNil(t, cur.ParentSnapshotID)
	return time.UnixMilli(md.SnapshotByID(*cur.ParentSnapshotID).TimestampMs)
}

// thresholdFor is the retention the engine gives Trino for cutoff: the
// age plus a minute, rounded up to whole seconds.
func thresholdFor(now, cutoff time.Time) string {
	d := now.Sub(cutoff) + time.Minute
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10) + "s"
}

func TestEngineErrorCarriesTrinosMessageAndQueryID(t *testing.T) {
	fake := trinotest.New(t)
	stmt := `ALTER TABLE "iceberg"."db"."events" EXECUTE expire_snapshots(retention_threshold => '86460s')`
	msg := "Retention specified (1.00d) is shorter than the minimum retention configured in the system (7.00d). Minimum retention can be changed with iceberg.expire-snapshots.min-retention configuration property or iceberg.expire_snapshots_min_retention session property"
	fake.Expect(stmt, trinotest.Response{Error: &trinotest.Error{Message: msg, Code: 7, Name: "INVALID_PROCEDURE_ARGUMENT", Type: "USER_ERROR"}})
	e := open(t, fake, trino.Config{})
	got, err := e.Expire(t.Context(), rewriter.ExpireJob{Table: events, OlderThan: now.Add(-24 * time.Hour)})
	require.Error(t, err)
	var qe *trino.QueryError
	require.ErrorAs(t, err, &qe)
	id := fake.Received()[0].QueryID
	require.Equal(t, id, qe.QueryID)
	require.Equal(t, "INVALID_PROCEDURE_ARGUMENT", qe.Name)
	require.Equal(t, "USER_ERROR", qe.Type)
	require.Equal(t, msg, qe.Message)
	require.ErrorContains(t, err, id)
	require.ErrorContains(t, err, msg)
	require.Equal(t, id, report(t, got).Statements[0].QueryID)
}

func TestCancelledStatementIsDeletedOnTheCoordinator(t *testing.T) {
	fake := trinotest.New(t)
	opt := `ALTER TABLE "iceberg"."db"."events" EXECUTE optimize(file_size_threshold => '512MB')`
	fake.Expect(opt, trinotest.Response{Slow: true})
	e := open(t, fake, trino.Config{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for len(fake.Statements()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err := e.Compact(ctx, rewriter.CompactJob{Table: events})
	require.ErrorIs(t, err, context.Canceled)
	id := fake.Received()[0].QueryID
	require.ErrorContains(t, err, id)
	require.Eventually(t, func() bool { return len(fake.Deletes()) > 0 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, id, fake.Deletes()[0].QueryID)
	// trino-go-client v1.1.0 deletes the query itself as it stops polling.
	require.Equal(t, "/v1/query/"+id, fake.Deletes()[0].Path)
}

func TestTimeoutCancelsTheStatement(t *testing.T) {
	fake := trinotest.New(t)
	fake.Expect(`ALTER TABLE "iceberg"."db"."events" EXECUTE optimize_manifests`, trinotest.Response{Slow: true})
	e := open(t, fake, trino.Config{Timeout: 100 * time.Millisecond})
	_, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: events})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return len(fake.Deletes()) > 0 }, 5*time.Second, 5*time.Millisecond)
}

func TestHostileIdentifiersAreQuoted(t *testing.T) {
	fake := trinotest.New(t)
	e := open(t, fake, trino.Config{})
	tbl := rewriter.EngineTable{Catalog: `a"b`, Namespace: []string{"x; DROP TABLE y"}, Name: "c--d/*\ne\nf"}
	want := `ALTER TABLE "a""b"."x; DROP TABLE y"."c--d/*` + "\ne\nf" + `" EXECUTE optimize_manifests`
	fake.Expect(want, done)
	_, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: tbl})
	require.NoError(t, err)
	require.Equal(t, []string{want}, fake.Statements())

	_, err = e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: rewriter.EngineTable{Catalog: "c", Namespace: []string{"s"}, Name: "t\x00"}})
	require.ErrorContains(t, err, "NUL")
	_, err = e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: rewriter.EngineTable{Catalog: "c", Namespace: []string{"a", "b"}, Name: "t"}})
	require.ErrorContains(t, err, "one namespace level")
	require.Len(t, fake.Statements(), 1)
}

func TestPasswordIsSentButNeverPrinted(t *testing.T) {
	const secret = "s3cr:et/p@ss"
	fake := trinotest.New(t, trinotest.WithTLS(), trinotest.WithPassword("floe", secret))
	fake.Expect("SELECT 1", trinotest.Response{Columns: []trinotest.Column{{Name: "_col0", Type: "integer"}}, Rows: [][]any{{1}}})
	cfg := trino.Config{Name: "trino", DSN: fake.DSN("floe"), Password: secret}
	require.NotContains(t, cfg.String(), secret)
	e := open(t, fake, cfg)
	require.NoError(t, e.Ping(t.Context()))
	require.NotContains(t, e.String(), secret)

	// A failing statement's error carries no password either.
	_, err := e.RewriteManifests(t.Context(), rewriter.ManifestJob{Table: events})
	require.Error(t, err)
	require.NotContains(t, err.Error(), secret)

	// Nor does the error of a wrong one.
	bad := open(t, fake, trino.Config{Name: "trino", DSN: fake.DSN("floe"), Password: "wrong-" + secret})
	err = bad.Ping(t.Context())
	require.Error(t, err)
	require.NotContains(t, err.Error(), secret)

	// Nor the client's refusal of a password over plain http.
	_, err = trino.Open(trino.Config{Name: "trino", DSN: "http://floe@localhost:8080", Password: secret})
	require.Error(t, err)
	require.NotContains(t, err.Error(), secret)
	require.False(t, errors.Is(err, context.Canceled))
}
