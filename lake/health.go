package lake

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/layout"
)

// Status is a table's health class.
type Status string

// Health classes, from best to worst.
const (
	Healthy  Status = "healthy"
	Warning  Status = "warning"
	Critical Status = "critical"
)

func (s Status) rank() int {
	switch s {
	case Critical:
		return 2
	case Warning:
		return 1
	}
	return 0
}

// Thresholds decide when a metric makes a table warning or critical. The
// defaults come from [DefaultThresholds]; later they become policy keys. A
// zero threshold disables its check.
type Thresholds struct {
	// SmallFileRatioWarning/Critical apply when the table has at least
	// MinFilesForSmallFileCheck data files. Defaults: 0.3 and 0.7.
	SmallFileRatioWarning, SmallFileRatioCritical float64
	// MinFilesForSmallFileCheck. Default: 10.
	MinFilesForSmallFileCheck int
	// SnapshotsWarning/Critical on the snapshot count. Defaults: 100, 1000.
	SnapshotsWarning, SnapshotsCritical int
	// OldestSnapshotWarning/Critical on the oldest snapshot's age.
	// Defaults: 7 days, 30 days.
	OldestSnapshotWarning, OldestSnapshotCritical time.Duration
	// ManifestsWarning on the manifest count when the mean entries per
	// manifest is below MinEntriesPerManifest. Defaults: 100 and 20.
	ManifestsWarning      int
	MinEntriesPerManifest float64
	// ManifestsCritical on the manifest count. Default: 2000.
	ManifestsCritical int
	// DeleteRatioWarning/Critical on delete files per data file.
	// Defaults: 0.1 and 0.5.
	DeleteRatioWarning, DeleteRatioCritical float64
	// PartitionSkewWarning on max/median data files per partition, when
	// there are at least 3 partitions. Default: 10.
	PartitionSkewWarning float64
	// OverlapWarning on the overlap fraction of the first column of the
	// table's sort order (a sorted table whose files overlap on it has
	// drifted; files sorted by (a, b) overlap on b by design), when
	// the table has at least MinFilesForSmallFileCheck files. Default: 0.5.
	OverlapWarning float64
	// LayoutDriftWarning on the share of live rows in data files that are
	// not in the learned tree the table records (see [LayoutDrift]):
	// appended since the table was rewritten into it, by floe or another
	// writer. Default: 0.2.
	LayoutDriftWarning float64
	// FreshnessSLA is the policy's freshness_sla: a table whose last
	// successful compaction is older than this is warning ("last compaction
	// 63 h ago, SLA 48 h"), as is one never compacted whose history is
	// longer than the SLA. Zero (the default) means no SLA.
	FreshnessSLA time.Duration
}

// DefaultThresholds returns the built-in thresholds.
func DefaultThresholds() Thresholds {
	return Thresholds{
		SmallFileRatioWarning: 0.3, SmallFileRatioCritical: 0.7, MinFilesForSmallFileCheck: 10,
		SnapshotsWarning: 100, SnapshotsCritical: 1000,
		OldestSnapshotWarning: 7 * 24 * time.Hour, OldestSnapshotCritical: 30 * 24 * time.Hour,
		ManifestsWarning: 100, MinEntriesPerManifest: 20, ManifestsCritical: 2000,
		DeleteRatioWarning: 0.1, DeleteRatioCritical: 0.5,
		PartitionSkewWarning: 10,
		OverlapWarning:       0.5,
		LayoutDriftWarning:   0.2,
	}
}

