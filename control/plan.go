package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// PlanProjection is what a plan stores as its projection: the
// simulator's projection of
// the plan's layout (without the per-query detail), the baseline it was
// compared with, and the z-order key the projection and the rewrite use.
type PlanProjection struct {
	simulator.Projection
	// CurrentSkippedPct is the same workload's files skipped (%) against
	// the table's files when the plan was made; nil when not given.
	CurrentSkippedPct *float64 `json:"current_skipped_pct,omitempty"`
	// ZOrderMode is the z-order key ("iceberg-exact" or "rank"); set for
	// zorder layouts only.
	ZOrderMode string `json:"zorder_mode,omitempty"`
}

// ProposeOption modifies one [ProposePlan] call.
type ProposeOption func(*proposeConfig)

type proposeConfig struct {
	baseline *simulator.Projection
	zorder   layout.ZOrderMode
	now      time.Time
}

// WithBaseline records the projection of the table as it is (the
// simulator's "current") next to the plan's, so that reports can show the
// gain.
func WithBaseline(current simulator.Projection) ProposeOption {
	return func(c *proposeConfig) { c.baseline = &current }
}

// WithZOrderMode records the z-order key the projection used; the run uses
// the same. It is part of the plan's id for zorder layouts and ignored for
// the others. Default: [layout.ZOrderIcebergExact].
func WithZOrderMode(m layout.ZOrderMode) ProposeOption {
	return func(c *proposeConfig) { c.zorder = m }
}

// WithProposedAt sets the plan's creation time. Default: the store's clock.
func WithProposedAt(t time.Time) ProposeOption {
	return func(c *proposeConfig) { c.now = t }
}

// ProposePlan stores a proposed plan to rewrite table id into layout, with
// the projection that justifies it, made by by. The plan is for the table's
// current snapshot (its base); its id is a stable hash of table, base
// snapshot and canonical layout (plus the z-order key for zorder), so that
// proposing the same layout for the same snapshot again returns the stored
// plan unchanged, whatever its state. The layout's columns must exist in the
// table's schema; they are stored with the schema's spelling.
func ProposePlan(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, l layout.Layout,
	proj simulator.Projection, by string, opts ...ProposeOption,
) (Plan, error) {
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", id, err)
	}
	p, err := newPlan(tbl.Metadata(), id, l, proj, by, opts...)
	if err != nil {
		return Plan{}, err
	}
	return storePlan(ctx, st, p)
}

// newPlan is the plan [ProposePlan] would store for table id at metadata
// md, without storing it: its id, base snapshot, canonical layout and
// projection.
func newPlan(md table.Metadata, id lake.Ident, l layout.Layout, proj simulator.Projection, by string, opts ...ProposeOption) (Plan, error) {
	var cfg proposeConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := l.Validate(); err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", id, err)
	}
	if l.Strategy == layout.StrategyCurrent {
		return Plan{}, fmt.Errorf("propose plan for %s: layout %q rewrites nothing", id, l)
	}
	l, err := canonicalLayout(md.CurrentSchema(), l)
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", id, err)
	}
	var base int64
	if cur := md.CurrentSnapshot(); cur != nil {
		base = cur.SnapshotID
	}
	pp := PlanProjection{Projection: proj}
	pp.PerQuery = nil
	pp.Layout = l
	if cfg.baseline != nil {
		pp.CurrentSkippedPct = &cfg.baseline.SkippedPct
	}
	if l.Strategy == layout.StrategyZOrder {
		pp.ZOrderMode = cfg.zorder.String()
	}
	return Plan{
		ID: planID(id, base, l, pp.ZOrderMode), Table: id.String(), BaseSnapshot: base, Layout: l,
		Projection: pp, State: PlanProposed, CreatedBy: by, CreatedAt: cfg.now,
	}, nil
}

// storePlan stores p as proposed unless a plan of its id is stored, and
// returns what is stored: a plan proposed before keeps its state.
func storePlan(ctx context.Context, st *store.Store, p Plan) (Plan, error) {
	rec, err := planRecord(p)
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", p.Table, err)
	}
	if _, err := st.InsertPlan(ctx, rec); err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", p.Table, err)
	}
	got, err := GetPlan(ctx, st, rec.ID)
	if err != nil {
		return Plan{}, fmt.Errorf("propose plan for %s: %w", p.Table, err)
	}
	return got, nil
}

