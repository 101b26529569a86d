package main

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
)

type collectOptions struct {
	f      *factory
	Paths  []string
	Source string
	Strict bool
	Force  bool
	// MaxSQLBytes caps the SQL text stored per event.
	MaxSQLBytes int
	Listen      string
	Output      outputFormat
	// ready, when set, receives the listener's address (tests).
	ready func(addr string)
}

func newCollectCmd(f *factory, runF func(context.Context, *collectOptions) error) *cobra.Command {
	opts := &collectOptions{f: f}
	cmd := &cobra.Command{
		Use:   "collect [--source S] PATH... | collect | collect trino|iceberg --listen ADDR",
		Short: "Read query logs into floe's state store",
		Long: `Read query logs — files, directories or globs; plain, gzip or zstd — detect each
file's format (or take --source), resolve the tables they name against the
configured Iceberg catalogs, extract predicates and store the events.

Formats: ` + strings.Join(control.SourceNames(), ", ") + `.

Collection is incremental and idempotent: a file unchanged since it was last
collected is skipped (--force reads it again), and each event is stored once.
Malformed records are counted and reported with file:line (a few per file,
then how many more); the rest of the file is still collected unless --strict.
Logs still being written (.inprogress, a rolling log whose appstatus is in
progress) are read up to their last complete record, even inside an
unfinished zstd, lz4, snappy or gzip stream; the rest is read next time. A
rolling event-log directory without events yet is skipped with a note.

Without a PATH, floe collects every telemetry source of floe.yaml
(telemetry.sources: files, Trino's system.runtime.queries, Athena) once,
from where the last collection — this command's or floe serve's — stopped
(docs/telemetry.md).

With --listen, floe serves an HTTP endpoint instead: 'trino' accepts the
POSTs of Trino's HTTP event listener (http-event-listener.connect-ingest-uri),
'iceberg' accepts Iceberg REST scan reports (…/namespaces/NS/tables/T/metrics).
As with floe serve, an address beyond loopback needs server.token
(FLOE_SERVER_TOKEN), and then every POST must carry Authorization: Bearer
<token> (Trino: http-event-listener.connect-http-headers); with a token set,
loopback requests need it too.`,
		Example: `  floe collect /var/log/trino/queries.ndjson spark-events/ 'athena/*.json.gz'
  floe collect --source snowflake query_history.csv access_history.csv
  floe collect
  floe collect trino --listen 127.0.0.1:8089
  FLOE_SERVER_TOKEN=$(openssl rand -hex 32) floe collect trino --listen :8089`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if opts.Listen != "" {
				if len(args) != 1 || (args[0] != "trino" && args[0] != "iceberg") {
					return flagErrorf("--listen needs one argument: trino or iceberg")
				}
			} else if len(args) == 0 && opts.Source != "" {
				return flagErrorf("--source needs a PATH; a source of floe.yaml sets its format with format:")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.Listen != "" {
				return runListen(cmd.Context(), opts)
			}
			if len(args) == 0 {
				return runCollectSources(cmd.Context(), opts)
			}
			return runCollect(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Source, "source", "", "force one format instead of detecting: "+strings.Join(control.SourceNames(), "|"))
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on the first malformed record")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "read files even if unchanged since they were last collected")
	cmd.Flags().IntVar(&opts.MaxSQLBytes, "max-sql-bytes", ingest.DefaultMaxSQLBytes, "store at most this much of each SQL text, marked truncated (predicates come from all of it); -1: no limit")
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "serve an HTTP ingest endpoint on ADDR (host:port) instead of reading files")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runCollect(ctx context.Context, opts *collectOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	rep, err := control.Collect(ctx, st, cfg, opts.f.Catalog, control.CollectOptions{Paths: opts.Paths, Source: opts.Source, Strict: opts.Strict, Force: opts.Force, MaxSQLBytes: opts.MaxSQLBytes})
	if err != nil {
		return err
	}
	if err := renderCollect(opts.f.IO, opts.Output, rep); err != nil {
		return err
	}
	return unrecognizedError(rep)
}

// unrecognizedError is exit 1 when an input was in no log format floe
// reads: a script must not take a file it meant to collect, and did not,
// for success. What the other inputs held is stored.
func unrecognizedError(rep ingest.Report) error {
	var paths []string
	for _, f := range rep.Files {
		if f.Unrecognized {
			paths = append(paths, f.Path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return exitCodeError{code: exitError, msg: fmt.Sprintf("floe: collect: %d input(s) in no log format floe reads: %s; name the format with --source (floe collect --help lists them)",
		len(paths), strings.Join(paths, ", "))}
}

// runCollectSources collects every telemetry source of floe.yaml once.
func runCollectSources(ctx context.Context, opts *collectOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	if len(cfg.Telemetry.Sources) == 0 {
		return flagErrorf("collect needs a PATH, or telemetry sources in %s to collect, such as\n\n"+
			"telemetry:\n  sources:\n    - {name: spark-history, kind: files, paths: [/var/log/spark-events]}\n"+
			"    - {name: trino, kind: trino, dsn: 'http://floe@trino.example.com:8080'}\n\nsee docs/telemetry.md", cfg.Source)
	}
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(cfg.Telemetry.Sources))
	for _, s := range cfg.Telemetry.Sources {
		names = append(names, s.Name)
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "collecting the telemetry sources of %s: %s\n", cfg.Source, strings.Join(names, ", "))
	reps, err := control.CollectSources(ctx, st, cfg, opts.f.Catalog, opts.MaxSQLBytes)
	if err != nil {
		return err
	}
	if err := renderSources(opts.f.IO, opts.Output, reps); err != nil {
		return err
	}
	var failed []string
	for _, r := range reps {
		if r.Failed() {
			failed = append(failed, r.Source)
		}
	}
	if len(failed) > 0 {
		return exitCodeError{code: exitError, msg: fmt.Sprintf("floe: %d of %d telemetry sources not collected: %s", len(failed), len(reps), strings.Join(failed, ", "))}
	}
	return nil
}

// renderSources prints one line per collected source.
func renderSources(io *IOStreams, format outputFormat, reps []control.SourceReport) error {
	if format == outputJSON {
		return writeJSON(io.Out, reps)
	}
	t := newTable(io.Out, "SOURCE", "KIND", "EVENTS", "NEW", "DUPLICATES", "BAD", "NOTE")
	for _, r := range reps {
		note := r.Error
		if note == "" && r.Skipped > 0 {
			note = fmt.Sprintf("files unchanged since last collected: %d", r.Skipped)
		}
		t.row(r.Source, r.Kind, strconv.Itoa(r.Events), strconv.Itoa(r.Inserted), strconv.Itoa(r.Duplicates), strconv.Itoa(r.Bad), note)
	}
	return t.flush()
}

// renderCollect prints collect's report (collect and demo).
func renderCollect(io *IOStreams, format outputFormat, rep ingest.Report) error {
	if format == outputJSON {
		return writeJSON(io.Out, rep)
	}
	t := newTable(io.Out, "FILE", "SOURCE", "EVENTS", "NEW", "DUPLICATES", "BAD", "NOTE")
	for _, f := range rep.Files {
		note := f.Error
		switch {
		case f.Skipped:
			note = "unchanged since last collected"
		case f.Note != "":
			note = f.Note
		case note == "" && f.TruncatedTail:
			note = "still being written: read up to its last complete record"
		}
		t.row(f.Path, f.Source, strconv.Itoa(f.Events), strconv.Itoa(f.Inserted), strconv.Itoa(f.Duplicates), strconv.Itoa(f.Bad), note)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "\n%d events read, %d new, %d already stored, %d malformed records, %d files skipped\n",
		rep.Events, rep.Inserted, rep.Duplicates, rep.Bad, rep.Skipped)
	shown := map[string]int{}
	for _, b := range rep.BadRecords {
		fmt.Fprintln(io.ErrOut, "malformed:", b.Error())
		shown[b.File]++
	}
	for _, f := range rep.Files {
		switch more := f.Bad - shown[f.Path]; {
		case more <= 0:
		case shown[f.Path] > 0:
			fmt.Fprintf(io.ErrOut, "malformed: %s: … and %d more\n", f.Path, more)
		default:
			fmt.Fprintf(io.ErrOut, "malformed: %s: %d records\n", f.Path, more)
		}
	}
	if len(rep.Unresolved) > 0 {
		names := make([]string, 0, len(rep.Unresolved))
		for n := range rep.Unresolved {
			names = append(names, n)
		}
		// Most events first; a tie by name, so that the line is the same
		// from one run to the next.
		sort.Slice(names, func(i, j int) bool {
			if a, b := rep.Unresolved[names[i]], rep.Unresolved[names[j]]; a != b {
				return a > b
			}
			return names[i] < names[j]
		})
		if len(names) > 10 {
			names = names[:10]
		}
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s (%d)", n, rep.Unresolved[n])
		}
		fmt.Fprintln(io.ErrOut, "tables not in any configured catalog (views, temp tables, other catalogs):", strings.Join(parts, ", "))
	}
	return nil
}

// runListen serves an ingest endpoint until ctx is cancelled; each event is
// normalized and stored as it arrives.
func runListen(ctx context.Context, opts *collectOptions) error {
	cfg, err := opts.f.Config()
	if err != nil {
		return err
	}
	st, err := opts.f.Store(ctx)
	if err != nil {
		return err
	}
	token := cfg.Server.Token.Reveal()
	if token == "" && !(config.ServerConfig{Listen: opts.Listen}).Loopback() {
		return flagErrorf("--listen %s: beyond loopback the endpoint needs server.token (FLOE_SERVER_TOKEN), which senders carry as Authorization: Bearer <token>, as floe serve does; or listen on 127.0.0.1", opts.Listen)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return flagErrorf("--listen %s: %v", opts.Listen, err)
	}
	fmt.Fprintf(opts.f.IO.ErrOut, "collecting %s events on http://%s (Ctrl-C to stop)\n", opts.Paths[0], ln.Addr())
	if opts.ready != nil {
		opts.ready(ln.Addr().String())
	}
	norm := ingest.NewNormalizer(cfg, ingest.NewCatalogResolver(cfg, opts.f.Catalog))
	norm.MaxSQLBytes = opts.MaxSQLBytes
	return ingest.Serve(ctx, ln, st, ingest.ServeOptions{
		Endpoint:   opts.Paths[0],
		Normalizer: norm,
		Logger:     opts.f.Logger(),
		Token:      token,
	})
}