// HealthOptions tune [ComputeHealth].
type HealthOptions struct {
	// TargetFileSizeBytes is used when the table records no target (see
	// [State.TargetFileSizeBytes]). Default: 512 MiB.
	TargetFileSizeBytes int64
	// TargetOverride makes TargetFileSizeBytes replace the table's own
	// target (a policy set it), instead of standing in for a missing one.
	TargetOverride bool
	// AllowSmallTarget judges small files by a target below
	// [MinTargetFileSizeBytes] as it is (the policy's
	// allow_small_target_file_size accepted it). Otherwise such a target is
	// raised to the floor for the judgment, so that a table of one-row
	// files written at a 512-byte target is not called healthy.
	AllowSmallTarget bool
	// SmallFileFraction: a data file is small below this fraction of the
	// target size. Default: 0.75, as Iceberg's rewrite_data_files
	// min-file-size-bytes.
	SmallFileFraction float64
	// Columns to measure clustering on, in addition to the columns of the
	// table's current sort order.
	Columns []string
	// Now is the reference time for ages. Default: time.Now.
	Now time.Time
	// Thresholds; zero value means [DefaultThresholds].
	Thresholds *Thresholds
	// Expiry is what snapshot expiry would do to the table now, so that
	// the advice of a snapshot-count warning is true: "expire them" only
	// when expiring removes enough. Nil when unknown: the advice is then
	// "expire them".
	Expiry *Expiry
	// LayoutDrift is how far the table's files have drifted from the
	// learned tree it records, measured by the caller (which knows which
	// files are in a layout); nil when the table records none.
	LayoutDrift *LayoutDrift
	// InTree reports whether a live data file is one the table's learned
	// tree wrote (measured by the caller, as LayoutDrift is); nil when the
	// table records no tree. A tree writes files below the small-file size
	// by design (a leaf's slice in a partition, a leaf split into files of
	// two thirds of the target, the end of a run of packed leaves), and
	// compaction leaves them as they are: rewritten, their rows would land
	// in the same small files. So they are not counted in
	// [Metrics.SmallFiles], and a small-file trigger does not start a
	// compaction that has nothing to do.
	InTree func(File) bool
	// LastCompaction is when floe last compacted the table successfully,
	// from its run records, zero when unknown. A compaction that found
	// nothing to rewrite commits no snapshot but still counts as fresh, so
	// [Metrics.LastCompactionAgeSec] is the younger of this and the newest
	// replace snapshot.
	LastCompaction time.Time
}

// Expiry is what snapshot expiry, as the table's policy and properties
// set it, would do to the table now (see [HealthOptions.Expiry]).
type Expiry struct {
	// Expirable counts the snapshots it would remove.
	Expirable int
	// OlderThan is the age past which it lets a snapshot expire.
	OlderThan time.Duration
	// Command runs the expiry on the table ("floe expire local.web.events");
	// the advice adds the flags that keep fewer snapshots to it.
	Command string
}

// LayoutDrift is how far a table has drifted from the learned tree it
// records (its floe.layout is a tree layout, its floe.layout.tree the tree):
// the live data files, rows and bytes not routed by that tree — appended
// since the table was rewritten into it (by floe or any other writer), or
// written by a tree learned before it. A compaction into the layout
// re-clusters exactly those files into the same leaves and keeps the rest.
type LayoutDrift struct {
	// Layout is the layout the table declares, such as "tree(ts, account_id)".
	Layout string `json:"layout"`
	// Files, Rows and Bytes count the live data files not in the tree.
	Files int   `json:"files"`
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
	// RowsRatio is Rows over the table's live records (0 for an empty
	// table): the share of rows a query filtering on the tree's columns
	// cannot skip by its leaves.
	RowsRatio float64 `json:"rows_ratio"`
	// Command re-clusters the files into the tree.
	Command string `json:"command,omitempty"`
	// Problem, when set, is why the drift cannot be measured: the recorded
	// tree no longer fits the table's schema. The table needs a new plan.
	Problem string `json:"problem,omitempty"`
}

