package lake

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	gcsio "github.com/apache/iceberg-go/io/gocloud/gcs"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

// gcsSchemes are the location schemes of GCS (as iceberg-go registers them).
var gcsSchemes = []string{"gs"}

// openGCS is floe's IO for a gs:// location: iceberg-go's (io/gocloud/gcs
// of v0.7.0), on the same properties, but with every request bounded by
// the [storeBounds] ctx carries (see [registerBoundedIO]). iceberg-go's
// builds its HTTP client itself and takes none.
//
// The properties are iceberg-go's: gcs.service.host (or gcs.endpoint), an
// endpoint in place of Google's; gcs.usejsonapi, reads through the JSON
// API; and for credentials, in this order, gcs.no-auth (anonymous),
// gcs.oauth2.token (with gcs.oauth2.token-expires-at, in Unix
// milliseconds: a token a REST catalog vends), gcs.jsonkey or gcs.keypath
// (a key of type gcs.credtype, default service_account), else the
// application default credentials.
func openGCS(ctx context.Context, parsed *url.URL, props map[string]string) (iceio.IO, error) {
	creds, err := gcsCredentials(ctx, props, gcp.DefaultCredentials)
	if err != nil {
		return nil, err
	}
	rt := boundsOf(ctx).transport(gcp.DefaultTransport())
	var hc *gcp.HTTPClient
	if creds == nil {
		hc = gcp.NewAnonymousHTTPClient(rt)
	} else if hc, err = gcp.NewHTTPClient(rt, gcp.CredentialsTokenSource(creds)); err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	// The client authenticates through hc: without WithoutAuthentication
	// the storage library would also look up default credentials, probing
	// the GCE metadata server, and with STORAGE_EMULATOR_HOST set gcsblob
	// would send every request through http.DefaultClient, unbounded.
	opts := append([]option.ClientOption{option.WithHTTPClient(&hc.Client), option.WithoutAuthentication()},
		gcsio.ParseGCSConfig(props).ClientOptions...)
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	bucket, err := gcsblob.OpenBucket(ctx, nil, parsed.Host, &gcsblob.Options{Client: client})
	if err != nil {
		return nil, fmt.Errorf("gcs: %w", err)
	}
	return blobfs.New(ctx, bucket, blobfs.DefaultObjectLocationExtractor(parsed.Host, gcsSchemes...)), nil
}

// gcsCredTypes are the key types gcs.credtype may name.
var gcsCredTypes = map[string]bool{
	string(google.ServiceAccount):             true,
	string(google.AuthorizedUser):             true,
	string(google.ImpersonatedServiceAccount): true,
	string(google.ExternalAccount):            true,
}

// gcsScope is the OAuth2 scope of the keys floe uses (read and write).
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"

// gcsCredentials are the credentials props name, as iceberg-go resolves
// them (nil: anonymous); adc finds the application default ones.
func gcsCredentials(ctx context.Context, props map[string]string, adc func(context.Context) (*google.Credentials, error)) (*google.Credentials, error) {
	if noAuth, err := strconv.ParseBool(props[iceio.GCSNoAuth]); err == nil && noAuth {
		return nil, nil
	}
	if tok := props[iceio.GCSOAuthToken]; tok != "" {
		t := &oauth2.Token{AccessToken: tok}
		if ms, err := strconv.ParseInt(props[iceio.GCSOAuthExpiresAt], 10, 64); err == nil {
			t.Expiry = time.UnixMilli(ms)
		}
		return &google.Credentials{TokenSource: oauth2.StaticTokenSource(t)}, nil
	}
	credType := google.ServiceAccount
	if v := props[iceio.GCSCredType]; gcsCredTypes[v] {
		credType = google.CredentialsType(v)
	}
	parse := func(data []byte, source string) (*google.Credentials, error) {
		creds, err := google.CredentialsFromJSONWithType(ctx, data, credType, gcsScope)
		if err != nil {
			return nil, fmt.Errorf("gcs: parse %s (set %s if the key is not a service account's): %w", source, iceio.GCSCredType, err)
		}
		return creds, nil
	}
	if key := props[iceio.GCSJSONKey]; key != "" {
		return parse([]byte(key), iceio.GCSJSONKey)
	}
	if path := props[iceio.GCSKeyPath]; path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("gcs: read %s %q: %w", iceio.GCSKeyPath, path, err)
		}
		return parse(data, fmt.Sprintf("%s %q", iceio.GCSKeyPath, path))
	}
	creds, err := adc(ctx)
	if err == nil && creds == nil {
		err = errors.New("none found")
	}
	if err != nil {
		return nil, fmt.Errorf("gcs: no credentials (set %s=true for anonymous access): %w", iceio.GCSNoAuth, err)
	}
	return creds, nil
}
