package simulator_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/simulator"
)

// FuzzWorkloadFromSQL feeds arbitrary SQL through the whole pure path: statement
// splitting, extraction, binding to a schema, conversion to an iceberg-go filter and
// replay against a few files. Nothing may panic, and replay may never read more files
// than exist nor skip a file for a query without a filter.
func FuzzWorkloadFromSQL(f *testing.F) {
	for _, s := range []string{
		workloadSQL,
		"select * from events where ts between '2026-11-01' and 1795737600000000 or not (region like 'a%b' and n in (1, 2.5, 'x'))",
		"select * from events where year(ts) = 2026 and month(ts) in (DATE '2026-11-01', DATE '2026-11-15') and d > 20000; select 1",
		"select * from events where amount = 1e309 or flag = true or n = 99999999999 or region ilike 'x' or ts > TIMESTAMP '2026-11-01 10:00:00.1234567 +02:00'",
		"select * from events where ';",
	} {
		f.Add(s)
	}
	md, err := table.NewMetadata(eventsSchema(), iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///fuzz", nil)
	if err != nil {
		f.Fatal(err)
	}
	st := &lake.State{Metadata: md, DataFiles: []lake.File{
		{Path: "a", SizeBytes: 10, Records: 5, Lower: map[int]iceberg.Literal{1: iceberg.Int64Literal(0), 4: iceberg.StringLiteral("af")}, Upper: map[int]iceberg.Literal{1: iceberg.Int64Literal(9), 4: iceberg.StringLiteral("eu")}, NullCounts: map[int]int64{4: 0}, ValueCounts: map[int]int64{4: 5}},
		{Path: "b", SizeBytes: 10, Records: 5, NullCounts: map[int]int64{6: 5}, ValueCounts: map[int]int64{6: 5}},
		{Path: "c", SizeBytes: 10, Records: 0},
	}}
	match := simulator.MatchIdent(lake.Ident{Name: "events"})
	f.Fuzz(func(t *testing.T, sql string) {
		for _, stmt := range simulator.SplitStatements(sql) {
			if stmt == "" || stmt != strings.TrimSpace(stmt) {
				t.Fatalf("statement %q is blank or untrimmed", stmt)
			}
		}
		qs, _, err := simulator.WorkloadFromSQL(strings.NewReader(sql), extract.Trino, match)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			e, ok := simulator.ToIcebergExpr(q.Filter, md.CurrentSchema())
			if q.Filter == nil && ok {
				t.Fatalf("query %s without a filter converted to %s", q.ID, e)
			}
		}
		p := simulator.ProjectCurrent(st, qs)
		for i, r := range p.PerQuery {
			if r.FilesRead > 2 || r.FilesRead < 0 {
				t.Fatalf("query %s reads %d of 3 files (one empty)", r.ID, r.FilesRead)
			}
			if qs[i].Filter == nil && r.FilesRead != 2 {
				t.Fatalf("unfiltered query %s reads %d files", r.ID, r.FilesRead)
			}
		}
	})
}
