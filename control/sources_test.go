package control_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/collectors/snowflake/snowfake"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/alert"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/internal/trinofake"
)

// sparkFixture is a Spark event log of the shared fixtures.
func sparkFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "logs", "spark", name))
	require.NoError(t, err)
	return b
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// catalogOpener opens cfg's catalogs once each, closing them when t ends.
func catalogOpener(t *testing.T, cfg *config.Config) ingest.OpenCatalogFunc {
	var (
		mu   sync.Mutex
		open = map[string]catalog.Catalog{}
	)
	t.Cleanup(func() {
		for _, c := range open {
			if cl, ok := c.(catalog.Closer); ok {
				require.NoError(t, cl.Close())
			}
		}
	})
	return func(ctx context.Context, name string) (catalog.Catalog, error) {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := open[name]; ok {
			return c, nil
		}
		c, err := control.OpenCatalog(ctx, name, cfg.Catalogs[name])
		if err != nil {
			return nil, err
		}
		open[name] = c
		return c, nil
	}
}

// sourcesConfig is the embedded default in a fresh data_dir with the
// telemetry sources items (YAML list items, indented four spaces) and
// environ as the environment (the sources' secrets).
func sourcesConfig(t *testing.T, items string, environ ...string) *config.Config {
	t.Helper()
	file := strings.Replace(string(config.DefaultYAML()), "data_dir: ./floe-data", "data_dir: "+t.TempDir(), 1)
	file = strings.Replace(file, "telemetry:\n", "telemetry:\n  sources:\n"+items, 1)
	return doctorConfigEnv(t, file, environ...)
}

