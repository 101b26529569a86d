package rewriter_test

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/rewriter"
)

// An explicit OlderThan of zero is zero, not the default: "Zero means zero".

func TestOrphanOptionsOlderThan(t *testing.T) {
	tt := newTwinTables(t, nil)
	tt.appendBoth(t, 0, 10, "eu")
	now := time.Now().Add(time.Minute)
	// An unreferenced file a second old: an orphan only for a cut-off of now.
	stray := tt.tbl.Location() + "/data/region=eu/stray.parquet"
	plant(t, tt.w, stray, now.Add(-time.Second))
	clock := func() time.Time { return now }
	cases := []struct {
		name    string
		opts    rewriter.OrphanOptions
		wantErr error
		// wantAge is now minus the plan's cut-off.
		wantAge   time.Duration
		wantStray bool
	}{
		{name: "unset", opts: rewriter.OrphanOptions{}, wantAge: rewriter.DefaultOrphanAge},
		{name: "unset,force", opts: rewriter.OrphanOptions{Force: true}, wantAge: rewriter.DefaultOrphanAge},
		{name: "zero", opts: rewriter.OrphanOptions{OlderThanSet: true}, wantErr: rewriter.ErrUnsafeAge},
		{name: "zero,force", opts: rewriter.OrphanOptions{OlderThanSet: true, Force: true}, wantAge: 0, wantStray: true},
		{name: "1h", opts: rewriter.OrphanOptions{OlderThan: time.Hour}, wantErr: rewriter.ErrUnsafeAge},
		{name: "1h,set", opts: rewriter.OrphanOptions{OlderThan: time.Hour, OlderThanSet: true}, wantErr: rewriter.ErrUnsafeAge},
		{name: "1h,force", opts: rewriter.OrphanOptions{OlderThan: time.Hour, Force: true}, wantAge: time.Hour},
		{name: "24h", opts: rewriter.OrphanOptions{OlderThan: rewriter.MinOrphanAge}, wantAge: rewriter.MinOrphanAge},
		{name: "48h,set", opts: rewriter.OrphanOptions{OlderThan: 48 * time.Hour, OlderThanSet: true}, wantAge: 48 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Now = clock
			if tc.wantErr != nil {
				require.ErrorIs(t, opts.Validate(), tc.wantErr)
				_, err := rewriter.PlanOrphans(t.Context(), tt.tbl, opts)
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, opts.Validate())
			plan, err := rewriter.PlanOrphans(t.Context(), tt.tbl, opts)
			require.NoError(t, err)
			require.Equal(t, now.Add(-tc.wantAge), plan.Cutoff)
			var paths []string
			for _, f := range plan.Files {
				paths = append(paths, oracle.LocalPath(f.Path))
			}
			if tc.wantStray {
				require.Equal(t, []string{oracle.LocalPath(stray)}, paths)
				require.Zero(t, plan.Young)
			} else {
				require.Empty(t, paths)
				require.Equal(t, 1, plan.Young, "the stray file is kept as young")
			}
		})
	}
}

func TestOrphanOptionsValidateNegative(t *testing.T) {
	for _, opts := range []rewriter.OrphanOptions{
		{OlderThan: -time.Second},
		{OlderThan: -time.Second, OlderThanSet: true, Force: true},
	} {
		require.ErrorContains(t, opts.Validate(), "must not be negative")
	}
}

func TestExpireOptionsOlderThan(t *testing.T) {
	f := newExpireFixture(t)
	md := f.tt.tbl.Metadata()
	newest := time.UnixMilli(f.tt.tbl.CurrentSnapshot().TimestampMs)
	cases := []struct {
		name string
		opts rewriter.ExpireOptions
		now  time.Time
		// wantExpired index snapshots 1–6 (1-based), oldest first.
		wantExpired []int
		// wantAge is now minus the plan's cut-off.
		wantAge time.Duration
		wantErr string
	}{
		{name: "unset", opts: rewriter.ExpireOptions{RetainLast: 1}, now: newest.Add(time.Hour),
			wantAge: time.Duration(table.MaxSnapshotAgeMsDefault) * time.Millisecond},
		{name: "zero", opts: rewriter.ExpireOptions{OlderThanSet: true, RetainLast: 1}, now: newest.Add(time.Hour),
			wantExpired: []int{1, 2, 3, 4, 5}},
		// A millisecond after the newest commit every older snapshot is
		// older than now.
		{name: "zero,just-after", opts: rewriter.ExpireOptions{OlderThanSet: true, RetainLast: 1}, now: newest.Add(time.Millisecond),
			wantExpired: []int{1, 2, 3, 4, 5}},
		{name: "zero,retain-last=3", opts: rewriter.ExpireOptions{OlderThanSet: true, RetainLast: 3}, now: newest.Add(time.Hour),
			wantExpired: []int{1, 2, 3}},
		{name: "2h", opts: rewriter.ExpireOptions{OlderThan: 2 * time.Hour, RetainLast: 1}, now: newest.Add(time.Hour),
			wantAge: 2 * time.Hour},
		{name: "30m,set", opts: rewriter.ExpireOptions{OlderThan: 30 * time.Minute, OlderThanSet: true, RetainLast: 1}, now: newest.Add(time.Hour),
			wantExpired: []int{1, 2, 3, 4, 5}, wantAge: 30 * time.Minute},
		{name: "negative", opts: rewriter.ExpireOptions{OlderThan: -time.Second, OlderThanSet: true}, now: newest,
			wantErr: "must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, i := range tc.wantExpired {
				want = append(want, f.snaps[i-1])
			}
			got, _, err := rewriter.SelectExpired(md, tc.opts, tc.now)
			if tc.wantErr != "" {
				require.ErrorContains(t, tc.opts.Validate(), tc.wantErr)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
			opts := tc.opts
			opts.Now = func() time.Time { return tc.now }
			plan, err := rewriter.PlanExpire(t.Context(), f.tt.tbl, opts)
			require.NoError(t, err)
			require.Equal(t, want, plan.Snapshots)
			require.Equal(t, tc.now.Add(-tc.wantAge), plan.Cutoff)
		})
	}
}

// Unset means the table's max snapshot age, not zero and not floe's own.
func TestExpireOptionsUnsetUsesTableMaxSnapshotAge(t *testing.T) {
	tt := newTwinTables(t, iceberg.Properties{table.MaxSnapshotAgeMsKey: "60000"})
	for i := range 3 {
		tt.appendBoth(t, i*10, 10, "eu")
	}
	md := tt.tbl.Metadata()
	now := time.UnixMilli(tt.tbl.CurrentSnapshot().TimestampMs).Add(time.Hour)

	got, _, err := rewriter.SelectExpired(md, rewriter.ExpireOptions{RetainLast: 1}, now)
	require.NoError(t, err)
	require.Len(t, got, 2, "older than the table's 1m: all but the newest expire")
	plan, err := rewriter.PlanExpire(t.Context(), tt.tbl, rewriter.ExpireOptions{RetainLast: 1, Now: func() time.Time { return now }})
	require.NoError(t, err)
	require.Equal(t, now.Add(-time.Minute), plan.Cutoff)

	got, _, err = rewriter.SelectExpired(md, rewriter.ExpireOptions{OlderThan: 2 * time.Hour, RetainLast: 1}, now)
	require.NoError(t, err)
	require.Empty(t, got, "an explicit age overrides the table's")
}
