package extract_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/analyzer/extract"
)

var fuzzDialects = []extract.Dialect{extract.Trino, extract.Athena, extract.Spark, extract.Snowflake, extract.DuckDB}

// FuzzParse checks that Parse never panics, is deterministic and keeps its
// invariants (every scan leaf is one of the predicates) on any input.
func FuzzParse(f *testing.F) {
	for _, s := range loadCorpus(f) {
		for i, d := range fuzzDialects {
			if d == s.dialect {
				f.Add(uint8(i), s.sql)
			}
		}
	}
	f.Add(uint8(0), "select * from t where a in (1, 2")
	f.Add(uint8(3), "select $$ from {{ ref('x') }} where a = 'it''s")
	// Shapes the schema-aware resolution, path reads and folding added.
	f.Add(uint8(3), "SELECT * FROM IDENTIFIER('db.s.\"T x\"') WHERE DATEADD(day, -30, '2020-3-1'::date) < d")
	f.Add(uint8(4), "SELECT * FROM read_parquet(['s3://lake/web/events/data/a.parquet']) semi, 'x.csv' anti WHERE semi.a = 1")
	f.Add(uint8(2), "SELECT * FROM (SELECT 1 c FROM a) at, delta.`s3://lake/web/events` WHERE ((SELECT max(x) FROM b) > 1)")
	f.Add(uint8(0), "SELECT * FROM item, customer WHERE i_year = DECIMAL '1.0' AND NOT (c_birth_year = 1 OR from_unixtime(ts / 1000) > 2)")
	f.Add(uint8(0), "WITH y AS (SELECT d_year AS dy FROM date_dim, item UNION ALL SELECT i_year FROM item) SELECT * FROM y, y z WHERE y.dy = z.dy")
	// Issue 43 shapes: session variables, LIKE ANY/ALL, CACHE TABLE and
	// DuckDB struct subscripts, whole and cut short.
	f.Add(uint8(3), "SELECT * FROM t WHERE a >= $start_ts AND b LIKE ANY ('x%', $p) AND c NOT ILIKE ALL (")
	f.Add(uint8(3), "SELECT $ FROM t WHERE a = $ AND b LIKE ANY (SELECT 1) AND $x$ = 1")
	f.Add(uint8(2), "CACHE LAZY TABLE c OPTIONS ('k' 'v') AS SELECT * FROM a WHERE x = 1")
	f.Add(uint8(2), "CACHE TABLE")
	f.Add(uint8(4), "SELECT * FROM e WHERE m['a'][1] = 1 AND struct_extract(m, 'b') = 2 AND struct_extract(1, 'c') = 3 AND m[''] = 4")
	schemas, _ := extract.ReadDDL(extract.Trino, testDDL)
	locate := func(path string) (extract.TableRef, bool) {
		return extract.TableRef{Namespace: "web", Name: "events"}, len(path)%2 == 0
	}
	f.Fuzz(func(t *testing.T, di uint8, sql string) {
		d := fuzzDialects[int(di)%len(fuzzDialects)]
		r1 := extract.Parse(d, sql)
		r2 := extract.Parse(d, sql)
		b1, err := json.Marshal(r1)
		require.NoError(t, err)
		b2, err := json.Marshal(r2)
		require.NoError(t, err)
		require.Equal(t, string(b1), string(b2))
		checkInvariants(t, sql, r1)
		_, err = r1.MarshalContract()
		require.NoError(t, err)
		checkInvariants(t, sql, extract.ParseWith(d, sql, extract.Options{Schemas: schemas, Locate: locate}))
	})
}
