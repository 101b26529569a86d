package browser

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
)

// Artifacts is where a test keeps what it made: $FLOE_TEST_ARTIFACTS when
// set (CI uploads it), else a temporary directory.
func Artifacts(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("FLOE_TEST_ARTIFACTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// Open starts a headless Chromium for t, closed when t ends, and returns
// the context its actions run in (bounded to two minutes). It skips the
// test under -short and fails it when Debian's chromium is not installed
// (.ci/run installs it). The sandbox is off: tests here run as root.
func Open(t testing.TB) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a headless Chromium")
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH: install Debian's chromium (apt-get install -y chromium; .ci/run installs it when missing): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 900),
		chromedp.UserDataDir(t.TempDir()))...)
	t.Cleanup(cancelAlloc)
	b, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	return b
}

// Screenshot takes a full-page screenshot, keeps it as dir/name and
// returns it decoded.
func Screenshot(t testing.TB, b context.Context, dir, name string) image.Image {
	t.Helper()
	shot, err := chromedp.Run(b, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	return img
}

// Box is an SVG chart's place on the page, in CSS pixels.
type Box struct {
	ID string  `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	W  float64 `json:"w"`
	H  float64 `json:"h"`
}

// SVGBoxes returns the place of every SVG element matching selector
// ("svg", "#report svg").
func SVGBoxes(t testing.TB, b context.Context, selector string) []Box {
	t.Helper()
	boxes, err := chromedp.Run(b, chromedp.Evaluate[[]Box](`Array.from(document.querySelectorAll(`+jsString(selector)+`)).map(s => {
		const r = s.getBoundingClientRect();
		return {id: s.id, x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height};
	})`))
	require.NoError(t, err)
	return boxes
}

// RequireDrawn checks that every chart in boxes has a size and that the
// screenshot img holds ink inside it: axes, ticks, labels and bars ink
// well over 1% of a chart's box, an empty white box none.
func RequireDrawn(t testing.TB, img image.Image, boxes []Box) {
	t.Helper()
	require.NotEmpty(t, boxes, "no charts on the page")
	for _, b := range boxes {
		require.Greater(t, b.W, 100.0, "%s has no width", b.ID)
		require.Greater(t, b.H, 50.0, "%s has no height", b.ID)
		inked, total := ink(img, b)
		require.Positive(t, total, "%s lies outside the screenshot", b.ID)
		require.Greater(t, float64(inked)/float64(total), 0.01, "%s: %d of %d pixels drawn", b.ID, inked, total)
	}
}

// ink counts the pixels inside b that are not (near) white.
func ink(img image.Image, b Box) (inked, total int) {
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

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
