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
	})
}
