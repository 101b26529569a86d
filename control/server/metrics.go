package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
)

// StepAll is the step label of floe_runs_total and floe_run_duration_seconds
// for a run as a whole.
const StepAll = "all"

// healthStatuses are the values of floe_table_health_status's status label.
var healthStatuses = []lake.Status{lake.Healthy, lake.Warning, lake.Critical}

// Metrics are the daemon's Prometheus metrics, on a registry of their own
// (never the global default one). The scheduler and the alerts report to
// them through the methods; the server serves them on /metrics. Safe for
// concurrent use. docs/metrics.md describes every series.
type Metrics struct {
	reg *prometheus.Registry

	healthStatus   *prometheus.GaugeVec
	dataFiles      *prometheus.GaugeVec
	smallFileRatio *prometheus.GaugeVec
	layoutDrift    *prometheus.GaugeVec
	snapshots      *prometheus.GaugeVec
	deleteFiles    *prometheus.GaugeVec
	compactionAge  *prometheus.GaugeVec
	lastCompaction *prometheus.GaugeVec
	backlog        *prometheus.GaugeVec
	sla            *prometheus.GaugeVec
	lastSuccess    *prometheus.GaugeVec
	runs           *prometheus.CounterVec
	runDuration    *prometheus.HistogramVec
	plans          *prometheus.GaugeVec
	halted         *prometheus.GaugeVec
	checkUp        *prometheus.GaugeVec
	lastPass       prometheus.Gauge
	projErr        *prometheus.GaugeVec
	projChecks     *prometheus.CounterVec
	passErrors     prometheus.Gauge
	deferred       prometheus.Counter
	budgetLeft     *prometheus.GaugeVec
	events         *prometheus.CounterVec
	srcEvents      *prometheus.CounterVec
	srcErrors      *prometheus.CounterVec
	srcNewest      *prometheus.GaugeVec
	srcLag         *prometheus.GaugeVec
	srcSilent      *prometheus.GaugeVec
	alerts         *prometheus.CounterVec
	reportComputes prometheus.Counter
	reportHits     prometheus.Counter
	storeBytes     prometheus.Gauge
	storeEvents    *prometheus.GaugeVec
	storeShapes    prometheus.Gauge
	pruned         prometheus.Counter
	prunedFolded   prometheus.Counter
	prunedRuns     prometheus.Counter

	mu sync.Mutex
	// success is each table's last successful run seen, so that an older
	// one reported later does not move the gauge back.
	success map[string]time.Time
	// held are the tables floe_table_halted has a series for.
	held map[string]bool
}

