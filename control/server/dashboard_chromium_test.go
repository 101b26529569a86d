package server_test

import (
	"image"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	chromium "github.com/floe-project/floe/internal/browser"
)

// The dashboard works in a real browser: headless Chromium opens the
// overview (the table's row with its health), the table page (every chart
// draws), signs in through the form and approves the plan with its button,
// and the store then holds the plan approved. Screenshots of each page are
// kept as dashboard-*.png among the test's artefacts; docs/dashboard.png is
// the overview's.
func TestDashboardInChromium(t *testing.T) {
	browser := chromium.Open(t)
	e, plan, _ := dashEnv(t, tokenYAML)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	dir := chromium.Artifacts(t)

	shoot := func(name string) image.Image {
		t.Helper()
		return chromium.Screenshot(t, browser, dir, name)
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
	boxes := chromium.SVGBoxes(t, browser, "#report svg")
	img := shoot("dashboard-table.png")
	require.GreaterOrEqual(t, len(boxes), 2, "the report's charts")
	chromium.RequireDrawn(t, img, boxes)

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

// A dead catalog shows in a real browser as a banner naming it above the
// healthy catalog's tables. The screenshot is kept as
// dashboard-dead-catalog.png among the test's artefacts.
func TestDashboardDeadCatalogInChromium(t *testing.T) {
	browser := chromium.Open(t)
	e := newEnv(t, envOptions{extraCatalogs: "  dead:\n    type: rest\n    uri: " + closedPortURI(t) + "\n    floe.timeout: 2s\n"})
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	dir := chromium.Artifacts(t)

	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#catalog-errors")),
		chromedp.WaitVisible(chromedp.CSS("#tables"))))
	banner, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#catalog-errors")))
	require.NoError(t, err)
	require.Contains(t, banner, "1 catalog could not be listed")
	require.Contains(t, banner, "dead:")
	row, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#tables tbody tr")))
	require.NoError(t, err)
	require.Contains(t, row, "local.db.p", "the healthy catalog's table is still listed")
	img := chromium.Screenshot(t, browser, dir, "dashboard-dead-catalog.png")
	// The banner is drawn (ink in its box), above the tables.
	banners, tables := chromium.SVGBoxes(t, browser, "#catalog-errors"), chromium.SVGBoxes(t, browser, "#tables")
	require.Len(t, banners, 1)
	require.Len(t, tables, 1)
	chromium.RequireDrawn(t, img, banners)
	require.Less(t, banners[0].Y+banners[0].H, tables[0].Y, "the banner is above the tables")
}
