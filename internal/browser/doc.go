// Package browser drives Debian's headless Chromium from tests (through
// chromedp) for everything a person looks at: the HTML report and the
// daemon's dashboard. It starts the browser, keeps screenshots as test
// artefacts ($FLOE_TEST_ARTIFACTS when set) and checks that SVG charts
// drew. Tests only: the floe binary never imports it.
package browser
