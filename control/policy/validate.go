package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/robfig/cron/v3"

	"github.com/floe-project/floe/lake"
)

// The bounds floe puts on a policy's values, shared with the flags that
// set the same values (floe compact --target-file-size).
const (
	// MinTargetFileSizeBytes is the least target_file_size floe accepts
	// unless allow_small_target_file_size is set: 4 MiB. Below it a reader
	// spends longer opening a file than reading it, and a size written
	// without its unit (512 meant as 512MiB) lands far below it.
	MinTargetFileSizeBytes = lake.MinTargetFileSizeBytes
	// MinForcedTargetFileSizeBytes is the least target even with
	// allow_small_target_file_size: 1 KiB, about what a Parquet file's
	// footer alone takes.
	MinForcedTargetFileSizeBytes int64 = 1 << 10
	// MaxTargetFileSizeBytes is the largest target: 16 GiB.
	MaxTargetFileSizeBytes int64 = 16 << 30
	// MinOrphanAge is the least orphans.older_than: 24 h, the age below
	// which the orphan step refuses to delete (rewriter.MinOrphanAge; a
	// policy cannot force it).
	MinOrphanAge = 24 * time.Hour
	// ScheduleHorizon is how far ahead [NextRun] looks for a schedule's
	// next occurrence: five years, as robfig/cron does.
	ScheduleHorizon = 5 * 365 * 24 * time.Hour
)

// CheckTargetFileSize says what is wrong with a target file size of n
// bytes, or nil: it must be within [MinForcedTargetFileSizeBytes] and
// [MaxTargetFileSizeBytes], and at least [MinTargetFileSizeBytes] unless
// allowSmall. force names the switch that accepts a small target where the
// value was given ("allow_small_target_file_size: true",
// "--allow-small-target-file-size"), for the message.
func CheckTargetFileSize(n int64, allowSmall bool, force string) error {
	switch {
	case n < MinForcedTargetFileSizeBytes:
		return fmt.Errorf("%s: want at least %s (a number without a unit is bytes: did you mean %dMiB?)", FormatSize(n), FormatSize(MinForcedTargetFileSizeBytes), n)
	case n > MaxTargetFileSizeBytes:
		return fmt.Errorf("%s: want at most %s", FormatSize(n), FormatSize(MaxTargetFileSizeBytes))
	case n < MinTargetFileSizeBytes && !allowSmall:
		return fmt.Errorf("%s is below the %s floor: files that small cost more to open than to read (a number without a unit is bytes); set %s to write files this small",
			FormatSize(n), FormatSize(MinTargetFileSizeBytes), force)
	}
	return nil
}

// NextRun is when schedule (a cron expression as the schedule key takes
// it) next fires after t. A schedule that does not fire within
// [ScheduleHorizon] of t is an error wrapping [ErrNoOccurrence]: robfig/cron
// parses "0 0 30 2 *" (February 30th) and its Next returns the zero time.
func NextRun(schedule string, t time.Time) (time.Time, error) {
	sched, err := cron.ParseStandard(strings.TrimSpace(schedule))
	if err != nil {
		return time.Time{}, fmt.Errorf("schedule %q: %w", schedule, err)
	}
	next := sched.Next(t.UTC())
	if next.IsZero() || next.Sub(t) > ScheduleHorizon {
		return time.Time{}, fmt.Errorf("schedule %q: %w: no occurrence in the five years after %s (a date that does not exist, such as February 30th?)",
			schedule, ErrNoOccurrence, t.UTC().Format(time.DateOnly))
	}
	return next.UTC(), nil
}