// NewMetrics builds the metrics on a fresh registry, with the Go runtime
// and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	table := []string{"table"}
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	m := &Metrics{
		reg:            reg,
		healthStatus:   gauge("floe_table_health_status", "1 for the table's current health status (healthy, warning, critical), 0 for the others.", []string{"table", "status"}),
		dataFiles:      gauge("floe_table_data_files", "Data files in the table's current snapshot.", table),
		smallFileRatio: gauge("floe_table_small_file_ratio", "Share of the table's data files below 75% of its target file size.", table),
		layoutDrift: gauge("floe_table_layout_drift_ratio",
			"Share of the table's live rows in data files its recorded learned tree did not route (appended since its rewrite); absent for a table with no recorded tree.", table),
		snapshots:      gauge("floe_table_snapshots", "Snapshots the table's metadata keeps.", table),
		deleteFiles:    gauge("floe_table_delete_files", "Delete files (position, equality, deletion vectors) in the table's current snapshot.", table),
		compactionAge:  gauge("floe_last_compaction_age_hours", "Hours since the table's last successful compaction; absent when it was never compacted.", table),
		lastCompaction: gauge("floe_last_compaction_timestamp_seconds", "Unix time of the table's last compaction (a replace snapshot of any engine, or floe's compaction step that found nothing to do); 0 when it was never compacted.", table),
		backlog:        gauge("floe_compaction_backlog_age_seconds", "How long the table's oldest write not yet covered by a compaction has waited; 0 when nothing waits. Present for every table floe lists.", table),
		sla:            gauge("floe_freshness_sla_seconds", "The table's freshness SLA: the backlog it may reach before its freshness alert fires; 0 when it has none.", table),
		lastSuccess:    gauge("floe_last_successful_run_timestamp_seconds", "Unix time the table's last successful optimize run ended.", table),
		runs:           counter("floe_runs_total", "Optimize run steps by table, step and status; step=\"all\" counts whole runs.", []string{"table", "step", "status"}),
		plans:          gauge("floe_plans", "Stored plans by state.", []string{"state"}),
		halted: gauge("floe_table_halted",
			"1 while the table is halted: a run failed an invariant check and floe runs nothing on it until a person resumes it (floe resume); 0 once resumed.", table),
		checkUp: gauge("floe_check_up", "1 when the named check (state store, a catalog) last passed, else 0.", []string{"check"}),
		events:  counter("floe_telemetry_events_total", "Query telemetry events received and stored, by source.", []string{"source"}),
		alerts:  counter("floe_alerts_total", "Alerts sent, by kind.", []string{"kind"}),
		srcEvents: counter("floe_telemetry_source_events_total",
			"New query events a telemetry source of floe.yaml delivered (stored for the first time), by source.", []string{"source"}),
		srcErrors: counter("floe_telemetry_source_errors_total",
			"Collections of a telemetry source that failed (unreachable, refused, unreadable), by source.", []string{"source"}),
		srcNewest: gauge("floe_telemetry_source_last_event_timestamp_seconds",
			"Unix time of the newest query event (its end, else its start) a telemetry source delivered; absent until it delivered one.", []string{"source"}),
		srcLag: gauge("floe_telemetry_source_lag_seconds",
			"Seconds from a telemetry source's newest event to its last collection: how far behind the queries floe knows are.", []string{"source"}),
		srcSilent: gauge("floe_telemetry_source_silent",
			"1 while a telemetry source has delivered no new event for longer than its silence (its silent alert fires), else 0.", []string{"source"}),
		reportComputes: prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_server_report_computations_total",
			Help: "Report workloads (a table's collected queries read, ranked and replayed) the server computed for table pages and GET /api/v1/tables/{table}/report."}),
		reportHits: prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_server_report_cache_hits_total",
			Help: "Report workloads the server answered without computing them: kept from an earlier request, or shared with a concurrent one."}),
		success: map[string]time.Time{},
		held:    map[string]bool{},
	}
	m.lastPass = prometheus.NewGauge(prometheus.GaugeOpts{Name: "floe_scheduler_last_pass_timestamp_seconds",
		Help: "Unix time the daemon's newest scheduling pass ended: its heartbeat. Alert when time() minus it exceeds a few pass intervals: the daemon is dead or wedged."})
	m.passErrors = prometheus.NewGauge(prometheus.GaugeOpts{Name: "floe_scheduler_pass_errors",
		Help: "Tables (or catalogs) the newest scheduling pass could not decide or whose run failed."})
	m.projErr = gauge("floe_projection_error_pp",
		"The table's newest layout rewrite: files skipped as measured on the new files minus as the plan projected, in percentage points.", table)
	m.projChecks = counter("floe_projection_checks_total",
		"Layout rewrites whose projection was checked against the rewritten table, by whether it held (within its error bar, at least 2 pp).", []string{"within_error"})
	m.storeBytes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "floe_state_store_bytes",
		Help: "Size of the state store as of the newest telemetry pruning: SQLite's pages, or PostgreSQL's floe tables with their indexes."})
	m.storeEvents = gauge("floe_state_store_events",
		"Query events in the state store as of the newest telemetry pruning, by form: raw (within telemetry.retention) or folded (older, kept as ranking reads them).", []string{"form"})
	m.pruned = prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_telemetry_pruned_events_total",
		Help: "Raw query events deleted from the state store for being older than telemetry.retention, each folded first."})
	m.storeShapes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "floe_state_store_shapes",
		Help: "Distinct shapes (tables and filter trees) of the folded query events as of the newest telemetry pruning: each is stored once, however many folded events share it."})
	m.prunedFolded = prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_telemetry_pruned_folded_events_total",
		Help: "Folded query events deleted from the state store for being older than telemetry.history."})
	m.prunedRuns = prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_runs_pruned_total",
		Help: "Run records (with their steps) deleted from the state store for having ended longer ago than server.run_retention; a table's last success, failures in a row and last run of each step are kept whatever their age."})
	m.deferred = prometheus.NewCounter(prometheus.CounterOpts{Name: "floe_runs_deferred_total",
		Help: "Due tables whose rewrites (compact, deletes) a maintenance budget deferred, one per table per scheduling pass."})
	m.budgetLeft = gauge("floe_budget_remaining_bytes",
		"Bytes a maintenance budget had left after the newest scheduling pass bought its rewrites (estimated), by scope: lake or the namespace.", []string{"scope"})
	reg.MustRegister(m.reportComputes, m.reportHits, m.lastPass, m.passErrors, m.storeBytes, m.pruned, m.storeShapes, m.prunedFolded, m.prunedRuns, m.deferred)
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "floe_run_duration_seconds", Help: "Duration of optimize run steps, by step; step=\"all\" is whole runs.",
		// A step takes from a second to hours: 1 s to about 4.5 h.
		Buckets: prometheus.ExponentialBuckets(1, 4, 8),
	}, []string{"step"})
	reg.MustRegister(m.runDuration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, s := range control.PlanStates {
		m.plans.WithLabelValues(string(s)).Set(0)
	}
	return m
}

