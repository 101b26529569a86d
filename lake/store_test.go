package lake_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// A Glue catalog's region and keys reach its tables' S3 IO: iceberg-go's
// S3 IO reads only s3.* and client.region.
func TestIOPropsGlueRegionAndKeysApplyToS3(t *testing.T) {
	glue := map[string]string{
		"type": "glue", "glue.region": "eu-west-1",
		"glue.access-key-id": "AKIAGLUE", "glue.secret-access-key": "glue-secret", "glue.session-token": "glue-token",
		lake.PropCatalogTimeout: "10s", lake.PropIOTimeout: "5s",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range glue {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name  string
		props map[string]string
		want  map[string]string // keys that must have these values
		gone  []string          // keys that must be absent
	}{
		{"glue only", glue,
			map[string]string{"s3.region": "eu-west-1", "s3.access-key-id": "AKIAGLUE", "s3.secret-access-key": "glue-secret", "s3.session-token": "glue-token", "glue.region": "eu-west-1"},
			[]string{lake.PropCatalogTimeout, lake.PropIOTimeout}},
		{"s3 region wins", with(map[string]string{"s3.region": "us-east-2"}),
			map[string]string{"s3.region": "us-east-2", "s3.access-key-id": "AKIAGLUE"}, nil},
		{"client region wins", with(map[string]string{"client.region": "us-west-2"}),
			map[string]string{"client.region": "us-west-2", "s3.access-key-id": "AKIAGLUE"}, []string{"s3.region"}},
		{"s3 keys win as a set", with(map[string]string{"s3.access-key-id": "AKIAS3", "s3.secret-access-key": "s3-secret"}),
			map[string]string{"s3.access-key-id": "AKIAS3", "s3.secret-access-key": "s3-secret", "s3.region": "eu-west-1"}, []string{"s3.session-token"}},
		{"no glue keys: the default chain", map[string]string{"type": "glue", "glue.region": "eu-west-1"},
			map[string]string{"s3.region": "eu-west-1"}, []string{"s3.access-key-id", "s3.secret-access-key", "s3.session-token"}},
		{"not glue: untouched", map[string]string{"type": "rest", "glue.region": "eu-west-1", "glue.access-key-id": "AKIAGLUE"},
			map[string]string{"glue.region": "eu-west-1"}, []string{"s3.region", "s3.access-key-id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := lake.IOProps(tc.props)
			for k, v := range tc.want {
				require.Equal(t, v, got[k], k)
			}
			for _, k := range tc.gone {
				require.NotContains(t, got, k)
			}
		})
	}
}
