package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/robfig/cron/v3"

	"github.com/floe-project/floe/layout"
)

// kind is how a key's text is read.
type kind int

const (
	kindDuration kind = iota // 5d, 12h, 1d12h
	kindSize                 // 512MiB
	kindInt                  // ≥ min
	kindFloat                // ≥ min
	kindBool                 // true | false
	kindEnum                 // one of enum
	kindCron                 // five-field cron
	kindWindow               // HH:MM-HH:MM, UTC
	kindLayout               // auto | none | a layout spec
	kindEngine               // native | auto | a name under engines:
)

// keySpec is one policy key: its dotted name, how it is read, its built-in
// default ("" leaves it unset, so that the step's own default applies) and
// how it lands in a [Policy].
//
// min and max bound the value in the key's unit — the number itself for
// ints and floats, nanoseconds for durations, bytes for sizes — so that a
// negative, absurd or unit-less value ("512" meant as 512MiB) is refused
// where it is written. max 0 is no upper bound. zeroOff lets 0 through
// below min: it turns the key's check or trigger off. check, when set, is
// a further check of the value read.
type keySpec struct {
	name    string
	kind    kind
	enum    []string
	min     float64
	max     float64
	zeroOff bool
	check   func(v any) error
	def     string
	doc     string
	set     func(p *Policy, v any)
}

// Modes, approvals and layout choices.
const (
	ModeAdaptive  = "adaptive"
	ModeScheduled = "scheduled"
	ModeManual    = "manual"

	ApprovalRequired = "required"
	ApprovalAuto     = "auto"

	LayoutAuto = "auto"
	LayoutNone = "none"

	EngineNative = "native"
	EngineAuto   = "auto"
)

var approvals = []string{ApprovalRequired, ApprovalAuto}

// Units of the bounds below.
const (
	day  = float64(24 * time.Hour)
	hour = float64(time.Hour)
	year = 365 * day
	kib  = float64(1 << 10)
	mib  = float64(1 << 20)
	gib  = float64(1 << 30)
	pib  = float64(1 << 50)
)