// Validate reports, all at once and each with file:line and key, what
// parsing the rules key by key cannot see: a schedule with no occurrence
// within [ScheduleHorizon] of now, a budget.window with no budget.bytes or
// budget.cpu_hours to bound, and what resolving the policy of a table
// each rule governs finds ([Set.Resolve]: two rules that tie for it, a
// target_file_size below the floor that no allow_small_target_file_size
// accepts, a warning threshold above its critical one). For every rule a
// table name it matches stands for the tables it governs (its pattern with
// each wildcard read as "x"). floe.yaml's loading, floe policy validate and
// the daemon all run it, so a file that validates is one that can run.
func (s *Set) Validate(now time.Time) error {
	var (
		errs []error
		seen = map[string]bool{}
	)
	add := func(err error) {
		if !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	for _, r := range s.rules() {
		if v, ok := r.Values["schedule"]; ok {
			if _, err := NextRun(v.Raw, now); err != nil {
				add(fmt.Errorf("%s: %s: %w", v.Where, r.keyPath("schedule"), err))
			}
		}
		if err := checkBudget(r); err != nil {
			add(err)
		}
		id, ok := probe(r)
		if !ok {
			continue
		}
		_, problems := s.resolve(id)
		for _, err := range problems {
			add(err)
		}
	}
	return Invalid(errs...)
}

// rules are the set's rules, the default first.
func (s *Set) rules() []Rule {
	var out []Rule
	if s.Default != nil {
		out = append(out, *s.Default)
	}
	out = append(out, s.Catalogs...)
	out = append(out, s.Namespaces...)
	return append(out, s.Tables...)
}

// probe is a table rule r governs: its pattern with every wildcard read as
// "x", as many parts added at the first '*' as a table name needs. ok is
// false when no such name matches the pattern.
func probe(r Rule) (lake.Ident, bool) {
	var name string
	switch r.Level {
	case LevelDefault:
		name = "x.x.x"
	case LevelCatalog:
		name = r.Pattern + ".x.x"
	case LevelNamespace:
		ns, ok := fill(r.Pattern, 2)
		if !ok {
			return lake.Ident{}, false
		}
		name = ns + ".x"
	case LevelTable:
		var ok bool
		if name, ok = fill(r.Pattern, 3); !ok {
			return lake.Ident{}, false
		}
	default:
		return lake.Ident{}, false
	}
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if p == "" {
			return lake.Ident{}, false
		}
	}
	return lake.Ident{Catalog: parts[0], Namespace: parts[1 : len(parts)-1], Name: parts[len(parts)-1]}, true
}

// fill turns a glob pattern into a name of at least parts dot-separated
// parts that it matches, or says there is none this simple.
func fill(pattern string, parts int) (string, bool) {
	wild := strings.NewReplacer("*", "x", "?", "x")
	name := wild.Replace(pattern)
	if have := strings.Count(name, ".") + 1; have < parts {
		i := strings.Index(pattern, "*")
		if i < 0 {
			return "", false
		}
		name = wild.Replace(pattern[:i]) + "x" + strings.Repeat(".x", parts-have) + wild.Replace(pattern[i+1:])
	}
	return name, Match(pattern, name)
}

