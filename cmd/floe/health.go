package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
)

type healthOptions struct {
	f       *factory
	Tables  []string
	Columns []string
	Target  targetSize
	FailOn  string
	Output  outputFormat
}

func newHealthCmd(f *factory, runF func(context.Context, *healthOptions) error) *cobra.Command {
	opts := &healthOptions{f: f}
	cmd := &cobra.Command{
		Use:   "health [TABLE...]",
		Short: "Measure the structural health of tables",
		Long: `Measure each table (all tables when none is named) from its metadata: data
files, small files (below 75% of the target file size), file sizes, snapshots
and the oldest one's age, manifests and entries per manifest, delete files,
partitions and their file skew, the last compaction, and clustering depth on
the sort-order columns and on --column.

Each table is classified healthy, warning or critical, with the reasons that
crossed a threshold. The thresholds, the target file size and the freshness
SLA are the table's policy's ('floe policy show TABLE'): a table whose last
successful compaction is older than its freshness_sla is warning. With
--fail-on, floe exits 3 when any table is at or above that level, for use in
scripts and CI.`,
		Example: `  floe health
  floe health web.events --column tenant_id --output json
  floe health --fail-on critical`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tables = args
			switch opts.FailOn {
			case "", string(lake.Warning), string(lake.Critical):
			default:
				return flagErrorf("--fail-on %q: want warning or critical", opts.FailOn)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runHealth(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Columns, "column", nil, "also measure clustering on these columns (repeatable)")
	opts.Target.add(cmd.Flags(), "target file size for tables without write.target-file-size-bytes, at least 4MiB (default: the policy's, else the config's 512MiB)")
	cmd.Flags().Lookup("allow-small-target-file-size").Usage = "judge small files by a target below 4MiB as it is (a table's own, or --target-file-size down to 1KiB), instead of by the 4MiB floor"
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "", "exit 3 if any table is at least this unhealthy: warning|critical")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runHealth(ctx context.Context, opts *healthOptions) error {
	target, err := opts.Target.bytes()
	if err != nil {
		return err
	}
	results, err := tableHealth(ctx, opts.f, opts.Tables, control.HealthRequest{TargetFileSizeBytes: target, AllowSmallTarget: opts.Target.AllowSmall,
		Columns: opts.Columns, Named: len(opts.Tables) > 0})
	if err != nil {
		return err
	}
	if err := renderHealth(opts.f.IO, opts.Output, results); err != nil {
		return err
	}
	return failOn(opts.FailOn, results)
}

// tableHealth loads the named tables (all tables when none) and measures
// each under its policy ([control.Service.Health]; health and demo).
func tableHealth(ctx context.Context, f *factory, names []string, hr control.HealthRequest) ([]lake.Health, error) {
	ids, err := tableIdents(ctx, f, names)
	if err != nil {
		return nil, err
	}
	svc, err := f.ReadService(ctx)
	if err != nil {
		return nil, err
	}
	results := make([]lake.Health, 0, len(ids))
	for _, id := range ids {
		h, err := svc.Health(ctx, id, hr)
		if err != nil {
			return nil, usageError(err)
		}
		results = append(results, h)
	}
	return results, nil
}

func failOn(level string, results []lake.Health) error {
	if level == "" {
		return nil
	}
	var bad []string
	for _, h := range results {
		if h.Status == lake.Critical || (level == string(lake.Warning) && h.Status == lake.Warning) {
			bad = append(bad, h.Table+" ("+string(h.Status)+")")
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return exitCodeError{code: exitUnhealth, msg: "floe: unhealthy tables: " + strings.Join(bad, ", ")}
}

// renderHealth prints health's results (health and demo).
func renderHealth(io *IOStreams, format outputFormat, results []lake.Health) error {
	if format == outputJSON {
		return writeJSON(io.Out, results)
	}
	if len(results) == 0 {
		fmt.Fprintln(io.ErrOut, "no tables; run 'floe demo' to create the demo warehouse")
		return nil
	}
	t := newTable(io.Out, "TABLE", "STATUS", "FILES", "SMALL", "AVG SIZE", "SNAPSHOTS", "OLDEST", "MANIFESTS", "DELETES", "PARTITIONS", "LAST COMPACTION", "BACKLOG")
	for _, h := range results {
		m := h.Metrics
		last := "never"
		if m.LastCompactionAgeSec >= 0 {
			last = ageStr(m.LastCompactionAgeSec) + " ago"
		}
		// How long writes have waited for a compaction, and the SLA.
		backlog := "none"
		if m.BacklogAgeSec > 0 {
			backlog = ageStr(m.BacklogAgeSec)
		}
		if h.FreshnessSLASec > 0 {
			backlog += " / " + ageStr(h.FreshnessSLASec)
		}
		t.row(h.Table, string(h.Status), strconv.Itoa(m.DataFiles), fmt.Sprintf("%.0f%%", 100*m.SmallFileRatio),
			config.FormatSize(m.AvgFileSizeBytes), strconv.Itoa(m.Snapshots), ageStr(m.OldestSnapshotAgeSec),
			strconv.Itoa(m.Manifests), strconv.Itoa(m.DeleteFiles), strconv.Itoa(m.Partitions), last, backlog)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, h := range results {
		if len(h.Reasons) == 0 && len(h.Metrics.Clustering) == 0 {
			continue
		}
		fmt.Fprintf(io.Out, "\n%s\n", h.Table)
		for _, r := range h.Reasons {
			fmt.Fprintf(io.Out, "  %s\n", r)
		}
		for _, c := range h.Metrics.Clustering {
			fmt.Fprintf(io.Out, "  clustering on %s: average depth %.2f, %.0f%% of %d files overlap another\n",
				c.Column, c.AverageDepth, 100*c.OverlapFraction, c.Files)
		}
	}
	return nil
}

func ageStr(sec int64) string {
	d := time.Duration(sec) * time.Second
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%ds", sec)
}
