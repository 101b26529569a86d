package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
)

// durationValue parses durations with a day unit: 30d, 12h, 90m, 1d12h.
type durationValue time.Duration

func (d *durationValue) String() string {
	if *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}
func (d *durationValue) Type() string { return "duration" }
func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// timeValue parses an instant: RFC 3339, or a date (YYYY-MM-DD, midnight
// UTC).
type timeValue time.Time

func (v *timeValue) String() string {
	if time.Time(*v).IsZero() {
		return ""
	}
	return time.Time(*v).UTC().Format(time.RFC3339)
}
func (v *timeValue) Type() string { return "time" }
func (v *timeValue) Set(s string) error {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			*v = timeValue(t.UTC())
			return nil
		}
	}
	return fmt.Errorf("time %q: want RFC 3339 (2026-11-24T12:00:00Z) or a date (2026-11-24)", s)
}

// parseDuration is [policy.ParseDuration]: Go durations with a leading
// number of days, as policies write them.
func parseDuration(s string) (time.Duration, error) { return policy.ParseDuration(s) }

// targetSize is --target-file-size with its --allow-small-target-file-size:
// a size below the policies' floor (4MiB, [policy.MinTargetFileSizeBytes])
// is refused unless the second flag accepts it, as a policy's
// target_file_size is without allow_small_target_file_size.
type targetSize struct {
	Size       string
	AllowSmall bool
}

// add binds the two flags to fs, --target-file-size with usage.
func (t *targetSize) add(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&t.Size, "target-file-size", "", usage)
	fs.BoolVar(&t.AllowSmall, "allow-small-target-file-size", false, fmt.Sprintf("accept a --target-file-size below %s (down to %s), for tables meant to have files that small",
		policy.FormatSize(policy.MinTargetFileSizeBytes), policy.FormatSize(policy.MinForcedTargetFileSizeBytes)))
}

// bytes is --target-file-size in bytes, 0 when it is not given.
func (t targetSize) bytes() (int64, error) {
	if t.Size == "" {
		return 0, nil
	}
	n, err := config.ParseSize(t.Size)
	if err == nil {
		err = policy.CheckTargetFileSize(n, t.AllowSmall, "--allow-small-target-file-size")
	}
	if err != nil {
		return 0, flagErrorf("--target-file-size: %v", err)
	}
	return n, nil
}

// parseSizeFlag parses size flag name's value v (zero when empty).
func parseSizeFlag(name, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := config.ParseSize(v)
	if err != nil {
		return 0, flagErrorf("%s: %v", name, err)
	}
	return n, nil
}
