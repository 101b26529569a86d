package polaris

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// floe's policy keys that Polaris policies set, as floe.yaml spells them.
const (
	KeySnapshotsOlderThan = "snapshots.older_than"
	KeySnapshotsRetain    = "snapshots.retain_last"
	KeyOrphansOlderThan   = "orphans.older_than"
	KeyTargetFileSize     = "target_file_size"
	KeyEnabledExpire      = "enabled.expire"
	KeyEnabledOrphans     = "enabled.orphans"
	KeyEnabledCompact     = "enabled.compact"
	KeyEnabledManifests   = "enabled.manifests"
)

// Setting is one floe policy key set by a Polaris policy.
type Setting struct {
	// Key is floe's dotted policy key, e.g. snapshots.retain_last.
	Key string
	// Value is written as floe.yaml would spell it: 7d, 536870912, true.
	Value string
	// Level is where the Polaris policy is attached.
	Level Level
	// Path is the attachment's path: empty for the catalog, the namespace
	// for a namespace, namespace and table name for a table.
	Path []string
	// Source says where the value came from, for explanations:
	// "polaris policy web_compaction (system.data-compaction) on namespace web".
	Source string
}

// maxDays bounds a day count so that it fits a time.Duration with room to
// spare (about 292 years is the limit) once floe parses it.
const maxDays = 100 * 365

// enabledKey is the floe key each type's enable sets.
var enabledKey = map[string]string{
	TypeSnapshotExpiry:     KeyEnabledExpire,
	TypeOrphanFileRemoval:  KeyEnabledOrphans,
	TypeDataCompaction:     KeyEnabledCompact,
	TypeMetadataCompaction: KeyEnabledManifests,
}

// unmappedWhy says why a Polaris key that a schema names has no floe key.
var unmappedWhy = map[string]string{
	"max_ref_age_days":                   "floe has no ref-age key; branches and tags keep their own retention",
	"locations":                          "floe removes orphans under the table's own location only, never elsewhere",
	"compaction_strategy":                "floe chooses the layout (binpack, sort, zorder, hilbert) from query telemetry and the layout policy",
	"max-concurrent-file-group-rewrites": "floe bounds rewrite concurrency itself",
	"spec_id":                            "floe rewrites manifests of every partition spec",
	"prefix_mismatch_mode":               "floe compares orphan locations by its own rules",
}

// Settings maps policies (as [Client.ApplicablePolicies] returns them) onto
// floe's policy keys, in [Types] order. Policies of other types are
// skipped. It returns a warning for every Polaris key floe does not map,
// naming the key and the policy, and an error wrapping [ErrBadContent] that
// names the policy when a content cannot be read or a value is out of
// range.
func Settings(policies []Policy) ([]Setting, []string, error) {
	var (
		out  []Setting
		warn []string
		errs []error
	)
	for _, typ := range Types() {
		for _, p := range policies {
			if p.Type != typ {
				continue
			}
			s, w, err := settingsOf(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, s...)
			warn = append(warn, w...)
		}
	}
	return out, warn, errors.Join(errs...)
}

// settingsOf maps one policy.
func settingsOf(p Policy) ([]Setting, []string, error) {
	src := fmt.Sprintf("polaris policy %s %s", p.Ref(), p.where())
	fail := func(err error) ([]Setting, []string, error) {
		return nil, nil, fmt.Errorf("%s: %w", src, err)
	}
	switch p.Level {
	case LevelCatalog, LevelNamespace, LevelTable:
	default:
		return fail(fmt.Errorf("level %q: want catalog, namespace or table", p.Level))
	}
	c, err := ParseContent(p.Type, p.Content)
	if err != nil {
		return fail(err)
	}
	var out []Setting
	set := func(key, value string) {
		out = append(out, Setting{Key: key, Value: value, Level: p.Level, Path: p.AttachedTo, Source: src})
	}
	var warn []string
	unmapped := func(key string) {
		why := unmappedWhy[strings.TrimPrefix(key, "config.")]
		if why == "" {
			why = "floe has no equivalent"
		}
		warn = append(warn, fmt.Sprintf("%s: %s is not mapped: %s; ignored", src, key, why))
	}
	set(enabledKey[p.Type], strconv.FormatBool(c.Enable))
	for _, k := range c.Unknown {
		unmapped(k)
	}
	if c.MaxOrphanFileAgeDays != nil {
		d, err := days(*c.MaxOrphanFileAgeDays)
		if err != nil {
			return fail(fmt.Errorf("%w: max_orphan_file_age_in_days: %v", ErrBadContent, err))
		}
		set(KeyOrphansOlderThan, d)
	}
	if len(c.Locations) > 0 {
		unmapped("locations")
	}
	for _, k := range sortedKeys(c.Config) {
		v := c.Config[k]
		var (
			key, value string
			err        error
		)
		switch {
		case p.Type == TypeSnapshotExpiry && k == "min_snapshot_to_keep":
			key = KeySnapshotsRetain
			value, err = wholeNumber(v, 1)
		case p.Type == TypeSnapshotExpiry && k == "max_snapshot_age_days":
			key = KeySnapshotsOlderThan
			var n float64
			if n, err = anyNumber(v); err == nil {
				value, err = days(n)
			}
		case p.Type == TypeDataCompaction && k == "target_file_size_bytes":
			key = KeyTargetFileSize
			value, err = wholeNumber(v, 1)
		default:
			unmapped("config." + k)
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("%w: config.%s: %v", ErrBadContent, k, err))
		}
		set(key, value)
	}
	return out, warn, nil
}

// anyNumber reads a config value as a number. The config map is free-form
// ("interoperability is not guaranteed"), so a string holding a number is
// accepted too.
func anyNumber(v any) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return numberValue(v)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, fmt.Errorf("want a number, got %q", v)
		}
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %v", v)
}

// wholeNumber reads a config value as an integer of at least min.
func wholeNumber(v any, min int64) (string, error) {
	f, err := anyNumber(v)
	if err != nil {
		return "", err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return "", fmt.Errorf("want a whole number, got %v", v)
	}
	if int64(f) < min {
		return "", fmt.Errorf("want at least %d, got %v", min, v)
	}
	return strconv.FormatInt(int64(f), 10), nil
}

// days spells a (possibly fractional) number of days as a floe duration:
// whole days as "7d", otherwise the largest whole unit of h, m or s
// ("36h", "90m"), rounded to the second.
func days(n float64) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("want zero or more days, got %v", n)
	}
	if n > maxDays {
		return "", fmt.Errorf("%v days is more than %d", n, maxDays)
	}
	secs := int64(math.Round(n * 24 * 3600))
	switch {
	case secs%(24*3600) == 0:
		return fmt.Sprintf("%dd", secs/(24*3600)), nil
	case secs%3600 == 0:
		return fmt.Sprintf("%dh", secs/3600), nil
	case secs%60 == 0:
		return fmt.Sprintf("%dm", secs/60), nil
	}
	return fmt.Sprintf("%ds", secs), nil
}
