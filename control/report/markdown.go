package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// Markdown writes r as GitHub-flavoured Markdown, to paste into a pull
// request or a chat: headings, pipe tables and lists, no HTML.
func Markdown(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	m.line("# floe layout report")
	m.line("")
	m.line("Generated %s from %s.", r.GeneratedAt.UTC().Format(time.RFC3339), windowText(r.SinceSeconds))
	if r.Lake {
		m.lake(r)
	}
	for _, t := range r.Tables {
		m.table(t)
	}
	return bw.Flush()
}

// lake writes a lake-wide report's totals, maintenance queue and
// ranking.
func (m *mdWriter) lake(r Report) {
	if t := r.Totals; t != nil {
		m.line("")
		m.line("## Lake totals")
		m.line("")
		m.line("%s.", TotalsText(*t))
	}
	if q := r.Queue; q != nil {
		m.line("")
		m.line("## Maintenance queue")
		m.line("")
		if len(q.Budgets) == 0 {
			m.line("%s", NoBudgetText)
		} else {
			m.line("Budgets, spent over their trailing window:")
			m.line("")
			m.row(budgetHead...)
			m.row("---", "--:", "--:", "--:", "--:", "---")
			for _, b := range q.Budgets {
				m.row(budgetCells(b)...)
			}
		}
		m.line("")
		if len(q.Deferred) == 0 {
			m.line("%s", NoDeferralText)
		} else {
			m.line("Deferred by a budget in the window:")
			m.line("")
			m.row(deferralHead...)
			m.row("---", "--:", "--:", "---", "---")
			for _, d := range q.Deferred {
				m.row(deferralCells(d)...)
			}
		}
	}
	m.line("")
	m.line("## Tables ranked by expected gain")
	m.line("")
	if len(r.Ranking) == 0 {
		m.line("No tables.")
		return
	}
	if r.Totals != nil {
		if d := DetailText(*r.Totals); d != "" {
			m.line("%s", d)
			m.line("")
		}
	}
	m.row(rankHead...)
	m.row("--:", "---", "---", "---", "--:", "--:", "--:", "--:", "--:")
	for i, k := range r.Ranking {
		cells := rankCells(k)
		if k.Recommended != nil {
			cells[0] = "`" + cells[0] + "`"
		}
		m.row(append([]string{fmt.Sprint(i + 1), k.Table, k.Health}, cells...)...)
	}
}

func windowText(sinceSeconds int64) string {
	if sinceSeconds <= 0 {
		return "every collected query"
	}
	return "the queries of the last " + FormatDays(float64(sinceSeconds)/86400)
}

type mdWriter struct{ w *bufio.Writer }

func (m *mdWriter) line(format string, args ...any) {
	if len(args) == 0 {
		m.w.WriteString(format)
	} else {
		fmt.Fprintf(m.w, format, args...)
	}
	m.w.WriteByte('\n')
}

