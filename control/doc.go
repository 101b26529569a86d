// Package control is floe's control plane: it wires the stages together.
// Its sub-packages hold the configuration (config), the state store
// (store) and the daemon's HTTP side (server: probes, metrics, the JSON
// API); this package holds the explicit wiring lists, such as [Parsers],
// and the use cases that the CLI, the daemon and the HTTP API all call.
// Telemetry ingestion, the HTTP telemetry endpoints included, sits beside
// the parsers in collectors/ingest; [Collect] runs it against the
// configuration and the state store.
//
// # Use cases
//
// Each takes a context, explicit inputs (a loaded [lake.State] or catalog,
// the [store.Store]) and an options struct with a Now clock, and returns a
// typed result for the caller to render; none prints.
//
//   - [Collect] reads query-log files into the store.
//   - [Analyze] ranks a table's predicate columns from the collected
//     queries and proposes candidate layouts; [QueriedTables] lists the
//     tables with queries, most queried first; [QueryStats] summarizes the
//     collected queries per table. All three, [LoadWorkload] and so
//     [Project] and [Measure] count one workload, [analyzer.Workload]'s.
//   - [LoadWorkload] reads a table's queries (collected, or a SQL file);
//     [Project] replays them against layouts — given, or the analyzer's
//     candidates for that workload — without moving data; [Measure] counts the files each
//     reads today with iceberg-go's scan planning.
//   - [ChoosePlan] picks the best projected candidate and applies the
//     "no gain, no plan" rule (a minimum gain, and no more files than
//     [FileLimit]); [PlanBest] projects, chooses and, when the best
//     candidate gains enough, [ProposePlan]s it.
//   - [Optimize] runs the maintenance steps or an approved plan, after
//     refusing options the table cannot take; [PlanOptimize] is its dry
//     run, which records nothing.
//   - [Health] measures and classifies a table.
//   - [Report] gathers all of the above, with stored plans and runs, into
//     the recommendation report (a report.Report, rendered by package
//     control/report): per candidate the scan bytes it saves a day against
//     the bytes it rewrites once, and a recommendation only for one that
//     pays back within the table's max payback.
//   - [Doctor] checks that every configured catalog, its object store and
//     the state store answer, each check bounded by a timeout (floe doctor,
//     and the daemon at start and periodically); [OpenCatalog] opens a
//     configured catalog as every verb does.
//
// # Runs
//
// [Optimize] runs expire → orphans → compact → manifests on one table and
// records a [Run] with every [Step]'s before/after health ([StepHealth])
// and report. Plans and runs are typed values of this package ([Plan],
// [PlanState], [Run], [RunStatus]); the state store only keeps their rows,
// and [GetPlan], [ListPlans], [GetRun] and [ListRuns] read them back. The
// first failing step fails the run; nothing is swallowed. A run record
// holds a lease renewed every [RunLeaseTTL]/4; opening the store marks a
// running run whose lease lapsed (its process was killed) as abandoned and
// returns its plan to approved. The compact step puts first the partitions
// whose groups the table's previous compaction skipped.
//
// The expire and orphans steps, like their verbs, plan with [PlanExpire]
// and [PlanOrphans]: every entry of every catalog floe can see
// ([Catalogs.Siblings], the one place siblings are found) whose location
// overlaps the table's is read, and what it references is never deleted;
// an entry or a catalog that cannot be read refuses the step
// ([*UnreadableEntriesError]). A table that has such siblings is expired
// and cleaned by floe itself, whichever engine is chosen. A floe run's
// uncommitted files are taken whatever their age only on the table its run
// record names.
//
// # The daemon
//
// floe serve is a [Daemon]: a group of actors started and stopped together
// (github.com/oklog/run, as Prometheus runs its components) — the
// [Scheduler]'s passes, its run queue, the HTTP server, the health
// observer and the connection checks — each an execute function and an
// interrupt. The API queues runs ([Scheduler.Enqueue], recorded queued by
// [Service.Queue] so that the caller has the run id at once); the queue
// and the passes share the run slots (server.max_concurrent_runs). A pass
// reads a table's metadata only when its metadata location moved since it
// was last read (a SQL catalog's listing says where it is; see
// docs/changes.md), once for the decision, the alerts and the gauges; a
// commit reported to the daemon ([Scheduler.Changed]) wakes the next pass,
// which decides that table whatever its poll interval. On
// stop no run starts, queued runs are recorded cancelled, and runs in
// flight get the shutdown grace before they are cancelled. Every error an
// actor returns is logged and returned.
//
// # Halted tables
//
// A run failing a check that must never fail (an error wrapping
// rewriter.ErrInvariant) is not retried with backoff like a transient
// failure: [Service.Run] puts its table on hold ([Hold], kept in the
// store), and no run of it starts — from the scheduler, the API or a verb
// — until a person resumes it ([Service.Resume]); the daemon raises the
// halted alert meanwhile.
//
// # Plans and approval
//
// A plan is a proposal to rewrite one table into one layout, with the
// simulator's projection that justifies it. It is made for a base snapshot
// — the table's current snapshot when it was proposed — and its id is a
// stable hash of table, base snapshot and canonical layout (plus the
// z-order key for zorder), so the same proposal is the same plan.
//
//	proposed ──approve──► approved ──run──► running ──► done | failed
//	    │                     │
//	    └──reject──► rejected └──table moved on──► stale
//
// [ProposePlan] stores a proposed plan (again: returns the stored one,
// whatever its state). [ApprovePlan] and [RejectPlan] decide it once; a
// plan that is not proposed is refused with a [*PlanStateError]. [Optimize]
// with [OptimizeOptions.PlanID] runs only an approved plan, compacting into
// its layout; the run carries the plan id, and the plan ends done or
// failed. Every move is a compare-and-set in the store
// ([store.Store.TransitionPlan]), so two approvers or two runners cannot
// both win. The approver and approval time stay on the plan through the
// later moves.
//
// Staleness. Before a plan runs, [CheckPlan] compares the table with the
// plan's base snapshot: appends since the base are fine (the compaction
// picks the new files up), but a data file of the base snapshot that is no
// longer live (another compaction, an overwrite, a delete), a base snapshot
// that was expired, or a layout column that left the schema means the
// projection no longer describes the table: the plan is stored as stale and
// the run refused with [ErrStalePlan], asking for a new plan. The check runs
// before the run's own expire step, which may expire the base snapshot.
// Correctness does not depend on it: the compaction validates its inputs
// against every snapshot it commits on, plan or no plan.
package control