// keys are every policy key, in the order `floe policy show` prints them.
var keys = []keySpec{
	{name: "snapshots.older_than", kind: kindDuration, max: 10 * year, doc: "expire snapshots older than this, 0 to 10 years (unset: the table's history.expire.max-snapshot-age-ms, else 5d)",
		set: func(p *Policy, v any) { d := v.(time.Duration); p.Snapshots.OlderThan = &d }},
	{name: "snapshots.retain_last", kind: kindInt, min: 1, max: 100_000, doc: "always keep this many newest snapshots, 1 to 100,000 (unset: the table's history.expire.min-snapshots-to-keep, else 1)",
		set: func(p *Policy, v any) { n := v.(int); p.Snapshots.RetainLast = &n }},
	{name: "orphans.older_than", kind: kindDuration, min: float64(MinOrphanAge), max: 10 * year, def: "3d", doc: "remove orphan files older than this (at least 24h: younger files may belong to a write in flight)",
		set: func(p *Policy, v any) { p.Orphans.OlderThan = v.(time.Duration) }},
	{name: "target_file_size", kind: kindSize, check: func(v any) error { return CheckTargetFileSize(v.(int64), true, "") }, doc: "size of the files compaction writes, 4MiB to 16GiB (smaller with allow_small_target_file_size; unset: the table's write.target-file-size-bytes, else health.target_file_size)",
		set: func(p *Policy, v any) { p.TargetFileSizeBytes = v.(int64) }},
	{name: "allow_small_target_file_size", kind: kindBool, def: "false", doc: "accept a target_file_size below 4MiB (down to 1KiB), and judge small files by it in health",
		set: func(p *Policy, v any) { p.AllowSmallTargetFileSize = v.(bool) }},
	{name: "layout", kind: kindLayout, def: LayoutAuto, doc: "auto (from telemetry), none (bin-pack only) or a layout such as sort(tenant_id, ts)",
		set: func(p *Policy, v any) { p.Layout = v.(string) }},
	{name: "approval.layout", kind: kindEnum, enum: approvals, def: ApprovalRequired, doc: "a layout change waits for 'floe plan approve'",
		set: func(p *Policy, v any) { p.Approval.Layout = v.(string) }},
	{name: "approval.binpack", kind: kindEnum, enum: approvals, def: ApprovalAuto,
		set: func(p *Policy, v any) { p.Approval.Binpack = v.(string) }},
	{name: "approval.expire", kind: kindEnum, enum: approvals, def: ApprovalAuto,
		set: func(p *Policy, v any) { p.Approval.Expire = v.(string) }},
	{name: "approval.orphans", kind: kindEnum, enum: approvals, def: ApprovalAuto,
		set: func(p *Policy, v any) { p.Approval.Orphans = v.(string) }},
	{name: "approval.manifests", kind: kindEnum, enum: approvals, def: ApprovalAuto,
		set: func(p *Policy, v any) { p.Approval.Manifests = v.(string) }},
	{name: "approval.deletes", kind: kindEnum, enum: approvals, def: ApprovalAuto,
		set: func(p *Policy, v any) { p.Approval.Deletes = v.(string) }},
	{name: "enabled.expire", kind: kindBool, def: "true", doc: "run snapshot expiry at all",
		set: func(p *Policy, v any) { p.Enabled.Expire = v.(bool) }},
	{name: "enabled.orphans", kind: kindBool, def: "true",
		set: func(p *Policy, v any) { p.Enabled.Orphans = v.(bool) }},
	{name: "enabled.compact", kind: kindBool, def: "true",
		set: func(p *Policy, v any) { p.Enabled.Compact = v.(bool) }},
	{name: "enabled.manifests", kind: kindBool, def: "true",
		set: func(p *Policy, v any) { p.Enabled.Manifests = v.(bool) }},
	{name: "enabled.deletes", kind: kindBool, def: "true", doc: "run delete maintenance (floe rewrite-deletes) at all",
		set: func(p *Policy, v any) { p.Enabled.Deletes = v.(bool) }},
	{name: "mode", kind: kindEnum, enum: []string{ModeAdaptive, ModeScheduled, ModeManual}, def: ModeAdaptive, doc: "adaptive (when triggers fire), scheduled (on schedule) or manual",
		set: func(p *Policy, v any) { p.Mode = v.(string) }},
	{name: "schedule", kind: kindCron, def: "0 2 * * *", doc: "cron schedule of mode: scheduled, UTC",
		set: func(p *Policy, v any) { p.Schedule = v.(string) }},
	{name: "window", kind: kindWindow, doc: "maintenance window HH:MM-HH:MM, UTC (unset: any time)",
		set: func(p *Policy, v any) { w := v.(Window); p.Window = &w }},
	{name: "poll_interval", kind: kindDuration, min: float64(time.Second), max: 30 * day, def: "5m", doc: "how often mode: adaptive reads the table's metadata, 1s to 30d",
		set: func(p *Policy, v any) { p.PollInterval = v.(time.Duration) }},
	{name: "freshness_sla", kind: kindDuration, min: hour, max: 365 * day, zeroOff: true, doc: "how long writes may wait for a compaction before the table is warning and the freshness alert fires, 1h to 365d (unset: 48h for mode adaptive and scheduled, none for manual; 0: off)",
		set: func(p *Policy, v any) { p.FreshnessSLA = v.(time.Duration) }},
	{name: "alert_after_failures", kind: kindInt, min: 1, max: 1000, def: "2", doc: "alert after this many failed runs in a row, 1 to 1,000",
		set: func(p *Policy, v any) { p.AlertAfterFailures = v.(int) }},
	{name: "triggers.small_file_ratio", kind: kindFloat, max: 1, def: "0.3", doc: "compact when this fraction of data files is small, 0 to 1 (0: never)",
		set: func(p *Policy, v any) { p.Triggers.SmallFileRatio = v.(float64) }},
	{name: "triggers.delete_ratio", kind: kindFloat, max: 100, def: "0.2", doc: "compact when delete files per data file reach this, 0 to 100 (0: never)",
		set: func(p *Policy, v any) { p.Triggers.DeleteRatio = v.(float64) }},
	{name: "triggers.snapshots", kind: kindInt, max: 1_000_000, def: "500", doc: "expire when the table has this many snapshots, 0 to 1,000,000 (0: never)",
		set: func(p *Policy, v any) { p.Triggers.Snapshots = v.(int) }},
	{name: "triggers.manifests_per_1k_files", kind: kindFloat, max: 1000, def: "50", doc: "rewrite manifests when there are this many per 1,000 data files, 0 to 1,000 (0: never)",
		set: func(p *Policy, v any) { p.Triggers.ManifestsPer1kFiles = v.(float64) }},
	{name: "triggers.clustering_depth", kind: kindFloat, min: 1.5, max: 10_000, zeroOff: true, def: "4", doc: "re-sort when the sort key's mean clustering depth reaches this, 1.5 to 10,000 (0: never; a depth is at least 1, so less would always fire)",
		set: func(p *Policy, v any) { p.Triggers.ClusteringDepth = v.(float64) }},
	{name: "triggers.delete_files", kind: kindInt, max: 1_000_000, def: "10", doc: "maintain deletes when the table has this many position and equality delete files, 0 to 1,000,000 (0: never; deletion vectors are not counted)",
		set: func(p *Policy, v any) { p.Triggers.DeleteFiles = v.(int) }},
	{name: "triggers.position_delete_files", kind: kindInt, min: 2, max: 1_000_000, def: "2", doc: "merge a partition's position delete files (format 1 and 2) when it has this many, 2 to 1,000,000",
		set: func(p *Policy, v any) { p.Triggers.PositionDeleteFiles = v.(int) }},
	{name: "triggers.equality_delete_ratio", kind: kindFloat, min: 0.01, max: 1, def: "0.3", doc: "rewrite a partition with its equality deletes applied when they delete this share of its records, 0.01 to 1",
		set: func(p *Policy, v any) { p.Triggers.EqualityDeleteRatio = v.(float64) }},
	{name: "max_bytes_per_run", kind: kindSize, min: mib, max: pib, doc: "compact at most this many input bytes per run, oldest partitions first, 1MiB to 1PiB (unset: no limit)",
		set: func(p *Policy, v any) { p.MaxBytesPerRun = v.(int64) }},
	{name: "max_payback", kind: kindDuration, min: hour, max: 10 * year, def: "30d", doc: "recommend no rewrite that takes longer than this to pay for itself, 1h to 10 years",
		set: func(p *Policy, v any) { p.MaxPayback = v.(time.Duration) }},
	{name: "max_deferral", kind: kindDuration, min: hour, max: 365 * day, def: "3d", doc: "a table whose compaction backlog has waited this long (or longer than its freshness_sla) runs ahead of the gain ranking, and starts while any budget is left, 1h to 365d",
		set: func(p *Policy, v any) { p.MaxDeferral = v.(time.Duration) }},
	{name: "cost.file_open_bytes", kind: kindSize, min: kib, max: gib, zeroOff: true, def: "4MiB", doc: "what opening one data file costs a query (open, footer, planning), in bytes of scan that take as long, 1KiB to 1GiB (0: count bytes only; the default is Iceberg's read.split.open-file-cost and Spark's spark.sql.files.openCostInBytes)",
		set: func(p *Policy, v any) { p.Cost.FileOpenBytes = v.(int64) }},
	{name: "cost.usd_per_tb_scanned", kind: kindFloat, max: 10_000, doc: "price of a terabyte (10^12 bytes) scanned, 0 to 10,000, to state paybacks in money (unset or 0: bytes only)",
		set: func(p *Policy, v any) { p.Cost.USDPerTBScanned = v.(float64) }},
	{name: "cost.usd_per_vcpu_hour", kind: kindFloat, max: 1_000, doc: "price of a vCPU-hour of a rewrite, 0 to 1,000 (unset or 0: the rewrite's CPU is not priced); money needs cost.usd_per_tb_scanned",
		set: func(p *Policy, v any) { p.Cost.USDPerVCPUHour = v.(float64) }},
	{name: "engine", kind: kindEngine, def: EngineNative, doc: "native, auto (native below auto_engine_bytes of input, else distributed_engine) or an engine under engines:",
		set: func(p *Policy, v any) { p.Engine = v.(string) }},
	{name: "auto_engine_bytes", kind: kindSize, min: mib, max: pib, def: "100GiB", doc: "with engine: auto, tables whose compaction reads this much go to distributed_engine, 1MiB to 1PiB",
		set: func(p *Policy, v any) { p.AutoEngineBytes = v.(int64) }},
	{name: "distributed_engine", kind: kindEngine, doc: "the engine under engines: that engine: auto sends large tables to",
		set: func(p *Policy, v any) { p.DistributedEngine = v.(string) }},
	// health: the thresholds of lake.Thresholds; 0 turns a check off.
	{name: "health.small_file_ratio.warning", kind: kindFloat, max: 1, def: "0.3", set: func(p *Policy, v any) { p.Health.SmallFileRatioWarning = v.(float64) }},
	{name: "health.small_file_ratio.critical", kind: kindFloat, max: 1, def: "0.7", set: func(p *Policy, v any) { p.Health.SmallFileRatioCritical = v.(float64) }},
	{name: "health.min_files", kind: kindInt, max: 1_000_000, def: "10", doc: "small-file and overlap checks need this many data files",
		set: func(p *Policy, v any) { p.Health.MinFilesForSmallFileCheck = v.(int) }},
	{name: "health.snapshots.warning", kind: kindInt, max: 1_000_000, def: "100", set: func(p *Policy, v any) { p.Health.SnapshotsWarning = v.(int) }},
	{name: "health.snapshots.critical", kind: kindInt, max: 1_000_000, def: "1000", set: func(p *Policy, v any) { p.Health.SnapshotsCritical = v.(int) }},
	{name: "health.oldest_snapshot.warning", kind: kindDuration, max: 10 * year, def: "7d", set: func(p *Policy, v any) { p.Health.OldestSnapshotWarning = v.(time.Duration) }},
	{name: "health.oldest_snapshot.critical", kind: kindDuration, max: 10 * year, def: "30d", set: func(p *Policy, v any) { p.Health.OldestSnapshotCritical = v.(time.Duration) }},
	{name: "health.manifests.warning", kind: kindInt, max: 10_000_000, def: "100", set: func(p *Policy, v any) { p.Health.ManifestsWarning = v.(int) }},
	{name: "health.manifests.critical", kind: kindInt, max: 10_000_000, def: "2000", set: func(p *Policy, v any) { p.Health.ManifestsCritical = v.(int) }},
	{name: "health.min_entries_per_manifest", kind: kindFloat, max: 1_000_000, def: "20", set: func(p *Policy, v any) { p.Health.MinEntriesPerManifest = v.(float64) }},
	{name: "health.delete_ratio.warning", kind: kindFloat, max: 100, def: "0.1", set: func(p *Policy, v any) { p.Health.DeleteRatioWarning = v.(float64) }},
	{name: "health.delete_ratio.critical", kind: kindFloat, max: 100, def: "0.5", set: func(p *Policy, v any) { p.Health.DeleteRatioCritical = v.(float64) }},
	{name: "health.partition_skew.warning", kind: kindFloat, min: 1.5, max: 1_000_000, zeroOff: true, def: "10", doc: "max/median data files per partition (0: off; a skew is at least 1)",
		set: func(p *Policy, v any) { p.Health.PartitionSkewWarning = v.(float64) }},
	{name: "health.overlap.warning", kind: kindFloat, max: 1, def: "0.5", set: func(p *Policy, v any) { p.Health.OverlapWarning = v.(float64) }},
	{name: "health.layout_drift.warning", kind: kindFloat, max: 1, def: "0.2", doc: "share of rows not in the learned tree the table records (0: off)",
		set: func(p *Policy, v any) { p.Health.LayoutDriftWarning = v.(float64) }},
}

