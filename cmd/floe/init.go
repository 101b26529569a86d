package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/config"
)

type initOptions struct {
	f       *factory
	Lake    config.InitOptions
	Force   bool
	NoCheck bool
	Timeout time.Duration
}

func newInitCmd(f *factory, runF func(context.Context, *initOptions) error) *cobra.Command {
	opts := &initOptions{f: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a floe.yaml for your own lake, then check it as floe doctor does",
		Long: `Write a commented floe.yaml for the catalog you have — rest (with OAuth2
client credentials or a token), glue, hive or sql (SQLite or PostgreSQL) — on
S3, GCS, Azure or local storage, with optional Trino and Spark engines and
telemetry sources (--source KIND:VALUE: files:PATH[,PATH], trino:DSN,
athena:REGION, snowflake:USER@ACCOUNT). It writes where floe reads: --config,
$FLOE_CONFIG, else ./floe.yaml, and refuses to overwrite a file without
--force.

The file names no secret: next to each it names the FLOE_ variable floe
reads it from (FLOE_CATALOG__LAKE__CREDENTIAL, …), and a URI with a password
in it is refused. The file extends the embedded default and replaces its demo
catalog (floe config view --sources shows the result).

On a terminal it asks for what the flags leave out; elsewhere a missing flag
is an error (exit 2). Then it runs floe doctor's checks on the new file and
prints them: floe exits 1 if one failed (the file stays written: fix what the
check says, or the environment, and run floe doctor), 0 when all pass.`,
		Example: `  floe init --catalog rest --uri https://polaris.example.com/api/catalog --warehouse analytics \
    --auth oauth2 --scope PRINCIPAL_ROLE:ALL --storage s3 --region eu-west-1
  floe init --catalog glue --region eu-west-1 --storage s3 --warehouse s3://analytics/warehouse
  floe init --catalog sql --uri postgres://floe@db:5432/iceberg --storage s3 --region us-east-1 \
    --trino 'http://floe@trino:8080?catalog=iceberg' --source files:/var/log/spark-events
  floe --config /etc/floe/floe.yaml init --catalog hive --uri thrift://metastore:9083 --no-check`,
		Args: wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTimeout(opts.Timeout); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInit(cmd.Context(), opts)
		},
	}
	l, fl := &opts.Lake, cmd.Flags()
	fl.StringVar(&l.Catalog, "catalog", "", "catalog type: rest, glue, hive or sql")
	fl.StringVar(&l.Name, "name", "lake", "the floe catalog's name (table names are NAME.namespace.table)")
	fl.StringVar(&l.URI, "uri", "", "the catalog: a REST base URI, thrift://metastore:9083, a SQLite file or postgres://user@host/db")
	fl.StringVar(&l.Warehouse, "warehouse", "", "a REST catalog's warehouse, or where tables live (s3://bucket/prefix, a directory)")
	fl.StringVar(&l.Auth, "auth", "", "a REST catalog's sign-in: oauth2, token or none")
	fl.StringVar(&l.Scope, "scope", "", "the OAuth2 scope (--auth oauth2)")
	fl.StringVar(&l.OAuth2ServerURI, "oauth2-server-uri", "", "the OAuth2 token endpoint, when not the catalog's")
	fl.StringVar(&l.Region, "region", "", "the AWS region (glue: the catalog's, and its S3 files'; else S3's)")
	fl.StringVar(&l.Storage, "storage", "", "where the files are: s3, gcs, azure or local")
	fl.StringVar(&l.Endpoint, "endpoint", "", "the object store's endpoint (an S3-compatible store, an emulator)")
	fl.BoolVar(&l.PathStyle, "path-style", false, "path-style S3 requests (most S3-compatible stores)")
	fl.StringVar(&l.Account, "account", "", "the Azure storage account (--storage azure)")
	fl.StringVar(&l.Trino, "trino", "", "a Trino engine, http://user@host:8080?catalog=iceberg")
	fl.StringVar(&l.Spark, "spark", "", "a Spark Connect engine, sc://host:15002")
	fl.StringArrayVar(&l.Sources, "source", nil, "a telemetry source KIND:VALUE (repeatable)")
	fl.StringVar(&l.DataDir, "data-dir", "", "where floe keeps its state (default ./floe-data where floe runs)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite an existing file")
	fl.BoolVar(&opts.NoCheck, "no-check", false, "write the file without checking it")
	addTimeoutFlag(cmd, &opts.Timeout)
	for name, values := range map[string][]string{"catalog": config.InitCatalogTypes, "storage": config.InitStorages, "auth": config.InitAuths} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	return cmd
}

