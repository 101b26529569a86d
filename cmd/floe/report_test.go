package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewReportCmdParseArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		tables  []string
		format  string
		file    string
		wantErr string
	}{
		{name: "markdown to standard output by default", args: []string{"web.events"}, tables: []string{"web.events"}, format: formatMarkdown},
		{name: "format from --file's extension", args: []string{"--file", "r.HTML"}, format: formatHTML, file: "r.HTML"},
		{name: "json from --file's extension", args: []string{"a.b", "c.d", "--file", "r.json"}, tables: []string{"a.b", "c.d"}, format: formatJSON, file: "r.json"},
		{name: "-o wins over the extension", args: []string{"-o", "markdown", "--file", "r.html"}, format: formatMarkdown, file: "r.html"},
		{name: "-o is the format, as in every verb", args: []string{"-o", "json"}, format: formatJSON},
		{name: "--format is -o", args: []string{"--format", "HTML"}, format: formatHTML},
		{name: "unknown format", args: []string{"-o", "pdf"}, wantErr: `-o "pdf": want markdown, html or json`},
		{name: "-o names no file", args: []string{"-o", "report.html"}, wantErr: "-o is the output format (markdown, html or json), as in every verb; write a file with --file report.html"},
		{name: "bad --min-gain", args: []string{"--min-gain", "101"}, wantErr: "--min-gain"},
		{name: "negative --top", args: []string{"--top", "-1"}, wantErr: "--top must be 0 (every table) or more, got -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			io, _, _ := testIO()
			var got *reportOptions
			c := newReportCmd(newTestFactory(t, io), func(_ context.Context, o *reportOptions) error { got = o; return nil })
			c.SetArgs(tc.args)
			c.SetOut(io.Out)
			c.SetErr(io.ErrOut)
			err := c.Execute()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.ElementsMatch(t, tc.tables, got.Tables)
			require.Equal(t, tc.format, got.Format)
			require.Equal(t, tc.file, got.File)
			require.Equal(t, defaultReportTop, got.Top)
		})
	}
}

// floe report on a small warehouse with no collected queries: the
// lake-wide JSON ranks the table and says why nothing is projected, and -o
// writes a self-contained HTML file.
func TestReportVerb(t *testing.T) {
	t.Parallel()
	dir := flatWarehouse(t, 3, 20)
	io, out, errOut := testIO()
	require.Equal(t, 0, runWith(t, io, dir, "report", "-o", "json"), errOut.String())
	var r struct {
		Lake   bool `json:"lake"`
		Totals struct {
			Tables    int `json:"tables"`
			DataFiles int `json:"data_files"`
		} `json:"totals"`
		Queue struct {
			Budgets []any `json:"budgets"`
		} `json:"queue"`
		Ranking []struct {
			Table string `json:"table"`
		} `json:"ranking"`
		Tables []struct {
			Table      string   `json:"table"`
			DataFiles  int      `json:"data_files"`
			Candidates []any    `json:"candidates"`
			Notes      []string `json:"notes"`
		} `json:"tables"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	require.True(t, r.Lake)
	require.Len(t, r.Ranking, 1)
	require.Equal(t, 1, r.Totals.Tables)
	require.Equal(t, 3, r.Totals.DataFiles)
	require.NotNil(t, r.Queue.Budgets, "no budget: an empty list")
	require.Equal(t, "local.db.flat", r.Tables[0].Table)
	require.Equal(t, 3, r.Tables[0].DataFiles)
	require.NotNil(t, r.Tables[0].Candidates)
	require.Contains(t, r.Tables[0].Notes[0], "no queries of local.db.flat")

	page := filepath.Join(t.TempDir(), "report.html")
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "report", "db.flat", "--file", page), errOut.String())
	require.Empty(t, out.String())
	require.Contains(t, errOut.String(), "wrote "+page)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "<!DOCTYPE html>"))
	require.NotContains(t, string(b), "Tables ranked by expected gain", "a named table: no lake-wide ranking")

	// --top 0 of the lake: every table's section; the Markdown starts
	// with the totals and the queue.
	io, out, errOut = testIO()
	require.Equal(t, 0, runWith(t, io, dir, "report", "--top", "0"), errOut.String())
	require.Contains(t, out.String(), "## Lake totals\n\n1 table: 3 data files")
	require.Contains(t, out.String(), "## Maintenance queue")
	require.Contains(t, out.String(), "## local.db.flat")
}
