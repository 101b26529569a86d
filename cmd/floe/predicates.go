package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors/ingest"
	pexpr "github.com/floe-project/floe/expr"
)

type predicatesOptions struct {
	f       *factory
	Dialect string
	File    string
	Output  outputFormat
	// Schema is a file of CREATE TABLE statements naming the tables'
	// columns, for unqualified columns of several tables.
	Schema string
	// Catalog resolves tables (columns and path reads) against the
	// configured catalogs; Namespace is the one of unqualified tables.
	Catalog   bool
	Namespace string
}

func newPredicatesCmd(f *factory, runF func(context.Context, *predicatesOptions) error) *cobra.Command {
	opts := &predicatesOptions{f: f}
	cmd := &cobra.Command{
		Use:   "predicates [FILE|-]",
		Short: "Show the tables and predicates floe extracts from one SQL statement",
		Long: `Parse one SQL statement (from FILE, or standard input when FILE is - or
absent) in the given dialect and print the base tables it reads (aliases,
CTEs and derived tables followed) and its predicates (WHERE, JOIN … ON,
HAVING, subqueries and every UNION branch). Syntax floe does not know yields
warnings, never a failure.

An unqualified column of a FROM list with several tables is attributed to
the table that has it when the tables' columns are known: from a file of
CREATE TABLE statements (--schema, as benchmark kits ship theirs) or from
the configured catalogs (--catalog; unqualified tables in --namespace).

The table form prints, for each scan of a table, the filter a scan of that
table alone can use as a tree that keeps AND, OR and NOT (what file skipping
evaluates), then every predicate leaf in source order, without the AND, OR
and NOT around it.`,
		Example: `  echo "SELECT * FROM web.events e WHERE e.ts >= DATE '2026-11-01' AND tenant_id IN (1,2)" | floe predicates --dialect trino
  floe predicates --dialect spark query.sql --output json
  floe predicates --dialect spark --schema tpcds.sql q17.sql`,
		Args: wrapArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPredicates(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dialect, "dialect", "trino", "SQL dialect: trino|athena|spark|snowflake|duckdb")
	cmd.Flags().StringVar(&opts.Schema, "schema", "", "file of CREATE TABLE statements giving the tables' columns")
	cmd.Flags().BoolVar(&opts.Catalog, "catalog", false, "look the tables' columns and locations up in the configured catalogs")
	cmd.Flags().StringVar(&opts.Namespace, "namespace", "", "with --catalog: the namespace of tables the statement does not qualify")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runPredicates(ctx context.Context, opts *predicatesOptions) (err error) {
	d, err := extract.ParseDialect(opts.Dialect)
	if err != nil {
		return flagErrorf("--dialect: %v", err)
	}
	var r io.Reader = opts.f.IO.In
	if opts.File != "" && opts.File != "-" {
		fh, err := os.Open(opts.File)
		if err != nil {
			return fmt.Errorf("read statement: %w", err)
		}
		defer fh.Close()
		r = fh
	}
	sql, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read statement: %w", err)
	}
	var popts extract.Options
	switch {
	case opts.Schema != "" && opts.Catalog:
		return flagErrorf("--schema and --catalog exclude each other")
	case opts.Schema != "":
		ddl, err := os.ReadFile(opts.Schema)
		if err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		m, warns := extract.ReadDDL(d, string(ddl))
		for _, w := range warns {
			fmt.Fprintln(opts.f.IO.ErrOut, "warning: schema:", w)
		}
		popts.Schemas = m
	case opts.Catalog:
		cfg, err := opts.f.Config()
		if err != nil {
			return err
		}
		src := &ingest.SQLSchemas{Ctx: ctx, Resolver: ingest.NewCatalogResolver(cfg, opts.f.Catalog),
			DefaultCatalog: cfg.DefaultCatalog, DefaultNamespace: opts.Namespace}
		defer func() {
			if e := src.Err(); e != nil && err == nil {
				err = e
			}
		}()
		popts.Schemas, popts.Locate = src, src.Locate
	}
	res := extract.ParseWith(d, string(sql), popts)
	if opts.Output == outputJSON {
		b, err := res.MarshalContract()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(opts.f.IO.Out, string(b))
		return err
	}
	out := opts.f.IO.Out
	t := newTable(out, "TABLE", "ALIAS")
	for _, tr := range res.Tables {
		t.row(tr.QualifiedName(), tr.Alias)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if renderScanFilters(out, res) {
		fmt.Fprintln(out)
	}
	t = newTable(out, "PREDICATE TABLE", "COLUMN", "TRANSFORM", "OP", "VALUES")
	for _, p := range res.Predicates {
		vals := make([]string, len(p.Values))
		for i, v := range p.Values {
			vals[i] = v.String()
		}
		t.row(p.Table, p.Column, p.Transform, string(p.Op), strings.Join(vals, ", "))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(res.Joins) > 0 {
		fmt.Fprintln(out)
		t = newTable(out, "JOIN LEFT", "RIGHT")
		for _, j := range res.Joins {
			t.row(joinSide(j.Left), joinSide(j.Right))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(opts.f.IO.ErrOut, "warning:", w)
	}
	return nil
}

// joinSide renders one side of a join as table[ alias].column, with the
// transform around the column.
func joinSide(c extract.ColumnRef) string {
	s := c.Table
	if c.Alias != "" {
		s += " " + c.Alias
	}
	col := c.Column
	if c.Transform != "" {
		col = c.Transform + "(" + col + ")"
	}
	return s + "." + col
}

// renderScanFilters prints each scan's filter as a tree and reports whether
// it printed any.
func renderScanFilters(w io.Writer, res extract.Result) bool {
	printed := false
	for _, sc := range res.Scans {
		if sc.Filter == nil || sc.Table < 0 || sc.Table >= len(res.Tables) {
			continue
		}
		tr := res.Tables[sc.Table]
		name := tr.QualifiedName()
		if tr.Alias != "" {
			name += " " + tr.Alias
		}
		fmt.Fprintf(w, "FILTER OF %s\n", name)
		writeNode(w, sc.Filter, "  ", "")
		printed = true
	}
	return printed
}

// writeNode prints n and its children as an indented tree: indent is the
// prefix of n's line, branch the connector before it.
func writeNode(w io.Writer, n *pexpr.Node, indent, branch string) {
	fmt.Fprintf(w, "%s%s%s\n", indent, branch, nodeLabel(n))
	if n == nil || n.Kind == pexpr.NodePred || n.Kind == pexpr.NodeOpaque {
		return
	}
	child := indent
	switch branch {
	case "├─ ":
		child += "│  "
	case "└─ ":
		child += "   "
	}
	for i, c := range n.Children {
		b := "├─ "
		if i == len(n.Children)-1 {
			b = "└─ "
		}
		writeNode(w, c, child, b)
	}
}

func nodeLabel(n *pexpr.Node) string {
	if n == nil {
		return "true"
	}
	switch n.Kind {
	case pexpr.NodeAnd:
		return "AND"
	case pexpr.NodeOr:
		return "OR"
	case pexpr.NodeNot:
		return "NOT"
	case pexpr.NodePred:
		if n.Pred == nil {
			return "?"
		}
		return n.Pred.String()
	}
	return "opaque: " + n.Text
}
