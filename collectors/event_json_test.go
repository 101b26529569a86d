package collectors_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
)

func TestTableAccessSnapshotIDIsAString(t *testing.T) {
	id := int64(7407163360503608281) // past 2^53: a JSON number would round it
	in := collectors.TableAccess{Catalog: "local", Namespace: "web", Name: "events", SnapshotID: &id, FilterText: []string{"ts >= 1"}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // as floe's --output json writes
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(in))
	b := buf.Bytes()
	require.Contains(t, string(b), `"snapshot_id":"7407163360503608281"`)
	require.Contains(t, string(b), `ts >= 1`, "no HTML escaping")
	var out collectors.TableAccess
	require.NoError(t, json.Unmarshal(b, &out))
	require.Equal(t, in, out)

	for _, tc := range []struct {
		name, json string
		want       *int64
		err        string
	}{
		{"stored as a number", `{"name":"events","snapshot_id":7407163360503608281}`, &id, ""},
		{"a string", `{"name":"events","snapshot_id":"7407163360503608281"}`, &id, ""},
		{"none", `{"name":"events"}`, nil, ""},
		{"null", `{"name":"events","snapshot_id":null}`, nil, ""},
		{"not an id", `{"name":"events","snapshot_id":"x"}`, nil, "not a snapshot id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got collectors.TableAccess
			err := json.Unmarshal([]byte(tc.json), &got)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.SnapshotID)
			require.Equal(t, "events", got.Name)
		})
	}
}
