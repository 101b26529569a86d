// Package testlake builds real Iceberg tables for tests in a temporary
// warehouse: iceberg-go's SQL catalog on SQLite, with the files on local
// disk (file:// IO), in an in-process S3 server (gofakes3 on loopback,
// with stall and outage knobs), in a versitygw S3 gateway started as a
// child process (POSIX backend on a temporary directory); its subpackage
// gcslake adds an in-process GCS server (fake-gcs-server on loopback, with
// the same stall knobs). All use static keys or no credentials on
// loopback; nothing reaches a real cloud. FLOE_TEST_STORE=s3 or
// FLOE_TEST_STORE=versitygw runs the tests that open the shared test lake
// with [New] on that store (make test-s3 runs them on versitygw).
package testlake