// planID is the first 12 hex digits of the SHA-256 of the table (lower
// case), the base snapshot, the canonical layout text and, for zorder, the
// key mode.
func planID(id lake.Ident, base int64, layout layout.Layout, zorderMode string) string {
	h := sha256.New()
	for _, part := range []string{strings.ToLower(id.String()), strconv.FormatInt(base, 10), layout.String(), zorderMode} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// canonicalLayout checks that every layout column exists in schema and
// spells it as the schema does, so that sort(Tenant_ID) and sort(tenant_id)
// are one plan.
func canonicalLayout(schema *iceberg.Schema, l layout.Layout) (layout.Layout, error) {
	out := l
	out.Columns = make([]layout.Column, len(l.Columns))
	var missing []string
	for i, c := range l.Columns {
		out.Columns[i] = c
		f, ok := schema.FindFieldByNameCaseInsensitive(c.Name)
		if !ok {
			missing = append(missing, strconv.Quote(c.Name))
			continue
		}
		if name, ok := schema.FindColumnName(f.ID); ok {
			out.Columns[i].Name = name
		}
	}
	if len(missing) > 0 {
		return l, fmt.Errorf("layout %s: no column %s in the table's schema", l, strings.Join(missing, ", "))
	}
	if len(l.Columns) == 0 {
		out.Columns = nil
	}
	return out, nil
}

// ApprovePlan moves a proposed plan to approved, recording by and now (zero:
// the store's clock). A plan in any other state is refused with a
// [*PlanStateError]; an unknown id wraps [store.ErrNotFound].
//
// A failed plan can be approved again: its run failed at a step and left the
// table readable (unchanged, or with the groups committed before the failure),
// so approving it again retries the run — which still checks that the plan is
// not stale first.
func ApprovePlan(ctx context.Context, st *store.Store, planID, by string, now time.Time) (Plan, error) {
	p, err := decidePlan(ctx, st, planID, "approve", PlanProposed, PlanApproved, by, now)
	if pe := (*PlanStateError)(nil); errors.As(err, &pe) && pe.State == PlanFailed {
		return decidePlan(ctx, st, planID, "approve", PlanFailed, PlanApproved, by, now)
	}
	return p, err
}

// RejectPlan moves a proposed plan to rejected, recording by and now (zero:
// the store's clock); a rejected plan never runs. A plan in any other state
// is refused with a [*PlanStateError]; an unknown id wraps
// [store.ErrNotFound].
func RejectPlan(ctx context.Context, st *store.Store, planID, by string, now time.Time) (Plan, error) {
	return decidePlan(ctx, st, planID, "reject", PlanProposed, PlanRejected, by, now)
}

func decidePlan(ctx context.Context, st *store.Store, planID, action string, from, to PlanState, by string, now time.Time) (Plan, error) {
	err := st.TransitionPlan(ctx, planID, string(from), string(to), by, now)
	if errors.Is(err, store.ErrStateConflict) {
		cur, rerr := GetPlan(ctx, st, planID)
		if rerr != nil {
			return Plan{}, fmt.Errorf("%s plan %s: %w", action, planID, errors.Join(err, rerr))
		}
		return cur, &PlanStateError{ID: planID, Action: action, State: cur.State, Table: cur.Table}
	}
	if err != nil {
		return Plan{}, fmt.Errorf("%s plan %s: %w", action, planID, err)
	}
	p, err := GetPlan(ctx, st, planID)
	if err != nil {
		return Plan{}, fmt.Errorf("%s plan %s: %w", action, planID, err)
	}
	return p, nil
}

// transitionPlan moves plan p from one state to another, keeping its
// decision.
func transitionPlan(ctx context.Context, st *store.Store, p Plan, from, to PlanState) error {
	return st.TransitionPlan(ctx, p.ID, string(from), string(to), p.DecidedBy, p.DecidedAt)
}

// CheckPlan says whether plan p still describes table tbl, and if not why
// (reason is "" when it does). The rule, which is deliberately simple:
//
//   - a layout column that is no longer in the table's schema makes the plan
//     stale;
//   - at the base snapshot the plan holds;
//   - past it, every data file that was live at the base snapshot must still
//     be live now. Appends since the base are fine — the compaction picks the
//     new files up along with the old ones, and a few new files barely move
//     the projection — but a file that was rewritten (another compaction),
//     overwritten or deleted means the files the projection was made from
//     are gone, and so is the projection;
//   - a base snapshot that is no longer in the table's metadata (expired)
//     cannot be checked, so the plan is stale.
//
// CheckPlan only reads; [Optimize] with a PlanID runs it and stores the
// verdict.
func CheckPlan(ctx context.Context, tbl *table.Table, p Plan) (reason string, err error) {
	md := tbl.Metadata()
	if _, err := canonicalLayout(md.CurrentSchema(), p.Layout); err != nil {
		return err.Error(), nil
	}
	cur := md.CurrentSnapshot()
	if cur == nil || cur.SnapshotID == p.BaseSnapshot {
		if cur == nil && p.BaseSnapshot != 0 {
			return fmt.Sprintf("the table has no snapshot; the plan was made at snapshot %d", p.BaseSnapshot), nil
		}
		return "", nil
	}
	if p.BaseSnapshot == 0 {
		return "", nil // planned on an empty table: everything since is appended
	}
	base := md.SnapshotByID(p.BaseSnapshot)
	if base == nil {
		return fmt.Sprintf("base snapshot %d is no longer in the table's metadata (expired)", p.BaseSnapshot), nil
	}
	fio, err := tbl.FS(ctx)
	if err != nil {
		return "", fmt.Errorf("check plan %s: open table io: %w", p.ID, err)
	}
	baseManifests, err := base.Manifests(fio)
	if err != nil {
		return "", fmt.Errorf("check plan %s: read manifest list of snapshot %d: %w", p.ID, base.SnapshotID, err)
	}
	curManifests, err := cur.Manifests(fio)
	if err != nil {
		return "", fmt.Errorf("check plan %s: read manifest list of snapshot %d: %w", p.ID, cur.SnapshotID, err)
	}
	// Manifests are immutable: one listed by both snapshots has the same
	// live files in both. Only the base's other manifests need reading.
	shared := make(map[string]bool, len(curManifests))
	for _, m := range curManifests {
		shared[m.FilePath()] = true
	}
	var basePaths []string
	for _, m := range baseManifests {
		if shared[m.FilePath()] || m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		paths, err := liveDataPaths(ctx, fio, m)
		if err != nil {
			return "", fmt.Errorf("check plan %s: %w", p.ID, err)
		}
		basePaths = append(basePaths, paths...)
	}
	if len(basePaths) == 0 {
		return "", nil
	}
	// A base file may have moved to a new manifest (a manifest rewrite):
	// look it up among all the current snapshot's live data files.
	live := map[string]bool{}
	for _, m := range curManifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		paths, err := liveDataPaths(ctx, fio, m)
		if err != nil {
			return "", fmt.Errorf("check plan %s: %w", p.ID, err)
		}
		for _, path := range paths {
			live[path] = true
		}
	}
	gone := 0
	for _, path := range basePaths {
		if !live[path] {
			gone++
		}
	}
	if gone > 0 {
		return fmt.Sprintf("%d data files of base snapshot %d are no longer live (rewritten or deleted since)", gone, p.BaseSnapshot), nil
	}
	return "", nil
}

