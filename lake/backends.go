package lake

// The catalog and IO backends iceberg-go registers when imported. This is the
// only import-for-side-effect in floe: real deployments (REST — Polaris,
// Lakekeeper, Nessie, Gravitino, S3 Tables —, Glue, Hive, Hadoop, SQL on
// PostgreSQL or SQLite; S3, GCS, Azure) work unchanged.
import (
	"context"
	"net/url"

	_ "github.com/apache/iceberg-go/catalog/glue"
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud"
	_ "modernc.org/sqlite"
)

func init() { registerBoundedIO() }

// registerBoundedIO puts floe's GCS and Azure IO ([openGCS], [openAzure])
// in iceberg-go's IO registry in place of iceberg-go's own, which take no
// HTTP client and so cannot be bounded. The registry is the one way to
// reach the IO a catalog opens for its own metadata reads and writes, and
// the IO of the tables it loads; floe's bound rides in the context the IO
// is opened with ([storeBounds.bind]), so an IO opened without one is
// unbounded, as iceberg-go's. iceberg-go's backends registered themselves
// when imported above (imports are initialized first), and its registry
// refuses a second registration of a scheme, hence Unregister first.
func registerBoundedIO() {
	for _, set := range []struct {
		schemes []string
		open    func(context.Context, *url.URL, map[string]string) (iceio.IO, error)
	}{{gcsSchemes, openGCS}, {azureSchemes, openAzure}} {
		for _, s := range set.schemes {
			iceio.Unregister(s)
			iceio.Register(s, set.open)
		}
	}
}
