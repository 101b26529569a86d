package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-project/floe/control/config"
)

// outputFormat is the value of --output.
type outputFormat string

const (
	outputTable outputFormat = "table"
	outputJSON  outputFormat = "json"
)

// addOutputFlag adds --output/-o to a read command.
func addOutputFlag(cmd *cobra.Command, dst *outputFormat) {
	*dst = outputTable
	cmd.Flags().VarP((*outputValue)(dst), "output", "o", "output format: table|json")
}

type outputValue outputFormat

func (o *outputValue) String() string { return string(*o) }
func (o *outputValue) Type() string   { return "format" }
func (o *outputValue) Set(s string) error {
	switch outputFormat(strings.ToLower(s)) {
	case outputTable, outputJSON:
		*o = outputValue(strings.ToLower(s))
		return nil
	}
	return fmt.Errorf("unknown output format %q (want table or json)", s)
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// textTable is a small aligned text table.
type textTable struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *textTable {
	t := &textTable{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *textTable) row(cells ...string) {
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *textTable) flush() error { return t.tw.Flush() }

// formatCutoff renders a plan's cut-off in text output as JSON has it, in
// UTC to the second.
func formatCutoff(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// parenthesized is where in parentheses, as a source follows what it set:
// "(floe.yaml:3)", and "(embedded default:45)" rather than
// "((embedded default):45)".
func parenthesized(where string) string {
	return "(" + strings.Replace(where, config.EmbeddedSource, strings.Trim(config.EmbeddedSource, "()"), 1) + ")"
}
