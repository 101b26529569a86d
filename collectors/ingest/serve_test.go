package ingest_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/store"
)

// Serve stores each scan report as it arrives and shuts down cleanly when
// its context ends.
func TestServeIcebergScanReports(t *testing.T) {
	l := newLake(t)
	st := openStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- ingest.Serve(ctx, ln, st, ingest.ServeOptions{Endpoint: ingest.EndpointIceberg, Normalizer: ingest.NewNormalizer(l.cfg, l.resolver)})
	}()

	body := `{"report-type":"scan-report","table-name":"sales.orders","snapshot-id":1,"schema-id":0,"projected-field-ids":[4],
	  "filter":{"type":"eq","term":"customer_id","value":42},
	  "projected-field-names":["amount"],
	  "metrics":{"result-data-files":{"unit":"count","value":3},"skipped-data-files":{"unit":"count","value":41}}}`
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/lake/namespaces/sales/tables/orders/metrics", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	evs, err := st.Queries(t.Context(), store.QueryFilter{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Len(t, evs[0].Tables, 1)
	require.Equal(t, "orders", evs[0].Tables[0].Name)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestServeUnknownEndpoint(t *testing.T) {
	l := newLake(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = ingest.Serve(t.Context(), ln, openStore(t), ingest.ServeOptions{Endpoint: "spark", Normalizer: ingest.NewNormalizer(l.cfg, l.resolver)})
	require.ErrorContains(t, err, `unknown endpoint "spark"`)
}