func runInit(ctx context.Context, opts *initOptions) error {
	f := opts.f
	path := f.ConfigPath
	if path == "" {
		path = os.Getenv("FLOE_CONFIG")
	}
	if path == "" {
		path = "floe.yaml"
	}
	if _, err := os.Stat(path); err == nil && !opts.Force {
		return flagErrorf("%s exists: pass --force to overwrite it (floe config view shows what floe reads from it)", path)
	}
	if missing := opts.Lake.Missing(); len(missing) > 0 {
		if !f.IO.InTTY {
			return flagErrorf("init needs %s; usage: floe init --catalog rest|glue|hive|sql [flags] (see --help)", flagList(missing))
		}
		if err := promptMissing(f.IO, &opts.Lake); err != nil {
			return err
		}
	}
	if err := opts.Lake.Validate(); err != nil {
		return flagError{fmt.Errorf("init: %s", strings.ReplaceAll("--"+err.Error(), "\n", "\n--"))}
	}
	data, err := config.InitYAML(opts.Lake)
	if err != nil {
		return flagError{err}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	what := opts.Lake.Catalog + " catalog " + opts.Lake.Name
	if opts.Lake.Storage != "" {
		what += " on " + opts.Lake.Storage
	}
	fmt.Fprintf(f.IO.Out, "wrote %s for the %s; it names the environment variables its secrets are read from\n", path, what)
	if opts.NoCheck {
		return nil
	}
	f.ConfigPath = path
	cfg, err := f.Config()
	if err != nil {
		return exitCodeError{code: exitError, msg: fmt.Sprintf("floe: wrote %s, but it does not load yet: %s", path, message(err))}
	}
	fmt.Fprintf(f.IO.Out, "checking it as floe doctor does:\n")
	failed, err := doctorChecks(ctx, f, cfg, control.DoctorOptions{Timeout: opts.Timeout}, outputTable)
	if err != nil || failed == "" {
		return err
	}
	return exitCodeError{code: exitError, msg: fmt.Sprintf("floe: wrote %s; %s: fix what the lines above say (or the environment), then run floe doctor", path, failed)}
}

// flagList names the flags of options: "--uri and --region".
func flagList(opts []string) string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = "--" + o
	}
	return strings.Join(out, " and ")
}

// initQuestions are the prompts for what floe init needs.
var initQuestions = map[string]string{
	"catalog": "catalog type (rest, glue, hive or sql)",
	"uri":     "catalog URI (REST base URI, thrift://metastore:9083, SQLite file or postgres://user@host/db)",
	"region":  "AWS region (such as eu-west-1)",
	"account": "Azure storage account",
}

// promptMissing asks on the terminal for each option floe init needs and
// the flags left out, one at a time (the catalog type decides the rest).
func promptMissing(io *IOStreams, o *config.InitOptions) error {
	in := bufio.NewScanner(io.In)
	for missing := o.Missing(); len(missing) > 0; missing = o.Missing() {
		m := missing[0]
		fmt.Fprintf(io.ErrOut, "%s: ", initQuestions[m])
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return fmt.Errorf("read --%s: %w", m, err)
			}
			return flagErrorf("init needs --%s", m)
		}
		v := strings.TrimSpace(in.Text())
		if v == "" {
			return flagError{errors.New("init needs --" + m + ": nothing was written")}
		}
		switch m {
		case "catalog":
			o.Catalog = v
		case "uri":
			o.URI = v
		case "region":
			o.Region = v
		case "account":
			o.Account = v
		}
	}
	return nil
}