func (m *Metrics) reportComputed() { m.reportComputes.Inc() }
func (m *Metrics) reportCacheHit() { m.reportHits.Inc() }

// Registry is the metrics' registry, for a caller that adds its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.HTTPErrorOnError})
}

// ObserveHealth records a table's health and, when not zero, when its last
// successful run ended.
func (m *Metrics) ObserveHealth(h lake.Health, lastSuccess time.Time) {
	t := h.Table
	for _, s := range healthStatuses {
		v := 0.0
		if h.Status == s {
			v = 1
		}
		m.healthStatus.WithLabelValues(t, string(s)).Set(v)
	}
	mt := h.Metrics
	m.dataFiles.WithLabelValues(t).Set(float64(mt.DataFiles))
	m.smallFileRatio.WithLabelValues(t).Set(mt.SmallFileRatio)
	if d := mt.LayoutDrift; d != nil && d.Problem == "" {
		m.layoutDrift.WithLabelValues(t).Set(d.RowsRatio)
	} else {
		m.layoutDrift.DeleteLabelValues(t)
	}
	m.snapshots.WithLabelValues(t).Set(float64(mt.Snapshots))
	m.deleteFiles.WithLabelValues(t).Set(float64(mt.DeleteFiles))
	if mt.LastCompactionAgeSec >= 0 {
		m.compactionAge.WithLabelValues(t).Set(float64(mt.LastCompactionAgeSec) / 3600)
		m.lastCompaction.WithLabelValues(t).Set(float64(h.MeasuredAt.Add(-time.Duration(mt.LastCompactionAgeSec) * time.Second).Unix()))
	} else {
		m.compactionAge.DeleteLabelValues(t)
		m.lastCompaction.WithLabelValues(t).Set(0)
	}
	m.backlog.WithLabelValues(t).Set(float64(mt.BacklogAgeSec))
	m.sla.WithLabelValues(t).Set(float64(h.FreshnessSLASec))
	m.noteSuccess(t, lastSuccess)
}

// ObserveRun counts an ended run and each of its steps by status, observes
// their durations, and records the end of a successful run. Call it once
// per run.
func (m *Metrics) ObserveRun(r control.Run) {
	for _, s := range r.Steps {
		m.runs.WithLabelValues(r.Table, s.Name, string(s.Status)).Inc()
		if s.Status == control.StatusDone || s.Status == control.StatusFailed {
			if d := s.Duration(); d > 0 {
				m.runDuration.WithLabelValues(s.Name).Observe(d.Seconds())
			}
		}
		if c := s.Layout; c != nil && c.Error == "" {
			m.projErr.WithLabelValues(r.Table).Set(c.DeltaPP)
			m.projChecks.WithLabelValues(strconv.FormatBool(c.WithinError)).Inc()
		}
	}
	m.runs.WithLabelValues(r.Table, StepAll, string(r.Status)).Inc()
	if !r.EndedAt.IsZero() {
		m.runDuration.WithLabelValues(StepAll).Observe(r.EndedAt.Sub(r.StartedAt).Seconds())
	}
	if r.Status == control.StatusDone && !r.DryRun {
		m.noteSuccess(r.Table, r.EndedAt)
	}
}

