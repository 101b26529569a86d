package rewriter

import (
	"path"
	"regexp"
	"strings"
)

// runTagPrefix comes before the run id in the name of a data file a floe run
// writes (see [WriterOptions.RunID]).
const runTagPrefix = "-run-"

// layoutTagSuffix matches the [LayoutTag] at the end of a file's base name,
// ".parquet" removed.
var layoutTagSuffix = regexp.MustCompile(`-floe-[0-9a-f]{8}$`)

// runTaggable reports whether id can go into file names as it is.
func runTaggable(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if r != '-' && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') && !('0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// RunOfFile is the id of the floe run that wrote the data file at p, from
// the run tag floe puts in the names of the files it writes
// ("00000-1-<uuid>-00001-run-<run id>[-<layout tag>].parquet"), or "" for a
// file without one (written by another engine, or by a floe version that did
// not tag its files). [PlanOrphans] uses it to tell the files a floe run left
// behind from anything else.
func RunOfFile(p string) string {
	name, ok := strings.CutSuffix(path.Base(p), ".parquet")
	if !ok {
		return ""
	}
	name = layoutTagSuffix.ReplaceAllString(name, "")
	_, id, ok := strings.Cut(name, runTagPrefix)
	if !ok || !runTaggable(id) {
		return ""
	}
	return id
}