// TestSourcesCollect collects a growing Spark history directory and a
// Trino coordinator's system.runtime.queries: each collection stores what
// is new once, an unchanged file is skipped, the Trino watermark outlives
// a restart (a new Sources on the same store asks only for what ended
// after it), a source silent for longer than its silence fires its alert,
// also while it is down, and resolves when it delivers again.
func TestSourcesCollect(t *testing.T) {
	ctx := t.Context()
	history := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(history, "application_1714560000000_0042"), sparkFixture(t, "application_1714560000000_0042"), 0o644))
	trino := trinofake.New(t)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	trino.Add(
		trinofake.Query{ID: "q1", State: "FINISHED", User: "ana", SQL: "SELECT * FROM iceberg.web.events WHERE id = 1", Created: t0, End: t0.Add(time.Second)},
		trinofake.Query{ID: "q2", State: "FINISHED", User: "bob", SQL: "SELECT * FROM iceberg.web.events WHERE id = 2", Created: t0, End: t0.Add(2 * time.Second)},
	)
	cfg := sourcesConfig(t, "    - {name: spark, kind: files, paths: ['"+history+"']}\n"+
		"    - {name: trino, kind: trino, dsn: '"+trino.DSN("floe")+"', interval: 1m, silence: 5m}\n")
	st, err := control.OpenStore(ctx, cfg.State)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	clock := &fakeClock{now: t0.Add(time.Minute)}
	notifier, err := alert.New(alert.Options{Store: st, Now: clock.Now})
	require.NoError(t, err)
	var observed []control.SourceReport
	open := func() *control.Sources {
		s, err := control.NewSources(control.SourcesOptions{Config: cfg, Store: st, Catalog: catalogOpener(t, cfg), Alerts: notifier, Now: clock.Now,
			OnCollect: func(r control.SourceReport) { observed = append(observed, r) }})
		require.NoError(t, err)
		return s
	}
	byName := func(reps []control.SourceReport) map[string]control.SourceReport {
		out := map[string]control.SourceReport{}
		for _, r := range reps {
			require.Empty(t, r.Error, r.Source)
			out[r.Source] = r
		}
		return out
	}

	s := open()
	first := byName(s.CollectAll(ctx))
	require.Equal(t, []string{"spark", "trino"}, s.Names())
	require.Positive(t, first["spark"].Inserted, "the history's queries are stored")
	sparkEvents := first["spark"].Inserted
	require.Equal(t, 2, first["trino"].Inserted)
	require.Equal(t, t0.Add(2*time.Second).Format(time.RFC3339Nano), first["trino"].Cursor)
	require.Equal(t, t0.Add(2*time.Second), first["trino"].NewestEvent)
	require.Len(t, observed, 2, "every collection is reported")

	again := byName(s.CollectAll(ctx))
	require.Zero(t, again["spark"].Inserted)
	require.Equal(t, 1, again["spark"].Skipped, "an unchanged file is not read again")
	require.Zero(t, again["trino"].Events, "only queries that ended after the watermark are asked for")
	stmts := trino.Statements()
	require.Contains(t, stmts[len(stmts)-1], `"end" > TIMESTAMP '2026-11-29 10:00:02.000 UTC'`)

	// The directory grows, the coordinator runs a query.
	require.NoError(t, os.WriteFile(filepath.Join(history, "local-1714650000000.inprogress"), sparkFixture(t, "local-1714650000000.inprogress"), 0o644))
	trino.Add(trinofake.Query{ID: "q3", State: "FINISHED", User: "ana", SQL: "SELECT count(*) FROM iceberg.web.events", Created: t0.Add(3 * time.Second), End: t0.Add(4 * time.Second)})
	grown := byName(s.CollectAll(ctx))
	require.Positive(t, grown["spark"].Inserted, "the new log is collected")
	require.Equal(t, 1, grown["spark"].Skipped)
	require.Equal(t, 1, grown["trino"].Inserted)
	require.NoError(t, s.Close())

	// A restart: the cursor comes from the store.
	s = open()
	defer func() { require.NoError(t, s.Close()) }()
	restarted := byName(s.CollectAll(ctx))
	require.Zero(t, restarted["spark"].Inserted)
	require.Zero(t, restarted["trino"].Events, "the persisted watermark is where the poll resumes")
	stmts = trino.Statements()
	require.Contains(t, stmts[len(stmts)-1], `"end" > TIMESTAMP '2026-11-29 10:00:04.000 UTC'`)
	events, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, events, sparkEvents+grown["spark"].Inserted+3, "each query once")

	// Silent past its silence: the alert fires and the report says so.
	r, err := s.Collect(ctx, "trino")
	require.NoError(t, err)
	require.False(t, r.Silent)
	clock.Add(6 * time.Minute)
	r, err = s.Collect(ctx, "trino")
	require.NoError(t, err)
	require.True(t, r.Silent)
	a, err := st.Alert(ctx, string(alert.KindSilent), "trino")
	require.NoError(t, err)
	require.Equal(t, string(alert.Firing), a.State)
	require.Contains(t, a.Summary, "no new event for 6m0s (silence 5m0s)")
	require.Contains(t, a.Summary, "find nothing new")

	// Down: the collection fails, the cursor stays, the alert says why.
	trino.SetDown(true)
	r, err = s.Collect(ctx, "trino")
	require.NoError(t, err)
	require.True(t, r.Failed())
	require.Contains(t, r.Error, "503")
	require.True(t, r.Silent)
	require.Equal(t, t0.Add(4*time.Second).Format(time.RFC3339Nano), r.Cursor)

	trino.SetDown(false)
	trino.Add(trinofake.Query{ID: "q4", State: "FINISHED", SQL: "SELECT 1 FROM iceberg.web.events", Created: t0.Add(5 * time.Second), End: t0.Add(6 * time.Second)})
	r, err = s.Collect(ctx, "trino")
	require.NoError(t, err)
	require.Empty(t, r.Error)
	require.Equal(t, 1, r.Inserted)
	require.False(t, r.Silent)
	a, err = st.Alert(ctx, string(alert.KindSilent), "trino")
	require.NoError(t, err)
	require.Equal(t, string(alert.Resolved), a.State, "delivering again resolves it")

	_, err = s.Collect(ctx, "nope")
	require.ErrorIs(t, err, control.ErrNoSuchSource)
}

// snowQuery is a finished Snowflake query of ANALYTICS.WEB.EVENTS started
// at start.
func snowQuery(id string, start time.Time) snowfake.Query {
	return snowfake.Query{ID: id, Text: "SELECT url FROM events WHERE id = 7", Database: "ANALYTICS", Schema: "WEB", User: "ANA",
		QueryType: "SELECT", Start: start, Elapsed: 1500 * time.Millisecond,
		Base: []snowfake.Object{{Name: "ANALYTICS.WEB.EVENTS", Columns: []string{"ID", "URL"}}}}
}

