package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// PlanRecord is a stored layout plan. The control plane owns its meaning;
// the store keeps it and guards its state changes.
type PlanRecord struct {
	// ID is the plan's stable hash of table, base snapshot and layout.
	ID string `json:"id"`
	// Table is catalog.namespace.name.
	Table        string `json:"table"`
	BaseSnapshot int64  `json:"base_snapshot"`
	// Layout is the layout's canonical text (strategy and columns).
	Layout string `json:"layout"`
	// Projection is the simulator's projection, as JSON.
	Projection json.RawMessage `json:"projection,omitempty"`
	// State is proposed, approved, rejected, running, done, failed or stale.
	State     string    `json:"state"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	DecidedBy string    `json:"decided_by,omitempty"`
	// DecidedAt is zero until the plan leaves its first state.
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// InsertPlan stores p. A plan with the same ID is already stored — the same
// table, snapshot and layout proposed again — is left as it is (its state
// and decision are kept) and inserted is false.
func (s *Store) InsertPlan(ctx context.Context, p PlanRecord) (inserted bool, err error) {
	if p.ID == "" || p.Table == "" || p.State == "" {
		return false, fmt.Errorf("insert plan: id, table and state are required")
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = s.now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO plans (id, table_name, table_key, base_snapshot, layout, projection_json,
	state, created_by, created_at, decided_by, decided_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		p.ID, p.Table, filterKey(p.Table), p.BaseSnapshot, p.Layout, string(p.Projection), p.State, p.CreatedBy,
		p.CreatedAt.UTC().UnixNano(), p.DecidedBy, nanos(p.DecidedAt))
	if err != nil {
		return false, fmt.Errorf("insert plan %s: %w", p.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("insert plan %s: %w", p.ID, err)
	}
	return n == 1, nil
}

const planColumns = `id, table_name, base_snapshot, layout, projection_json, state, created_by, created_at, decided_by, decided_at`

func scanPlan(sc interface{ Scan(...any) error }) (PlanRecord, error) {
	var (
		p       PlanRecord
		proj    string
		created int64
		decided sql.NullInt64
	)
	if err := sc.Scan(&p.ID, &p.Table, &p.BaseSnapshot, &p.Layout, &proj, &p.State, &p.CreatedBy, &created, &p.DecidedBy, &decided); err != nil {
		return PlanRecord{}, err
	}
	if proj != "" {
		p.Projection = json.RawMessage(proj)
	}
	p.CreatedAt, p.DecidedAt = time.Unix(0, created).UTC(), fromNanos(decided)
	return p, nil
}

// Plan returns the plan with id, or a [*NotFoundError].
func (s *Store) Plan(ctx context.Context, id string) (PlanRecord, error) {
	p, err := scanPlan(s.db.QueryRowContext(ctx, `SELECT `+planColumns+` FROM plans WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return PlanRecord{}, &NotFoundError{Kind: "plan", ID: id}
	}
	if err != nil {
		return PlanRecord{}, fmt.Errorf("read plan %s: %w", id, err)
	}
	return p, nil
}

// PlanFilter selects plans; empty fields select all.
type PlanFilter struct {
	// Table is catalog.namespace.name, compared case-insensitively.
	Table string
	State string
}

// Plans lists the plans f selects, newest first.
func (s *Store) Plans(ctx context.Context, f PlanFilter) ([]PlanRecord, error) {
	return s.plans(ctx, f, nil, 0)
}

