package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

// Options configure a [Notifier].
type Options struct {
	// Store keeps the alerts' state and deliveries. Required.
	Store *store.Store
	// Sinks receive every notification. None: alerts are only logged.
	Sinks []Sink
	// Repeat is how often a firing alert is sent again (alerts.repeat).
	// Default: 6h ([config.DefaultAlertRepeat]).
	Repeat time.Duration
	// Logger gets one line per notification and per failed delivery.
	// Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// OnNotify, when set, is called once per notification — a change of
	// state or a repeat — when it is decided, before delivery: the hook for
	// a floe_alerts_total{kind} counter.
	OnNotify func(Alert)
	// OnDeliveryError, when set, is called for every sink that could not
	// deliver a notification after its retries.
	OnDeliveryError func(sink string, a Alert, err error)
}

// Notifier turns evaluated alerts into notifications: it keeps each
// alert's state in the store, decides when to notify (a change of state, a
// repeat, a delivery still owed) and delivers to every sink.
type Notifier struct {
	o Options

	// unrecorded is when each firing alert was last sent while the state
	// store could not record it (see sendUnrecorded), by kind and key.
	mu         sync.Mutex
	unrecorded map[string]time.Time
}

// New returns a notifier; nil dependencies get safe defaults, a missing
// store is an error.
func New(o Options) (*Notifier, error) {
	if o.Store == nil {
		return nil, errors.New("alert notifier: a state store is required")
	}
	if o.Repeat <= 0 {
		o.Repeat = config.DefaultAlertRepeat
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	seen := map[string]bool{}
	for _, s := range o.Sinks {
		if seen[s.Name()] {
			return nil, fmt.Errorf("alert notifier: two sinks are named %q", s.Name())
		}
		seen[s.Name()] = true
	}
	return &Notifier{o: o}, nil
}

// Notify records alerts (from [Evaluate] and [Check]) and sends what is
// due, at the notifier's clock:
//
//   - an alert whose state changed (first firing, resolved, firing again)
//     is notified once;
//   - a firing alert is notified again once Repeat has passed since its
//     last notification reached every sink;
//   - a resolved alert never stored (it never fired) is ignored;
//   - a notification a sink did not take is sent to that sink again at the
//     next call, and is not repeated to the sinks that took it.
//
// Each notification is logged once, at warn when firing and info when
// resolved. It returns the alerts it notified or delivered, and the sinks'
// errors joined (each a [*SinkError], also logged). A sink that fails is
// not tried again within the same call.
func (n *Notifier) Notify(ctx context.Context, alerts ...Alert) ([]Alert, error) {
	now := n.o.Now().UTC()
	failed := map[string]error{}
	var (
		out  []Alert
		errs []error
	)
	quiet := n.quiet(ctx, alerts)
	for _, a := range alerts {
		if a.State == Resolved && quiet[string(a.Kind)+"\x00"+a.Key] {
			continue
		}
		sent, did, err := n.notify(ctx, a, now, failed)
		if did {
			out = append(out, sent)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out, errors.Join(errs...)
}

// quiet are the alerts among alerts (kind, NUL, key) for which a resolved
// alert is nothing to do, as the store says in one read: never stored, or
// stored resolved and said so. A lake's alerts are mostly resolved ones of
// healthy tables; this saves a read of each. Nil when there are too few
// alerts to be worth it or the read failed (each alert is then read alone,
// and a failing store is reported there).
func (n *Notifier) quiet(ctx context.Context, alerts []Alert) map[string]bool {
	resolved := 0
	for _, a := range alerts {
		if a.State == Resolved {
			resolved++
		}
	}
	if resolved < 2 {
		return nil
	}
	recs, err := n.o.Store.Alerts(ctx, "")
	if err != nil {
		return nil
	}
	loud := make(map[string]bool, len(recs))
	for _, r := range recs {
		if r.State != string(Resolved) || r.Pending {
			loud[r.Kind+"\x00"+r.Key] = true
		}
	}
	out := map[string]bool{}
	for _, a := range alerts {
		k := string(a.Kind) + "\x00" + a.Key
		if a.State == Resolved && !loud[k] {
			out[k] = true
		}
	}
	return out
}

func (n *Notifier) notify(ctx context.Context, a Alert, now time.Time, failed map[string]error) (Alert, bool, error) {
	if a.Kind == "" || a.Key == "" || (a.State != Firing && a.State != Resolved) {
		return a, false, fmt.Errorf("notify alert %s %q: kind, key and a state of firing or resolved are required", a.Kind, a.Key)
	}
	st := n.o.Store
	prev, err := st.Alert(ctx, string(a.Kind), a.Key)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return n.sendUnrecorded(ctx, a, now, fmt.Errorf("notify alert %s %s: %w", a.Kind, a.Key, err))
	}
	if !found && a.State == Resolved {
		return a, false, nil
	}
	next := record(a)
	next.ChangedAt, next.Seq, next.Pending, next.NotifiedAt = prev.ChangedAt, prev.Seq, prev.Pending, prev.NotifiedAt
	transition := !found || prev.State != string(a.State)
	fresh := false
	switch {
	case transition:
		next.ChangedAt, next.Seq, next.Pending, fresh = now, prev.Seq+1, true, true
	case a.State == Firing && !prev.Pending && !now.Before(prev.NotifiedAt.Add(n.o.Repeat)):
		next.Seq, next.Pending, fresh = prev.Seq+1, true, true
	case a.State == Resolved && !prev.Pending:
		return a, false, nil // resolved and said so: nothing to store or send
	}
	if a.Since.IsZero() || a.State == Resolved {
		a.Since = next.ChangedAt
	}
	next.Since = a.Since
	a.At, a.LastSent = now, prev.NotifiedAt
	// A repeat: this firing was notified everywhere once already.
	a.Repeat = a.State == Firing && !transition && !prev.NotifiedAt.IsZero() && !prev.NotifiedAt.Before(prev.ChangedAt)
	if err := st.PutAlert(ctx, next, prev.Seq); err != nil {
		if errors.Is(err, store.ErrStateConflict) {
			n.o.Logger.Info("alert changed by another floe process; it notifies", "kind", a.Kind, "key", a.Key)
			return a, false, nil
		}
		return n.sendUnrecorded(ctx, a, now, fmt.Errorf("notify alert %s %s: %w", a.Kind, a.Key, err))
	}
	if fresh {
		n.log(ctx, a)
		if n.o.OnNotify != nil {
			n.o.OnNotify(a)
		}
	}
	if !next.Pending {
		return a, false, nil
	}
	if err := n.deliver(ctx, a, next.Seq, now, failed); err != nil {
		return a, true, err
	}
	next.Pending, next.NotifiedAt = false, now
	if err := st.PutAlert(ctx, next, next.Seq); err != nil {
		return a, true, fmt.Errorf("notify alert %s %s: record delivery: %w", a.Kind, a.Key, err)
	}
	return a, true, nil
}

// sendUnrecorded sends a firing alert the state store cannot record (the
// store is down or damaged: the very failure an alert must report) to
// every sink and logs it, at most once per Repeat per alert in this
// process; its error is storeErr with the sinks' errors. A resolved alert
// is not sent: without the store floe cannot tell it ever fired.
func (n *Notifier) sendUnrecorded(ctx context.Context, a Alert, now time.Time, storeErr error) (Alert, bool, error) {
	if a.State != Firing {
		return a, false, storeErr
	}
	key := string(a.Kind) + "\x00" + a.Key
	n.mu.Lock()
	last, seen := n.unrecorded[key]
	due := !seen || !now.Before(last.Add(n.o.Repeat))
	if due {
		if n.unrecorded == nil {
			n.unrecorded = map[string]time.Time{}
		}
		n.unrecorded[key] = now
	}
	n.mu.Unlock()
	if !due {
		return a, false, storeErr
	}
	a.At, a.Repeat = now, seen
	if a.Since.IsZero() {
		a.Since = now
	}
	n.o.Logger.Error("alert sent without the state store, which cannot record it", "kind", a.Kind, "key", a.Key, "err", storeErr)
	n.log(ctx, a)
	if n.o.OnNotify != nil {
		n.o.OnNotify(a)
	}
	errs := []error{storeErr}
	for _, s := range n.o.Sinks {
		if err := s.Send(ctx, a); err != nil {
			n.o.Logger.Error("alert not delivered", "kind", a.Kind, "key", a.Key, "sink", s.Name(), "err", err)
			errs = append(errs, fmt.Errorf("alert %s %s: %w", a.Kind, a.Key, err))
		}
	}
	return a, true, errors.Join(errs...)
}

// deliver sends notification seq of a to every sink that has not received
// it, in parallel, and records each delivery.
func (n *Notifier) deliver(ctx context.Context, a Alert, seq int64, now time.Time, failed map[string]error) error {
	st := n.o.Store
	got, err := st.AlertDeliveries(ctx, string(a.Kind), a.Key)
	if err != nil {
		return fmt.Errorf("notify alert %s %s: %w", a.Kind, a.Key, err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, s := range n.o.Sinks {
		if got[s.Name()] >= seq {
			continue
		}
		mu.Lock()
		ferr := failed[s.Name()]
		mu.Unlock()
		if ferr != nil {
			errs = append(errs, fmt.Errorf("alert %s %s: sink %s failed earlier in this evaluation; retried at the next", a.Kind, a.Key, s.Name()))
			continue
		}
		wg.Go(func() {
			err := s.Send(ctx, a)
			if err == nil {
				err = st.RecordAlertDelivery(ctx, string(a.Kind), a.Key, s.Name(), seq, now)
			} else {
				n.o.Logger.Error("alert not delivered; retried at the next evaluation", "kind", a.Kind, "key", a.Key, "sink", s.Name(), "err", err)
				if n.o.OnDeliveryError != nil {
					n.o.OnDeliveryError(s.Name(), a, err)
				}
			}
			if err != nil {
				mu.Lock()
				failed[s.Name()] = err
				errs = append(errs, fmt.Errorf("alert %s %s: %w", a.Kind, a.Key, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// log writes the alert's line: warn while firing, info when resolved.
func (n *Notifier) log(ctx context.Context, a Alert) {
	level := slog.LevelWarn
	if a.State == Resolved {
		level = slog.LevelInfo
	}
	attrs := []slog.Attr{slog.String("kind", string(a.Kind)), slog.String("key", a.Key), slog.String("state", string(a.State)),
		slog.String("summary", a.Summary)}
	if a.Table != "" {
		attrs = append(attrs, slog.String("table", a.Table))
	}
	if a.Kind == KindFreshness {
		attrs = append(attrs, slog.Float64("age_hours", a.AgeHours), slog.Float64("sla_hours", a.SLAHours))
	}
	if a.Failures > 0 {
		attrs = append(attrs, slog.Int("failures", a.Failures))
	}
	if a.RunID != "" {
		attrs = append(attrs, slog.String("run_id", a.RunID))
	}
	if a.Error != "" {
		attrs = append(attrs, slog.String("error", a.Error))
	}
	attrs = append(attrs, slog.Time("since", a.Since), slog.Bool("repeat", a.Repeat))
	if !a.LastSent.IsZero() {
		attrs = append(attrs, slog.Time("last_sent", a.LastSent))
	}
	n.o.Logger.LogAttrs(ctx, level, "alert", attrs...)
}

// Active returns the alerts that are firing, as last evaluated, the most
// recently changed first.
func (n *Notifier) Active(ctx context.Context) ([]Alert, error) {
	recs, err := n.o.Store.Alerts(ctx, string(Firing))
	if err != nil {
		return nil, fmt.Errorf("active alerts: %w", err)
	}
	out := make([]Alert, 0, len(recs))
	for _, r := range recs {
		out = append(out, fromRecord(r))
	}
	return out, nil
}

func record(a Alert) store.AlertRecord {
	return store.AlertRecord{
		Kind: string(a.Kind), Key: a.Key, Table: a.Table, State: string(a.State), Summary: a.Summary,
		Age: time.Duration(a.AgeHours * float64(time.Hour)), SLA: time.Duration(a.SLAHours * float64(time.Hour)),
		Error: a.Error, RunID: a.RunID, Failures: a.Failures, Since: a.Since,
	}
}

func fromRecord(r store.AlertRecord) Alert {
	return Alert{
		Kind: Kind(r.Kind), Key: r.Key, Table: r.Table, State: State(r.State), Summary: r.Summary,
		AgeHours: hours(r.Age), SLAHours: hours(r.SLA), Error: r.Error, RunID: r.RunID, Failures: r.Failures,
		Since: r.Since, LastSent: r.NotifiedAt,
	}
}
