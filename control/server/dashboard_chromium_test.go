package server_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
)

// box is an SVG chart's place on the page, in CSS pixels.
type box struct {
	ID string  `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// artifacts is where the test keeps its screenshots: $FLOE_TEST_ARTIFACTS
// when set (CI uploads it), else a temporary directory.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("FLOE_TEST_ARTIFACTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// The dashboard works in a real browser: headless Chromium opens the
// overview (the table's row with its health), the table page (every chart
// draws), signs in through the form and approves the plan with its button,
// and the store then holds the plan approved. Screenshots of each page are
// kept as dashboard-*.png among the test's artefacts; docs/dashboard.png is
// the overview's.
func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless Chromium")
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH: install Debian's chromium (apt-get install -y chromium; .ci/run installs it when missing): %v", err)
	}
	e, plan, _ := dashEnv(t, tokenYAML)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	dir := artifacts(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 900),
		chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	shoot := func(name string) image.Image {
		t.Helper()
		shot, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		out := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(out, shot, 0o644))
		t.Logf("screenshot: %s", out)
		img, err := png.Decode(bytes.NewReader(shot))
		require.NoError(t, err)
		return img
	}

	// The overview lists the table with its health.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#tables"))))
	row, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#tables tbody tr")))
	require.NoError(t, err)
	require.Contains(t, row, "local.db.p")
	require.Contains(t, row, "healthy")
	shoot("dashboard-overview.png")

	// The table page's charts draw.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/tables/db.p"), chromedp.WaitVisible(chromedp.CSS("#report"))))
	boxes, err := chromedp.Run(browser, chromedp.Evaluate[[]box](`Array.from(document.querySelectorAll("#report svg")).map(s => {
		const r = s.getBoundingClientRect();
		return {id: s.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
	})`))
	require.NoError(t, err)
	img := shoot("dashboard-table.png")
	require.GreaterOrEqual(t, len(boxes), 2, "the report's charts")
	for _, b := range boxes {
		require.Greater(t, b.W, 100.0, "%s has no width", b.ID)
		require.Greater(t, b.H, 50.0, "%s has no height", b.ID)
		inked, total := ink(img, b)
		require.Positive(t, total, "%s lies outside the screenshot", b.ID)
		require.Greater(t, float64(inked)/float64(total), 0.01, "%s: %d of %d pixels drawn", b.ID, inked, total)
	}

	// Sign in through the form, then approve with the plan's button.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/signin"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), writeToken), chromedp.Submit(chromedp.CSS("#signin")), chromedp.WaitVisible(chromedp.CSS(".who form"))))
	loc, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/", loc, "sign-in goes back to the overview")
	planRow := `[id="plan-` + plan.ID + `"]`
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/tables/db.p"),
		chromedp.WaitVisible(chromedp.CSS(planRow+" button.approve")), chromedp.Click(chromedp.CSS(planRow+" button.approve"))))
	require.Eventually(t, func() bool { return e.planState(plan.ID) == control.PlanApproved }, 20*time.Second, 100*time.Millisecond,
		"the plan is approved in the store")
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(chromedp.CSS(planRow))))
	state, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(planRow+" td.state")))
	require.NoError(t, err)
	require.Equal(t, "approved", state)
	shoot("dashboard-approved.png")
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
