package main

import (
	"fmt"
	"strings"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
)

// renderDryRun prints optimize --dry-run: one line per step saying what it
// would do.
func renderDryRun(io *IOStreams, format outputFormat, dry control.DryRun) error {
	if format == outputJSON {
		return writeJSON(io.Out, dry)
	}
	w := io.Out
	head := fmt.Sprintf("dry run on %s", dry.Table)
	if dry.PlanID != "" {
		head += " (plan " + dry.PlanID + ")"
	}
	fmt.Fprintln(w, head+": nothing changed, no run recorded")
	t := newTable(w, "  STEP", "WOULD")
	for _, s := range dry.Steps {
		t.row("  "+s.Step, dryRunStepText(s))
	}
	return t.flush()
}

func dryRunStepText(s control.DryRunStep) string {
	switch {
	case s.Status == control.StatusSkipped:
		return "skipped"
	case s.Expire != nil:
		p := s.Expire
		if len(p.Snapshots) == 0 {
			return fmt.Sprintf("expire nothing (keeping %d snapshots)", p.Retained)
		}
		msg := fmt.Sprintf("expire %d snapshots, keeping %d; delete %d files (%s)", len(p.Snapshots), p.Retained, len(p.Files), config.FormatSize(p.Bytes))
		if len(p.Siblings) > 0 {
			msg += fmt.Sprintf("; keep %d files that %s, sharing the location, reference", p.Shared, strings.Join(p.Siblings, ", "))
		}
		return msg
	case s.Orphans != nil:
		p := s.Orphans
		return fmt.Sprintf("delete %d orphan files (%s) older than %s; %d younger kept", len(p.Files), config.FormatSize(p.Bytes),
			p.Cutoff.Local().Format("2006-01-02 15:04"), p.Young)
	case s.Compact != nil:
		p := s.Compact
		if len(p.Groups) == 0 {
			return fmt.Sprintf("compact nothing: no partition needs %s", p.Layout)
		}
		msg := fmt.Sprintf("rewrite %d partitions, %d files (%s) into %s, target %s", len(p.Groups), p.InputFiles,
			config.FormatSize(p.InputBytes), p.Layout, config.FormatSize(p.TargetFileSizeBytes))
		if len(p.Deferred) > 0 {
			msg += fmt.Sprintf("; %d partitions deferred by the budget", len(p.Deferred))
		}
		return msg
	case s.Deletes != nil:
		return deletesStepText(*s.Deletes)
	case s.Manifests != nil:
		p := s.Manifests
		if p.Rewrite == 0 {
			return fmt.Sprintf("rewrite no manifests: %d data manifests over %d partitions are clustered", p.DataManifests, p.Partitions)
		}
		return fmt.Sprintf("rewrite %d of %d data manifests, clustered by partition to %s", p.Rewrite, p.DataManifests, config.FormatSize(p.TargetSizeBytes))
	}
	return string(s.Status)
}
