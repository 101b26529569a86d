package collectors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

func TestClassifyStatement(t *testing.T) {
	tests := map[string]string{
		"SELECT 1": "SELECT",
		"  -- note\n/* c */ (SELECT 1) UNION SELECT 2":                          "SELECT",
		"with x as (select 1) select * from x":                                  "SELECT",
		"FROM t SELECT a":                                                       "SELECT",
		"VALUES (1), (2)":                                                       "SELECT",
		"INSERT INTO t VALUES (1)":                                              "INSERT",
		"MERGE INTO t USING s ON t.id = s.id":                                   "MERGE",
		"update t set a = 1":                                                    "UPDATE",
		"DELETE FROM t":                                                         "DELETE",
		"CREATE TABLE lake.s.t AS SELECT 1":                                     "CTAS",
		"CREATE OR REPLACE TABLE t AS SELECT 1":                                 "CTAS",
		"CREATE TABLE t WITH (format='PARQUET') AS SELECT 1":                    "CTAS",
		"CREATE TABLE t (a, b) AS (SELECT 1, 2)":                                "CTAS",
		"create table t using iceberg as\nwith x as (select 1) select * from x": "CTAS",
		"CREATE TABLE t (a int COMMENT 'x as select')":                          "DDL",
		"CREATE TABLE t (a int) /* as select */":                                "DDL",
		"CREATE VIEW v AS SELECT 1":                                             "DDL",
		"CREATE TABLE t (a int)":                                                "DDL",
		"ALTER TABLE t ADD COLUMN b int":                                        "DDL",
		"DROP TABLE t":                                                          "DDL",
		"MSCK REPAIR TABLE t":                                                   "DDL",
		"EXPLAIN SELECT 1":                                                      "OTHER",
		"SHOW TABLES":                                                           "OTHER",
		"CALL system.rewrite_data_files('t')":                                   "OTHER",
		"collect at Job.scala:42":                                               "OTHER",
		"/* unterminated":                                                       "OTHER",
		"":                                                                      "OTHER",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			require.Equal(t, want, collectors.ClassifyStatement(in))
		})
	}
}

func TestStatementTypeNamed(t *testing.T) {
	tests := []struct {
		name string
		want string
		ok   bool
	}{
		{"SELECT", "SELECT", true},
		{"insert_into", "INSERT", true},
		{"MULTI_TABLE_INSERT", "INSERT", true},
		{"MERGE_INTO", "MERGE", true},
		{"UPDATE", "UPDATE", true},
		{" DELETE ", "DELETE", true},
		{"CREATE_TABLE_AS_SELECT", "CTAS", true},
		{"create table as select", "CTAS", true},
		{"CTAS", "CTAS", true},
		{"", "", false},
		{"UNKNOWN", "", false},
		{"DATA_DEFINITION", "", false},
		{"CREATE TABLE", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := collectors.StatementTypeNamed(tc.name)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestIsStatement(t *testing.T) {
	for in, want := range map[string]bool{
		"SELECT 1": true, "show tables": true, "CALL x()": true, "SET a=1": true, "CREATE VIEW v AS SELECT 1": true,
		"collect at Job.scala:42": false, "": false, "42": false,
	} {
		require.Equal(t, want, collectors.IsStatement(in), in)
	}
}
