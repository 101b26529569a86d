package lake

// The catalog and IO backends iceberg-go registers when imported. This is the
// only import-for-side-effect in floe: real deployments (REST — Polaris,
// Lakekeeper, Nessie, Gravitino, S3 Tables —, Glue, Hive, Hadoop, SQL on
// PostgreSQL or SQLite; S3, GCS, Azure) work unchanged.
import (
	_ "github.com/apache/iceberg-go/catalog/glue"
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud"
	_ "modernc.org/sqlite"
)
