package report_test

import (
	"bytes"
	"os"
	"path/filepath"
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
		require.Len(t, boxes, 5, "the fixture's charts")
	}
	browser.RequireDrawn(t, img, boxes)
}
