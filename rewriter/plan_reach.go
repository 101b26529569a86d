package rewriter

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"
)

// fileSet maps a file location, as table metadata spells it, to its size in
// bytes (0 when metadata does not record it, as for manifest lists).
type fileSet map[string]int64

// reachable collects the files that the snapshots ids of md reach: their
// manifest lists, their manifests, the data and delete files of those
// manifests' entries (DELETED entries too unless liveOnly) and the data
// files deletion vectors point at, and the statistics and partition
// statistics files recorded for those snapshots. Manifests shared by several
// snapshots are read once; at most concurrency manifests are read at a time.
func reachable(ctx context.Context, fio iceio.IO, md table.Metadata, ids []int64, liveOnly bool, concurrency int) (fileSet, error) {
	out := fileSet{}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	// Manifest lists are read in parallel, then merged in snapshot order.
	lists := make([][]iceberg.ManifestFile, len(ids))
	lg, lctx := errgroup.WithContext(ctx)
	lg.SetLimit(max(1, concurrency))
	for i, id := range ids {
		snap := md.SnapshotByID(id)
		if snap == nil {
			return nil, fmt.Errorf("snapshot %d not in table metadata", id)
		}
		if snap.ManifestList != "" {
			out[snap.ManifestList] = 0
		}
		lg.Go(func() error {
			if err := lctx.Err(); err != nil {
				return err
			}
			list, err := snap.Manifests(fio)
			if err != nil {
				return fmt.Errorf("read manifest list of snapshot %d: %w", id, err)
			}
			lists[i] = list
			return nil
		})
	}
	if err := lg.Wait(); err != nil {
		return nil, err
	}
	manifests := map[string]iceberg.ManifestFile{}
	for _, list := range lists {
		for _, m := range list {
			if _, ok := manifests[m.FilePath()]; !ok {
				manifests[m.FilePath()] = m
				out[m.FilePath()] = m.Length()
			}
		}
	}
	for sf := range md.Statistics() {
		if want[sf.SnapshotID] && sf.StatisticsPath != "" {
			out[sf.StatisticsPath] = sf.FileSizeInBytes
		}
	}
	for sf := range md.PartitionStatistics() {
		if want[sf.SnapshotID] && sf.StatisticsPath != "" {
			out[sf.StatisticsPath] = sf.FileSizeInBytes
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, concurrency))
	for _, m := range manifests {
		g.Go(func() error {
			local := fileSet{}
			for e, err := range m.Entries(fio, liveOnly) {
				if err != nil {
					return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				df := e.DataFile()
				local[df.FilePath()] = df.FileSizeBytes()
				if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
					if _, ok := local[*ref]; !ok {
						local[*ref] = 0
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for p, n := range local {
				if old, ok := out[p]; !ok || old == 0 {
					out[p] = n
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func allSnapshotIDs(md table.Metadata) []int64 {
	snaps := md.Snapshots()
	ids := make([]int64, len(snaps))
	for i, s := range snaps {
		ids[i] = s.SnapshotID
	}
	return ids
}
