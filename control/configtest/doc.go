// Package configtest loads a floe configuration for tests and benchmarks
// over a test warehouse (internal/testlake): a floe.yaml written to a
// temporary directory, whose catalog local is the warehouse's, read by
// control/config with no environment, as `floe` would read it.
package configtest
