package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/demo"
)

type demoOptions struct {
	f            *factory
	Reset        bool
	EventCommits int
	Orders       int
}

func newDemoCmd(f *factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build the demo warehouse and run floe's flow on it",
		Long: `Create realistic Iceberg tables in the configured default catalog (the
embedded ./floe-data warehouse unless configured otherwise):

  web.events      320 streaming micro-batch commits of small files, day(ts) partitions
  sales.orders    TPC-H orders, four batch loads
  sales.lineitem  TPC-H line items, four batch loads
  crm.accounts    a merge-on-read table with position deletes

then print the health of every table. --reset rebuilds existing demo tables.`,
		Example: `  floe demo
  floe demo --reset`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDemo(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Reset, "reset", false, "drop and rebuild the demo tables if they exist")
	cmd.Flags().IntVar(&opts.EventCommits, "event-commits", 320, "micro-batch commits to write to web.events")
	cmd.Flags().IntVar(&opts.Orders, "orders", 25000, "TPC-H orders to generate (about four line items each)")
	return cmd
}

func runDemo(ctx context.Context, opts *demoOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	if cfg.DefaultCatalog == "" {
		return flagErrorf("demo: no default catalog configured")
	}
	cat, err := opts.f.Catalog(ctx, cfg.DefaultCatalog)
	if err != nil {
		return err
	}
	bar := newProgress(opts.f.IO)
	start := time.Now()
	fmt.Fprintf(opts.f.IO.ErrOut, "building the demo warehouse in catalog %q (%s)\n", cfg.DefaultCatalog, cfg.Source)
	err = demo.Build(ctx, cat, demo.Options{
		Reset: opts.Reset, EventCommits: opts.EventCommits, Orders: opts.Orders,
		Progress: bar.Set,
	})
	bar.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "built %d tables in %s\n\n", len(demo.Tables), time.Since(start).Round(100*time.Millisecond))
	return runHealth(ctx, &healthOptions{f: opts.f, Output: outputTable})
}