// plans lists the plans of [plansQuery].
func (s *Store) plans(ctx context.Context, f PlanFilter, after *PlanCursor, limit int) (out []PlanRecord, err error) {
	q, args := plansQuery(f, after, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		p, err := scanPlan(rows)
		if err != nil {
			return nil, fmt.Errorf("list plans: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list plans: %w", err)
	}
	return out, nil
}

// plansQuery is the query of [Store.Plans] and [Store.PlansPage] and its
// arguments: by table, through the plans_table_key index; after, when not
// nil, starts after that plan; limit, when positive, bounds the rows.
func plansQuery(f PlanFilter, after *PlanCursor, limit int) (string, []any) {
	var conds []string
	var args []any
	if f.Table != "" {
		conds = append(conds, `table_key = ?`)
		args = append(args, filterKey(f.Table))
	}
	if f.State != "" {
		conds = append(conds, `state = ?`)
		args = append(args, f.State)
	}
	if after != nil {
		// Newest first, then by id: the plans after the cursor's.
		at := after.CreatedAt.UTC().UnixNano()
		conds = append(conds, `(created_at < ? OR (created_at = ? AND id > ?))`)
		args = append(args, at, at, after.ID)
	}
	q := `SELECT ` + planColumns + ` FROM plans`
	if len(conds) > 0 {
		q += ` WHERE ` + strings.Join(conds, " AND ")
	}
	q += ` ORDER BY created_at DESC, id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	return q, args
}

// PlanCounts counts the stored plans by state; a state no plan is in is
// absent.
func (s *Store) PlanCounts(ctx context.Context) (out map[string]int, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, count(*) FROM plans GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count plans: %w", err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	out = map[string]int{}
	for rows.Next() {
		var (
			state string
			n     int
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("count plans: %w", err)
		}
		out[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count plans: %w", err)
	}
	return out, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return s.redact(fmt.Errorf("ping state store %s: %w", s.desc, err))
	}
	if _, err := s.Version(ctx); err != nil {
		return s.redact(fmt.Errorf("ping state store %s: %w", s.desc, err))
	}
	return nil
}

// Check is the store's health: it answers (see [Store.Ping]), takes a
// write (an update rolled back, so a read-only or locked database fails
// it), and, on SQLite, its file passes an integrity check (PRAGMA
// quick_check), run at most every [IntegrityCheckEvery] since it reads the
// whole file. A damaged state file fails it, so readiness, floe doctor and
// the daemon's store check say so rather than every table's pass failing
// behind a green probe.
func (s *Store) Check(ctx context.Context) error {
	if err := s.Ping(ctx); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err == nil {
		_, err = tx.ExecContext(ctx, `UPDATE schema_migrations SET version = version WHERE version = (SELECT max(version) FROM schema_migrations)`)
		err = errors.Join(err, rollback(tx))
	}
	if err != nil {
		return s.redact(fmt.Errorf("state store %s: write probe: %w", s.desc, err))
	}
	if s.d != sqliteDialect {
		return nil
	}
	s.integrity.mu.Lock()
	defer s.integrity.mu.Unlock()
	now := s.now()
	if !s.integrity.at.IsZero() && now.Sub(s.integrity.at) < IntegrityCheckEvery && s.integrity.err == nil {
		return nil
	}
	var verdict string
	err = s.db.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&verdict)
	if err == nil && verdict != "ok" {
		err = errors.New(verdict)
	}
	s.integrity.at, s.integrity.err = now, err
	if err != nil {
		return s.redact(fmt.Errorf("state store %s: integrity check: %w", s.desc, err))
	}
	return nil
}

// IntegrityCheckEvery is how often [Store.Check] reads a SQLite state file
// through to check its integrity (a failed check is repeated at once).
const IntegrityCheckEvery = 5 * time.Minute

// TransitionPlan moves plan id from state from to state to, recording who
// decided and when, as one compare-and-set: when the plan is no longer in
// from the error wraps [ErrStateConflict], when there is no such plan
// [ErrNotFound]. A zero at means now.
func (s *Store) TransitionPlan(ctx context.Context, id, from, to, by string, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.db.ExecContext(ctx, `UPDATE plans SET state = ?, decided_by = ?, decided_at = ? WHERE id = ? AND state = ?`,
		to, by, at.UTC().UnixNano(), id, from)
	if err != nil {
		return fmt.Errorf("move plan %s from %s to %s: %w", id, from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("move plan %s from %s to %s: %w", id, from, to, err)
	}
	if n == 1 {
		return nil
	}
	cur, err := s.Plan(ctx, id)
	if err != nil {
		return fmt.Errorf("move plan %s from %s to %s: %w", id, from, to, err)
	}
	return fmt.Errorf("move plan %s from %s to %s: it is %s: %w", id, from, to, cur.State, ErrStateConflict)
}

// RunRecord is one stored optimize run of one table, with its steps.
type RunRecord struct {
	ID     string `json:"id"`
	Table  string `json:"table"`
	PlanID string `json:"plan_id,omitempty"`
	// Status is queued, running, done, failed, cancelled or abandoned (the
	// control plane's words; see [RunQueued]).
	Status string `json:"status"`
	// Trigger is what started the run: manual, scheduled, adaptive or api
	// (the control plane's words). Empty is stored as manual.
	Trigger string `json:"trigger"`
	// Runner is the floe process that ran it, "host:pid"; empty for runs
	// stored before runners were recorded.
	Runner string `json:"runner"`
	Error  string `json:"error,omitempty"`
	// QueuedAt is when a run that waited for a run slot was asked for;
	// zero for a run that started at once.
	QueuedAt time.Time `json:"queued_at,omitzero"`
	// StartedAt is when the run started; while it is queued, when it was
	// queued.
	StartedAt time.Time `json:"started_at"`
	// EndedAt is zero while the run is going.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// LeaseExpiresAt is when a running (or queued) run is taken for dead
	// unless its process renews the lease ([Store.RenewRun]); zero for a
	// run stored before leases, or ended.
	LeaseExpiresAt time.Time `json:"lease_expires_at,omitzero"`
	// StartedBy is who asked for the run: a person, "scheduler", or the
	// API's caller; empty for runs stored before it was recorded.
	StartedBy string `json:"started_by,omitempty"`
	// Decision is the decision the run ran (the control plane's JSON);
	// empty for runs stored before it was recorded.
	Decision json.RawMessage `json:"decision,omitempty"`
	Steps    []StepRecord    `json:"steps"`
}

// RunAbandoned is the status [Store.RecoverAbandoned] gives a run whose
// lease lapsed while it was running: its process died (killed, crashed, its
// machine gone) without recording an end.
const RunAbandoned = "abandoned"

// RunQueued is the status of a run recorded before it started, waiting for
// a run slot (the daemon's API queues runs): [Store.StartRun] takes it
// over, [Store.EndQueuedRun] ends it unstarted.
const RunQueued = "queued"

// RunCancelled is the status of a run stopped before it ended, or, queued,
// before it started (the control plane's cancelled).
const RunCancelled = "cancelled"

// RenewRun extends the lease of running or queued run id to until.
func (s *Store) RenewRun(ctx context.Context, id string, until time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET lease_expires_at = ? WHERE id = ? AND status IN ('running', 'queued')`, until.UTC().UnixNano(), id); err != nil {
		return fmt.Errorf("renew lease of run %s: %w", id, err)
	}
	return nil
}

