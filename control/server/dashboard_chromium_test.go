package server_test

import (
	"fmt"
	"image"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/server"
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

// The dashboard is usable at a lake of many real tables in a real browser:
// the overview shows the first 50 with "1–50 of N", the next link moves to
// the next 50, the search box narrows to the matching tables, a column
// header sorts, and the state filter keeps one health. Screenshots are kept
// as dashboard-scale-*.png among the test's artefacts. The lake has a few
// hundred tables; FLOE_DASHBOARD_TABLES=10000 runs the same test at 10,000
// (the benchmark's screenshot).
func TestDashboardAtScaleInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a lake and starts a headless Chromium")
	}
	n := dashboardTables(t)
	e := newScaleEnv(t, n, server.Options{TableIndexWait: 10 * time.Minute, TableIndexWorkers: 2})
	// The first request after start waits for the measuring of the lake.
	start := time.Now()
	require.Nil(t, e.tables(url.Values{"limit": {"1"}}).Measuring)
	t.Logf("first request, measuring %d tables, in %s", n, time.Since(start).Round(time.Millisecond))
	// The browser's two minutes start after the lake is made and measured.
	browser := chromium.Open(t)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	dir := chromium.Artifacts(t)
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return s
	}
	rows := func() []string {
		t.Helper()
		out, err := chromedp.Run(browser, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("#tables tbody tr td:first-child")).map(td => td.textContent)`))
		require.NoError(t, err)
		return out
	}
	total := fmt.Sprintf("%d", n)
	if n >= 1000 {
		total = fmt.Sprintf("%d,%03d", n/1000, n%1000)
	}

	start = time.Now()
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#tables"))))
	t.Logf("overview in %s", time.Since(start).Round(time.Millisecond))
	require.Equal(t, "1–50 of "+total+" tables · next ›", strings.TrimSpace(text("#paging")))
	first := rows()
	require.Len(t, first, 50)
	require.True(t, slices.IsSorted(first), "by name")
	chromium.Screenshot(t, browser, dir, "dashboard-scale-overview.png")

	// The next page: the next 50, after the first.
	start = time.Now()
	require.NoError(t, chromedp.Do(browser, chromedp.Click(chromedp.CSS("#next")), chromedp.WaitVisible(chromedp.CSS("#prev"))))
	t.Logf("next page in %s", time.Since(start).Round(time.Millisecond))
	require.Contains(t, text("#paging"), "51–100 of "+total)
	second := rows()
	require.Len(t, second, 50)
	require.Less(t, first[49], second[0])

	// The search box narrows the lake to the matching tables.
	start = time.Now()
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(chromedp.CSS("#q"), "payments_0001"), chromedp.Submit(chromedp.CSS("#search")),
		chromedp.WaitVisible(chromedp.CSS(`#search input[value="payments_0001"]`))))
	t.Logf("search in %s", time.Since(start).Round(time.Millisecond))
	var want []string
	for _, id := range e.ids {
		if strings.Contains(id.String(), "payments_0001") {
			want = append(want, id.String())
		}
	}
	require.NotEmpty(t, want)
	got := rows()
	require.Len(t, got, min(len(want), 50))
	for _, name := range got {
		require.Contains(t, name, "payments_0001")
	}
	require.Contains(t, text("#paging"), fmt.Sprintf("of %d table", len(want)))
	chromium.Screenshot(t, browser, dir, "dashboard-scale-search.png")

	// Sorting by health, worst first, keeps the search; the state filter
	// keeps only healthy tables.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#tables")),
		chromedp.Click(chromedp.CSS(`#tables th a[href*="sort=-health"]`)), chromedp.WaitReady(chromedp.CSS(`#search input[name="sort"]`))))
	badge, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS("#tables tbody tr td:nth-child(2)")))
	require.NoError(t, err)
	require.NotEqual(t, "healthy", strings.TrimSpace(badge), "every tenth table has small files: one of them comes first")
	require.NoError(t, chromedp.Do(browser, chromedp.SetValue(chromedp.CSS(`#search select[name="state"]`), "healthy"),
		chromedp.Submit(chromedp.CSS("#search")), chromedp.WaitReady(chromedp.CSS(`#search option[selected]`))))
	badges, err := chromedp.Run(browser, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#tables tbody tr td:nth-child(2)")).map(td => td.textContent.trim())`))
	require.NoError(t, err)
	require.NotEmpty(t, badges)
	for _, b := range badges {
		require.Equal(t, "healthy", b)
	}
	chromium.Screenshot(t, browser, dir, "dashboard-scale-healthy.png")
}
