package polaris_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/floe-project/floe/lake/polaris"
)

// FuzzParseContent feeds policy content — outside input, from whatever
// wrote the policy into Polaris — to ParseContent and Settings. Neither may
// panic; content they accept maps only onto floe's keys, with the type's
// enabled.* key first; content they refuse is refused with ErrBadContent.
// Seeds are in testdata/fuzz/FuzzParseContent.
func FuzzParseContent(f *testing.F) {
	f.Add(uint8(0), `{"version":"2025-02-03","enable":true,"config":{"min_snapshot_to_keep":1,"max_snapshot_age_days":2}}`)
	known := map[string]bool{
		polaris.KeySnapshotsOlderThan: true, polaris.KeySnapshotsRetain: true, polaris.KeyOrphansOlderThan: true,
		polaris.KeyTargetFileSize: true, polaris.KeyEnabledExpire: true, polaris.KeyEnabledOrphans: true,
		polaris.KeyEnabledCompact: true, polaris.KeyEnabledManifests: true,
	}
	f.Fuzz(func(t *testing.T, typ uint8, content string) {
		types := polaris.Types()
		pt := types[int(typ)%len(types)]
		_, perr := polaris.ParseContent(pt, content)
		if perr != nil && !errors.Is(perr, polaris.ErrBadContent) {
			t.Fatalf("ParseContent error does not wrap ErrBadContent: %v", perr)
		}
		p := polaris.Policy{Type: pt, Name: "fuzz", Content: content, Level: polaris.LevelTable, AttachedTo: []string{"ns", "t"}}
		settings, _, err := polaris.Settings([]polaris.Policy{p})
		if perr != nil {
			if err == nil {
				t.Fatalf("Settings accepted content ParseContent refused: %v", perr)
			}
		}
		if err != nil {
			if !errors.Is(err, polaris.ErrBadContent) || !strings.Contains(err.Error(), "polaris policy fuzz ("+pt+")") {
				t.Fatalf("error does not name the policy or wrap ErrBadContent: %v", err)
			}
			return
		}
		if len(settings) == 0 || !strings.HasPrefix(settings[0].Key, "enabled.") {
			t.Fatalf("accepted content without its enabled key first: %+v", settings)
		}
		for _, s := range settings {
			if !known[s.Key] || s.Value == "" {
				t.Fatalf("setting %q=%q is not a floe key with a value", s.Key, s.Value)
			}
		}
	})
}
