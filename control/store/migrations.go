package store

// migration is one numbered schema step. Steps are applied in order, each
// exactly once; a released step is never edited, only followed by a new one.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations is the schema history. The last version is the schema this
// binary writes.
var migrations = []migration{
	{1, "query events, table accesses, column uses, predicates, collected files", `
CREATE TABLE query_events (
	id                 INTEGER PRIMARY KEY,
	source             TEXT    NOT NULL,
	query_id           TEXT    NOT NULL,
	engine             TEXT    NOT NULL,
	engine_version     TEXT    NOT NULL DEFAULT '',
	root_query_id      TEXT    NOT NULL DEFAULT '',
	user_name          TEXT    NOT NULL DEFAULT '',
	start_time         INTEGER NOT NULL,  -- UTC Unix nanoseconds
	end_time           INTEGER,           -- NULL when unknown
	state              TEXT    NOT NULL,
	statement_type     TEXT    NOT NULL DEFAULT '',
	sql_text           TEXT    NOT NULL DEFAULT '',
	sql_truncated      INTEGER NOT NULL DEFAULT 0,
	sql_template       INTEGER NOT NULL DEFAULT 0,
	params_json        TEXT,
	default_catalog    TEXT    NOT NULL DEFAULT '',
	default_schema     TEXT    NOT NULL DEFAULT '',
	elapsed_ms         INTEGER NOT NULL DEFAULT 0,
	cpu_ms             INTEGER NOT NULL DEFAULT 0,
	queued_ms          INTEGER NOT NULL DEFAULT 0,
	bytes_scanned      INTEGER NOT NULL DEFAULT 0,
	rows_scanned       INTEGER NOT NULL DEFAULT 0,
	partitions_scanned INTEGER NOT NULL DEFAULT 0,
	partitions_total   INTEGER NOT NULL DEFAULT 0,
	error              TEXT    NOT NULL DEFAULT '',
	UNIQUE (source, query_id)
);
CREATE INDEX query_events_start_time ON query_events (start_time);

CREATE TABLE table_accesses (
	id                  INTEGER PRIMARY KEY,
	event_id            INTEGER NOT NULL REFERENCES query_events (id) ON DELETE CASCADE,
	ord                 INTEGER NOT NULL,
	catalog             TEXT    NOT NULL,
	namespace           TEXT    NOT NULL,
	name                TEXT    NOT NULL,
	table_key           TEXT    NOT NULL,  -- lower(catalog.namespace.name)
	metadata            TEXT    NOT NULL DEFAULT '',  -- "snapshots" for t$snapshots
	direct              INTEGER NOT NULL,
	write               INTEGER NOT NULL,
	snapshot_id         INTEGER,
	evidence            TEXT    NOT NULL DEFAULT '',
	filter_json         TEXT,
	filter_text_json    TEXT,
	bytes_scanned       INTEGER NOT NULL DEFAULT 0,
	rows_scanned        INTEGER NOT NULL DEFAULT 0,
	result_data_files   INTEGER NOT NULL DEFAULT 0,
	skipped_data_files  INTEGER NOT NULL DEFAULT 0,
	scanned_manifests   INTEGER NOT NULL DEFAULT 0,
	skipped_manifests   INTEGER NOT NULL DEFAULT 0,
	planning_nanos      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX table_accesses_event ON table_accesses (event_id);
CREATE INDEX table_accesses_table ON table_accesses (table_key);

CREATE TABLE column_uses (
	access_id INTEGER NOT NULL REFERENCES table_accesses (id) ON DELETE CASCADE,
	ord       INTEGER NOT NULL,
	name      TEXT    NOT NULL,
	roles     TEXT    NOT NULL,  -- comma-separated collectors.Role values
	evidence  TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX column_uses_access ON column_uses (access_id);

CREATE TABLE predicates (
	access_id   INTEGER NOT NULL REFERENCES table_accesses (id) ON DELETE CASCADE,
	event_id    INTEGER NOT NULL,
	table_key   TEXT    NOT NULL,
	column_name TEXT    NOT NULL,
	transform   TEXT    NOT NULL DEFAULT '',
	op          TEXT    NOT NULL,
	values_json TEXT    NOT NULL,
	evidence    TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX predicates_table ON predicates (table_key, column_name);
CREATE INDEX predicates_access ON predicates (access_id);

CREATE TABLE collect_files (
	path         TEXT    PRIMARY KEY,
	source       TEXT    NOT NULL DEFAULT '',
	size         INTEGER NOT NULL,
	mtime        INTEGER NOT NULL,  -- Unix nanoseconds
	events       INTEGER NOT NULL DEFAULT 0,
	bad          INTEGER NOT NULL DEFAULT 0,
	collected_at INTEGER NOT NULL
);
`},
	{2, "plans, runs and run steps", `
CREATE TABLE plans (
	id              TEXT    PRIMARY KEY,
	table_name      TEXT    NOT NULL,
	base_snapshot   INTEGER NOT NULL,
	layout          TEXT    NOT NULL,
	projection_json TEXT    NOT NULL DEFAULT '',
	state           TEXT    NOT NULL,
	created_by      TEXT    NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	decided_by      TEXT    NOT NULL DEFAULT '',
	decided_at      INTEGER
);
CREATE INDEX plans_table ON plans (table_name, state);

CREATE TABLE runs (
	id         TEXT    PRIMARY KEY,
	table_name TEXT    NOT NULL,
	plan_id    TEXT    NOT NULL DEFAULT '',
	status     TEXT    NOT NULL,
	error      TEXT    NOT NULL DEFAULT '',
	started_at INTEGER NOT NULL,
	ended_at   INTEGER
);
CREATE INDEX runs_table ON runs (table_name, started_at);

CREATE TABLE run_steps (
	run_id      TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	step        TEXT    NOT NULL,
	status      TEXT    NOT NULL,
	before_json TEXT    NOT NULL DEFAULT '',
	after_json  TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '',
	started_at  INTEGER NOT NULL,
	ended_at    INTEGER,
	PRIMARY KEY (run_id, step)
);
`},
	{3, "run leases", `
ALTER TABLE runs ADD COLUMN lease_expires_at INTEGER;
`},
	{4, "alert state and deliveries", `
CREATE TABLE alerts (
	kind        TEXT    NOT NULL,
	alert_key   TEXT    NOT NULL,
	table_name  TEXT    NOT NULL DEFAULT '',
	state       TEXT    NOT NULL,
	summary     TEXT    NOT NULL DEFAULT '',
	age_seconds INTEGER NOT NULL DEFAULT 0,
	sla_seconds INTEGER NOT NULL DEFAULT 0,
	error       TEXT    NOT NULL DEFAULT '',
	run_id      TEXT    NOT NULL DEFAULT '',
	failures    INTEGER NOT NULL DEFAULT 0,
	since       INTEGER,           -- UTC Unix nanoseconds; NULL when unknown
	changed_at  INTEGER NOT NULL,  -- when the state last changed
	seq         INTEGER NOT NULL,  -- number of the latest notification
	pending     INTEGER NOT NULL,  -- 1 while notification seq is not delivered everywhere
	notified_at INTEGER,           -- when the last notification reached every sink
	PRIMARY KEY (kind, alert_key)
);

CREATE TABLE alert_deliveries (
	kind      TEXT    NOT NULL,
	alert_key TEXT    NOT NULL,
	sink      TEXT    NOT NULL,
	seq       INTEGER NOT NULL,  -- the notification the sink last received
	sent_at   INTEGER NOT NULL,
	PRIMARY KEY (kind, alert_key, sink)
);
`},
	// "trigger" is a reserved word in SQL, hence run_trigger. Runs stored
	// before it were all started from the CLI.
	{5, "run triggers", `
ALTER TABLE runs ADD COLUMN run_trigger TEXT NOT NULL DEFAULT 'manual';
`},
}

// SchemaVersion is the schema version this binary writes: the number of
// the last migration.
func SchemaVersion() int { return migrations[len(migrations)-1].version }
