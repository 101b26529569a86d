package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/lake"
)

type tablesOptions struct {
	f       *factory
	Catalog string
	Output  outputFormat
}

type tableRow struct {
	Table         string    `json:"table"`
	FormatVersion int       `json:"format_version"`
	Location      string    `json:"location"`
	SnapshotID    int64     `json:"snapshot_id,string,omitempty"`
	Snapshots     int       `json:"snapshots"`
	DataFiles     int64     `json:"data_files"`
	Records       int64     `json:"records"`
	SizeBytes     int64     `json:"size_bytes"`
	LastUpdated   time.Time `json:"last_updated"`
	Partitioning  string    `json:"partitioning"`
	SortOrder     string    `json:"sort_order"`
}

func newTablesCmd(f *factory, runF func(context.Context, *tablesOptions) error) *cobra.Command {
	opts := &tablesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "tables",
		Short: "List the tables of the configured catalogs",
		Long: `List every table of every configured catalog (or of --catalog) with figures
read from the table metadata only: snapshots, data files, records and size
from the current snapshot's summary.

Every catalog call is bounded by the catalog's floe.timeout property
(default 30s): a catalog that cannot be reached or does not answer is
reported on stderr and the exit code is 1, and the tables of the other
catalogs are still listed.`,
		Example: `  floe tables
  floe tables --catalog local --output json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runTables(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Catalog, "catalog", "", "list only this catalog")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runTables(ctx context.Context, opts *tablesOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	names := cfg.CatalogNames()
	if opts.Catalog != "" {
		names = []string{opts.Catalog}
	}
	rows := []tableRow{}
	// One catalog that cannot be listed (down, or never answering within
	// its floe.timeout) is reported; the others are still listed, and the
	// exit code says that something failed.
	var failed []error
	for _, name := range names {
		cat, err := opts.f.Catalog(ctx, name)
		if err != nil {
			if opts.Catalog != "" || errors.Is(err, lake.ErrNoSuchTable) {
				return err
			}
			failed = append(failed, err)
			continue
		}
		ids, err := lake.ListTables(ctx, name, cat)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		for _, id := range ids {
			tbl, err := lake.LoadTable(ctx, cat, id)
			if err != nil {
				failed = append(failed, err)
				continue
			}
			md := tbl.Metadata()
			r := tableRow{
				Table: id.String(), FormatVersion: md.Version(), Location: md.Location(),
				Snapshots: len(md.Snapshots()), LastUpdated: time.UnixMilli(md.LastUpdatedMillis()).UTC(),
				Partitioning: lake.SpecText(md.PartitionSpec(), md.CurrentSchema()), SortOrder: lake.SortOrderText(md.SortOrder(), md.CurrentSchema()),
			}
			if s := md.CurrentSnapshot(); s != nil {
				r.SnapshotID = s.SnapshotID
				if s.Summary != nil {
					r.DataFiles, _ = strconv.ParseInt(s.Summary.Properties["total-data-files"], 10, 64)
					r.Records, _ = strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
					r.SizeBytes, _ = strconv.ParseInt(s.Summary.Properties["total-files-size"], 10, 64)
				}
			}
			rows = append(rows, r)
		}
	}
	if err := renderTables(opts, rows, len(failed) == 0); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d catalog calls failed, the tables above are the rest: %w", len(failed), errors.Join(failed...))
	}
	return nil
}

func renderTables(opts *tablesOptions, rows []tableRow, complete bool) error {
	if opts.Output == outputJSON {
		return writeJSON(opts.f.IO.Out, rows)
	}
	if len(rows) == 0 {
		if complete {
			fmt.Fprintln(opts.f.IO.ErrOut, "no tables; run 'floe demo' to create the demo warehouse")
		}
		return nil
	}
	t := newTable(opts.f.IO.Out, "TABLE", "SNAPSHOTS", "FILES", "RECORDS", "SIZE", "PARTITIONING", "LAST UPDATED")
	for _, r := range rows {
		t.row(r.Table, strconv.Itoa(r.Snapshots), strconv.FormatInt(r.DataFiles, 10), strconv.FormatInt(r.Records, 10),
			config.FormatSize(r.SizeBytes), r.Partitioning, r.LastUpdated.Format(time.RFC3339))
	}
	return t.flush()
}
