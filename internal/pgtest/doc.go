// Package pgtest starts throwaway PostgreSQL clusters for tests. It is for
// tests only: nothing outside _test.go files imports it.
//
// [Start] runs initdb into a fresh directory under /tmp and starts a
// postgres server on a free loopback port as a child process (fsync and
// synchronous commit off: the data is thrown away), waits until it accepts
// connections, and stops it when the test ends. [Cluster.NewDatabase]
// creates an empty database per test, which is cheap; [Main] with [Shared]
// lets a package start one cluster in TestMain for all its tests.
//
// The binaries are looked up in PATH, then in /usr/lib/postgresql/*/bin
// (Debian's layout, highest version first). When they are missing the
// test fails, saying to install Debian's postgresql package (.ci/run
// does); only under -short is it skipped. initdb and postgres refuse to
// run as root, so as root they run as the user nobody, in directories
// given to that user.
package pgtest
