package alert

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
)

// Kind says what an alert is about.
type Kind string

// Alert kinds.
const (
	// KindFreshness: the table's last successful compaction is older than
	// its policy's freshness_sla.
	KindFreshness Kind = "freshness"
	// KindFailures: the table's runs failed alert_after_failures times in
	// a row.
	KindFailures Kind = "failures"
	// KindCheck: a connection check (floe doctor's) fails.
	KindCheck Kind = "check"
	// KindHalted: a run of the table failed a check that must never fail
	// (an invariant: rewritten content that does not match, an output
	// file gone before its commit, a lost run lease, a distributed
	// engine's commit that fails floe's read-back), so floe stopped
	// running it until a person resumes it (floe resume TABLE).
	KindHalted Kind = "halted"
	// KindUnreachable: a catalog could not be listed, or a table's
	// metadata read, for longer than server.unreachable_after: floe can
	// neither maintain nor judge what it cannot read.
	KindUnreachable Kind = "unreachable"
	// KindLate: a scheduled table's run was due (its schedule fired) and
	// has not started within server.run_late_after (or its maintenance
	// window).
	KindLate Kind = "late"
	// KindSilent: a telemetry source of floe.yaml (telemetry.sources)
	// delivered no new event for longer than its silence: its queries no
	// longer reach floe's plans and rankings.
	KindSilent Kind = "silent"
)

// State is whether an alert's condition holds.
type State string

// Alert states.
const (
	Firing   State = "firing"
	Resolved State = "resolved"
)

// Alert is one alert as evaluated and as sent: the whole value is the json
// sink format's body, so its JSON names are stable.
type Alert struct {
	Kind Kind `json:"kind"`
	// Key identifies the alert within its kind: the table for freshness,
	// failures and halted, the check's name for check.
	Key string `json:"key"`
	// Table is catalog.namespace.name, "" for a check.
	Table string `json:"table"`
	State State  `json:"state"`
	// Summary is one line for people, such as "local.web.events: last
	// compaction 63 h ago, SLA 48 h (run 20261129T101500Z-3fa9c2d1
	// failed: …)".
	Summary string `json:"summary"`
	// AgeHours and SLAHours are a freshness alert's compaction age and
	// SLA, in hours (0 for other kinds).
	AgeHours float64 `json:"age_hours"`
	SLAHours float64 `json:"sla_hours"`
	// Error is the error text of the newest failed run, or of a failing
	// check.
	Error string `json:"error"`
	// RunID is the newest failed run's id.
	RunID string `json:"run_id"`
	// Failures is how many runs failed in a row.
	Failures int `json:"failures"`
	// Since is when the condition began (a firing alert) or when it was
	// resolved (a resolved one).
	Since time.Time `json:"since,omitzero"`
	// LastSent is when floe last notified about this alert before this
	// notification (zero for the first); set by the [Notifier].
	LastSent time.Time `json:"last_sent,omitzero"`
	// At is when the alert was evaluated; set by the [Notifier].
	At time.Time `json:"at,omitzero"`
	// Repeat is true for a firing alert sent again because it still fires
	// after alerts.repeat; set by the [Notifier].
	Repeat bool `json:"repeat"`
}

// Run is what evaluation needs of one run (control.Run has it all).
type Run struct {
	ID string
	// Status is the run's status: done, failed and abandoned end a run;
	// any other (running) is passed over.
	Status    string
	Error     string
	StartedAt time.Time
	EndedAt   time.Time
}

// Run statuses that evaluation reads.
const (
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusAbandoned = "abandoned"
)

// Input is what [Evaluate] judges one table by: the compaction backlog
// measured from the table's metadata ([Input.ObserveHealth]) when it could
// be read, else what floe's run records say (with a dead catalog or bad
// credentials the store still says how old the last compaction is and how
// the runs went).
type Input struct {
	// Table is catalog.namespace.name.
	Table string
	// Policy is the table's effective policy: its FreshnessSLA (0: no
	// SLA) and AlertAfterFailures (0: 2).
	Policy policy.Policy
	// LastCompaction is the newest successful compaction known: floe's own
	// (control.LastCompaction), or the table metadata's when that is newer
	// ([Input.ObserveMetrics]). Zero when none is known.
	LastCompaction time.Time
	// HistorySince is when the table's history starts (its oldest
	// snapshot), to judge a table that was never compacted; zero when
	// unknown.
	HistorySince time.Time
	// Runs are the table's recent runs, newest first.
	Runs []Run
	// Backlog is the table's compaction backlog (lake.CompactionBacklog)
	// measured at BacklogAt; zero BacklogAt: not measured.
	Backlog   time.Duration
	BacklogAt time.Time
}

