package trino

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitExecute(t *testing.T) {
	tests := []struct {
		name, query, prepared string
		sql                   string
		params                []string
		template              bool
	}{
		{"plain", "SELECT 1", "", "SELECT 1", nil, false},
		{"prepared", "EXECUTE _trino_go USING 42, 'it''s', DATE '2024-01-01'", "SELECT * FROM t WHERE a = ? AND b = ? AND d = ?",
			"SELECT * FROM t WHERE a = ? AND b = ? AND d = ?", []string{"42", "it's", "DATE '2024-01-01'"}, true},
		{"immediate", "EXECUTE IMMEDIATE 'SELECT * FROM t WHERE a = ? AND s = ''x''' USING 7", "",
			"SELECT * FROM t WHERE a = ? AND s = 'x'", []string{"7"}, true},
		{"execute without using", "execute stmt1", "SELECT 1", "SELECT 1", nil, false},
		{"executed word in a select", "SELECT executed FROM t", "", "SELECT executed FROM t", nil, false},
		{"using inside a string", "EXECUTE s USING 'a USING b', (1 + 2)", "SELECT ?, ?", "SELECT ?, ?", []string{"a USING b", "(1 + 2)"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sql, params, tmpl := splitExecute(tc.query, tc.prepared)
			require.Equal(t, tc.sql, sql)
			require.Equal(t, tc.params, params)
			require.Equal(t, tc.template, tmpl)
		})
	}
}
