package report_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/report"
)

// box is an SVG chart's place on the page, in CSS pixels.
type box struct {
	ID string  `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// artifacts is where the test keeps what it made: $FLOE_TEST_ARTIFACTS
// when set (CI uploads it), else a temporary directory.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("FLOE_TEST_ARTIFACTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// The HTML report renders in a real browser and every chart draws: the
// report is opened in headless Chromium, screenshotted whole (kept as
// report.png among the test's artefacts), and inside each SVG's bounding box
// the screenshot must hold pixels other than the chart's white background.
//
// FLOE_REPORT_HTML names another report to render instead of the fixture:
// how docs/report.png is made from the demo's floe-data/report.html.
func TestHTMLRendersInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless Chromium")
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH: install Debian's chromium (apt-get install -y chromium; .ci/run installs it when missing): %v", err)
	}
	dir := artifacts(t)
	page := os.Getenv("FLOE_REPORT_HTML")
	if page == "" {
		var b bytes.Buffer
		require.NoError(t, report.HTML(&b, fixture()))
		page = filepath.Join(dir, "report.html")
		require.NoError(t, os.WriteFile(page, b.Bytes(), 0o644))
	}
	page, err = filepath.Abs(page)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 900),
		chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	require.NoError(t, chromedp.Do(browser, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")))
	boxes, err := chromedp.Run(browser, chromedp.Evaluate[[]box](`Array.from(document.querySelectorAll("svg")).map(s => {
		const r = s.getBoundingClientRect();
		return {id: s.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
	})`))
	require.NoError(t, err)
	shot, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(dir, "report.png")
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)

	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	if os.Getenv("FLOE_REPORT_HTML") == "" {
		require.Len(t, boxes, 5, "the fixture's charts")
	}
	require.NotEmpty(t, boxes)
	for _, b := range boxes {
		require.Greater(t, b.W, 100.0, "%s has no width", b.ID)
		require.Greater(t, b.H, 50.0, "%s has no height", b.ID)
		inked, total := ink(img, b)
		require.Greater(t, total, 0, "%s lies outside the screenshot", b.ID)
		// Axes, ticks, labels and bars: a chart that drew inks well over 1%
		// of its box; an empty white box inks nothing.
		require.Greater(t, float64(inked)/float64(total), 0.01, "%s: %d of %d pixels drawn", b.ID, inked, total)
	}
}

// ink counts the pixels inside b that are not (near) white.
func ink(img image.Image, b box) (inked, total int) {
	r := image.Rect(int(b.X), int(b.Y), int(b.X+b.W), int(b.Y+b.H)).Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			total++
			if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				inked++
			}
		}
	}
	return inked, total
}
