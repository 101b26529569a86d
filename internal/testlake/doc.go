// Package testlake builds real Iceberg tables for tests in a temporary
// warehouse: iceberg-go's SQL catalog on SQLite, with the files on local
// disk (file:// IO) or in an in-process S3 server (gofakes3 on loopback,
// static keys, nothing reaching a real cloud). FLOE_TEST_STORE=s3 runs the
// tests that open the shared test lake with [New] on S3.
package testlake