// Metrics are a table's health figures. SmallFiles counts the data files
// merging could help: below [SmallFileFraction] of the target (of
// [MinTargetFileSizeBytes] when the target is below it, see
// [HealthOptions.AllowSmallTarget]), not a learned tree's own file
// ([HealthOptions.InTree]), and sharing their partition with another such
// file. A partition whose data is one small file is as
// compact as it can be. Sizes are bytes, ages seconds (JSON) and
// durations (Go).
type Metrics struct {
	DataFiles            int     `json:"data_files"`
	Records              int64   `json:"records"`
	DataBytes            int64   `json:"data_bytes"`
	TargetFileSizeBytes  int64   `json:"target_file_size_bytes"`
	SmallFiles           int     `json:"small_files"`
	SmallFileRatio       float64 `json:"small_file_ratio"`
	AvgFileSizeBytes     int64   `json:"avg_file_size_bytes"`
	MedianFileSizeBytes  int64   `json:"median_file_size_bytes"`
	Snapshots            int     `json:"snapshots"`
	OldestSnapshotAgeSec int64   `json:"oldest_snapshot_age_seconds"`
	Manifests            int     `json:"manifests"`
	EntriesPerManifest   float64 `json:"mean_entries_per_manifest"`
	// DeleteFiles counts deletes: position and equality delete files,
	// and every deletion vector (one Puffin file holds the vectors of many
	// data files; DeletionVectorFiles counts those files).
	DeleteFiles         int `json:"delete_files"`
	PositionDeleteFiles int `json:"position_delete_files"`
	EqualityDeleteFiles int `json:"equality_delete_files"`
	DeletionVectors     int `json:"deletion_vectors"`
	DeletionVectorFiles int `json:"deletion_vector_files"`
	// MisfiledDeletes and ShadowedDeletes count the deletes readers do
	// not apply as meant (see [DeleteIssue]); HeldBackDataFiles the data
	// files compaction leaves alone for them.
	MisfiledDeletes   int     `json:"misfiled_deletes"`
	ShadowedDeletes   int     `json:"shadowed_deletes"`
	HeldBackDataFiles int     `json:"held_back_data_files"`
	DeleteToDataRatio float64 `json:"delete_to_data_ratio"`
	Partitions        int     `json:"partitions"`
	PartitionFileSkew float64 `json:"partition_file_skew"`
	// BacklogAgeSec is the compaction backlog (see [CompactionBacklog]):
	// the age of the oldest commit that left work for a compaction and no
	// compaction has covered since; 0 when there is none.
	BacklogAgeSec int64 `json:"compaction_backlog_age_seconds"`
	// LastCompactionAgeSec is the age of the newest "replace" snapshot; -1
	// when the table was never compacted.
	LastCompactionAgeSec int64 `json:"last_compaction_age_seconds"`
	// OrphanBytes is filled in once an orphan scan has run; -1 unknown.
	OrphanBytes int64        `json:"orphan_bytes"`
	Clustering  []Clustering `json:"clustering,omitempty"`
	// LayoutDrift is how far the table has drifted from the learned tree
	// it records; absent when it records none.
	LayoutDrift *LayoutDrift `json:"layout_drift,omitempty"`
}

// Health is a table's metrics and class with the reasons that crossed a
// threshold.
type Health struct {
	Table      string   `json:"table"`
	SnapshotID int64    `json:"snapshot_id,string,omitempty"`
	Status     Status   `json:"status"`
	Reasons    []string `json:"reasons"`
	Metrics    Metrics  `json:"metrics"`
	// FreshnessSLASec is the freshness SLA the table was judged by, in
	// seconds (0: none): the backlog it may reach before it is warning.
	FreshnessSLASec int64 `json:"freshness_sla_seconds"`
	// MeasuredAt is the time the ages were measured at.
	MeasuredAt time.Time `json:"measured_at"`
}

// The size cut-offs shared by health and compaction, as fractions of the
// target file size. They are Iceberg's rewrite_data_files defaults
// (min-file-size-bytes 75%, max-file-size-bytes 180% of the target).
const (
	// SmallFileFraction: a data file below this fraction of the target is
	// small; health counts it, compaction rewrites it.
	SmallFileFraction = 0.75
	// OversizedFileFraction: a data file above this fraction of the target
	// is oversized; compaction splits it.
	OversizedFileFraction = 1.8
)

// MinTargetFileSizeBytes is the floor of a target file size: 4 MiB. floe
// refuses a smaller target unless told to accept it (the policy's
// allow_small_target_file_size, the flags' --allow-small-target-file-size),
// and health judges small files against the floor when a table's target is
// below it. Below it a reader spends longer opening a file than reading
// it; a size written without its unit ("512" for 512MiB) lands far below.
const MinTargetFileSizeBytes int64 = 4 << 20