// row writes a pipe-table row, escaping pipes and line breaks in cells.
func (m *mdWriter) row(cells ...string) {
	for i, c := range cells {
		c = strings.ReplaceAll(c, "|", `\|`)
		cells[i] = strings.ReplaceAll(c, "\n", " ")
	}
	m.w.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

func (m *mdWriter) table(t Table) {
	m.line("")
	m.line("## %s — %s", t.Table, t.Health.Status)
	m.line("")
	m.line("Snapshot %d; %d data files, %s; %d queries replayed (%.1f a day over %s).",
		t.SnapshotID, t.DataFiles, FormatBytes(t.DataBytes), t.Queries, t.QueriesPerDay, FormatDays(t.WindowDays))
	for _, n := range t.Notes {
		m.line("")
		m.line("> %s", n)
	}

	m.line("")
	m.line("### Health: %s", t.Health.Status)
	m.line("")
	m.line("%s.", healthLine(t.Health))
	if len(t.Health.Reasons) > 0 {
		m.line("")
		for _, r := range t.Health.Reasons {
			m.line("- %s", r)
		}
	}

	m.line("")
	m.line("### Predicate columns")
	m.line("")
	if len(t.Columns) == 0 {
		m.line("No column is filtered on by the collected queries.")
	} else {
		m.row("Column", "Share of workload", "Queries", "Op mix", "Score", "Why")
		m.row("---", "--:", "--:", "---", "--:", "---")
		for _, c := range t.Columns {
			m.row("`"+c.Column+"`", fmt.Sprintf("%.0f%%", 100*c.Share), fmt.Sprint(c.Queries), opMixText(c.OpMix),
				fmt.Sprintf("%.1f", c.Score), c.Reason)
		}
	}

	m.line("")
	m.line("### Candidate layouts")
	m.line("")
	if len(t.Candidates) == 0 {
		m.line("No layout projected.")
	} else {
		m.row("Layout", "Files skipped", "Bytes read", "Read/bound", "Read/box", "Files after", "Rewrite", "Gain", "Scan saved", "Payback", "Verdict")
		m.row("---", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "--:", "---")
		for _, c := range t.Candidates {
			name := "`" + c.Layout.String() + "`"
			if c.Recommended {
				name = "**" + name + "**"
			}
			m.row(name, fmt.Sprintf("%s ± %.1f pp", pct(c.SkippedPct), c.ErrorPP), pct(c.BytesReadPct), RatioText(c.BoundRatio), RatioText(c.BoxRatio), fmt.Sprint(c.FilesAfter),
				FormatBytes(c.RewriteBytes), FormatPP(c.GainPP), savedText(c), paybackText(c), c.Verdict)
		}
	}

	if len(t.Candidates) > 0 {
		m.line("")
		m.line("%s", BoundText)
		m.line("")
		m.line("%s", CostModelText(t))
	}
	for _, c := range t.Candidates {
		if c.TreeExplanation != nil {
			m.tree("Learned tree", c.Layout.String(), *c.TreeExplanation)
		}
		if r := c.RecordedTree; r != nil {
			m.recordedTree(c, *r)
		}
	}
	m.line("")
	m.line("### Recommendation")
	m.line("")
	if c, ok := t.recommended(); ok {
		m.line("**`%s`**: %s", c.Layout, t.Recommendation.Why)
		m.line("")
		m.line("Cost/benefit: %s.", CostLine(t, c))
	} else {
		m.line("No rewrite recommended: %s", t.Recommendation.Why)
	}
	if t.Recommendation.Next != "" {
		m.line("")
		m.line("Next: `%s`", t.Recommendation.Next)
	}

	m.line("")
	m.line("### Pending plans")
	m.line("")
	if len(t.Plans) == 0 {
		m.line("None.")
	} else {
		m.row("Plan", "Layout", "State", "Files skipped", "Today", "Rewrite", "Proposed")
		m.row("---", "---", "---", "--:", "--:", "--:", "---")
		for _, p := range t.Plans {
			m.row("`"+p.ID+"`", "`"+p.Layout.String()+"`", p.State, pct(p.SkippedPct), planBaseline(p), FormatBytes(p.RewriteBytes),
				p.CreatedAt.UTC().Format(time.RFC3339)+" by "+p.CreatedBy)
		}
	}

	m.line("")
	m.line("### Last runs")
	m.line("")
	if len(t.Runs) == 0 {
		m.line("None recorded.")
	} else {
		m.row("Run", "Started", "Status", "Steps (before → after)")
		m.row("---", "---", "---", "---")
		for _, r := range t.Runs {
			status, steps := runText(r)
			m.row("`"+r.ID+"`", r.StartedAt.UTC().Format(time.RFC3339), status, strings.Join(steps, "; "))
		}
	}
}

func planBaseline(p Plan) string {
	if p.CurrentSkippedPct == nil {
		return "-"
	}
	return pct(*p.CurrentSkippedPct)
}
