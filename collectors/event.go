package collectors

import (
	"strings"
	"time"

	"github.com/floe-project/floe/expr"
)

// Engine names the query engine that ran a query.
type Engine string

// Engines floe collects from.
const (
	EngineTrino Engine = "trino"
	// EnginePresto is PrestoDB, whose event-listener JSON the trino-event
	// source reads too; its SQL is Trino's dialect.
	EnginePresto    Engine = "presto"
	EngineSpark     Engine = "spark"
	EngineAthena    Engine = "athena"
	EngineSnowflake Engine = "snowflake"
	EngineDuckDB    Engine = "duckdb"
	// EngineIceberg is an Iceberg client that sent a REST scan report; the
	// report does not say which engine it ran in.
	EngineIceberg Engine = "iceberg-client"
)

// State is how a query ended.
type State string

// Query states.
const (
	StateSucceeded State = "SUCCEEDED"
	StateFailed    State = "FAILED"
	StateCancelled State = "CANCELLED"
	StateUnknown   State = "UNKNOWN"
)

// QueryEvent is one executed query, normalized from any source. Times are
// UTC. A QueryEvent is identified by (Source, QueryID).
type QueryEvent struct {
	// Source is the log format the event came from: trino-event,
	// trino-runtime, spark-eventlog, athena-api, cloudtrail, snowflake,
	// duckdb-log, duckdb-profile, duckdb-history, duckdb-db, iceberg-scanreport.
	Source        string `json:"source"`
	Engine        Engine `json:"engine"`
	EngineVersion string `json:"engine_version,omitempty"`
	// QueryID is the engine's id; Spark uses "<appId>/<executionId>".
	// Sources without ids (DuckDB history, scan reports) derive a stable
	// hash of the record so that collecting the same file twice stores each
	// event once.
	QueryID     string    `json:"query_id"`
	RootQueryID string    `json:"root_query_id,omitempty"`
	User        string    `json:"user,omitempty"`
	StartTime   time.Time `json:"start_time"`
	// EndTime is zero when unknown.
	EndTime       time.Time `json:"end_time,omitzero"`
	State         State     `json:"state"`
	StatementType string    `json:"statement_type"` // SELECT|INSERT|MERGE|UPDATE|DELETE|CTAS|DDL|OTHER
	SQL           string    `json:"sql,omitempty"`
	SQLTruncated  bool      `json:"sql_truncated,omitempty"`
	// SQLTemplate is true when SQL holds placeholders (?, $1, :name, Jinja).
	SQLTemplate    bool     `json:"sql_template,omitempty"`
	Params         []string `json:"params,omitempty"`
	DefaultCatalog string   `json:"default_catalog,omitempty"`
	DefaultSchema  string   `json:"default_schema,omitempty"`
	// Tables are the tables the query read or wrote, as the source reported
	// them (engine catalog and schema names) until resolution maps them to
	// floe catalogs and Iceberg identifiers.
	Tables  []TableAccess `json:"tables,omitempty"`
	Metrics QueryMetrics  `json:"metrics"`
	// Error is the engine's failure text for a failed or cancelled query
	// ("USER_ERROR TABLE_NOT_FOUND: line 1:15: Table ... does not exist"),
	// empty otherwise.
	Error string `json:"error,omitempty"`
}

// Duration is EndTime − StartTime, or zero when either is unknown.
func (e *QueryEvent) Duration() time.Duration {
	if e.StartTime.IsZero() || e.EndTime.IsZero() {
		return 0
	}
	return e.EndTime.Sub(e.StartTime)
}

// Evidence says where a column use or predicate was learned.
type Evidence string

// Evidence kinds, strongest first.
const (
	EvidenceScanReport    Evidence = "scanreport"
	EvidencePushedFilter  Evidence = "pushed-filter"
	EvidenceSQL           Evidence = "sql-parse"
	EvidenceAccessHistory Evidence = "access-history-base-minus-direct"
	EvidenceAnalysisRefs  Evidence = "analysis-refs"
)

// metadataPrefix starts the Evidence of a metadata-table access.
const metadataPrefix = "metadata-table:"