// legacyRunLease is how long a running run stored without a lease (by a
// floe before leases) counts as live after it started.
const legacyRunLease = 24 * time.Hour

// lapsedRunsQuery selects the running and queued runs whose lease lapsed
// (before its first argument) or, stored without one, that started before
// its second: through the runs_live index, whatever the number of runs
// that ended.
const lapsedRunsQuery = `SELECT id, plan_id, status, lease_expires_at, started_at FROM runs
WHERE status IN ('running', 'queued') AND ((lease_expires_at IS NOT NULL AND lease_expires_at < ?) OR (lease_expires_at IS NULL AND started_at < ?))`

// RecoverAbandoned marks every running run whose lease lapsed before now
// as abandoned, with the reason as its error, and returns a running plan
// of such a run to approved, so that it can run again: a killed optimize
// no longer leaves its run and plan "running" for ever. A queued run whose
// lease lapsed never started (its daemon died while it waited): it is
// marked cancelled, not abandoned, since nothing of it ran. It returns the
// runs it marked, as they are now.
func (s *Store) RecoverAbandoned(ctx context.Context, now time.Time) (out []RunRecord, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("recover abandoned runs: begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, rollback(tx))
		}
	}()
	n := now.UTC().UnixNano()
	rows, err := tx.QueryContext(ctx, lapsedRunsQuery, n, now.Add(-legacyRunLease).UTC().UnixNano())
	if err != nil {
		return nil, fmt.Errorf("recover abandoned runs: %w", err)
	}
	type lapsed struct {
		id, plan, status string
		until            time.Time
	}
	var found []lapsed
	for rows.Next() {
		var (
			l       lapsed
			lease   sql.NullInt64
			started int64
		)
		if err := rows.Scan(&l.id, &l.plan, &l.status, &lease, &started); err != nil {
			return nil, errors.Join(fmt.Errorf("recover abandoned runs: %w", err), rows.Close())
		}
		l.until = time.Unix(0, started).Add(legacyRunLease).UTC()
		if lease.Valid {
			l.until = time.Unix(0, lease.Int64).UTC()
		}
		found = append(found, l)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("recover abandoned runs: %w", err)
	}
	for _, l := range found {
		if l.status == RunQueued {
			reason := fmt.Sprintf("never started: its process stopped renewing the queued run's lease, which lapsed at %s (killed or crashed while the run waited for a run slot); nothing was done, ask for the run again",
				l.until.Format(time.RFC3339))
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, ended_at = ? WHERE id = ?`, RunCancelled, reason, n, l.id); err != nil {
				return nil, fmt.Errorf("recover queued run %s: %w", l.id, err)
			}
			continue
		}
		reason := fmt.Sprintf("abandoned: its process stopped renewing the run's lease, which lapsed at %s (killed or crashed); the table is consistent, uncommitted files are orphans",
			l.until.Format(time.RFC3339))
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, ended_at = ? WHERE id = ?`, RunAbandoned, reason, n, l.id); err != nil {
			return nil, fmt.Errorf("recover abandoned run %s: %w", l.id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE run_steps SET status = ?, error = ?, ended_at = ? WHERE run_id = ? AND status = 'running'`, RunAbandoned, reason, n, l.id); err != nil {
			return nil, fmt.Errorf("recover abandoned run %s: %w", l.id, err)
		}
		if l.plan != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE plans SET state = 'approved' WHERE id = ? AND state = 'running'`, l.plan); err != nil {
				return nil, fmt.Errorf("recover plan %s of abandoned run %s: %w", l.plan, l.id, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("recover abandoned runs: commit: %w", err)
	}
	for _, l := range found {
		r, err := s.Run(ctx, l.id)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// StepRecord is one step of a run (expire, orphans, compact, manifests)
// with its before and after metrics as JSON.
type StepRecord struct {
	Step      string          `json:"step"`
	Status    string          `json:"status"`
	Before    json.RawMessage `json:"before,omitempty"`
	After     json.RawMessage `json:"after,omitempty"`
	Error     string          `json:"error,omitempty"`
	StartedAt time.Time       `json:"started_at"`
	EndedAt   time.Time       `json:"ended_at,omitzero"`
	// RewrittenBytes are the data and delete bytes the step read to
	// rewrite them (a compaction's or delete rewrite's input); 0 for the
	// steps that rewrite no data. It is what the maintenance budget counts
	// ([Store.Spend]).
	RewrittenBytes int64 `json:"rewritten_bytes,omitempty"`
	// RewriteCPUMillis is the step's CPU in vCPU-milliseconds, measured or
	// estimated by the caller from what it read and wrote.
	RewriteCPUMillis int64 `json:"rewrite_cpu_ms,omitempty"`
}

// StartRun stores a new run (its Steps are ignored; add them with
// [Store.PutRunStep]). A zero StartedAt means now. A run of that ID
// recorded as queued ([RunQueued]) for the same table is taken over: its
// record is replaced by r, keeping when it was queued. Any other run of
// that ID is refused with an error wrapping [ErrStateConflict]: a queued
// run starts once.
func (s *Store) StartRun(ctx context.Context, r RunRecord) error {
	if r.ID == "" || r.Table == "" || r.Status == "" {
		return fmt.Errorf("start run: id, table and status are required")
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = s.now()
	}
	if r.Trigger == "" {
		r.Trigger = "manual"
	}
	queued := r.QueuedAt
	if queued.IsZero() && r.Status == RunQueued {
		queued = r.StartedAt
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, table_name, table_key, plan_id, status, run_trigger, runner, error, started_at, ended_at, lease_expires_at, started_by, decision_json, queued_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, run_trigger = excluded.run_trigger,
	runner = excluded.runner, error = excluded.error, started_at = excluded.started_at, ended_at = excluded.ended_at,
	lease_expires_at = excluded.lease_expires_at, started_by = excluded.started_by, decision_json = excluded.decision_json
WHERE runs.status = 'queued' AND runs.table_key = excluded.table_key`,
		r.ID, r.Table, filterKey(r.Table), r.PlanID, r.Status, r.Trigger, r.Runner, r.Error, r.StartedAt.UTC().UnixNano(), nanos(r.EndedAt), nanos(r.LeaseExpiresAt),
		r.StartedBy, string(r.Decision), nanos(queued))
	if err != nil {
		return fmt.Errorf("start run %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("start run %s: %w", r.ID, err)
	} else if n == 0 {
		cur, err := s.Run(ctx, r.ID)
		if err != nil {
			return fmt.Errorf("start run %s: %w", r.ID, errors.Join(ErrStateConflict, err))
		}
		return fmt.Errorf("start run %s: it is %s, of %s; only a queued run of %s starts: %w", r.ID, cur.Status, cur.Table, r.Table, ErrStateConflict)
	}
	return nil
}

// EndQueuedRun ends run id, queued and never started, with status (cancelled
// or failed) and errText as the reason. A run that is no longer queued (it
// started, or was ended) is left as it is and the error wraps
// [ErrStateConflict]; no such run, [ErrNotFound]. A zero at means now.
func (s *Store) EndQueuedRun(ctx context.Context, id, status, errText string, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, ended_at = ? WHERE id = ? AND status = 'queued'`, status, errText, at.UTC().UnixNano(), id)
	if err != nil {
		return fmt.Errorf("end queued run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("end queued run %s: %w", id, err)
	} else if n == 1 {
		return nil
	}
	cur, err := s.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("end queued run %s: %w", id, err)
	}
	return fmt.Errorf("end queued run %s: it is %s: %w", id, cur.Status, ErrStateConflict)
}

// EndRun records a run's final status and error text. A zero at means now.
// The error wraps [ErrNotFound] when there is no such run.
func (s *Store) EndRun(ctx context.Context, id, status, errText string, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, ended_at = ? WHERE id = ?`, status, errText, at.UTC().UnixNano(), id)
	if err != nil {
		return fmt.Errorf("end run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("end run %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("end run %s: %w", id, &NotFoundError{Kind: "run", ID: id})
	}
	return nil
}

// PutRunStep inserts or replaces step st.Step of run runID. A zero
// StartedAt means now.
func (s *Store) PutRunStep(ctx context.Context, runID string, st StepRecord) error {
	if st.Step == "" || st.Status == "" {
		return fmt.Errorf("record step of run %s: step and status are required", runID)
	}
	if st.StartedAt.IsZero() {
		st.StartedAt = s.now()
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO run_steps (run_id, step, status, before_json, after_json, error, started_at, ended_at, rewritten_bytes, rewrite_cpu_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, step) DO UPDATE SET status = excluded.status, before_json = excluded.before_json,
	after_json = excluded.after_json, error = excluded.error, started_at = excluded.started_at, ended_at = excluded.ended_at,
	rewritten_bytes = excluded.rewritten_bytes, rewrite_cpu_ms = excluded.rewrite_cpu_ms`,
		runID, st.Step, st.Status, string(st.Before), string(st.After), st.Error, st.StartedAt.UTC().UnixNano(), nanos(st.EndedAt),
		max(st.RewrittenBytes, 0), max(st.RewriteCPUMillis, 0)); err != nil {
		return fmt.Errorf("record step %s of run %s: %w", st.Step, runID, err)
	}
	return nil
}

// Run returns run id with its steps in the order they started, or a
// [*NotFoundError].
func (s *Store) Run(ctx context.Context, id string) (RunRecord, error) {
	runs, err := s.runs(ctx, `WHERE id = ?`, []any{id}, 0)
	if err != nil {
		return RunRecord{}, err
	}
	if len(runs) == 0 {
		return RunRecord{}, &NotFoundError{Kind: "run", ID: id}
	}
	return runs[0], nil
}

// Runs lists the runs of table (catalog.namespace.name, case-insensitive;
// "" for all tables), newest first, at most limit (0: all), with their
// steps.
func (s *Store) Runs(ctx context.Context, table string, limit int) ([]RunRecord, error) {
	if table == "" {
		return s.runs(ctx, "", nil, limit)
	}
	return s.runs(ctx, runsOfTable, []any{filterKey(table)}, limit)
}

// runsOfTable selects a table's runs by key, through the runs_table_key
// index.
const runsOfTable = `WHERE table_key = ?`

// runsQuery is the query of the runs where selects, newest first, at most
// limit (0: all).
func runsQuery(where string, limit int) string {
	q := `SELECT id, table_name, plan_id, status, run_trigger, runner, error, started_at, ended_at, lease_expires_at, started_by, decision_json, queued_at FROM runs ` + where + ` ORDER BY started_at DESC, id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	return q
}

func (s *Store) runs(ctx context.Context, where string, args []any, limit int) (out []RunRecord, err error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read runs: begin: %w", err)
	}
	defer func() { err = errors.Join(err, rollback(tx)) }()
	rows, err := tx.QueryContext(ctx, runsQuery(where, limit), args...)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	idx := map[string]int{}
	for rows.Next() {
		var (
			r                    RunRecord
			started              int64
			ended, lease, queued sql.NullInt64
			decision             string
		)
		if err := rows.Scan(&r.ID, &r.Table, &r.PlanID, &r.Status, &r.Trigger, &r.Runner, &r.Error, &started, &ended, &lease, &r.StartedBy, &decision, &queued); err != nil {
			return nil, errors.Join(fmt.Errorf("read runs: %w", err), rows.Close())
		}
		r.StartedAt, r.EndedAt, r.LeaseExpiresAt, r.QueuedAt = time.Unix(0, started).UTC(), fromNanos(ended), fromNanos(lease), fromNanos(queued)
		if decision != "" {
			r.Decision = json.RawMessage(decision)
		}
		r.Steps = []StepRecord{}
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	if err := s.readSteps(ctx, tx, out, idx); err != nil {
		return nil, err
	}
	return out, nil
}

// stepsChunk is how many runs' steps one query reads: well under SQLite's
// and PostgreSQL's limits on a statement's parameters.
const stepsChunk = 500

// readSteps reads the steps of runs (idx: each run's index by id), a
// chunk of runs per query rather than a query per run.
func (s *Store) readSteps(ctx context.Context, tx *txn, runs []RunRecord, idx map[string]int) error {
	for lo := 0; lo < len(runs); lo += stepsChunk {
		chunk := runs[lo:min(lo+stepsChunk, len(runs))]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r.ID
		}
		if err := s.readStepsOf(ctx, tx, args, runs, idx); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) readStepsOf(ctx context.Context, tx *txn, ids []any, runs []RunRecord, idx map[string]int) (err error) {
	what := fmt.Sprintf("read steps of run %s", ids[0])
	if len(ids) > 1 {
		what = fmt.Sprintf("read steps of %d runs from %s", len(ids), ids[0])
	}
	rows, err := tx.QueryContext(ctx, `SELECT run_id, step, status, before_json, after_json, error, started_at, ended_at, rewritten_bytes, rewrite_cpu_ms
FROM run_steps WHERE run_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) ORDER BY run_id, started_at, `+s.d.stepOrder(), ids...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer func() { err = errors.Join(err, rows.Close()) }()
	for rows.Next() {
		var (
			runID         string
			st            StepRecord
			before, after string
			started       int64
			ended         sql.NullInt64
		)
		if err := rows.Scan(&runID, &st.Step, &st.Status, &before, &after, &st.Error, &started, &ended, &st.RewrittenBytes, &st.RewriteCPUMillis); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if before != "" {
			st.Before = json.RawMessage(before)
		}
		if after != "" {
			st.After = json.RawMessage(after)
		}
		st.StartedAt, st.EndedAt = time.Unix(0, started).UTC(), fromNanos(ended)
		i, ok := idx[runID]
		if !ok {
			return fmt.Errorf("%s: a step of run %s, which was not asked for", what, runID)
		}
		runs[i].Steps = append(runs[i].Steps, st)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// lastRunEndedQuery is [Store.LastRunEnded]'s, through the runs_table_key
// index.
const lastRunEndedQuery = `SELECT max(ended_at) FROM runs WHERE table_key = ? AND status = ?`

// LastRunEnded is when the newest run of table (catalog.namespace.name,
// case-insensitive) with the given status ended; zero when none did.
func (s *Store) LastRunEnded(ctx context.Context, table, status string) (time.Time, error) {
	var last sql.NullInt64
	err := s.db.QueryRowContext(ctx, lastRunEndedQuery, filterKey(table), status).Scan(&last)
	if err != nil {
		return time.Time{}, fmt.Errorf("read last %s run of %s: %w", status, table, err)
	}
	return fromNanos(last), nil
}