// ObserveHealth sets the backlog of health metrics measured at at, and
// folds in what [Input.ObserveMetrics] does.
func (in *Input) ObserveHealth(m lake.Metrics, at time.Time) {
	in.ObserveMetrics(m, at)
	in.Backlog, in.BacklogAt = time.Duration(m.BacklogAgeSec)*time.Second, at
}

// ObserveMetrics folds health metrics measured at at into in: the newest
// compaction in the table's metadata (which may be another engine's) and
// the start of its history.
func (in *Input) ObserveMetrics(m lake.Metrics, at time.Time) {
	if m.LastCompactionAgeSec >= 0 {
		if t := at.Add(-time.Duration(m.LastCompactionAgeSec) * time.Second); t.After(in.LastCompaction) {
			in.LastCompaction = t
		}
	}
	if m.OldestSnapshotAgeSec > 0 && in.HistorySince.IsZero() {
		in.HistorySince = at.Add(-time.Duration(m.OldestSnapshotAgeSec) * time.Second)
	}
}

// DefaultAlertAfterFailures is the failures alert's threshold when the
// policy gives none.
const DefaultAlertAfterFailures = 2

// Evaluate says whether table in's freshness and failures alerts fire at
// now, with their text. It is a pure function of its arguments. The
// freshness alert is left out when it cannot be judged (no compaction and
// no history known), so that a table whose metadata cannot be read keeps
// the state it had.
func Evaluate(in Input, now time.Time) []Alert {
	var out []Alert
	if a, ok := freshness(in, now); ok {
		out = append(out, a)
	}
	return append(out, failures(in, now))
}

func freshness(in Input, now time.Time) (Alert, bool) {
	a := Alert{Kind: KindFreshness, Key: in.Table, Table: in.Table, State: Resolved}
	sla := in.Policy.FreshnessSLA
	if sla <= 0 {
		a.Summary = in.Table + ": no freshness SLA"
		return a, true
	}
	a.SLAHours = hours(sla)
	var what string
	last := "never compacted"
	if !in.LastCompaction.IsZero() {
		last = fmt.Sprintf("last compaction %.0f h ago", now.Sub(in.LastCompaction).Hours())
	}
	switch {
	case !in.BacklogAt.IsZero():
		// Work waiting at BacklogAt waits on until a compaction covers it.
		backlog := in.Backlog
		if backlog > 0 {
			backlog += now.Sub(in.BacklogAt)
		}
		a.AgeHours = hours(backlog)
		what = fmt.Sprintf("writes have waited %.0f h for a compaction (%s)", backlog.Hours(), last)
		if backlog == 0 {
			what = "nothing waits for a compaction (" + last + ")"
		}
		if backlog > sla {
			a.State, a.Since = Firing, now.Add(sla-backlog)
		}
	case !in.LastCompaction.IsZero():
		age := now.Sub(in.LastCompaction)
		a.AgeHours = hours(age)
		what = fmt.Sprintf("last compaction %.0f h ago", age.Hours())
		if age > sla {
			a.State, a.Since = Firing, in.LastCompaction.Add(sla)
		}
	case !in.HistorySince.IsZero():
		age := now.Sub(in.HistorySince)
		a.AgeHours = hours(age)
		what = fmt.Sprintf("never compacted in %.0f h of history", age.Hours())
		if age > sla {
			a.State, a.Since = Firing, in.HistorySince.Add(sla)
		}
	default:
		return Alert{}, false
	}
	if a.State == Resolved {
		a.Summary = fmt.Sprintf("%s: fresh: %s, SLA %.0f h", in.Table, what, sla.Hours())
		return a, true
	}
	a.Summary = fmt.Sprintf("%s: %s, SLA %.0f h", in.Table, what, sla.Hours())
	if r, ok := newestEnded(in.Runs); ok && r.Status != StatusDone {
		a.RunID, a.Error = r.ID, r.Error
		a.Summary += fmt.Sprintf(" (run %s %s: %s)", r.ID, r.Status, clip(r.Error))
	} else if !ok {
		a.Summary += " (floe never ran on it)"
	}
	a.Summary += lookFurther(in.Table)
	return a, true
}

