package control_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/restfake"
	"github.com/floe-project/floe/internal/testlake"
)

// restService is a Service whose one catalog is a REST catalog
// (restfake over the setup warehouse), opened as floe opens catalogs.
func restService(t *testing.T, s *restfake.Server, w *testlake.Warehouse, st control.Deps, policies string) *control.Service {
	t.Helper()
	props := config.Props{"type": "rest", "uri": s.URL}
	cat, err := control.OpenCatalog(context.Background(), w.Name, props)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cat.(catalog.Closer).Close()) })
	set, err := policy.ParseFile("floe.yaml", []byte(policies))
	require.NoError(t, err)
	st.Config = &config.Config{Catalogs: map[string]config.Props{w.Name: props}, Policies: set}
	st.Catalog = func(context.Context, string) (catalog.Catalog, error) { return cat, nil }
	svc, err := control.NewService(st)
	require.NoError(t, err)
	return svc
}

// storeConfig hands out, with each table, the storage configuration of w
// (its s3.* properties; none for a local warehouse), as a REST catalog
// over a store does: the client is given nothing else to reach it.
func storeConfig(w *testlake.Warehouse) func(table.Identifier) map[string]string {
	return func(table.Identifier) map[string]string {
		out := map[string]string{}
		for k, v := range w.Props {
			if strings.HasPrefix(k, "s3.") {
				out[k] = v
			}
		}
		return out
	}
}

// A compaction run through a REST catalog: a 409 on its commit is a
// conflict floe replays on the reloaded table; a commit whose outcome the
// catalog could not tell (503) fails the run with the catalog's answer
// and leaves the table as it was; a 429 is retried.
func TestCompactionThroughRESTCatalog(t *testing.T) {
	const policies = "default: {mode: manual, layout: none, enabled: {expire: false, orphans: false, manifests: false}}\n"
	cases := []struct {
		name     string
		fault    restfake.Fault
		status   control.RunStatus
		is       error  // the run's error matches it (nil: no error)
		errHas   string // and the recorded run's error says it
		replaced bool
	}{
		{"409 replayed", restfake.Fault{Route: "commit", Status: http.StatusConflict}, control.StatusDone, nil, "", true},
		{"429 retried", restfake.Fault{Route: "commit", Status: http.StatusTooManyRequests, RetryAfter: "0"}, control.StatusDone, nil, "", true},
		{"503 state unknown", restfake.Fault{Route: "commit", Status: http.StatusServiceUnavailable}, control.StatusFailed, rest.ErrCommitStateUnknown, "ServiceUnavailableException", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w, id, st := setup(t)
			want, err := oracle.ChecksumIceberg(ctx, mustTable(t, w, id))
			require.NoError(t, err)
			s := restfake.New(t, restfake.Options{Backend: w.Catalog, Vend: storeConfig(w)})
			svc := restService(t, s, w, control.Deps{Store: st}, policies)
			s.Inject(tc.fault)

			rr, err := svc.Run(ctx, control.Request{Table: id, Steps: []string{control.StepCompact}})
			require.Equal(t, tc.status, rr.Run.Status, "run error: %v", err)
			require.Equal(t, 1, s.Count(http.MethodPost, "/v1/namespaces/db/tables/t", tc.fault.Status), "the fault was answered")
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
				require.Contains(t, rr.Run.Error, tc.errHas)
			} else {
				require.NoError(t, err)
			}
			tbl := mustTable(t, w, id)
			testlake.RequireIntact(t, tbl, want)
			require.Equal(t, tc.replaced, tbl.CurrentSnapshot().Summary.Operation == "replace")
		})
	}
}

// Snapshot expiry through a REST catalog: the expire step commits through
// it (a 429 on the way retried at the catalog boundary, then a 409 replayed
// by the step) and the table keeps its rows.
func TestExpireThroughRESTCatalog(t *testing.T) {
	ctx := context.Background()
	w, id, st := setup(t)
	want, err := oracle.ChecksumIceberg(ctx, mustTable(t, w, id))
	require.NoError(t, err)
	s := restfake.New(t, restfake.Options{Backend: w.Catalog, PageSize: 1, Vend: storeConfig(w)})
	svc := restService(t, s, w, control.Deps{Store: st, Now: tenDaysLater},
		"default: {mode: manual, layout: none, enabled: {orphans: false, compact: false, manifests: false}}\n")
	s.Inject(restfake.Fault{Route: "commit", Status: http.StatusTooManyRequests})
	s.Inject(restfake.Fault{Route: "commit", Status: http.StatusConflict})
	rr, err := svc.Run(ctx, control.Request{Table: id, Trigger: control.TriggerAPI})
	require.NoError(t, err)
	require.Equal(t, control.StatusDone, rr.Run.Status)
	require.Equal(t, 1, s.Count(http.MethodPost, "/v1/namespaces/db/tables/t", http.StatusTooManyRequests))
	require.Equal(t, 1, s.Count(http.MethodPost, "/v1/namespaces/db/tables/t", http.StatusConflict))
	require.Len(t, mustTable(t, w, id).Metadata().Snapshots(), 1)
	require.GreaterOrEqual(t, s.Commits(), 1)
	testlake.RequireIntact(t, mustTable(t, w, id), want)
}
