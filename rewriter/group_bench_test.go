package rewriter_test

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/rewriter"
)

// heapPeak samples runtime.MemStats.HeapAlloc until stopped and returns the
// highest value seen.
func heapPeak() (stop func() uint64) {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		peak = max(peak, ms.HeapAlloc)
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// BenchmarkRewriteGroup sorts a 1M-row, 10-file table by id into 8 MiB
// files, with a 64 MiB memory budget and without one.
func BenchmarkRewriteGroup(b *testing.B) {
	const rows, commits = 1_000_000, 10
	cat := newCatalog(b)
	tbl := createEvents(b, cat, "bench", false, nil)
	for c := range commits {
		tbl = appendBatch(b, tbl, eventRows(b, tbl, c*(rows/commits), rows/commits, "", uint64(c)))
	}
	groups, _ := partitionGroups(b, tbl)
	tasks := groups[""]

	for _, memory := range []int64{64 << 20, 0} {
		name := "memory=unbounded"
		if memory > 0 {
			name = fmt.Sprintf("memory=%dMiB", memory>>20)
		}
		b.Run(fmt.Sprintf("rows=%d,%s", rows, name), func(b *testing.B) {
			b.ReportAllocs()
			var (
				elapsed  time.Duration
				peakHeap uint64
				st       rewriter.GroupStats
			)
			for b.Loop() {
				runtime.GC()
				stop := heapPeak()
				start := time.Now()
				files, stats, err := rewriter.RewriteGroup(b.Context(), tbl, tasks, rewriter.GroupOptions{
					Keyer: int64Keyer{col: 0}, MemoryBytes: memory, TargetFileSizeBytes: 8 << 20, TempDir: b.TempDir(),
				})
				elapsed += time.Since(start)
				peakHeap = max(peakHeap, stop())
				require.NoError(b, err)
				require.Equal(b, int64(rows), stats.Rows)
				st = stats
				b.StopTimer()
				for _, f := range files {
					require.NoError(b, os.Remove(localPath(f.FilePath())))
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(rows)*float64(b.N)/elapsed.Seconds(), "rows/s")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(st.PeakArrowBytes)/(1<<20), "peak-arrow-MiB")
			b.ReportMetric(float64(st.Sort.SpilledRuns), "spilled-runs")
			b.ReportMetric(float64(st.OutputFiles), "files")
		})
	}
}
