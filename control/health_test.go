package control_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
)

// A clustering column a table lacks is an error only when the table was
// named; across all tables it applies where it exists.
func TestHealthColumns(t *testing.T) {
	pl := setupPlan(t)
	now := func() time.Time { return time.Now().Add(time.Hour) }
	for _, tc := range []struct {
		name    string
		columns []string
		named   bool
		want    []string
		wantErr bool
	}{
		{name: "named, column exists", columns: []string{"id"}, named: true, want: []string{"id"}},
		{name: "named, column missing", columns: []string{"id", "nope"}, named: true, wantErr: true},
		{name: "all tables, missing column left out", columns: []string{"nope", "id"}, want: []string{"id"}},
		{name: "no columns", named: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := control.Health(pl.state(t), control.HealthOptions{Columns: tc.columns, Named: tc.named, Now: now})
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, pl.id.String(), h.Table)
			require.Equal(t, 8, h.Metrics.DataFiles)
			var got []string
			for _, c := range h.Metrics.Clustering {
				got = append(got, c.Column)
			}
			require.Equal(t, tc.want, got)
		})
	}
}
