package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/lake"
)

// tableIndex is what the table views (GET /api/v1/tables, the overview)
// read: every table's summary, so that a request sorts, filters and pages
// the lake without measuring it. Each table is measured through
// [control.Service.Health], which reads the table's manifests only when its
// metadata location moved (the service's state cache; the index keeps no
// states, only summaries).
//
// A refresh lists the catalogs and measures every table again, in the
// background with a few workers, tables never measured first; one runs at a
// time and every request shares it. A request starts one when the last is
// older than maxAge. The tables a floe run ended on since the previous
// request ([store.Store.TablesRunSince], one indexed query) are measured
// again at once, so a run shows in the next answer; other writers' commits
// show at the next refresh. The first request after start waits for the
// first refresh's listing of the catalogs (bounded by their timeouts) and
// for its measuring up to wait, then answers with what is measured so far
// and says how far it got ([indexView.Measured] of [indexView.Listed]): no
// request blocks for the lake.
type tableIndex struct {
	indexDeps
	// life bounds the background refreshes: the server's context (see
	// [New]); they outlive the request that started them.
	life context.Context

	mu   sync.Mutex
	rows map[string]*indexRow
	// order is the listing's order of rows' keys.
	order   []string
	catErrs []control.CatalogError
	listErr error
	// refreshedAt is when the last finished refresh started; zero before
	// the first.
	refreshedAt time.Time
	// flight is the refresh in progress; nil when none is.
	flight *indexFlight
	// runsCheckedAt is when the runs were last asked for tables to measure
	// again; zero until the first refresh starts.
	runsCheckedAt time.Time
	// remeasure serializes the measuring of recently run tables, so
	// concurrent requests share it.
	remeasure sync.Mutex
}

// indexDeps are what a [tableIndex] measures with, and its options.
type indexDeps struct {
	list    func(ctx context.Context) ([]lake.Ident, []control.CatalogError, error)
	measure func(ctx context.Context, id lake.Ident) TableSummary
	// ranSince lists the tables floe runs ended on since a time.
	ranSince func(ctx context.Context, since time.Time) ([]string, error)
	now      func() time.Time
	maxAge   time.Duration
	wait     time.Duration
	workers  int
}

// indexRow is one table of the index.
type indexRow struct {
	id  lake.Ident
	sum TableSummary
	// measured says sum holds a measurement (health or error).
	measured bool
}

// indexFlight is one refresh in progress: listed is closed when the
// catalogs are listed (or could not be), done when it ends.
type indexFlight struct {
	listed, done chan struct{}
}

// indexView is what one request sees of the index.
type indexView struct {
	// Rows are every listed table, in the listing's order.
	Rows          []indexRow
	CatalogErrors []control.CatalogError
	// Listed is how many tables the catalogs listed; Measured how many of
	// them are measured. Measured < Listed only before the first refresh
	// ends.
	Listed, Measured int
}

// Complete says every table is measured.
func (v indexView) Complete() bool { return v.Measured == v.Listed }

// remeasureInline is how many recently run tables a request measures
// itself; more wait for a refresh.
const remeasureInline = 32

// ranSlack widens the window of [tableIndex.ranSince] for clocks of other
// replicas that run behind this one's.
const ranSlack = time.Minute

func newTableIndex(life context.Context, d indexDeps) *tableIndex {
	return &tableIndex{indexDeps: d, life: life, rows: map[string]*indexRow{}}
}

// view answers a request: it starts a refresh when due, measures again the
// tables floe ran since the last request, waits for a first refresh up to
// ix.wait, and returns a copy of the rows.
func (ix *tableIndex) view(ctx context.Context) (indexView, error) {
	ix.mu.Lock()
	f := ix.flight
	if f == nil && (ix.refreshedAt.IsZero() || ix.now().Sub(ix.refreshedAt) >= ix.maxAge) {
		f = ix.startLocked()
	}
	first := ix.refreshedAt.IsZero()
	ix.mu.Unlock()
	if first {
		// The listing is bounded by the catalogs' timeouts; the measuring
		// by ix.wait.
		select {
		case <-f.listed:
		case <-ctx.Done():
			return indexView{}, ctx.Err()
		}
		timer := time.NewTimer(ix.wait)
		select {
		case <-f.done:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return indexView{}, ctx.Err()
		}
		timer.Stop()
	} else if err := ix.measureRan(ctx); err != nil {
		return indexView{}, err
	}
	return ix.snapshot()
}