// TestSourcesCollectSnowflake polls a Snowflake account's query history
// through the SQL API fake, signed in with OAuth: each query is stored
// once, one still running is read once it finished, the watermark
// outlives a restart, and an expired token fails the collection without
// moving the cursor — the source goes silent and its alert quotes the
// refusal, never the token — until the account answers again.
func TestSourcesCollectSnowflake(t *testing.T) {
	ctx := t.Context()
	server := &fakeClock{now: time.Now()}
	const token = "oauth-s3cret-value"
	fake := snowfake.New(t, snowfake.Options{OAuthTokens: map[string]time.Time{token: time.Now().Add(time.Hour)}, Now: server.Now})
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	running := snowQuery("s3", t0.Add(2*time.Second))
	running.Status = "RUNNING"
	fake.AddQueries(snowQuery("s1", t0), snowQuery("s2", t0.Add(time.Second)), running)
	cfg := sourcesConfig(t, "    - {name: snow, kind: snowflake, account: "+fake.Account()+", auth: oauth, url: '"+fake.URL()+"', settle: 1ns, silence: 5m}\n",
		"FLOE_SOURCE__SNOW__OAUTH_TOKEN="+token)
	st, err := control.OpenStore(ctx, cfg.State)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	clock := &fakeClock{now: time.Now().UTC()}
	notifier, err := alert.New(alert.Options{Store: st, Now: clock.Now})
	require.NoError(t, err)
	open := func() *control.Sources {
		s, err := control.NewSources(control.SourcesOptions{Config: cfg, Store: st, Catalog: catalogOpener(t, cfg), Alerts: notifier, Now: clock.Now})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	}
	collect := func(s *control.Sources) control.SourceReport {
		r, err := s.Collect(ctx, "snow")
		require.NoError(t, err)
		return r
	}

	s := open()
	r := collect(s)
	require.Empty(t, r.Error)
	require.Equal(t, "snow (snowflake FLOE-TEST at "+fake.URL()+")", r.Target)
	require.Equal(t, 2, r.Inserted, "the running query waits")
	require.Equal(t, t0.Add(time.Second).Format(time.RFC3339Nano), r.Cursor, "the watermark stays below the running query")
	require.Equal(t, t0.Add(2500*time.Millisecond), r.NewestEvent)

	fake.SetStatus("s3", "SUCCESS")
	r = collect(s)
	require.Equal(t, 1, r.Inserted, "read once finished")
	require.Equal(t, t0.Add(2*time.Second).Format(time.RFC3339Nano), r.Cursor)
	require.NoError(t, s.Close())

	// A restart resumes from the stored watermark: nothing is read again.
	s = open()
	r = collect(s)
	require.Empty(t, r.Error)
	require.Zero(t, r.Events)
	fake.AddQueries(snowQuery("s4", t0.Add(3*time.Second)))
	r = collect(s)
	require.Equal(t, 1, r.Inserted)
	events, err := st.Queries(ctx, store.QueryFilter{})
	require.NoError(t, err)
	var ids []string
	for _, ev := range events {
		require.Equal(t, "snowflake", ev.Source)
		ids = append(ids, ev.QueryID)
	}
	require.ElementsMatch(t, []string{"s1", "s2", "s3", "s4"}, ids, "each query once")

	// The token expires: collections fail, the cursor stays, the source
	// goes silent and the alert says why.
	server.Add(2 * time.Hour)
	clock.Add(6 * time.Minute)
	r = collect(s)
	require.True(t, r.Failed())
	require.Contains(t, r.Error, "HTTP 401: 390318 OAuth access token expired")
	require.Equal(t, t0.Add(3*time.Second).Format(time.RFC3339Nano), r.Cursor)
	require.True(t, r.Silent)
	a, err := st.Alert(ctx, string(alert.KindSilent), "snow")
	require.NoError(t, err)
	require.Equal(t, string(alert.Firing), a.State)
	require.Contains(t, a.Summary, "its collections fail")
	require.Contains(t, a.Summary, "390318")
	require.NotContains(t, a.Summary+a.Error+r.Error, token)

	// The account answers again: what it ran meanwhile is read.
	server.Add(-2 * time.Hour)
	fake.AddQueries(snowQuery("s5", t0.Add(4*time.Second)))
	r = collect(s)
	require.Empty(t, r.Error)
	require.Equal(t, 1, r.Inserted)
	require.False(t, r.Silent)
	a, err = st.Alert(ctx, string(alert.KindSilent), "snow")
	require.NoError(t, err)
	require.Equal(t, string(alert.Resolved), a.State)
}

