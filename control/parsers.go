package control

import (
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/athena"
	"github.com/floe-project/floe/collectors/duckdb"
	"github.com/floe-project/floe/collectors/icebergscan"
	"github.com/floe-project/floe/collectors/snowflake"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/collectors/trino"
)

// Parsers returns a fresh list of every query-log format floe reads, in
// detection order (more specific formats first). Some parsers hold state
// across files (the Snowflake joiner pairs QUERY_HISTORY with
// ACCESS_HISTORY), so call Parsers once per collection run.
func Parsers() []collectors.Parser {
	return []collectors.Parser{
		trino.EventParser{},
		trino.RuntimeParser{},
		spark.EventLogParser{},
		athena.APIParser{},
		athena.CloudTrailParser{},
		snowflake.NewJoiner(),
		duckdb.LogParser{},
		duckdb.ProfileParser{},
		duckdb.HistoryParser{},
		duckdb.DBParser{},
		icebergscan.NewParser(),
	}
}

// SourceNames lists the --source names of [Parsers].
func SourceNames() []string {
	ps := Parsers()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Source()
	}
	return out
}