// lookFurther is the commands that say more of table's state.
func lookFurther(table string) string {
	arg := table
	if strings.ContainsAny(arg, " \t\"'$`\\") {
		arg = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
	}
	return fmt.Sprintf("; look further: floe health %s; floe runs %s", arg, arg)
}

func failures(in Input, now time.Time) Alert {
	a := Alert{Kind: KindFailures, Key: in.Table, Table: in.Table, State: Resolved}
	limit := in.Policy.AlertAfterFailures
	if limit <= 0 {
		limit = DefaultAlertAfterFailures
	}
	var newest, oldest Run
	for _, r := range in.Runs {
		if r.Status == StatusDone {
			break
		}
		if r.Status != StatusFailed && r.Status != StatusAbandoned {
			continue
		}
		if a.Failures == 0 {
			newest = r
		}
		oldest = r
		a.Failures++
	}
	if a.Failures < limit {
		switch last, ok := newestEnded(in.Runs); {
		case a.Failures > 0:
			a.Summary = fmt.Sprintf("%s: %d run(s) failed in a row, below alert_after_failures %d", in.Table, a.Failures, limit)
		case ok:
			a.Summary = fmt.Sprintf("%s: runs succeed (run %s done)", in.Table, last.ID)
		default:
			a.Summary = in.Table + ": no failed runs"
		}
		return a
	}
	a.State, a.RunID, a.Error = Firing, newest.ID, newest.Error
	a.Since = ended(oldest)
	a.Summary = fmt.Sprintf("%s: %d runs failed in a row (alert_after_failures %d); run %s %s: %s",
		in.Table, a.Failures, limit, newest.ID, newest.Status, clip(newest.Error)) + lookFurther(in.Table)
	return a
}

// Check is the alert of connection check name (floe doctor's checks): it
// fires while err is not nil and resolves when the check passes.
func Check(name string, err error) Alert {
	a := Alert{Kind: KindCheck, Key: name, State: Resolved, Summary: "check " + name + ": passes"}
	if err != nil {
		a.State, a.Error = Firing, err.Error()
		a.Summary = "check " + name + " fails: " + clip(a.Error)
	}
	return a
}

// Outage is what an unreachable alert says: what floe could not read,
// since when, and the newest error.
type Outage struct {
	// Target is what could not be read: "catalog NAME" or a table's
	// catalog.namespace.name.
	Target string
	// Table is the table, "" for a catalog.
	Table string
	// Since is the first failure of the outage.
	Since time.Time
	// Error is the newest failure.
	Error string
}

// Unreachable is the unreachable alert of o.Target: it fires once the
// outage has lasted after (server.unreachable_after) at now, and is
// resolved when o is nil (the target was read again). An outage shorter
// than after gives an alert with no state, which the caller drops.
func Unreachable(target string, o *Outage, after time.Duration, now time.Time) Alert {
	a := Alert{Kind: KindUnreachable, Key: target, State: Resolved, Summary: target + ": readable again"}
	if o == nil {
		return a
	}
	a.Table = o.Table
	if now.Sub(o.Since) < after {
		a.State = ""
		return a
	}
	what := "cannot be listed"
	if o.Table != "" {
		what = "metadata cannot be read"
	}
	a.State, a.Error, a.Since = Firing, o.Error, o.Since
	a.Summary = fmt.Sprintf("%s: %s for %s (unreachable_after %s), so floe neither maintains nor judges it: %s",
		target, what, now.Sub(o.Since).Round(time.Second), after, clip(o.Error))
	if o.Table != "" {
		a.Summary += lookFurther(o.Table)
	} else {
		a.Summary += "; look further: floe doctor"
	}
	return a
}

