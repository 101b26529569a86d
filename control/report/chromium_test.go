package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/report"
	"github.com/floe-project/floe/internal/browser"
)

// The HTML report renders in a real browser and every chart draws: the
// report is opened in headless Chromium, screenshotted whole (kept as
// report.png among the test's artefacts), and inside each SVG's bounding box
// the screenshot must hold pixels other than the chart's white background.
//
// FLOE_REPORT_HTML names another report to render instead of the fixture:
// how docs/report.png is made from the demo's floe-data/report.html.
func TestHTMLRendersInChromium(t *testing.T) {
	b := browser.Open(t)
	dir := browser.Artifacts(t)
	page := os.Getenv("FLOE_REPORT_HTML")
	if page == "" {
		var b bytes.Buffer
		require.NoError(t, report.HTML(&b, fixture()))
		page = filepath.Join(dir, "report.html")
		require.NoError(t, os.WriteFile(page, b.Bytes(), 0o644))
	}
	page, err := filepath.Abs(page)
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(b, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")))
	boxes := browser.SVGBoxes(t, b, "svg")
	img := browser.Screenshot(t, b, dir, "report.png")
	if os.Getenv("FLOE_REPORT_HTML") == "" {
		require.Len(t, boxes, 7, "the fixture's charts")
		requireTreeReadable(t, b, "t-local-web-events-tree-3-chart", 4, 5)
		requireTreeReadable(t, b, "t-local-web-events-recorded-tree-3-chart", 1, 2)
	}
	for _, x := range boxes {
		if strings.Contains(x.ID, "-tree-") {
			t.Logf("tree picture %s at y %.0f, %.0f × %.0f", x.ID, x.Y, x.W, x.H)
			requireTreeReadable(t, b, x.ID, -1, -1)
		}
	}
	browser.RequireDrawn(t, img, boxes)
}

// requireTreeReadable checks the tree picture id as the browser laid it out:
// visible, with cuts boxes of cuts and leaves boxes of leaves (any number
// when cuts < 0) inside the picture, each box's text inside its box. Every
// tree picture of a FLOE_REPORT_HTML report is checked too.
func requireTreeReadable(t *testing.T, b context.Context, id string, cuts, leaves int) {
	t.Helper()
	type box struct {
		Class   string  `json:"class"`
		Inside  bool    `json:"inside"`
		W       float64 `json:"w"`
		H       float64 `json:"h"`
		TextFit bool    `json:"text_fit"`
	}
	type layoutOf struct {
		Visible bool  `json:"visible"`
		Boxes   []box `json:"boxes"`
	}
	js := `(() => {
		const svg = document.getElementById(` + "`" + id + "`" + `);
		const st = getComputedStyle(svg), s = svg.getBoundingClientRect();
		return {
			visible: st.display !== "none" && st.visibility === "visible" && s.width > 0 && s.height > 0,
			boxes: Array.from(svg.querySelectorAll("g.cut, g.leaves")).map(g => {
				const r = g.querySelector("rect").getBoundingClientRect();
				const fit = Array.from(g.querySelectorAll("text")).every(x => {
					const q = x.getBoundingClientRect();
					return q.width > 0 && q.left >= r.left - 0.5 && q.right <= r.right + 0.5 && q.top >= r.top - 0.5 && q.bottom <= r.bottom + 0.5;
				});
				return {class: g.getAttribute("class"), w: r.width, h: r.height, text_fit: fit,
					inside: r.left >= s.left && r.right <= s.right && r.top >= s.top && r.bottom <= s.bottom};
			}),
		};
	})()`
	got, err := chromedp.Run(b, chromedp.Evaluate[layoutOf](js))
	require.NoError(t, err)
	require.True(t, got.Visible, "%s is visible", id)
	count := map[string]int{}
	for i, x := range got.Boxes {
		count[x.Class]++
		require.True(t, x.Inside, "%s box %d lies inside the picture", id, i)
		require.Greater(t, x.W, 40.0, "%s box %d has a width", id, i)
		require.Greater(t, x.H, 20.0, "%s box %d has a height", id, i)
		require.True(t, x.TextFit, "%s box %d: its text fits inside it", id, i)
	}
	if cuts >= 0 {
		require.Equal(t, map[string]int{"cut": cuts, "leaves": leaves}, count)
	}
	require.Positive(t, count["cut"], "%s draws its cuts", id)
}
