package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/floe-project/floe/layout"
)

// Inline SVG charts. Each has a <title> and a <desc> (its text alternative,
// referenced by aria-labelledby), axes with tick labels and a unit in each
// axis title. Sizes are in CSS pixels; the viewBox lets the page scale it.

const (
	chartWidth  = 720
	colorNow    = "#8c8c8c"
	colorThen   = "#2b6cb0"
	colorAccent = "#2f855a"
	colorAxis   = "#333333"
	colorGrid   = "#e2e2e2"
)

// svgChart accumulates one chart.
type svgChart struct {
	b    strings.Builder
	id   string
	w, h int
}

func newChart(id string, w, h int, title, desc string) *svgChart {
	c := &svgChart{id: id, w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s-title %s-desc">`,
		id, w, h, w, h, id, id)
	fmt.Fprintf(&c.b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(desc))
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, w, h)
	return c
}

func (c *svgChart) add(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *svgChart) text(x, y float64, anchor, class, s string) {
	c.add(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(s))
}

func (c *svgChart) line(x1, y1, x2, y2 float64, color string) {
	c.add(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`, x1, y1, x2, y2, color)
}

func (c *svgChart) rect(x, y, w, h float64, color, label string) {
	c.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`, x, y, w, h, color, esc(label))
}

func (c *svgChart) legend(x, y float64, items ...[2]string) {
	for _, it := range items {
		c.add(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`, x, y-10, it[1])
		c.text(x+16, y, "start", "legend", it[0])
		x += 24 + 7*float64(len([]rune(it[0])))
	}
}

func (c *svgChart) String() string { return c.b.String() + "</svg>" }

func esc(s string) string { return html.EscapeString(s) }

// countAxis is the top of a count axis with four ticks: four times a
// round step of at least 1, so that every tick is a whole number.
func countAxis(most int) float64 { return 4 * max(1, niceMax(float64(most)/4)) }

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// skippedChart is a horizontal bar per candidate: files skipped (%) with
// its error bar, the recommended candidate in the accent colour.
func skippedChart(id string, t Table) string {
	const left, right, top, bar, gap = 230.0, 30.0, 34.0, 18.0, 8.0
	n := len(t.Candidates)
	h := int(top + float64(n)*(bar+gap) + 46)
	var alt []string
	for _, c := range t.Candidates {
		alt = append(alt, fmt.Sprintf("%s %.1f%% ± %.1f pp", c.Layout, c.SkippedPct, c.ErrorPP))
	}
	ch := newChart(id, chartWidth, h, "Files skipped per candidate layout, "+t.Table,
		"Bar chart of the share of data files the workload's queries skip, in percent, per candidate layout, with the projection's error bar: "+strings.Join(alt, "; ")+".")
	plotW := float64(chartWidth) - left - right
	x := func(p float64) float64 { return left + plotW*math.Max(0, math.Min(100, p))/100 }
	bottom := top + float64(n)*(bar+gap)
	for p := 0.0; p <= 100; p += 20 {
		ch.line(x(p), top-4, x(p), bottom, colorGrid)
		ch.text(x(p), bottom+16, "middle", "tick", fmt.Sprintf("%.0f%%", p))
	}
	ch.line(left, bottom, left+plotW, bottom, colorAxis)
	ch.line(left, top-4, left, bottom, colorAxis)
	ch.text(left+plotW/2, bottom+36, "middle", "axis", "files skipped (% of the layout's data files, weighted by query)")
	for i, c := range t.Candidates {
		y := top + float64(i)*(bar+gap)
		color := colorNow
		if c.Layout.Strategy != layout.StrategyCurrent {
			color = colorThen
		}
		if c.Recommended {
			color = colorAccent
		}
		ch.text(left-8, y+bar-5, "end", "label", truncate(c.Layout.String(), 32))
		ch.rect(left, y, math.Max(1, x(c.SkippedPct)-left), bar, color, fmt.Sprintf("%s: %.1f%% ± %.1f pp", c.Layout, c.SkippedPct, c.ErrorPP))
		if c.ErrorPP > 0 {
			lo, hi, mid := x(c.SkippedPct-c.ErrorPP), x(c.SkippedPct+c.ErrorPP), y+bar/2
			ch.line(lo, mid, hi, mid, colorAxis)
			ch.line(lo, mid-4, lo, mid+4, colorAxis)
			ch.line(hi, mid-4, hi, mid+4, colorAxis)
		}
		ch.text(x(c.SkippedPct)+(map[bool]float64{true: 6, false: -6})[c.SkippedPct < 85], y+bar-5,
			map[bool]string{true: "start", false: "end"}[c.SkippedPct < 85], "value", fmt.Sprintf("%.1f%%", c.SkippedPct))
	}
	ch.legend(left, 18, [2]string{"current", colorNow}, [2]string{"candidate", colorThen}, [2]string{"recommended", colorAccent})
	return ch.String()
}

// histogramChart draws a histogram's two series as grouped vertical bars.
func histogramChart(id, title, yUnit, xUnit string, hist Histogram) string {
	const left, right, top, bottomPad = 64.0, 20.0, 34.0, 84.0
	const h = 310
	var alt []string
	for _, b := range hist.Buckets {
		s := fmt.Sprintf("%s: %d %s", b.Label, b.Now, hist.Now)
		if hist.Then != "" {
			s += fmt.Sprintf(", %d %s", b.Then, hist.Then)
		}
		alt = append(alt, s)
	}
	desc := fmt.Sprintf("Histogram of %s by %s, %s", yUnit, xUnit, hist.Now)
	if hist.Then != "" {
		desc += " against " + hist.Then
	}
	desc += ": " + strings.Join(alt, "; ") + "."
	if hist.Note != "" {
		desc += " Note: " + hist.Note + "."
	}
	ch := newChart(id, chartWidth, h, title, desc)
	plotW, plotH := float64(chartWidth)-left-right, float64(h)-top-bottomPad
	bottom := top + plotH
	most := 0
	for _, b := range hist.Buckets {
		most = max(most, b.Now, b.Then)
	}
	ymax := countAxis(most)
	y := func(v float64) float64 { return bottom - plotH*v/ymax }
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		ch.line(left, y(v), left+plotW, y(v), colorGrid)
		ch.text(left-6, y(v)+4, "end", "tick", trimFloat(v))
	}
	ch.line(left, bottom, left+plotW, bottom, colorAxis)
	ch.line(left, top, left, bottom, colorAxis)
	n := max(len(hist.Buckets), 1)
	slot := plotW / float64(n)
	bw := math.Min(28, slot*0.4)
	for i, b := range hist.Buckets {
		x0 := left + float64(i)*slot + slot/2
		if b.Now > 0 {
			ch.rect(x0-bw, y(float64(b.Now)), bw, math.Max(1, bottom-y(float64(b.Now))), colorNow, fmt.Sprintf("%s: %d %s (%s)", b.Label, b.Now, yUnit, hist.Now))
		}
		if b.Then > 0 {
			ch.rect(x0, y(float64(b.Then)), bw, math.Max(1, bottom-y(float64(b.Then))), colorThen, fmt.Sprintf("%s: %d %s (%s)", b.Label, b.Then, yUnit, hist.Then))
		}
		label := b.Label
		if hist.Unit == "bytes" {
			label = FormatBytes(b.Lo) // the range is in the bar's title and the description
		}
		ch.add(`<text x="%.1f" y="%.1f" text-anchor="end" class="tick" transform="rotate(-35 %.1f %.1f)">%s</text>`, x0+4, bottom+14, x0+4, bottom+14, esc(label))
	}
	ch.text(left+plotW/2, float64(h)-8, "middle", "axis", xUnit)
	ch.add(`<text x="14" y="%.1f" text-anchor="middle" class="axis" transform="rotate(-90 14 %.1f)">%s</text>`, top+plotH/2, top+plotH/2, esc(yUnit))
	items := [][2]string{{hist.Now, colorNow}}
	if hist.Then != "" {
		items = append(items, [2]string{truncate(hist.Then, 40), colorThen})
	}
	ch.legend(left, 18, items...)
	return ch.String()
}

// historyChart draws data files before and after each recorded run over
// time, each point coloured by the health status it had.
func historyChart(id string, t Table) string {
	const left, right, top, bottomPad = 64.0, 40.0, 34.0, 56.0
	const h = 280
	pts := t.HealthHistory
	var alt []string
	for _, p := range pts {
		alt = append(alt, fmt.Sprintf("%s %s run %s: %d data files, %.0f%% small, %s", p.At.Format("2006-01-02 15:04"), p.When, p.RunID, p.DataFiles, 100*p.SmallFileRatio, p.Status))
	}
	ch := newChart(id, chartWidth, h, "Health history from recorded runs, "+t.Table,
		"Line chart of the table's data files before and after each recorded run, over time (UTC), each point coloured by its health status (healthy, warning, critical): "+strings.Join(alt, "; ")+".")
	plotW, plotH := float64(chartWidth)-left-right, float64(h)-top-bottomPad
	bottom := top + plotH
	t0, t1 := pts[0].At, pts[len(pts)-1].At
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Hour
		t0 = t0.Add(-span / 2)
	}
	most := 0
	for _, p := range pts {
		most = max(most, p.DataFiles)
	}
	ymax := countAxis(most)
	x := func(at time.Time) float64 { return left + plotW*float64(at.Sub(t0))/float64(span) }
	y := func(v float64) float64 { return bottom - plotH*v/ymax }
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		ch.line(left, y(v), left+plotW, y(v), colorGrid)
		ch.text(left-6, y(v)+4, "end", "tick", trimFloat(v))
	}
	ch.line(left, bottom, left+plotW, bottom, colorAxis)
	ch.line(left, top, left, bottom, colorAxis)
	for i := 0; i <= 4; i++ {
		at := t0.Add(span * time.Duration(i) / 4)
		ch.line(x(at), bottom, x(at), bottom+4, colorAxis)
		ch.text(x(at), bottom+18, map[int]string{0: "start", 4: "end"}[i]+map[bool]string{true: "middle"}[i > 0 && i < 4], "tick", at.UTC().Format("01-02 15:04"))
	}
	var path []string
	for _, p := range pts {
		path = append(path, fmt.Sprintf("%.1f,%.1f", x(p.At), y(float64(p.DataFiles))))
	}
	ch.add(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(path, " "), colorThen)
	for _, p := range pts {
		ch.add(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s"><title>%s</title></circle>`, x(p.At), y(float64(p.DataFiles)), statusColor(p.Status),
			esc(fmt.Sprintf("%s %s run %s: %d data files (%s)", p.At.Format(time.RFC3339), p.When, p.RunID, p.DataFiles, p.Status)))
	}
	ch.text(left+plotW/2, float64(h)-8, "middle", "axis", "time (UTC, month-day hour:minute)")
	ch.add(`<text x="14" y="%.1f" text-anchor="middle" class="axis" transform="rotate(-90 14 %.1f)">data files</text>`, top+plotH/2, top+plotH/2)
	ch.legend(left, 18, [2]string{"healthy", statusColor("healthy")}, [2]string{"warning", statusColor("warning")}, [2]string{"critical", statusColor("critical")})
	return ch.String()
}

func statusColor(s string) string {
	switch s {
	case "healthy":
		return "#2f855a"
	case "warning":
		return "#d69e2e"
	case "critical":
		return "#c53030"
	}
	return colorNow
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
