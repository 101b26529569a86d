package lake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/google"
)

// TestGCSCredentials: floe's GCS IO resolves credentials from iceberg-go's
// properties as iceberg-go does: no-auth, then a vended token, then a key
// (inline or in a file, of gcs.credtype), then the default credentials.
func TestGCSCredentials(t *testing.T) {
	const authorizedUser = `{"type":"authorized_user","client_id":"id","client_secret":"secret","refresh_token":"token"}`
	keyFile := filepath.Join(t.TempDir(), "key.json")
	require.NoError(t, os.WriteFile(keyFile, []byte(authorizedUser), 0o600))
	adc := &google.Credentials{ProjectID: "from-adc"}
	for _, tc := range []struct {
		name    string
		props   map[string]string
		adcErr  error
		want    func(t *testing.T, c *google.Credentials)
		wantErr string
	}{
		{name: "no auth wins", props: map[string]string{iceio.GCSNoAuth: "true", iceio.GCSOAuthToken: "tok"},
			want: func(t *testing.T, c *google.Credentials) { require.Nil(t, c) }},
		{name: "vended token", props: map[string]string{iceio.GCSOAuthToken: "tok"},
			want: func(t *testing.T, c *google.Credentials) {
				tok, err := c.TokenSource.Token()
				require.NoError(t, err)
				require.Equal(t, "tok", tok.AccessToken)
			}},
		{name: "inline key of its type", props: map[string]string{iceio.GCSJSONKey: authorizedUser, iceio.GCSCredType: "authorized_user"},
			want: func(t *testing.T, c *google.Credentials) { require.JSONEq(t, authorizedUser, string(c.JSON)) }},
		{name: "key file", props: map[string]string{iceio.GCSKeyPath: keyFile, iceio.GCSCredType: "authorized_user"},
			want: func(t *testing.T, c *google.Credentials) { require.JSONEq(t, authorizedUser, string(c.JSON)) }},
		{name: "a key not a service account's needs its type", props: map[string]string{iceio.GCSJSONKey: authorizedUser},
			wantErr: "gcs: parse gcs.jsonkey (set gcs.credtype if the key is not a service account's)"},
		{name: "missing key file", props: map[string]string{iceio.GCSKeyPath: filepath.Join(t.TempDir(), "none.json")},
			wantErr: "gcs: read gcs.keypath"},
		{name: "default credentials", props: map[string]string{},
			want: func(t *testing.T, c *google.Credentials) { require.Same(t, adc, c) }},
		{name: "no default credentials", props: map[string]string{}, adcErr: errors.New("none here"),
			wantErr: "gcs: no credentials (set gcs.no-auth=true for anonymous access): none here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gcsCredentials(context.Background(), tc.props, func(context.Context) (*google.Credentials, error) {
				if tc.adcErr != nil {
					return nil, tc.adcErr
				}
				return adc, nil
			})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.want(t, c)
		})
	}
}