// spec returns the key called name.
func spec(name string) (keySpec, bool) {
	i := slices.IndexFunc(keys, func(k keySpec) bool { return k.name == name })
	if i < 0 {
		return keySpec{}, false
	}
	return keys[i], true
}

// Keys lists every policy key's dotted name.
func Keys() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// parse reads a key's text, or says what is wrong with it.
func (k keySpec) parse(raw string) (any, error) {
	v, err := k.read(raw)
	if err == nil && k.check != nil {
		err = k.check(v)
	}
	return v, err
}

// read is parse without the key's own check.
func (k keySpec) read(raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch k.kind {
	case kindDuration:
		d, err := ParseDuration(s)
		if err != nil {
			return nil, err
		}
		return d, k.bounded(float64(d), func(f float64) string { return FormatDuration(time.Duration(f)) })
	case kindSize:
		if z, err := humanize.ParseBytes(s); err == nil && z == 0 && k.zeroOff {
			return int64(0), nil
		}
		n, err := ParseSize(s)
		if err != nil {
			return nil, err
		}
		return n, k.bounded(float64(n), func(f float64) string { return FormatSize(int64(f)) })
	case kindInt:
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%q: want a whole number", raw)
		}
		return n, k.bounded(float64(n), func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) })
	case kindFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q: want a number", raw)
		}
		return f, k.bounded(f, func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })
	case kindBool:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q: want true or false", raw)
	case kindEnum:
		v := strings.ToLower(s)
		if !slices.Contains(k.enum, v) {
			return nil, fmt.Errorf("%q: want %s", raw, strings.Join(k.enum, ", "))
		}
		return v, nil
	case kindCron:
		if err := checkCron(s); err != nil {
			return nil, fmt.Errorf("%q: %w", raw, err)
		}
		return s, nil
	case kindWindow:
		return ParseWindow(s)
	case kindEngine:
		v := strings.ToLower(s)
		if v == "" || strings.ContainsAny(v, " .,;\t") {
			return nil, fmt.Errorf("%q: want native, auto or the name of an engine under engines:", raw)
		}
		return v, nil
	case kindLayout:
		switch v := strings.ToLower(s); v {
		case LayoutAuto, LayoutNone:
			return v, nil
		}
		l, err := layout.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%q: want auto, none or a layout such as sort(tenant_id, ts): %v", raw, err)
		}
		return l.String(), nil
	}
	return nil, fmt.Errorf("key %s has no reader", k.name)
}

