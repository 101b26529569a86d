package control_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
)

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"local.web.events":    "local.web.events",
		"a-b_c/d:e@f%g+h=i,j": "a-b_c/d:e@f%g+h=i,j",
		`local.db."my.table"`: `'local.db."my.table"'`,
		"sort(tenant_id, ts)": "'sort(tenant_id, ts)'",
		"it's":                `'it'\''s'`,
		"db.t$snapshots":      "'db.t$snapshots'",
		"":                    "''",
	} {
		require.Equal(t, want, control.ShellArg(in), in)
	}
}
