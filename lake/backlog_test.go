package lake_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

func TestCompactionBacklog(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(100 * time.Hour)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	small := int64(1 << 20)
	appendSmall := func(h int) lake.Snapshot {
		return lake.Snapshot{Timestamp: at(h), Operation: "append", Summary: map[string]string{"added-data-files": "10", "added-files-size": "1000"}}
	}
	appendLarge := func(h int) lake.Snapshot {
		return lake.Snapshot{Timestamp: at(h), Operation: "append", Summary: map[string]string{"added-data-files": "2", "added-files-size": "1000000000"}}
	}
	deletes := func(h int) lake.Snapshot {
		return lake.Snapshot{Timestamp: at(h), Operation: "delete", Summary: map[string]string{"added-delete-files": "1", "added-position-delete-files": "1"}}
	}
	compaction := func(h int) lake.Snapshot {
		return lake.Snapshot{Timestamp: at(h), Operation: "replace", Summary: map[string]string{"deleted-data-files": "10", "added-data-files": "1"}}
	}
	manifests := func(h int) lake.Snapshot {
		return lake.Snapshot{Timestamp: at(h), Operation: "replace", Summary: map[string]string{"manifests-created": "1", "manifests-replaced": "9"}}
	}
	for _, tc := range []struct {
		name    string
		snaps   []lake.Snapshot
		checked time.Time
		want    time.Duration
	}{
		{"never written", nil, time.Time{}, 0},
		{"never compacted: from the first commit", []lake.Snapshot{appendSmall(10), appendSmall(20)}, time.Time{}, 90 * time.Hour},
		{"compacted since", []lake.Snapshot{appendSmall(10), compaction(30)}, time.Time{}, 0},
		{"written after the last compaction", []lake.Snapshot{appendSmall(10), compaction(30), appendSmall(40), appendSmall(90)}, time.Time{}, 60 * time.Hour},
		{"only large files: nothing waits", []lake.Snapshot{appendLarge(10), appendLarge(50)}, time.Time{}, 0},
		{"deletes wait for a compaction", []lake.Snapshot{appendLarge(10), deletes(70)}, time.Time{}, 30 * time.Hour},
		{"a manifest rewrite is no compaction", []lake.Snapshot{appendSmall(10), manifests(30)}, time.Time{}, 90 * time.Hour},
		{"floe checked after the commit", []lake.Snapshot{appendSmall(10), appendSmall(40)}, at(50), 0},
		{"floe checked between commits", []lake.Snapshot{appendSmall(10), appendSmall(60)}, at(50), 40 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, lake.CompactionBacklog(tc.snaps, small, tc.checked, now))
		})
	}
}