// bounded says what is wrong with v against the key's bounds, printing
// them with format, or nil.
func (k keySpec) bounded(v float64, format func(float64) string) error {
	switch {
	case v == 0 && k.zeroOff:
		return nil
	case v < k.min:
		off := ""
		if k.zeroOff {
			off = " (or 0 to turn it off)"
		}
		return fmt.Errorf("%s: want at least %s%s", format(v), format(k.min), off)
	case k.max > 0 && v > k.max:
		return fmt.Errorf("%s: want at most %s", format(v), format(k.max))
	}
	return nil
}

// checkCron says what is wrong with a schedule as text: it must parse as
// a five-field cron expression (or a descriptor such as @daily) and fire
// at most once a minute. Whether it fires at all is [NextRun]'s to say.
func checkCron(s string) error {
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return fmt.Errorf("want a five-field cron schedule such as \"0 2 * * *\": %v", err)
	}
	if every, ok := sched.(cron.ConstantDelaySchedule); ok && every.Delay < time.Minute {
		return fmt.Errorf("fires every %s: want at most once a minute", every.Delay)
	}
	return nil
}

// ParseDuration reads a duration as floe's flags and policies write them:
// Go's units with a leading number of days ("5d", "1d12h", "90m").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("duration %q: want e.g. 30d, 12h, 1d12h", s)
	if s == "" {
		return 0, fmt.Errorf("duration is empty: want e.g. 30d, 12h, 1d12h")
	}
	var days time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > 100*365 {
			return 0, bad
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
	}
	if s == "" {
		return days, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return days + d, nil
}