func (m *Metrics) noteSuccess(table string, at time.Time) {
	if at.IsZero() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if at.After(m.success[table]) {
		m.success[table] = at
		m.lastSuccess.WithLabelValues(table).Set(float64(at.UnixNano()) / 1e9)
	}
}

// ForgetTable drops a table's series (the table is gone).
func (m *Metrics) ForgetTable(table string) {
	l := prometheus.Labels{"table": table}
	for _, g := range []*prometheus.GaugeVec{m.healthStatus, m.dataFiles, m.smallFileRatio, m.layoutDrift, m.snapshots, m.deleteFiles, m.compactionAge,
		m.lastCompaction, m.backlog, m.sla, m.lastSuccess, m.halted, m.projErr} {
		g.DeletePartialMatch(l)
	}
	m.runs.DeletePartialMatch(l)
	m.mu.Lock()
	delete(m.success, table)
	delete(m.held, table)
	m.mu.Unlock()
}

// ObserveChecks records each connection check that ran (floe doctor's,
// run by the daemon) as floe_check_up{check="<name> <target>"}.
func (m *Metrics) ObserveChecks(checks []control.Check) {
	for _, c := range checks {
		if !c.Skipped {
			m.SetCheck(c.Name+" "+c.Target, c.OK)
		}
	}
}

// SetCheck records whether the named check passed.
func (m *Metrics) SetCheck(name string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.checkUp.WithLabelValues(name).Set(v)
}

// AddEvents counts n telemetry events received from source.
func (m *Metrics) AddEvents(source string, n int) {
	if n > 0 {
		m.events.WithLabelValues(source).Add(float64(n))
	}
}

// ObserveSource records one collection of a telemetry source (the
// daemon's [control.Sources] OnCollect).
func (m *Metrics) ObserveSource(r control.SourceReport) {
	m.srcEvents.WithLabelValues(r.Source).Add(float64(r.Inserted))
	if r.Failed() {
		m.srcErrors.WithLabelValues(r.Source).Inc()
	} else {
		m.srcErrors.WithLabelValues(r.Source).Add(0)
	}
	if !r.NewestEvent.IsZero() {
		m.srcNewest.WithLabelValues(r.Source).Set(float64(r.NewestEvent.UnixNano()) / 1e9)
		m.srcLag.WithLabelValues(r.Source).Set(max(0, r.At.Sub(r.NewestEvent).Seconds()))
	}
	silent := 0.0
	if r.Silent {
		silent = 1
	}
	m.srcSilent.WithLabelValues(r.Source).Set(silent)
}

// ObservePrune records a telemetry pruning ([control.PruneTelemetry]):
// the raw and folded events it deleted, and the store's size and shapes
// after it.
func (m *Metrics) ObservePrune(r control.PruneResult) {
	m.pruned.Add(float64(r.Deleted))
	m.prunedFolded.Add(float64(r.FoldedDeleted))
	m.storeBytes.Set(float64(r.Size.Bytes))
	m.storeEvents.WithLabelValues("raw").Set(float64(r.Size.Events))
	m.storeEvents.WithLabelValues("folded").Set(float64(r.Size.FoldedEvents))
	m.storeShapes.Set(float64(r.Size.FoldedShapes))
}

// ObserveRunPrune records a pruning of the run history
// ([control.PruneRuns]): the runs it deleted (those of a batch deleted
// before a failure too).
func (m *Metrics) ObserveRunPrune(r control.RunPruneResult) {
	m.prunedRuns.Add(float64(r.Deleted))
}

