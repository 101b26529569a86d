package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"
)

// The page's only style: inline, no fonts but the reader's own.
const htmlStyle = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1a1a1a;background:#fafafa;margin:0;padding:24px;line-height:1.45}
main{max-width:1100px;margin:0 auto}
h1{font-size:1.6em;margin:0 0 .2em}h2{font-size:1.3em;border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em;margin:1.4em 0 .4em}
table{border-collapse:collapse;margin:.4em 0 1em;background:#fff;font-size:.92em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f0f0f0}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.rec td{background:#eaf6ee}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95em}
.status{display:inline-block;padding:0 .5em;border-radius:3px;color:#fff;font-weight:600}
.healthy{background:#2f855a}.warning{background:#b7791f}.critical{background:#c53030}
.note{border-left:4px solid #b7791f;background:#fffbea;padding:.4em .8em}
.cost{background:#fff;border:1px solid #ddd;padding:.6em .9em}
figure{margin:1em 0;background:#fff;border:1px solid #ddd;padding:8px;display:inline-block;max-width:100%}
figcaption{font-size:.88em;color:#444;max-width:720px}
svg.chart{max-width:100%;height:auto;display:block}
h4{font-size:1em;margin:1.2em 0 .3em}.tree ul{margin:.2em 0;padding-left:1.4em}
svg .tick{font-size:11px;fill:#333}svg .label{font-size:12px;fill:#1a1a1a}svg .value{font-size:11px;fill:#1a1a1a}
svg .axis{font-size:12px;fill:#1a1a1a}svg .legend{font-size:12px;fill:#1a1a1a}
`

// HTML writes r as one self-contained HTML page: inline style, inline SVG
// charts, no script and no reference to anything outside the file, so that
// it reads the same offline and attached to a ticket.
func HTML(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	h := &htmlWriter{w: bw}
	h.raw(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>floe layout report</title>
<style>` + htmlStyle + `</style>
</head>
<body>
<main>
`)
	h.el("h1", "floe layout report")
	h.el("p", fmt.Sprintf("Generated %s from %s.", r.GeneratedAt.UTC().Format(time.RFC3339), windowText(r.SinceSeconds)))
	if r.Lake {
		h.lake(r)
	}
	for _, t := range r.Tables {
		h.table(t)
	}
	h.raw("</main>\n</body>\n</html>\n")
	return bw.Flush()
}

// lake writes a lake-wide report's totals, maintenance queue and
// ranking; a ranked table links to its section when it has one.
func (h *htmlWriter) lake(r Report) {
	if t := r.Totals; t != nil {
		h.raw(`<section id="totals">`)
		h.el("h2", "Lake totals")
		h.el("p", TotalsText(*t)+".")
		h.raw("</section>\n")
	}
	if q := r.Queue; q != nil {
		h.raw(`<section id="queue">`)
		h.el("h2", "Maintenance queue")
		if len(q.Budgets) == 0 {
			h.el("p", NoBudgetText)
		} else {
			h.el("p", "Budgets, spent over their trailing window:")
			h.head(budgetHead...)
			for _, b := range q.Budgets {
				h.row(budgetCells(b), 0, 5)
			}
			h.raw("</tbody></table>\n")
		}
		if len(q.Deferred) == 0 {
			h.el("p", NoDeferralText)
		} else {
			h.el("p", "Deferred by a budget in the window:")
			h.head(deferralHead...)
			for _, d := range q.Deferred {
				h.row(deferralCells(d), 0, 3, 4)
			}
			h.raw("</tbody></table>\n")
		}
		h.raw("</section>\n")
	}
	h.raw(`<section id="ranking">`)
	h.el("h2", "Tables ranked by expected gain")
	if len(r.Ranking) == 0 {
		h.el("p", "No tables.")
		h.raw("</section>\n")
		return
	}
	if r.Totals != nil {
		if d := DetailText(*r.Totals); d != "" {
			h.el("p", d)
		}
	}
	h.head(rankHead...)
	for i, k := range r.Ranking {
		cells := rankCells(k)
		h.raw("<tr>")
		h.cell(true, fmt.Sprint(i+1))
		if k.Detailed || r.Totals == nil {
			h.raw(fmt.Sprintf(`<td><a href="#%s">%s</a></td>`, anchor(k.Table), esc(k.Table)))
		} else {
			h.cell(false, k.Table)
		}
		h.raw(`<td>` + statusBadge(k.Health) + `</td>`)
		h.raw("<td><code>" + esc(cells[0]) + "</code></td>")
		for _, c := range cells[1:] {
			h.cell(true, c)
		}
		h.raw("</tr>\n")
	}
	h.raw("</tbody></table>\n")
	h.raw("</section>\n")
}

// row writes a table row of cells, those at the text positions as text,
// the others as numbers.
func (h *htmlWriter) row(cells []string, text ...int) {
	h.raw("<tr>")
	for i, c := range cells {
		h.cell(!slices.Contains(text, i), c)
	}
	h.raw("</tr>\n")
}

// TableHTML renders one table's section of [HTML] — health, predicate
// columns, candidates, recommendation, charts, pending plans and last runs
// — as a fragment to embed in another page (floe serve's dashboard). It is
// the same markup HTML writes for the table, escaped the same way; the
// embedding page styles it with [Style].
func TableHTML(t Table) template.HTML {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	(&htmlWriter{w: bw}).table(t)
	// A bufio.Writer over a strings.Builder cannot fail to flush.
	_ = bw.Flush()
	return template.HTML(b.String()) //nolint:gosec // every value in it went through esc
}

// Style is the stylesheet [HTML] inlines, for a page that embeds
// [TableHTML].
func Style() template.CSS { return template.CSS(htmlStyle) } //nolint:gosec // a constant

type htmlWriter struct{ w *bufio.Writer }

func (h *htmlWriter) raw(s string) { h.w.WriteString(s) }

func (h *htmlWriter) el(tag, text string) { h.raw("<" + tag + ">" + esc(text) + "</" + tag + ">\n") }

func (h *htmlWriter) head(cols ...string) {
	h.raw("<table><thead><tr>")
	for _, c := range cols {
		h.raw("<th>" + esc(c) + "</th>")
	}
	h.raw("</tr></thead><tbody>\n")
}

func (h *htmlWriter) cell(num bool, s string) {
	if num {
		h.raw(`<td class="n">` + esc(s) + "</td>")
		return
	}
	h.raw("<td>" + esc(s) + "</td>")
}

func (h *htmlWriter) code(s string) { h.raw("<td><code>" + esc(s) + "</code></td>") }

// anchor is the id of a table's section.
func anchor(table string) string {
	return "t-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, table)
}

func statusBadge(s string) string {
	return `<span class="status ` + esc(s) + `">` + esc(s) + `</span>`
}

func (h *htmlWriter) figure(svg, caption string) {
	h.raw("<figure>" + svg + "<figcaption>" + esc(caption) + "</figcaption></figure>\n")
}

func (h *htmlWriter) table(t Table) {
	id := anchor(t.Table)
	h.raw(`<section class="table" id="` + id + `">` + "\n")
	h.raw("<h2>" + esc(t.Table) + " " + statusBadge(t.Health.Status) + "</h2>\n")
	h.el("p", fmt.Sprintf("Snapshot %d; %d data files, %s; %d queries replayed (%.1f a day over %s).",
		t.SnapshotID, t.DataFiles, FormatBytes(t.DataBytes), t.Queries, t.QueriesPerDay, FormatDays(t.WindowDays)))
	for _, n := range t.Notes {
		h.raw(`<p class="note">` + esc(n) + "</p>\n")
	}

	h.el("h3", "Health: "+t.Health.Status)
	h.el("p", healthLine(t.Health)+".")
	if len(t.Health.Reasons) > 0 {
		h.raw("<ul>")
		for _, r := range t.Health.Reasons {
			h.raw("<li>" + esc(r) + "</li>")
		}
		h.raw("</ul>\n")
	}

	h.el("h3", "Predicate columns")
	if len(t.Columns) == 0 {
		h.el("p", "No column is filtered on by the collected queries.")
	} else {
		h.head("Column", "Share of workload", "Queries", "Op mix", "Score", "Why")
		for _, c := range t.Columns {
			h.raw("<tr>")
			h.code(c.Column)
			h.cell(true, fmt.Sprintf("%.0f%%", 100*c.Share))
			h.cell(true, fmt.Sprint(c.Queries))
			h.cell(false, opMixText(c.OpMix))
			h.cell(true, fmt.Sprintf("%.1f", c.Score))
			h.cell(false, c.Reason)
			h.raw("</tr>\n")
		}
		h.raw("</tbody></table>\n")
	}

	h.el("h3", "Candidate layouts")
	if len(t.Candidates) == 0 {
		h.el("p", "No layout projected.")
	} else {
		h.head("Layout", "Files skipped", "Bytes read", "Read/bound", "Read/box", "Files after", "Rewrite", "Gain", "Scan saved", "Payback", "Verdict")
		for _, c := range t.Candidates {
			if c.Recommended {
				h.raw(`<tr class="rec">`)
			} else {
				h.raw("<tr>")
			}
			h.code(c.Layout.String())
			h.cell(true, fmt.Sprintf("%s ± %.1f pp", pct(c.SkippedPct), c.ErrorPP))
			h.cell(true, pct(c.BytesReadPct))
			h.cell(true, RatioText(c.BoundRatio))
			h.cell(true, RatioText(c.BoxRatio))
			h.cell(true, fmt.Sprint(c.FilesAfter))
			h.cell(true, FormatBytes(c.RewriteBytes))
			h.cell(true, FormatPP(c.GainPP))
			h.cell(true, savedText(c))
			h.cell(true, paybackText(c))
			h.cell(false, c.Verdict)
			h.raw("</tr>\n")
		}
		h.raw("</tbody></table>\n")
		h.figure(skippedChart(id+"-skipped", t), "Files skipped per candidate layout, in percent of the layout's data files, with the projection's error bar (percentage points).")
	}

	if len(t.Candidates) > 0 {
		h.el("p", BoundText)
		h.el("p", CostModelText(t))
	}
	for i, c := range t.Candidates {
		if c.TreeExplanation != nil {
			h.tree(fmt.Sprintf("%s-tree-%d", id, i), "Learned tree", c.Layout.String(), *c.TreeExplanation)
		}
		if r := c.RecordedTree; r != nil {
			h.recordedTree(fmt.Sprintf("%s-recorded-tree-%d", id, i), c, *r)
		}
	}
	h.el("h3", "Recommendation")
	if c, ok := t.recommended(); ok {
		h.raw("<p><strong><code>" + esc(c.Layout.String()) + "</code></strong>: " + esc(t.Recommendation.Why) + "</p>\n")
		h.raw(`<p class="cost"><strong>Cost/benefit:</strong> ` + esc(CostLine(t, c)) + ".</p>\n")
	} else {
		h.el("p", "No rewrite recommended: "+t.Recommendation.Why)
	}
	if t.Recommendation.Next != "" {
		h.raw("<p>Next: <code>" + esc(t.Recommendation.Next) + "</code></p>\n")
	}

	if !t.FileSizes.Empty() {
		h.figure(histogramChart(id+"-sizes", "File sizes, today against projected, "+t.Table, "data files", "file size (bytes; each bucket from its label up to twice it)", t.FileSizes),
			"Data files by size: today's files, and the files the rewrite is projected to write ("+t.FileSizes.Note+").")
	}
	if !t.FilesRead.Empty() {
		h.figure(histogramChart(id+"-read", "Files read per query, today against the recommendation, "+t.Table, "queries", "files read by a query (power-of-two buckets)", t.FilesRead),
			"Queries by the number of data files each reads, today and with the layout compared ("+t.FilesRead.Note+").")
	}

	h.el("h3", "Pending plans")
	if len(t.Plans) == 0 {
		h.el("p", "None.")
	} else {
		h.head("Plan", "Layout", "State", "Files skipped", "Today", "Rewrite", "Proposed")
		for _, p := range t.Plans {
			h.raw("<tr>")
			h.code(p.ID)
			h.code(p.Layout.String())
			h.cell(false, p.State)
			h.cell(true, pct(p.SkippedPct))
			h.cell(true, planBaseline(p))
			h.cell(true, FormatBytes(p.RewriteBytes))
			h.cell(false, p.CreatedAt.UTC().Format(time.RFC3339)+" by "+p.CreatedBy)
			h.raw("</tr>\n")
		}
		h.raw("</tbody></table>\n")
	}

	h.el("h3", "Last runs")
	if len(t.Runs) == 0 {
		h.el("p", "None recorded.")
	} else {
		h.head("Run", "Started", "Status", "Steps (before → after)")
		for _, r := range t.Runs {
			status, steps := runText(r)
			h.raw("<tr>")
			h.code(r.ID)
			h.cell(false, r.StartedAt.UTC().Format(time.RFC3339))
			h.cell(false, status)
			h.raw("<td>")
			for i, s := range steps {
				if i > 0 {
					h.raw("<br>")
				}
				h.raw(esc(s))
			}
			h.raw("</td></tr>\n")
		}
		h.raw("</tbody></table>\n")
	}
	if len(t.HealthHistory) > 0 {
		h.figure(historyChart(id+"-history", t), "Data files before and after each recorded run, over time; each point is coloured by the health status it had.")
	}
	h.raw("</section>\n")
}