// liveDataPaths lists the paths of m's live (added or existing) entries.
func liveDataPaths(ctx context.Context, fio iceio.IO, m iceberg.ManifestFile) ([]string, error) {
	var out []string
	for e, err := range m.Entries(fio, true) {
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, e.DataFile().FilePath())
	}
	return out, nil
}

// planRunOptions reads and checks plan opts.PlanID for a run of table id —
// approved, for this table, not stale (a stale plan is stored as such,
// except in a dry run) — and returns it with opts set to the plan's layout,
// z-order key, quantiles and file size.
func planRunOptions(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions, dry bool) (Plan, OptimizeOptions, error) {
	var none Plan
	p, err := GetPlan(ctx, st, opts.PlanID)
	if err != nil {
		return none, opts, fmt.Errorf("optimize %s: %w", id, err)
	}
	if !strings.EqualFold(p.Table, id.String()) {
		return none, opts, fmt.Errorf("optimize %s: plan %s is for %s", id, p.ID, p.Table)
	}
	if p.State != PlanApproved {
		return none, opts, &PlanStateError{ID: p.ID, Action: "run", State: p.State, Table: p.Table}
	}
	if opts.Skip[StepCompact] {
		return none, opts, fmt.Errorf("optimize %s: plan %s: the %s step cannot be skipped when running a plan", id, p.ID, StepCompact)
	}
	l, pp := p.Layout, p.Projection
	zm, err := layout.ParseZOrderMode(pp.ZOrderMode)
	if err != nil {
		return none, opts, fmt.Errorf("optimize %s: plan %s: %w", id, p.ID, err)
	}
	tbl, err := lake.LoadTable(ctx, cat, id)
	if err != nil {
		return none, opts, fmt.Errorf("optimize %s: %w", id, err)
	}
	reason, err := CheckPlan(ctx, tbl, p)
	if err != nil {
		return none, opts, fmt.Errorf("optimize %s: %w", id, err)
	}
	if reason != "" {
		stale := fmt.Errorf("optimize %s: %w: plan %s: %s; re-plan: floe plan %s", id, ErrStalePlan, p.ID, reason, ShellArg(p.Table))
		if dry {
			return none, opts, stale
		}
		opts.Logger.Info("plan marked stale", "table", id.String(), "plan_id", p.ID, "reason", reason)
		if err := transitionPlan(ctx, st, p, PlanApproved, PlanStale); err != nil {
			return none, opts, errors.Join(stale, fmt.Errorf("mark plan %s stale: %w", p.ID, err))
		}
		return none, opts, stale
	}
	opts.Compact.Layout, opts.Compact.ZOrderMode = l, zm
	if len(pp.Quantiles) > 0 || len(pp.Tree) > 0 {
		// The run cuts the cells (rank z-order, Hilbert) or writes the leaves (tree)
		// the plan projected.
		sch, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
		if err != nil {
			return none, opts, fmt.Errorf("optimize %s: plan %s: %w", id, p.ID, err)
		}
		if len(pp.Quantiles) > 0 {
			if opts.Compact.Quantiles, err = layout.UnmarshalQuantiles(pp.Quantiles, sch); err != nil {
				return none, opts, fmt.Errorf("optimize %s: plan %s: %w", id, p.ID, err)
			}
		}
		if len(pp.Tree) > 0 {
			if opts.Compact.Tree, err = layout.UnmarshalTree(pp.Tree, sch); err != nil {
				return none, opts, fmt.Errorf("optimize %s: plan %s: %w", id, p.ID, err)
			}
		}
	}
	if l.TargetFileSizeBytes > 0 {
		opts.Compact.TargetFileSizeBytes = l.TargetFileSizeBytes
	}
	if pp.Basis != "" || pp.SkippedPct > 0 || pp.FilesAfter > 0 { // a projection, not a plan made without queries
		opts.Projected = &pp
	}
	return p, opts, nil
}