// AlertSent counts one alert of kind.
func (m *Metrics) AlertSent(kind string) { m.alerts.WithLabelValues(kind).Inc() }

// RefreshPlans sets floe_plans from the plans stored in st; the server
// calls it on every scrape.
func (m *Metrics) RefreshPlans(ctx context.Context, st *store.Store) error {
	n, err := st.PlanCounts(ctx)
	if err != nil {
		return err
	}
	for _, s := range control.PlanStates {
		m.plans.WithLabelValues(string(s)).Set(float64(n[string(s)]))
	}
	return nil
}

// RefreshHolds sets floe_table_halted from the holds svc reads: 1 for each
// halted table, 0 for one halted before and resumed since. The server
// calls it on every scrape.
func (m *Metrics) RefreshHolds(ctx context.Context, svc *control.Service) error {
	holds, err := svc.Holds(ctx, false)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := map[string]bool{}
	for _, h := range holds {
		now[h.Table] = true
		m.halted.WithLabelValues(h.Table).Set(1)
	}
	for t := range m.held {
		if !now[t] {
			m.halted.WithLabelValues(t).Set(0)
		}
	}
	for t := range now {
		m.held[t] = true
	}
	return nil
}

// ObservePass records the health of every table a scheduling pass decided
// on ([control.Service.Health], [control.Service.LastSuccess]) and the
// plan counts: the daemon's health observer. Each table is measured at the
// metadata location the pass knew (TableDecision.MetadataLocation), so a
// table the pass saw unchanged is not read again; one the pass's alerts
// measured already (TableDecision.Measured) is taken as measured. A table that cannot be
// measured keeps its last values; the error names each such table.
func (m *Metrics) ObservePass(ctx context.Context, svc *control.Service, p control.Pass) error {
	var errs []error
	for _, d := range p.Decisions {
		if d.Measured != nil && d.Measured.LastSuccessKnown {
			m.ObserveHealth(d.Measured.Health, d.Measured.LastSuccess)
			continue
		}
		if err := m.observeTable(ctx, svc, d.Table, d.MetadataLocation); err != nil {
			errs = append(errs, fmt.Errorf("table %s: %w", d.Table, err))
		}
	}
	if err := m.RefreshPlans(ctx, svc.Store()); err != nil {
		errs = append(errs, fmt.Errorf("plan counts: %w", err))
	}
	return errors.Join(errs...)
}

// PassEnded records the scheduling pass p as it ends: the heartbeat
// (floe_scheduler_last_pass_timestamp_seconds), its errors, the tables its
// budgets deferred and what they have left. The daemon
// calls it from the scheduler itself (DaemonOptions.OnPass), not from the
// health observer, so a slow observer never makes a live daemon look dead.
func (m *Metrics) PassEnded(p control.Pass, _ error) {
	end := p.EndedAt
	if end.IsZero() {
		end = p.At
	}
	m.lastPass.Set(float64(end.UnixNano()) / 1e9)
	m.passErrors.Set(float64(len(p.Errors)))
	for _, d := range p.Decisions {
		if d.Deferred != "" {
			m.deferred.Inc()
		}
	}
	for _, b := range p.Budgets {
		if b.LimitBytes > 0 {
			m.budgetLeft.WithLabelValues(b.Scope).Set(float64(max(b.LimitBytes-b.SpentBytes-b.BoughtBytes, 0)))
		}
	}
}

// observeTable records table's health and last success, measured at the
// metadata location the pass knew it at (loc; "": read afresh), so that a
// table the pass did not see change is not read again.
func (m *Metrics) observeTable(ctx context.Context, svc *control.Service, table, loc string) error {
	cfg := svc.Config()
	id, err := lake.ParseIdent(table, cfg.CatalogNames(), cfg.DefaultCatalog)
	if err != nil {
		return err
	}
	h, err := svc.Health(ctx, id, control.HealthRequest{MetadataLocation: loc})
	if err != nil {
		return err
	}
	last, err := svc.LastSuccess(ctx, table)
	if err != nil {
		return err
	}
	m.ObserveHealth(h, last)
	return nil
}