// CompactionBacklog is how long work has waited for a compaction: now less
// the time of the oldest snapshot that left work for one — one that added
// data files smaller on average than small bytes, or any delete file — and
// that no compaction covers. A compaction is a replace snapshot that
// replaced data or delete files (whichever engine committed it; a manifest
// rewrite, also a replace, replaces none) or, when later, checked (floe's
// compaction step that found nothing to rewrite or was not due: the table
// was looked at then). Zero when no commit waits: a table nobody writes,
// or one written only in large files, has no backlog. A table never
// compacted has one from its oldest retained commit that left work.
func CompactionBacklog(snaps []Snapshot, small int64, checked, now time.Time) time.Duration {
	covered := checked
	for _, s := range snaps {
		if isCompaction(s) && s.Timestamp.After(covered) {
			covered = s.Timestamp
		}
	}
	var oldest time.Time
	for _, s := range snaps {
		if !s.Timestamp.After(covered) || !leavesWork(s, small) {
			continue
		}
		if oldest.IsZero() || s.Timestamp.Before(oldest) {
			oldest = s.Timestamp
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return max(now.Sub(oldest), 0)
}

// isCompaction reports whether s is a replace snapshot that replaced data
// or delete files (a compaction), not one that only rewrote manifests.
func isCompaction(s Snapshot) bool {
	if s.Operation != string(table.OpReplace) {
		return false
	}
	for _, k := range []string{"deleted-data-files", "added-data-files", "removed-delete-files", "removed-position-delete-files", "removed-equality-delete-files", "removed-dvs"} {
		if summaryInt(s.Summary, k) > 0 {
			return true
		}
	}
	return false
}

// leavesWork reports whether s, a commit other than a compaction, left
// work for one: data files smaller on average than small bytes, or delete
// files (position, equality, deletion vectors).
func leavesWork(s Snapshot, small int64) bool {
	if s.Operation == string(table.OpReplace) {
		return false
	}
	for _, k := range []string{"added-delete-files", "added-position-delete-files", "added-equality-delete-files", "added-dvs"} {
		if summaryInt(s.Summary, k) > 0 {
			return true
		}
	}
	files := summaryInt(s.Summary, "added-data-files")
	if files <= 0 {
		return false
	}
	return summaryInt(s.Summary, "added-files-size")/files < small
}

func summaryInt(m map[string]string, key string) int64 {
	n, _ := strconv.ParseInt(m[key], 10, 64)
	return n
}

// SizeCutoffs are the small and oversized thresholds in bytes for target.
func SizeCutoffs(target int64) (small, oversized int64) {
	return int64(float64(target) * SmallFileFraction), int64(float64(target) * OversizedFileFraction)
}

// ComputeHealth derives [Health] from a loaded [State]. It does no IO.
func ComputeHealth(st *State, opts HealthOptions) (Health, error) {
	if opts.TargetFileSizeBytes <= 0 {
		opts.TargetFileSizeBytes = 512 << 20
	}
	if opts.SmallFileFraction <= 0 {
		opts.SmallFileFraction = SmallFileFraction
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	th := DefaultThresholds()
	if opts.Thresholds != nil {
		th = *opts.Thresholds
	}
	h := Health{Table: st.Ident.String(), Reasons: []string{}, FreshnessSLASec: int64(th.FreshnessSLA / time.Second), MeasuredAt: opts.Now.UTC()}
	if st.Current != nil {
		h.SnapshotID = st.Current.SnapshotID
	}
	m := &h.Metrics
	m.OrphanBytes = -1
	m.TargetFileSizeBytes = st.TargetFileSizeBytes(opts.TargetFileSizeBytes)
	if opts.TargetOverride && opts.TargetFileSizeBytes > 0 {
		m.TargetFileSizeBytes = opts.TargetFileSizeBytes
	}
	judged := m.TargetFileSizeBytes
	if judged < MinTargetFileSizeBytes && !opts.AllowSmallTarget {
		judged = MinTargetFileSizeBytes
	}
	small := int64(float64(judged) * opts.SmallFileFraction)
	sizes := make([]int64, 0, len(st.DataFiles))
	smallIn := map[string]int{} // small files per partition
	for _, f := range st.DataFiles {
		m.DataFiles++
		m.Records += f.Records
		m.DataBytes += f.SizeBytes
		if f.SizeBytes < small && (opts.InTree == nil || !opts.InTree(f)) {
			smallIn[f.PartitionKey]++
		}
		sizes = append(sizes, f.SizeBytes)
	}
	for _, n := range smallIn {
		if n >= 2 {
			m.SmallFiles += n
		}
	}
	if m.DataFiles > 0 {
		m.SmallFileRatio = float64(m.SmallFiles) / float64(m.DataFiles)
		m.AvgFileSizeBytes = m.DataBytes / int64(m.DataFiles)
		m.MedianFileSizeBytes = medianInt64(sizes)
	}
	m.Snapshots = len(st.Snapshots)
	m.LastCompactionAgeSec = -1
	for _, s := range st.Snapshots {
		age := int64(opts.Now.Sub(s.Timestamp) / time.Second)
		m.OldestSnapshotAgeSec = max(m.OldestSnapshotAgeSec, age)
		if s.Operation == string(table.OpReplace) && (m.LastCompactionAgeSec < 0 || age < m.LastCompactionAgeSec) {
			m.LastCompactionAgeSec = max(age, 0)
		}
	}
	if !opts.LastCompaction.IsZero() {
		age := max(int64(opts.Now.Sub(opts.LastCompaction)/time.Second), 0)
		if m.LastCompactionAgeSec < 0 || age < m.LastCompactionAgeSec {
			m.LastCompactionAgeSec = age
		}
	}
	m.BacklogAgeSec = int64(CompactionBacklog(st.Snapshots, small, opts.LastCompaction, opts.Now) / time.Second)
	m.Manifests = len(st.Manifests)
	if m.Manifests > 0 {
		entries := 0
		for _, mf := range st.Manifests {
			entries += mf.LiveEntries
		}
		m.EntriesPerManifest = float64(entries) / float64(m.Manifests)
	}
	puffins := map[string]bool{}
	for _, f := range st.DeleteFiles {
		m.DeleteFiles++
		switch f.DeleteKind {
		case PositionDeletes:
			m.PositionDeleteFiles++
		case EqualityDeletes:
			m.EqualityDeleteFiles++
		case DeletionVector:
			m.DeletionVectors++
			puffins[f.Path] = true
		}
	}
	m.DeletionVectorFiles = len(puffins)
	for _, is := range st.DeleteIssues {
		switch is.Kind {
		case DeleteMisfiled:
			m.MisfiledDeletes++
		case DeleteShadowed:
			m.ShadowedDeletes++
		}
	}
	m.HeldBackDataFiles = len(st.HeldBack())
	if m.DataFiles > 0 {
		m.DeleteToDataRatio = float64(m.DeleteFiles) / float64(m.DataFiles)
	}
	m.Partitions = len(st.Partitions)
	if m.Partitions > 0 {
		counts := make([]int64, 0, m.Partitions)
		var most int64
		for _, p := range st.Partitions {
			counts = append(counts, int64(p.DataFiles))
			most = max(most, int64(p.DataFiles))
		}
		if med := medianInt64(counts); med > 0 {
			m.PartitionFileSkew = float64(most) / float64(med)
		}
	}
	cols, err := clusteringColumns(st, opts.Columns)
	if err != nil {
		return Health{}, err
	}
	for _, c := range cols {
		m.Clustering = append(m.Clustering, MeasureClustering(c.name, c.id, st.DataFiles))
	}
	if opts.LayoutDrift != nil {
		d := *opts.LayoutDrift
		if m.Records > 0 {
			d.RowsRatio = float64(d.Rows) / float64(m.Records)
		}
		m.LayoutDrift = &d
	}
	classify(&h, th, sortOrderColumns(st), judged, opts.Expiry)
	deleteIssueReasons(&h, st.DeleteIssues)
	return h, nil
}

// deleteIssueReasons makes a table with delete issues critical: rows
// someone deleted are visible, whatever floe does. One reason per kind,
// naming the first issue.
func deleteIssueReasons(h *Health, issues []DeleteIssue) {
	byKind := map[DeleteIssueKind][]DeleteIssue{}
	for _, is := range issues {
		byKind[is.Kind] = append(byKind[is.Kind], is)
	}
	for _, k := range []DeleteIssueKind{DeleteMisfiled, DeleteShadowed} {
		list := byKind[k]
		if len(list) == 0 {
			continue
		}
		var what string
		switch k {
		case DeleteMisfiled:
			what = "filed under a partition no data file they delete from has, so readers do not apply them"
		case DeleteShadowed:
			what = "position deletes that deletion vectors lack, so readers do not apply them"
		}
		h.Status = Critical
		h.Reasons = append(h.Reasons, fmt.Sprintf("%s: %s deletes: %d %s; rows they delete are visible. floe keeps them and does not compact the data files they name; first: %s",
			Critical, k, len(list), what, list[0].Reason))
	}
}

type column struct {
	id   int
	name string
}

// clusteringColumns are the sort-order columns plus the requested ones,
// each once, spelled as the schema spells them.
func clusteringColumns(st *State, extra []string) ([]column, error) {
	var out []column
	seen := map[int]bool{}
	for _, name := range sortOrderColumns(st) {
		if id, canon, ok := st.FieldID(name); ok && !seen[id] {
			seen[id] = true
			out = append(out, column{id, canon})
		}
	}
	for _, name := range extra {
		id, canon, ok := st.FieldID(name)
		if !ok {
			return nil, fmt.Errorf("health of %s: no column %q: %w", st.Ident, name, layout.ErrColumnNotFound)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, column{id, canon})
		}
	}
	return out, nil
}

func sortOrderColumns(st *State) []string {
	schema := st.Metadata.CurrentSchema()
	var out []string
	for _, f := range st.Metadata.SortOrder().Fields() {
		if len(f.SourceIDs) == 0 {
			continue
		}
		if name, ok := schema.FindColumnName(f.SourceIDs[0]); ok {
			out = append(out, name)
		}
	}
	return out
}

// classify sets h's status and reasons; judged is the target small files
// were judged by, exp what expiry would do (nil: unknown).
func classify(h *Health, th Thresholds, sortCols []string, judged int64, exp *Expiry) {
	m := h.Metrics
	raise := func(s Status, format string, args ...any) {
		if s.rank() > h.Status.rank() {
			h.Status = s
		}
		h.Reasons = append(h.Reasons, string(s)+": "+fmt.Sprintf(format, args...))
	}
	h.Status = Healthy
	if m.DataFiles >= th.MinFilesForSmallFileCheck && th.MinFilesForSmallFileCheck > 0 {
		target := fmt.Sprintf("the %s target", sizeStr(m.TargetFileSizeBytes))
		if judged != m.TargetFileSizeBytes {
			target = fmt.Sprintf("%s (the floor: the table's %s target is below it)", sizeStr(judged), sizeStr(m.TargetFileSizeBytes))
		}
		why := func(s Status) {
			raise(s, "small files: %d of %d data files (%.0f%%) are below 75%% of %s, two or more in their partition", m.SmallFiles, m.DataFiles, 100*m.SmallFileRatio, target)
		}
		switch {
		case th.SmallFileRatioCritical > 0 && m.SmallFileRatio >= th.SmallFileRatioCritical:
			why(Critical)
		case th.SmallFileRatioWarning > 0 && m.SmallFileRatio >= th.SmallFileRatioWarning:
			why(Warning)
		}
	}
	switch {
	case th.SnapshotsCritical > 0 && m.Snapshots >= th.SnapshotsCritical:
		raise(Critical, "snapshots: %d retained (threshold %d)%s", m.Snapshots, th.SnapshotsCritical, expireAdvice(m.Snapshots, th, exp))
	case th.SnapshotsWarning > 0 && m.Snapshots >= th.SnapshotsWarning:
		raise(Warning, "snapshots: %d retained (threshold %d)%s", m.Snapshots, th.SnapshotsWarning, expireAdvice(m.Snapshots, th, exp))
	}
	age := time.Duration(m.OldestSnapshotAgeSec) * time.Second
	switch {
	case th.OldestSnapshotCritical > 0 && age >= th.OldestSnapshotCritical:
		raise(Critical, "oldest snapshot is %s old (threshold %s)", durStr(age), durStr(th.OldestSnapshotCritical))
	case th.OldestSnapshotWarning > 0 && age >= th.OldestSnapshotWarning:
		raise(Warning, "oldest snapshot is %s old (threshold %s)", durStr(age), durStr(th.OldestSnapshotWarning))
	}
	switch {
	case th.ManifestsCritical > 0 && m.Manifests >= th.ManifestsCritical:
		raise(Critical, "manifests: %d (threshold %d); rewrite them", m.Manifests, th.ManifestsCritical)
	case th.ManifestsWarning > 0 && m.Manifests >= th.ManifestsWarning && m.EntriesPerManifest < th.MinEntriesPerManifest:
		raise(Warning, "manifests: %d with %.1f entries each on average; rewrite them", m.Manifests, m.EntriesPerManifest)
	}
	if m.DataFiles > 0 {
		switch {
		case th.DeleteRatioCritical > 0 && m.DeleteToDataRatio >= th.DeleteRatioCritical:
			raise(Critical, "delete files: %d for %d data files (ratio %.2f); compact to apply them", m.DeleteFiles, m.DataFiles, m.DeleteToDataRatio)
		case th.DeleteRatioWarning > 0 && m.DeleteToDataRatio >= th.DeleteRatioWarning:
			raise(Warning, "delete files: %d for %d data files (ratio %.2f); compact to apply them", m.DeleteFiles, m.DataFiles, m.DeleteToDataRatio)
		}
	}
	if th.PartitionSkewWarning > 0 && m.Partitions >= 3 && m.PartitionFileSkew >= th.PartitionSkewWarning {
		raise(Warning, "partition skew: the largest partition has %.0f× the median partition's files", m.PartitionFileSkew)
	}
	if sla := th.FreshnessSLA; sla > 0 {
		hours := func(d time.Duration) string { return fmt.Sprintf("%.0f h", d.Hours()) }
		if backlog := time.Duration(m.BacklogAgeSec) * time.Second; backlog > sla {
			last := "never compacted"
			if m.LastCompactionAgeSec >= 0 {
				last = "last compaction " + hours(time.Duration(m.LastCompactionAgeSec)*time.Second) + " ago"
			}
			raise(Warning, "freshness: writes have waited %s for a compaction (%s), SLA %s", hours(backlog), last, hours(sla))
		}
	}
	if d := m.LayoutDrift; d != nil {
		switch {
		case d.Problem != "":
			raise(Warning, "layout drift: the table's %s cannot take new rows into its leaves: %s", d.Layout, d.Problem)
		case th.LayoutDriftWarning > 0 && d.Files > 0 && d.RowsRatio >= th.LayoutDriftWarning:
			advice := ""
			if d.Command != "" {
				advice = fmt.Sprintf("; %s re-clusters %d %s into the tree", d.Command, d.Files, plural(d.Files, "file", "files"))
			}
			raise(Warning, "layout drift: %.0f%% of rows (%d of %d data files) are not in the table's %s (threshold %.0f%%), and queries cannot skip them by its leaves%s",
				100*d.RowsRatio, d.Files, m.DataFiles, d.Layout, 100*th.LayoutDriftWarning, advice)
		}
	}
	if th.OverlapWarning > 0 && m.DataFiles >= th.MinFilesForSmallFileCheck {
		for _, c := range m.Clustering {
			// Files sorted by (a, b) are ordered by a alone: their b ranges
			// overlap by design, and only a's overlap says they drifted.
			if len(sortCols) > 0 && c.Column == sortCols[0] && c.OverlapFraction >= th.OverlapWarning {
				raise(Warning, "clustering: %.0f%% of files overlap on sort column %s (average depth %.1f)", 100*c.OverlapFraction, c.Column, c.AverageDepth)
			}
		}
	}
}

// expireAdvice ends a snapshot-count reason with what brings the table
// under its thresholds: the expiry as it is set, when it removes enough
// snapshots; else the command that keeps one fewer than the lowest
// threshold, or a lower expiry age.
func expireAdvice(snapshots int, th Thresholds, exp *Expiry) string {
	if exp == nil {
		return "; expire them"
	}
	under := th.SnapshotsWarning
	if under <= 0 {
		under = th.SnapshotsCritical
	}
	age := "0s"
	if exp.OlderThan > 0 {
		age = durStr(exp.OlderThan)
	}
	left := snapshots - exp.Expirable
	if left < under {
		return fmt.Sprintf("; expire them: %s removes the %d older than %s", exp.Command, exp.Expirable, age)
	}
	removes := fmt.Sprintf("none is older than the expiry age %s, so %s removes none", age, exp.Command)
	if exp.Expirable > 0 {
		removes = fmt.Sprintf("%d are older than the expiry age %s, so %s leaves %d", exp.Expirable, age, exp.Command, left)
	}
	return fmt.Sprintf("; %s: to keep %d, %s --older-than 0 --retain-last %d, or lower snapshots.older_than",
		removes, under-1, exp.Command, under-1)
}

func medianInt64(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func sizeStr(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func durStr(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0fd", d.Hours()/24)
	case d >= 2*time.Hour:
		return fmt.Sprintf("%.0fh", d.Hours())
	case d >= 2*time.Minute:
		return fmt.Sprintf("%.0fm", d.Minutes())
	}
	return strings.TrimSuffix(d.Round(time.Second).String(), "0s")
}

func plural(n int, one, other string) string {
	if n == 1 {
		return one
	}
	return other
}