// runPlan is [Optimize] for opts.PlanID: it checks the plan, moves it
// through running to done or failed around the ordinary run, and refuses a
// plan that is not approved or that the table has moved past. Who approved
// the plan and when stay on it through every later move (the store's
// decided_by/decided_at); when it ran is on its run.
func runPlan(ctx context.Context, cat catalog.Catalog, st *store.Store, id lake.Ident, opts OptimizeOptions) (Run, error) {
	none := Run{Table: id.String(), PlanID: opts.PlanID, Steps: []Step{}}
	p, opts, err := planRunOptions(ctx, cat, st, id, opts, false)
	if err != nil {
		return none, err
	}
	// Options the run would refuse leave the plan approved: they are the
	// caller's to fix, not the plan's failure.
	if _, err := checkOptimize(ctx, cat, id, opts); err != nil {
		return none, fmt.Errorf("optimize %s: %w", id, err)
	}
	log := opts.Logger.With("table", id.String(), "plan_id", p.ID)
	if err := transitionPlan(ctx, st, p, PlanApproved, PlanRunning); err != nil {
		if errors.Is(err, store.ErrStateConflict) {
			if cur, rerr := GetPlan(ctx, st, p.ID); rerr == nil {
				return none, &PlanStateError{ID: p.ID, Action: "run", State: cur.State, Table: cur.Table}
			}
		}
		return none, fmt.Errorf("optimize %s: %w", id, err)
	}
	log.Info("plan running", "layout", p.Layout.String())
	run, err := optimize(ctx, cat, st, id, opts)
	final := PlanDone
	switch {
	case run.Status == StatusCancelled:
		// Stopped, not failed: the plan may run again.
		final = PlanApproved
	case err != nil:
		final = PlanFailed
	}
	// Record the outcome with a context that outlives a cancelled run.
	if terr := transitionPlan(context.WithoutCancel(ctx), st, p, PlanRunning, final); terr != nil {
		return run, errors.Join(err, fmt.Errorf("optimize %s: record plan %s as %s: %w", id, p.ID, final, terr))
	}
	log.Info("plan finished", "state", final, "run_id", run.ID)
	return run, err
}