// ParseSize parses a byte size such as "512MiB", "1GiB", "128 MB" or a
// plain number of bytes.
func ParseSize(s string) (int64, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number with an optional unit such as 512MiB", s)
	}
	if n == 0 || n > 1<<62 {
		return 0, fmt.Errorf("size %q: out of range", s)
	}
	return int64(n), nil
}

// Window is a daily maintenance window in UTC, from Start to End minutes
// after midnight; End before Start wraps past midnight (22:00-04:00).
type Window struct {
	Start, End int
}

// ParseWindow reads "HH:MM-HH:MM".
func ParseWindow(s string) (Window, error) {
	bad := fmt.Errorf("window %q: want HH:MM-HH:MM in UTC, such as 01:00-05:00", s)
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return Window{}, bad
	}
	clock := func(t string) (int, bool) {
		h, m, ok := strings.Cut(strings.TrimSpace(t), ":")
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || (hh == 24 && mm != 0) {
			return 0, false
		}
		return hh*60 + mm, true
	}
	start, ok1 := clock(a)
	end, ok2 := clock(b)
	if !ok1 || !ok2 || start == end {
		return Window{}, bad
	}
	return Window{Start: start, End: end}, nil
}

// Contains reports whether t (in UTC) is inside the window.
func (w Window) Contains(t time.Time) bool {
	t = t.UTC()
	m := t.Hour()*60 + t.Minute()
	if w.Start < w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// EndAfter is when the window that is open at t, or else the next one to
// open after t, closes: the last moment a run due at t can start in.
func (w Window) EndAfter(t time.Time) time.Time {
	t = t.UTC()
	length := time.Duration((w.End-w.Start+24*60)%(24*60)) * time.Minute
	if length == 0 { // 00:00-24:00
		length = 24 * time.Hour
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	// The window that opened yesterday may still be open (22:00-04:00).
	for k := -1; ; k++ {
		end := day.AddDate(0, 0, k).Add(time.Duration(w.Start)*time.Minute + length)
		if end.After(t) {
			return end
		}
	}
}

// String prints the window as ParseWindow reads it.
func (w Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}
