package scale

import (
	"fmt"
	"time"
)

// Usage is what one phase of the benchmark cost the process.
type Usage struct {
	Wall, CPU time.Duration
	// PeakRSS is the peak resident set during the phase, in bytes.
	PeakRSS int64
}

// Measure runs fn and reports its wall time, the process's CPU time over
// it and the peak resident set during it.
func Measure(fn func() error) (Usage, error) {
	if err := ResetPeakRSS(); err != nil {
		return Usage{}, fmt.Errorf("measure: %w", err)
	}
	cpu0, err := CPUTime()
	if err != nil {
		return Usage{}, fmt.Errorf("measure: %w", err)
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return Usage{}, err
	}
	u := Usage{Wall: time.Since(t0)}
	cpu1, err := CPUTime()
	if err != nil {
		return Usage{}, fmt.Errorf("measure: %w", err)
	}
	u.CPU = cpu1 - cpu0
	if u.PeakRSS, err = PeakRSS(); err != nil {
		return Usage{}, fmt.Errorf("measure: %w", err)
	}
	return u, nil
}

// Reads are the metadata files and manifests (manifest lists and
// manifests) one table's reading cost.
type Reads struct {
	Metadata, Manifests int64
}

// PerTable are reads, by table, averaged over a lake of tables tables
// (the tables not read count as zero), and how many tables were read at
// all. It is an error for reads to name more tables than the lake has.
func PerTable(reads map[string]Reads, tables int) (metadata, manifests float64, read int, err error) {
	if tables < 1 {
		return 0, 0, 0, fmt.Errorf("reads per table: a lake of %d tables", tables)
	}
	if len(reads) > tables {
		return 0, 0, 0, fmt.Errorf("reads per table: %d tables read in a lake of %d", len(reads), tables)
	}
	var md, mf int64
	for _, r := range reads {
		md += r.Metadata
		mf += r.Manifests
		if r.Metadata > 0 || r.Manifests > 0 {
			read++
		}
	}
	return float64(md) / float64(tables), float64(mf) / float64(tables), read, nil
}