// snapshot copies the rows.
func (ix *tableIndex) snapshot() (indexView, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.listErr != nil && len(ix.order) == 0 {
		return indexView{}, ix.listErr
	}
	v := indexView{Rows: make([]indexRow, 0, len(ix.order)), CatalogErrors: ix.catErrs, Listed: len(ix.order)}
	for _, k := range ix.order {
		r := ix.rows[k]
		if r.measured {
			v.Measured++
		}
		v.Rows = append(v.Rows, *r)
	}
	return v, nil
}

// startLocked starts a refresh. Called with ix.mu held.
func (ix *tableIndex) startLocked() *indexFlight {
	f := &indexFlight{listed: make(chan struct{}), done: make(chan struct{})}
	ix.flight = f
	started := ix.now()
	if ix.runsCheckedAt.IsZero() {
		ix.runsCheckedAt = started
	}
	go func() {
		defer close(f.done)
		err := ix.refresh(ix.life, f.listed)
		ix.mu.Lock()
		defer ix.mu.Unlock()
		ix.flight = nil
		if err == nil {
			ix.refreshedAt = started
		}
	}()
	return f
}

// refresh lists the tables, closes listed, and measures each table, those
// never measured first. It returns an error only when the listing failed
// or ctx ended.
func (ix *tableIndex) refresh(ctx context.Context, listed chan struct{}) error {
	defer func() {
		select {
		case <-listed:
		default:
			close(listed)
		}
	}()
	ids, catErrs, err := ix.list(ctx)
	ix.mu.Lock()
	ix.listErr = err
	if err != nil {
		ix.mu.Unlock()
		return err
	}
	ix.catErrs = catErrs
	rows := make(map[string]*indexRow, len(ids))
	order := make([]string, 0, len(ids))
	var fresh, known []lake.Ident
	for _, id := range ids {
		k := id.String()
		if _, dup := rows[k]; dup {
			continue
		}
		r := ix.rows[k]
		if r == nil {
			r = &indexRow{id: id, sum: TableSummary{Table: k}}
			fresh = append(fresh, id)
		} else {
			known = append(known, id)
		}
		rows[k] = r
		order = append(order, k)
	}
	ix.rows, ix.order = rows, order
	ix.mu.Unlock()
	close(listed)

	work := make(chan lake.Ident)
	var wg sync.WaitGroup
	for range max(ix.workers, 1) {
		wg.Go(func() {
			for id := range work {
				ix.put(id, ix.measure(ctx, id))
			}
		})
	}
feed:
	for _, id := range append(fresh, known...) {
		select {
		case work <- id:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return ctx.Err()
}

// put records sum as table id's measurement, when the table is still
// listed.
func (ix *tableIndex) put(id lake.Ident, sum TableSummary) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if r := ix.rows[id.String()]; r != nil {
		r.sum, r.measured = sum, true
	}
}

// measureRan measures again the listed tables floe ran since the last
// check: up to remeasureInline of them now, more by a refresh.
func (ix *tableIndex) measureRan(ctx context.Context) error {
	ix.remeasure.Lock()
	defer ix.remeasure.Unlock()
	ix.mu.Lock()
	since := ix.runsCheckedAt
	ix.mu.Unlock()
	if since.IsZero() {
		return nil
	}
	checked := ix.now()
	names, err := ix.ranSince(ctx, since.Add(-ranSlack))
	if err != nil {
		return err
	}
	var ids []lake.Ident
	seen := map[string]bool{}
	ix.mu.Lock()
	for _, n := range names {
		for _, k := range ix.keysOfLocked(n) {
			if !seen[k] {
				seen[k] = true
				ids = append(ids, ix.rows[k].id)
			}
		}
	}
	if len(ids) > remeasureInline {
		if ix.flight == nil {
			ix.startLocked()
		}
		ids = nil
	}
	ix.runsCheckedAt = checked
	ix.mu.Unlock()
	for _, id := range ids {
		ix.put(id, ix.measure(ctx, id))
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// keysOfLocked are the keys of the rows a run's table name names: runs
// spell a table as they were asked, so the name is compared
// case-insensitively. Called with ix.mu held.
func (ix *tableIndex) keysOfLocked(name string) []string {
	if _, ok := ix.rows[name]; ok {
		return []string{name}
	}
	var out []string
	for k := range ix.rows {
		if strings.EqualFold(k, name) {
			out = append(out, k)
		}
	}
	return out
}

// observe records a measurement a request made anyway (a table's page).
func (ix *tableIndex) observe(id lake.Ident, sum TableSummary) { ix.put(id, sum) }
