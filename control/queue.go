package control

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/floe-project/floe/lake"
)

// runQueue holds the runs [Scheduler.Enqueue] recorded as queued, in the
// order they were asked for, until [Scheduler.work] starts them.
type runQueue struct {
	mu sync.Mutex
	// closed is set when the worker stops: no run is queued after, so
	// that none is left behind. Runs queued before the worker starts wait
	// for it.
	closed bool
	items  []queuedRun
	// wake tells the worker that a run was queued (one slot: wakes
	// coalesce).
	wake chan struct{}
}

// queuedRun is one queued run: its record's id and what it runs.
type queuedRun struct {
	run Run
	req Request
}

// Enqueue records a run of table id by policy, asked for by by through the
// API (trigger api), as queued, and returns it at once: the daemon's run
// queue ([Daemon]) starts it when a run slot is free
// (server.max_concurrent_runs, shared with the scheduler's passes). GET
// /api/v1/runs/{id} then shows it queued, running, and ended. A halted
// table is refused with [ErrHalted], a table with a run queued or running
// with [ErrBusy], and, once the run queue stopped (the daemon is
// stopping), [ErrQueueStopped]; nothing is recorded then.
func (s *Scheduler) Enqueue(ctx context.Context, id lake.Ident, by string) (Run, error) {
	q := &s.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return Run{}, fmt.Errorf("queue a run of %s: %w: floe serve is stopping", id, ErrQueueStopped)
	}
	req := Request{Table: id, Trigger: TriggerAPI, User: by}
	run, err := s.opts.Service.Queue(ctx, req)
	if err != nil {
		return Run{}, err
	}
	req.RunID = run.ID
	q.items = append(q.items, queuedRun{run: run, req: req})
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return run, nil
}

// queued is how many runs wait.
func (q *runQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// pop takes the oldest queued run; the worker calls it only when one is
// there.
func (q *runQueue) pop() queuedRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

// work is the daemon's run queue: it starts each queued run, oldest first,
// once a run slot is free, under runCtx, and renews the leases of those
// that wait. When ctx ends it starts no more: the runs still queued are
// recorded cancelled (never started: the caller may ask again), and it
// waits for the runs it started, which end when they are done or when
// runCtx ends (the shutdown grace over).
func (s *Scheduler) work(ctx, runCtx context.Context) error {
	q := &s.q
	q.mu.Lock()
	q.closed = false
	q.mu.Unlock()
	var wg sync.WaitGroup
	renew := time.NewTicker(s.opts.LeaseTTL / 4)
	defer renew.Stop()
	var errs []error
	for ctx.Err() == nil {
		// A nil channel never takes a send: no slot is taken for an empty
		// queue.
		var slots chan struct{}
		if q.queued() > 0 {
			slots = s.slots
		}
		select {
		case <-ctx.Done():
		case <-q.wake:
		case <-renew.C:
			if err := s.renewQueued(ctx); err != nil {
				s.opts.Logger.Warn("queued runs' leases not renewed; another process may cancel them when they lapse", "err", err)
			}
		case slots <- struct{}{}:
			if ctx.Err() != nil {
				<-s.slots
				break
			}
			it := q.pop()
			wg.Go(func() {
				defer func() { <-s.slots }()
				// Service.Run logs the run and ends a refused one's record;
				// runTable keeps the backoff and the metrics.
				_, _ = s.runTable(runCtx, it.req)
			})
		}
	}
	q.mu.Lock()
	q.closed = true
	left := q.items
	q.items = nil
	q.mu.Unlock()
	rctx := context.WithoutCancel(ctx)
	for _, it := range left {
		err := s.opts.Store.EndQueuedRun(rctx, it.run.ID, string(StatusCancelled),
			"not started: floe serve stopped before a run slot was free; ask for the run again", s.opts.Now())
		if err != nil {
			errs = append(errs, fmt.Errorf("cancel queued run %s of %s: %w", it.run.ID, it.run.Table, err))
			continue
		}
		s.opts.Logger.Info("queued run cancelled: floe serve stopped before it started", "table", it.run.Table, "run_id", it.run.ID, "by", it.run.StartedBy)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// renewQueued extends the leases of the queued runs.
func (s *Scheduler) renewQueued(ctx context.Context) error {
	q := &s.q
	q.mu.Lock()
	ids := make([]string, 0, len(q.items))
	for _, it := range q.items {
		ids = append(ids, it.run.ID)
	}
	q.mu.Unlock()
	until := s.opts.Now().Add(s.opts.LeaseTTL)
	var errs []error
	for _, id := range ids {
		if err := s.opts.Store.RenewRun(ctx, id, until); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
