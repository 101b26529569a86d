package rewriter

import (
	"context"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
)

// Engine carries out floe's maintenance steps on one table. floe decides
// what a step does — which snapshots expire, which files are orphans older
// than what, which partitions compact into which layout at which target
// size — from the table's metadata and its policy, the same whichever
// engine runs; the engine does the work. [Native] does it in this process;
// rewriter/trino and rewriter/spark hand it to a cluster the team already
// runs, through the Iceberg connector's and Iceberg's Spark procedures.
// After an engine reports success the control plane reloads the table and
// verifies the snapshot it committed, so a run means the same whichever
// engine ran it.
//
// Every method returns the step's [StepReport]: the native engine's own
// result ([CompactResult], …), or an [*EngineReport] for a distributed
// engine. When ctx ends, the engine stops the work it started (a
// distributed engine cancels its query) and returns an error that wraps
// ctx's.
type Engine interface {
	// Name is the engine's name in floe.yaml: "native", or the key under
	// engines (say "trino").
	Name() string
	// Kind is the engine's type: [KindNative], [KindTrino] or [KindSpark].
	Kind() string
	// CanWrite reports whether the engine can write layouts of strategy s.
	CanWrite(s layout.Strategy) bool
	// Compact rewrites the job's plan.
	Compact(ctx context.Context, job CompactJob) (StepReport, error)
	// Expire expires the job's snapshots.
	Expire(ctx context.Context, job ExpireJob) (StepReport, error)
	// RemoveOrphans removes files no snapshot or metadata reaches, older
	// than the job's cutoff.
	RemoveOrphans(ctx context.Context, job OrphanJob) (StepReport, error)
	// RewriteManifests rewrites the current snapshot's manifests.
	RewriteManifests(ctx context.Context, job ManifestJob) (StepReport, error)
	// Ping checks that the engine answers (floe doctor): a trivial query
	// for a distributed engine.
	Ping(ctx context.Context) error
	// Close releases the engine's connections.
	Close() error
}

// StepReport is what an engine reports of one step: exactly one field is
// set, the native engine's result of the step's kind or a distributed
// engine's report (nil fields otherwise; all nil when the step failed
// before it could report).
type StepReport struct {
	Expire    *ExpireResult
	Orphans   *OrphanResult
	Compact   *CompactResult
	Manifests *ManifestResult
	Engine    *EngineReport
}

// Engine kinds.
const (
	KindNative = "native"
	KindTrino  = "trino"
	KindSpark  = "spark"
)

// EngineTable is a table as an engine names it: the engine's catalog name
// (floe's catalog mapped through engines.<name>.catalogs), the namespace
// levels and the table name, all unquoted.
type EngineTable struct {
	Catalog   string   `json:"catalog"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// String joins the parts with dots, unquoted, for messages.
func (t EngineTable) String() string {
	parts := append(append([]string{t.Catalog}, t.Namespace...), t.Name)
	return strings.Join(parts, ".")
}

// CompactJob is one compaction floe planned.
type CompactJob struct {
	// Table is the table as the engine names it.
	Table EngineTable
	// State is the table as floe loaded it; Plan floe's plan of it.
	State *lake.State
	Plan  CompactPlan
	// Options are the compaction's options (layout, target file size,
	// minimum input files, budget, …) as the native engine takes them.
	Options CompactOptions
	// Scope, when not nil, restricts the rewrite to these partitions: a
	// budgeted or scoped plan that leaves some of the table's partitions
	// out. Nil rewrites what the whole table needs. See [PartitionScopes].
	Scope []PartitionScope
}

// PartitionScope is one partition of a scoped rewrite: the conjunction of
// its partition fields' values.
type PartitionScope struct {
	// Key is the partition as lake.File.PartitionKey prints it.
	Key    string           `json:"key"`
	Fields []PartitionValue `json:"fields"`
}

// PartitionValue is one partition field's value in a [PartitionScope],
// stated on its source column so an engine can turn it into a predicate
// that selects exactly the partition's rows.
type PartitionValue struct {
	// Column is the source column's name in the current schema.
	Column string `json:"column"`
	// SourceType is the source column's Iceberg type ("date",
	// "timestamp", "timestamptz", "string", "long", …).
	SourceType string `json:"source_type"`
	// Transform is the Iceberg transform: identity, year, month, day,
	// hour, bucket[N], truncate[W] or void.
	Transform string `json:"transform"`
	// Null is set when the partition value is null.
	Null bool `json:"null,omitempty"`
	// Value is the identity value as iceberg-go holds it (string, int32,
	// int64, bool, iceberg.Date, …), or for truncate[W] on an int or long
	// column the partition's truncated value t, which selects the source
	// range [t, t+W); nil for the time transforms.
	Value any `json:"value,omitempty"`
	// Lower and Upper bound the source column, [Lower, Upper), for the
	// time transforms (year, month, day, hour) on date and timestamp
	// columns, in UTC.
	Lower time.Time `json:"lower,omitzero"`
	Upper time.Time `json:"upper,omitzero"`
}

// ExpireJob is one snapshot expiry floe planned.
type ExpireJob struct {
	Table EngineTable
	// Catalog and Tbl are the table as floe loaded it, for the native
	// engine.
	Catalog table.CatalogIO
	Tbl     *table.Table
	Plan    ExpirePlan
	Options ExpireOptions
	// OlderThan is the cutoff: snapshots older than it expire, unless
	// they are among the RetainLast newest.
	OlderThan  time.Time
	RetainLast int
}

// OrphanJob is one orphan removal floe planned.
type OrphanJob struct {
	Table EngineTable
	Tbl   *table.Table
	// Plan is floe's own listing, which the native engine deletes.
	Plan    OrphanPlan
	Options OrphanOptions
	// OlderThan is the cutoff: only unreferenced files older than it go.
	// The control plane moves it before the start of every live floe run
	// of the table ([Leases]), so an engine that cannot see floe's leases
	// still never deletes a file a run in flight may commit.
	OlderThan time.Time
}

// ManifestJob is one manifest rewrite.
type ManifestJob struct {
	Table   EngineTable
	Tbl     *table.Table
	Options ManifestOptions
}

// EngineReport is what a distributed engine reports for one step: the
// statements it ran, each with the engine's query id, and the metrics
// parsed from the procedures' result rows.
type EngineReport struct {
	Engine     string            `json:"engine"`
	Kind       string            `json:"kind"`
	Step       string            `json:"step"`
	Statements []EngineStatement `json:"statements"`
	// Metrics are the procedure's counters in snake_case
	// (rewritten_data_files_count, added_data_files_count,
	// rewritten_bytes_count, deleted_data_files_count, …).
	Metrics map[string]int64 `json:"metrics"`
	// DryRunFiles are the files an orphan removal's dry run listed, at
	// most [MaxReportedFiles] of them; DryRunCount counts them all.
	DryRunFiles []string      `json:"dry_run_files,omitempty"`
	DryRunCount int           `json:"dry_run_count,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	// Notes say where the engine did the step differently from how floe
	// planned it (say, an option its procedure lacks and what the engine
	// did instead), one sentence each.
	Notes []string `json:"notes,omitempty"`
}

// EngineStatement is one statement an engine ran.
type EngineStatement struct {
	SQL     string `json:"sql"`
	QueryID string `json:"query_id,omitempty"`
	// Rows counts the result rows read.
	Rows int `json:"rows"`
}

// MaxReportedFiles caps the file lists an [EngineReport] keeps.
const MaxReportedFiles = 1000
