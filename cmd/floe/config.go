package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
)

func newConfigCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration floe runs with",
		Long: `floe reads floe.yaml (--config, $FLOE_CONFIG, ./floe.yaml) over its embedded
default and applies FLOE_ environment variables on top; 'floe config view'
prints the result. 'floe init' writes a floe.yaml for your own lake.`,
		Example: `  floe config view --sources
  floe config view -o json | jq '.[] | select(.source != "default")'`,
		// A subcommand it does not have is a usage error (exit 2), with
		// cobra's suggestions; floe config alone prints help.
		Args: wrapArgs(unknownVerb),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newConfigViewCmd(f, nil))
	return cmd
}

type configViewOptions struct {
	f       *factory
	Sources bool
	Output  string
}

func newConfigViewCmd(f *factory, runF func(context.Context, *configViewOptions) error) *cobra.Command {
	opts := &configViewOptions{f: f}
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the effective configuration, with where each value came from",
		Long: `Print the configuration floe runs with — the embedded default, the file laid
over it and the FLOE_ variables applied, {data_dir} and relative paths
resolved, the defaults floe fills in shown — as YAML that floe reads back the
same. Secrets are redacted: a catalog's credential or token, passwords and
secret parameters in URIs, webhook URLs and headers print as ****, and a
secret only the environment sets is a comment.

--sources adds a comment to each value saying where it came from: default
(the embedded default, or floe's built-in default), file:line, or the FLOE_
variable that set it. -o json prints the same as rows, [{"key", "value",
"source"}], keys as floe's messages name them (catalogs.prod.s3.region,
telemetry.sources[0].name). Nothing is opened or created. An invalid
configuration is reported, every problem at once, and exits 2.`,
		Example: `  floe config view
  floe config view --sources
  floe --config prod.yaml config view -o json`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch opts.Output = strings.ToLower(opts.Output); opts.Output {
			case "yaml", "json":
			default:
				return flagErrorf("--output %q: want yaml or json", opts.Output)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runConfigView(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Sources, "sources", false, "say where each value came from")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "yaml", "output format: yaml|json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runConfigView(_ context.Context, opts *configViewOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	settings := cfg.Settings()
	if opts.Output == "json" {
		if settings == nil {
			settings = []config.Setting{}
		}
		return writeJSON(opts.f.IO.Out, settings)
	}
	from := "floe's embedded default"
	if cfg.Source != config.EmbeddedSource {
		from = cfg.ShownSource() + " over " + from
	}
	fmt.Fprintf(opts.f.IO.Out, "# the configuration floe runs with: %s, FLOE_ variables applied; secrets redacted\n", from)
	return config.WriteYAML(opts.f.IO.Out, settings, opts.Sources)
}