// checkEffective reports what is wrong with a resolved policy as a whole,
// each problem at the file:line and key that set it.
func checkEffective(eff Effective) []error {
	var errs []error
	p := eff.Policy
	at := func(key string) (string, string) {
		s, _ := eff.Setting(key)
		return orBuiltin(s.Where), s.keyPath()
	}
	if n := p.TargetFileSizeBytes; n > 0 {
		if err := CheckTargetFileSize(n, p.AllowSmallTargetFileSize, "allow_small_target_file_size: true"); err != nil {
			where, key := at("target_file_size")
			if s, _ := eff.Setting("allow_small_target_file_size"); s.Level != LevelBuiltin {
				err = fmt.Errorf("%w (%s sets allow_small_target_file_size: %s)", err, orBuiltin(s.Where), s.Value)
			}
			errs = append(errs, fmt.Errorf("%s: %s: %w", where, key, err))
		}
	}
	th := p.Health
	for _, pair := range []struct {
		name       string
		warn, crit float64
		format     func(float64) string
	}{
		{"small_file_ratio", th.SmallFileRatioWarning, th.SmallFileRatioCritical, number},
		{"snapshots", float64(th.SnapshotsWarning), float64(th.SnapshotsCritical), number},
		{"oldest_snapshot", float64(th.OldestSnapshotWarning), float64(th.OldestSnapshotCritical), func(f float64) string { return FormatDuration(time.Duration(f)) }},
		{"manifests", float64(th.ManifestsWarning), float64(th.ManifestsCritical), number},
		{"delete_ratio", th.DeleteRatioWarning, th.DeleteRatioCritical, number},
	} {
		if pair.warn > 0 && pair.crit > 0 && pair.warn > pair.crit {
			wk, ck := "health."+pair.name+".warning", "health."+pair.name+".critical"
			where, key := at(wk)
			if s, _ := eff.Setting(wk); s.Level == LevelBuiltin {
				where, key = at(ck)
			}
			errs = append(errs, fmt.Errorf("%s: %s: %s %s is above %s %s: the table would be critical before it is a warning",
				where, key, wk, pair.format(pair.warn), ck, pair.format(pair.crit)))
		}
	}
	// Expiry always keeps retain_last snapshots: a threshold at or below
	// it is crossed for good once the table has had that many commits.
	if keep := p.Snapshots.RetainLast; keep != nil {
		for _, lv := range []struct {
			key   string
			level int
		}{{"health.snapshots.warning", th.SnapshotsWarning}, {"health.snapshots.critical", th.SnapshotsCritical}} {
			if lv.level <= 0 || *keep < lv.level {
				continue
			}
			where, key := at("snapshots.retain_last")
			s, _ := eff.Setting(lv.key)
			set := "its default"
			if s.Level != LevelBuiltin {
				set = orBuiltin(s.Where)
			}
			errs = append(errs, fmt.Errorf("%s: %s: %d is at least %s (%d, %s): expiry always keeps that many snapshots, so a table that has had %d commits stays %s; keep fewer or raise the threshold",
				where, key, *keep, lv.key, lv.level, set, lv.level, strings.TrimPrefix(lv.key, "health.snapshots.")))
			break
		}
	}
	return errs
}

func number(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// keyPath names key of rule r as the file spells its path
// (policies.tables.local.web.events.target_file_size), or as a policies
// file would for a rule read from elsewhere.
func (r Rule) keyPath(key string) string {
	switch {
	case r.path != "":
		return r.path + "." + key
	case r.Level == LevelBuiltin:
		return key
	case r.Level == LevelDefault:
		return "default." + key
	}
	return string(r.Level) + "s." + r.Pattern + "." + key
}

// keyPath names the setting's key as [Rule.keyPath] does.
func (s Setting) keyPath() string {
	if s.path != "" {
		return s.path
	}
	return Rule{Level: s.Level, Pattern: s.Rule}.keyPath(s.Key)
}

// FormatDuration prints d as [ParseDuration] reads it, whole days as "5d":
// 5d, 1d12h, 90m, 30s.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	days := d / (24 * time.Hour)
	rest := d - days*24*time.Hour
	s := ""
	if days > 0 {
		s = strconv.FormatInt(int64(days), 10) + "d"
		if rest == 0 {
			return s
		}
	}
	r := rest.String() // 1h30m0s
	if strings.HasSuffix(r, "m0s") {
		r = strings.TrimSuffix(r, "0s")
	}
	if strings.HasSuffix(r, "h0m") {
		r = strings.TrimSuffix(r, "0m")
	}
	return s + r
}

// FormatSize prints n bytes as [ParseSize] reads it: a whole number of the
// largest binary unit that divides it (4MiB, 512B), else in IEC units to
// one decimal (1.5 MiB).
func FormatSize(n int64) string {
	if n < 0 {
		return "-" + FormatSize(-n)
	}
	for _, u := range []struct {
		shift uint
		name  string
	}{{50, "PiB"}, {40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + "B"
	}
	return humanize.IBytes(uint64(n))
}

// CheckValue reads raw as the value of policy key and says what is wrong
// with it, or nil: the key's own bounds, for the flags that set the same
// value (floe compact --max-bytes is max_bytes_per_run). An unknown key is
// an error.
func CheckValue(key, raw string) error {
	k, ok := spec(key)
	if !ok {
		return fmt.Errorf("no policy key %q", key)
	}
	_, err := k.parse(raw)
	return err
}
