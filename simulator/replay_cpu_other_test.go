//go:build !unix

package simulator_test

// cpuSeconds is unknown off unix; benchmarks then report zero CPU time.
func cpuSeconds() float64 { return 0 }