// MetadataEvidence is the Evidence the ingestion pipeline gives a
// TableAccess that read an Iceberg metadata table (Trino "t$snapshots",
// Spark db.t.snapshots) instead of the table's data: the access is
// attributed to the base table, and the analyzer skips it, since it says
// nothing about which data files queries need. metadata is the metadata
// table's name ("snapshots", "files", …).
func MetadataEvidence(metadata string) Evidence {
	return Evidence(metadataPrefix + metadata)
}

// MetadataTable returns the metadata table the access read, and false for
// an access of the table's data. See [MetadataEvidence].
func (t *TableAccess) MetadataTable() (string, bool) {
	meta, ok := strings.CutPrefix(string(t.Evidence), metadataPrefix)
	if !ok {
		return "", false
	}
	return meta, true
}

// Role is how a query used a column.
type Role string

// Column roles.
const (
	RoleFilter     Role = "filter"
	RoleJoin       Role = "join"
	RoleProjection Role = "projection"
	RoleGroupBy    Role = "group-by"
	RoleReferenced Role = "referenced"
)

// TableAccess is one table a query touched.
type TableAccess struct {
	// Catalog, Namespace and Name identify the table. Before resolution
	// they are the engine's names; after, Catalog is the floe catalog and
	// Namespace/Name are spelled as the Iceberg catalog spells them.
	Catalog   string `json:"catalog"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Direct is false when the query reached the table through a view.
	Direct     bool   `json:"direct"`
	SnapshotID *int64 `json:"snapshot_id,omitempty"`
	// Write is true when the query wrote the table (INSERT, MERGE, CTAS target).
	Write   bool        `json:"write,omitempty"`
	Columns []ColumnUse `json:"columns,omitempty"`
	// Filter is the predicate tree the scan of this table could evaluate,
	// leaves restricted to this table (OR of all scans of it). nil: whole
	// table read or filter unknown.
	Filter *expr.Node `json:"filter,omitempty"`
	// FilterText holds raw engine filter strings (Spark filters=, DuckDB
	// Filters, Trino constraint) kept for diagnostics.
	FilterText []string     `json:"filter_text,omitempty"`
	Evidence   Evidence     `json:"evidence,omitempty"`
	Metrics    TableMetrics `json:"metrics"`
}

// QualifiedName is catalog.namespace.name.
func (t *TableAccess) QualifiedName() string {
	s := t.Name
	if t.Namespace != "" {
		s = t.Namespace + "." + s
	}
	if t.Catalog != "" {
		s = t.Catalog + "." + s
	}
	return s
}

// ColumnUse is one column of a table and the roles a query gave it.
type ColumnUse struct {
	Name     string   `json:"name"`
	Roles    []Role   `json:"roles"`
	Evidence Evidence `json:"evidence"`
}

// QueryMetrics are the engine's cost figures for a query. Zero means unknown.
type QueryMetrics struct {
	ElapsedMs         int64 `json:"elapsed_ms,omitempty"`
	CPUMs             int64 `json:"cpu_ms,omitempty"`
	QueuedMs          int64 `json:"queued_ms,omitempty"`
	BytesScanned      int64 `json:"bytes_scanned,omitempty"`
	RowsScanned       int64 `json:"rows_scanned,omitempty"`
	PartitionsScanned int64 `json:"partitions_scanned,omitempty"`
	PartitionsTotal   int64 `json:"partitions_total,omitempty"`
}

// TableMetrics are per-table scan figures, where the source has them (scan
// reports, Trino inputs). Zero means unknown.
type TableMetrics struct {
	BytesScanned     int64 `json:"bytes_scanned,omitempty"`
	RowsScanned      int64 `json:"rows_scanned,omitempty"`
	ResultDataFiles  int64 `json:"result_data_files,omitempty"`
	SkippedDataFiles int64 `json:"skipped_data_files,omitempty"`
	ScannedManifests int64 `json:"scanned_manifests,omitempty"`
	SkippedManifests int64 `json:"skipped_manifests,omitempty"`
	PlanningNanos    int64 `json:"planning_nanos,omitempty"`
}