// Lateness is what a late alert says of a scheduled run that has not
// started.
type Lateness struct {
	// Due is when the table's schedule fired.
	Due time.Time
	// Deadline is when the run should have started by: Due plus
	// server.run_late_after, or the end of the maintenance window.
	Deadline time.Time
	// Schedule is the policy's cron schedule.
	Schedule string
	// Reason is the scheduler's last word on the table (backing off,
	// halted, busy, outside the window, its catalog unreachable).
	Reason string
}

// Late is the late alert of table: it fires while l is not nil (the run is
// past its deadline and has not started) and resolves when l is nil.
func Late(table string, l *Lateness, now time.Time) Alert {
	a := Alert{Kind: KindLate, Key: table, Table: table, State: Resolved, Summary: table + ": its scheduled run started"}
	if l == nil {
		return a
	}
	a.State, a.Since, a.Error = Firing, l.Deadline, l.Reason
	a.Summary = fmt.Sprintf("%s: the run scheduled %q, due at %s, has not started by %s (%s late)",
		table, l.Schedule, l.Due.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), now.Sub(l.Due).Round(time.Minute))
	if l.Reason != "" {
		a.Summary += ": " + clip(l.Reason)
	}
	a.Summary += lookFurther(table)
	return a
}

// Quiet is what a silent alert says of a telemetry source.
type Quiet struct {
	// Target names the source without secrets ("trino-prod (trino
	// http://floe@trino:8080)").
	Target string
	// Since is when the source last delivered a new event (when it was
	// first collected, if it never did).
	Since time.Time
	// Silence is the source's configured silence.
	Silence time.Duration
	// Error is the source's last collection error, "" when its
	// collections succeed and simply find nothing new.
	Error string
}

// Silent is the silent alert of telemetry source name: it fires while q is
// not nil (nothing new for longer than its silence) and resolves when q is
// nil (the source delivered again, or its silence is off).
func Silent(name string, q *Quiet, now time.Time) Alert {
	a := Alert{Kind: KindSilent, Key: name, State: Resolved, Summary: "telemetry source " + name + ": delivering again"}
	if q == nil {
		return a
	}
	a.State, a.Since, a.Error = Firing, q.Since, q.Error
	a.Summary = fmt.Sprintf("telemetry source %s: no new event for %s (silence %s)", q.Target, now.Sub(q.Since).Round(time.Second), q.Silence)
	if q.Error != "" {
		a.Summary += "; its collections fail: " + clip(q.Error)
	} else {
		a.Summary += "; its collections succeed and find nothing new"
	}
	a.Summary += "; look further: floe doctor, floe collect"
	return a
}

// Halt is what a halted alert says of a table's hold.
type Halt struct {
	// RunID is the run that failed.
	RunID string
	// Reason is its error.
	Reason string
	// Since is when the table was halted.
	Since time.Time
}

// Halted is the halted alert of table: it fires while h is not nil (the
// table is on hold) and resolves once the table is resumed (h nil).
func Halted(table string, h *Halt) Alert {
	a := Alert{Kind: KindHalted, Key: table, Table: table, State: Resolved, Summary: table + ": resumed; its runs start again"}
	if h != nil {
		a.State, a.RunID, a.Error, a.Since = Firing, h.RunID, h.Reason, h.Since
		a.Summary = fmt.Sprintf("%s: halted: run %s failed a check that must never fail: %s; no run starts until a person inspects the table and resumes it: floe resume %s",
			table, h.RunID, clip(h.Reason), table)
	}
	return a
}

// newestEnded is the newest run that ended (done, failed or abandoned).
func newestEnded(runs []Run) (Run, bool) {
	for _, r := range runs {
		switch r.Status {
		case StatusDone, StatusFailed, StatusAbandoned:
			return r, true
		}
	}
	return Run{}, false
}

func ended(r Run) time.Time {
	if r.EndedAt.IsZero() {
		return r.StartedAt
	}
	return r.EndedAt
}

// hours is d in hours to one decimal, so that the JSON stays readable.
func hours(d time.Duration) float64 { return math.Round(d.Hours()*10) / 10 }

// maxSummaryError is how much of an error text a summary quotes; the
// Error field has all of it.
const maxSummaryError = 300

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxSummaryError {
		return string(r[:maxSummaryError]) + "…"
	}
	return s
}