// TestSourcesRefuseUnknownFormat: a files source whose format no parser
// has is refused when the sources are set up, not at the first interval.
func TestSourcesRefuseUnknownFormat(t *testing.T) {
	cfg := sourcesConfig(t, "    - {name: logs, kind: files, paths: [x], format: sparkk}\n")
	_, err := control.NewSources(control.SourcesOptions{Config: cfg, Store: &store.Store{}, Catalog: catalogOpener(t, cfg)})
	require.ErrorContains(t, err, "telemetry source logs: format")
	require.ErrorContains(t, err, "sparkk")
}

// TestDoctorChecksSources: floe doctor checks each telemetry source — a
// readable history directory, an answering coordinator and a Snowflake
// account that takes the key pass; a path that matches nothing, a
// coordinator that is down, a key the account does not know and a key file
// that is not there fail, naming the source.
func TestDoctorChecksSources(t *testing.T) {
	history := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(history, "application_1714560000000_0042"), sparkFixture(t, "application_1714560000000_0042"), 0o644))
	up, down := trinofake.New(t), trinofake.New(t)
	down.SetDown(true)
	pub, key := snowfake.NewKey(t)
	_, otherKey := snowfake.NewKey(t)
	snow := snowfake.New(t, snowfake.Options{PublicKey: pub})
	keyFile := filepath.Join(t.TempDir(), "snow.p8")
	require.NoError(t, os.WriteFile(keyFile, key, 0o600))
	snowItem := func(name string) string {
		return "    - {name: " + name + ", kind: snowflake, account: " + snow.Account() + ", user: " + snow.User() + ", url: '" + snow.URL() + "'}\n"
	}
	cfg := sourcesConfig(t, "    - {name: spark, kind: files, paths: ['"+history+"']}\n"+
		"    - {name: gone, kind: files, paths: ['"+filepath.Join(history, "nope-*")+"']}\n"+
		"    - {name: trino, kind: trino, dsn: '"+up.DSN("floe")+"'}\n"+
		"    - {name: trino-down, kind: trino, dsn: '"+down.DSN("floe")+"'}\n"+
		snowItem("snow")+snowItem("snow-stranger")+snowItem("snow-nokey"),
		"FLOE_SOURCE__SNOW__PRIVATE_KEY_FILE="+keyFile, "FLOE_SOURCE__SNOW_STRANGER__PRIVATE_KEY="+string(otherKey),
		"FLOE_SOURCE__SNOW_NOKEY__PRIVATE_KEY_FILE="+filepath.Join(t.TempDir(), "missing.p8"))
	checks := control.Doctor(t.Context(), cfg, control.DoctorOptions{Timeout: 10 * time.Second})
	got := map[string]control.Check{}
	for _, c := range checks {
		if c.Name == control.CheckSource {
			got[strings.Fields(c.Target)[0]] = c
		}
	}
	require.Len(t, got, 7)
	require.True(t, got["snow"].OK, got["snow"].Error)
	require.Equal(t, "SELECT 1 ran; ACCOUNT_USAGE.QUERY_HISTORY and ACCESS_HISTORY readable", got["snow"].Detail)
	require.Equal(t, "snow (snowflake FLOE-TEST user FLOE at "+snow.URL()+")", got["snow"].Target)
	require.Len(t, snow.Requests(), 3, "the stranger's refused SELECT 1 and the check's two statements")
	require.False(t, got["snow-stranger"].OK)
	require.Contains(t, got["snow-stranger"].Error, "run SELECT 1: snowflake account FLOE-TEST: HTTP 401: 390144 JWT token is invalid")
	require.NotContains(t, got["snow-stranger"].Error, "PRIVATE KEY")
	require.False(t, got["snow-nokey"].OK)
	require.Contains(t, got["snow-nokey"].Error, "read the snowflake private key file")
	require.Contains(t, got["snow-nokey"].Error, "missing.p8")
	require.True(t, got["spark"].OK, got["spark"].Error)
	require.Equal(t, "1 input readable", got["spark"].Detail)
	require.True(t, got["trino"].OK, got["trino"].Error)
	require.Equal(t, "system.runtime.queries readable", got["trino"].Detail)
	require.Contains(t, up.Statements()[0], "FROM system.runtime.queries")
	require.False(t, got["gone"].OK)
	require.Contains(t, got["gone"].Error, "nope-*")
	require.False(t, got["trino-down"].OK)
	require.Contains(t, got["trino-down"].Error, "503")
}
