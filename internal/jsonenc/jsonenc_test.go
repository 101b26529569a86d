package jsonenc_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/jsonenc"
)

type wrapped struct{ S string }

func (w wrapped) MarshalJSON() ([]byte, error) { return jsonenc.Marshal(map[string]string{"s": w.S}) }

func TestMarshal(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"predicate", map[string]string{"p": "ts >= 3 && a < b"}, `{"p":"ts >= 3 && a < b"}`},
		{"list", []int{1, 2}, `[1,2]`},
		{"nil", nil, `null`},
		// A MarshalJSON built on Marshal stays unescaped inside an
		// encoder that does not escape either.
		{"nested", []wrapped{{"a&b"}}, `[{"s":"a&b"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonenc.Marshal(tc.v)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			require.True(t, json.Valid(got))
		})
	}
}

func TestMarshalRefusesWhatJSONCannotHold(t *testing.T) {
	_, err := jsonenc.Marshal(map[string]any{"c": make(chan int)})
	require.Error(t, err)
}
