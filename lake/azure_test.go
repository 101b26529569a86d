package lake_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// azureAccount is the storage account of the Azure tests; its key is any
// valid base64 (no request is ever answered).
const azureAccount = "floetest"

var azureKey = base64.StdEncoding.EncodeToString([]byte("floe-test-account-key"))

// TestAzureRequestsAreBounded: no fake Azure blob service runs here
// (Azurite is Node.js), so a server that accepts connections and never
// answers stands in for a stalled Azure store. Creating a table on it
// writes the table's first metadata file through floe's Azure IO: with
// floe.io-timeout 1s the create fails within the bound with an error
// naming the store, the object and the timeout, whichever way the catalog
// reaches the account. Before the bound, it waited as long as the store
// did.
func TestAzureRequestsAreBounded(t *testing.T) {
	const timeout = time.Second
	host := testlake.SilentHost(t)
	endpoint := map[string]string{iceio.ADLSEndpoint: host, iceio.ADLSProtocol: "http"}
	for _, tc := range []struct {
		name      string
		warehouse string
		props     map[string]string
	}{
		{"shared key, abfs", "abfs://wh@" + azureAccount + ".dfs.core.windows.net/warehouse", with(endpoint, map[string]string{
			iceio.ADLSSharedKeyAccountName: azureAccount,
			iceio.ADLSSharedKeyAccountKey:  azureKey,
		})},
		{"SAS token, wasbs", "wasbs://wh@" + azureAccount + ".blob.core.windows.net/warehouse", with(endpoint, map[string]string{
			iceio.ADLSSasTokenPrefix + azureAccount + ".blob.core.windows.net": "sv=2024-01-01&sp=racwdl&sig=floe",
		})},
		{"connection string, abfss", "abfss://wh@" + azureAccount + ".dfs.core.windows.net/warehouse", map[string]string{
			iceio.ADLSConnectionStringPrefix + azureAccount: "DefaultEndpointsProtocol=http;AccountName=" + azureAccount +
				";AccountKey=" + azureKey + ";BlobEndpoint=http://" + host + "/" + azureAccount + ";",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := lake.LocalCatalogProps(t.TempDir())
			props["warehouse"] = tc.warehouse
			props[lake.PropIOTimeout] = timeout.String()
			props[lake.PropCatalogTimeout] = "0" // the object store's bound alone
			for k, v := range tc.props {
				props[k] = v
			}
			cat, err := lake.OpenCatalog(context.Background(), "az", props)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, cat.(catalog.Closer).Close()) })
			ctx := context.Background()
			require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"db"}, nil))

			start := time.Now()
			_, err = cat.CreateTable(ctx, table.Identifier{"db", "events"}, iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true}))
			took := time.Since(start)
			require.Error(t, err)
			require.Less(t, took, timeout+5*time.Second, "bounded by %s: %v", timeout, err)
			require.ErrorIs(t, err, lake.ErrIOTimeout)
			require.False(t, errors.Is(err, context.Canceled), "a timeout is a failure, not a cancellation: %v", err)
			require.Contains(t, err.Error(), "object store "+host+" of catalog az")
			require.Contains(t, err.Error(), "/"+azureAccount+"/wh/warehouse/db.db/events/metadata/")
			require.Contains(t, err.Error(), "no progress within 1s (set floe.io-timeout to change it)")
		})
	}
}

// TestAzureLocations: floe's Azure IO takes iceberg-go's locations and
// properties, and refuses a location it cannot serve with a clear error
// before any request.
func TestAzureLocations(t *testing.T) {
	ctx := context.Background()
	props := map[string]string{
		iceio.ADLSSharedKeyAccountName: azureAccount,
		iceio.ADLSSharedKeyAccountKey:  azureKey,
		iceio.ADLSEndpoint:             testlake.SilentHost(t),
		iceio.ADLSProtocol:             "http",
	}
	t.Run("no container", func(t *testing.T) {
		_, err := iceio.LoadFS(ctx, props, "abfs://"+azureAccount+".dfs.core.windows.net/warehouse")
		require.ErrorContains(t, err, "azure location abfs://floetest.dfs.core.windows.net/warehouse: no container (want abfs://container@account.dfs.core.windows.net/path)")
	})
	t.Run("shared key without its key", func(t *testing.T) {
		_, err := iceio.LoadFS(ctx, with(props, map[string]string{iceio.ADLSSharedKeyAccountKey: ""}), "abfs://wh@"+azureAccount+".dfs.core.windows.net/warehouse")
		require.ErrorContains(t, err, "azure: a shared key needs both adls.auth.shared-key.account.name and adls.auth.shared-key.account.key")
	})
	t.Run("another container", func(t *testing.T) {
		fio, err := iceio.LoadFS(ctx, props, "wasbs://wh@"+azureAccount+".blob.core.windows.net/warehouse")
		require.NoError(t, err)
		_, err = fio.Open("wasbs://other@" + azureAccount + ".blob.core.windows.net/warehouse/x.parquet")
		require.ErrorIs(t, err, blobfs.ErrUnsupportedObjectAuthority)
	})
}

// with is a copy of base with over's properties set.
func with(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
