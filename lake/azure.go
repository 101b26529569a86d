package lake

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob/azureblob"
)

// azureSchemes are the location schemes of Azure storage (ADLS Gen2 and
// Blob Storage, as iceberg-go registers them).
var azureSchemes = []string{"abfs", "abfss", "wasb", "wasbs"}

// openAzure is floe's IO for an Azure location
// (abfs[s]://container@account.dfs.core.windows.net/path, or wasb[s]://):
// iceberg-go's (io/gocloud/azure of v0.7.0), on the same properties, but
// with every request — and every token request of the credential —
// bounded by the [storeBounds] ctx carries (see [registerBoundedIO]).
// iceberg-go's builds its clients with the SDK's default transport and
// takes none.
//
// The properties are iceberg-go's, the first that applies chosen:
// adls.auth.shared-key.account.name with adls.auth.shared-key.account.key;
// adls.sas-token.<host> (the location's host); adls.connection-string.<account>;
// adls.auth.managed-identity.enabled=true (with adls.client-id for a
// user-assigned identity); else the SDK's default credential chain.
// adls.endpoint (the storage domain, default core.windows.net's blob one)
// and adls.protocol (default https) set where requests go.
func openAzure(ctx context.Context, parsed *url.URL, props map[string]string) (iceio.IO, error) {
	loc, err := newAzureLocation(parsed)
	if err != nil {
		return nil, err
	}
	client, err := azureContainer(loc, props, boundsOf(ctx).azureTransport())
	if err != nil {
		return nil, err
	}
	bucket, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	return blobfs.New(ctx, bucket, azureLocationExtractor(parsed)), nil
}

// azureTransport is the transport of the Azure clients b bounds (b nil:
// nil, the SDK's default).
func (b *storeBounds) azureTransport() policy.Transporter {
	if b == nil {
		return nil
	}
	b.azureOnce.Do(func() {
		// As the SDK's default transport (but for its HTTP/2 pings:
		// the bound covers a connection that stops answering).
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 10
		b.azureHTTP = &http.Client{Transport: t}
	})
	return &boundedClient{inner: b.azureHTTP, ioBound: b.bound()}
}

// azureLocation is an Azure location's parts.
type azureLocation struct {
	account   string // the storage account
	container string
	host      string // the account's host name
}

// newAzureLocation splits container@account.host out of an Azure location.
func newAzureLocation(u *url.URL) (azureLocation, error) {
	loc := azureLocation{container: u.User.Username(), host: u.Hostname()}
	if loc.container == "" {
		return loc, fmt.Errorf("azure location %s: no container (want %s://container@account.dfs.core.windows.net/path)", u.Redacted(), u.Scheme)
	}
	if loc.host == "" {
		return loc, fmt.Errorf("azure location %s: no host", u.Redacted())
	}
	loc.account, _, _ = strings.Cut(loc.host, ".")
	if loc.account == "" {
		return loc, fmt.Errorf("azure location %s: no storage account", u.Redacted())
	}
	return loc, nil
}

// azureContainer is the client of loc's container, with the credentials
// props give, its requests sent through transport (nil: the SDK's).
func azureContainer(loc azureLocation, props map[string]string, transport policy.Transporter) (*container.Client, error) {
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: transport}}
	containerURL := func(sas string) (string, error) {
		svc, err := azureblob.NewServiceURL(&azureblob.ServiceURLOptions{
			AccountName:   loc.account,
			SASToken:      sas,
			Protocol:      props[iceio.ADLSProtocol],
			StorageDomain: props[iceio.ADLSEndpoint],
		})
		if err != nil {
			return "", fmt.Errorf("azure: %w", err)
		}
		return url.JoinPath(string(svc), loc.container)
	}
	sasTokens := withPrefix(props, iceio.ADLSSasTokenPrefix)
	connStrings := withPrefix(props, iceio.ADLSConnectionStringPrefix)
	wrap := func(what string, c *container.Client, err error) (*container.Client, error) {
		if err != nil {
			return nil, fmt.Errorf("azure: %s: %w", what, err)
		}
		return c, nil
	}
	if name := props[iceio.ADLSSharedKeyAccountName]; name != "" {
		key := props[iceio.ADLSSharedKeyAccountKey]
		if key == "" {
			return nil, fmt.Errorf("azure: a shared key needs both %s and %s", iceio.ADLSSharedKeyAccountName, iceio.ADLSSharedKeyAccountKey)
		}
		u, err := containerURL("")
		if err != nil {
			return nil, err
		}
		cred, err := container.NewSharedKeyCredential(name, key)
		if err != nil {
			return nil, fmt.Errorf("azure: shared key of %s: %w", name, err)
		}
		c, err := container.NewClientWithSharedKeyCredential(u, cred, opts)
		return wrap("shared key client", c, err)
	}
	if sas, ok := sasTokens[loc.host]; ok {
		u, err := containerURL(sas)
		if err != nil {
			return nil, err
		}
		c, err := container.NewClientWithNoCredential(u, opts)
		return wrap("SAS token client", c, err)
	}
	if cs, ok := connStrings[loc.account]; ok {
		c, err := container.NewClientFromConnectionString(cs, loc.container, opts)
		return wrap("connection string client", c, err)
	}
	u, err := containerURL("")
	if err != nil {
		return nil, err
	}
	var cred azcore.TokenCredential
	if props[iceio.ADLSManagedIdentityEnabled] == "true" {
		mi := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: opts.ClientOptions}
		if id := props[iceio.ADLSClientID]; id != "" {
			mi.ID = azidentity.ClientID(id)
		}
		cred, err = azidentity.NewManagedIdentityCredential(mi)
	} else {
		cred, err = azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: opts.ClientOptions})
	}
	if err != nil {
		return nil, fmt.Errorf("azure: credential: %w", err)
	}
	c, err := container.NewClient(u, cred, opts)
	return wrap("client", c, err)
}

// withPrefix is the properties whose key starts with prefix, keyed by the
// rest of the key.
func withPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// azureURI splits an Azure location into scheme, authority and path.
var azureURI = regexp.MustCompile(`^(abfss?|wasbs?)://([^/?#]+)(.*)?$`)

// azureLocationExtractor finds the object key of a location in the
// container and account of parsed; a location elsewhere is an error
// wrapping [blobfs.ErrUnsupportedObjectAuthority].
func azureLocationExtractor(parsed *url.URL) blobfs.ObjectLocationExtractor {
	want := parsed.Hostname()
	if parsed.User != nil {
		want = parsed.User.Username() + "@" + want
	}
	return func(location string) (blobfs.ObjectLocation, error) {
		m := azureURI.FindStringSubmatch(location)
		if m == nil {
			return blobfs.ObjectLocation{}, fmt.Errorf("not an Azure location: %s", location)
		}
		scheme, authority, path := m[1], m[2], m[3]
		if authority != want {
			return blobfs.ObjectLocation{}, fmt.Errorf("%w: %s is in %q, the IO's is %q", blobfs.ErrUnsupportedObjectAuthority, location, authority, want)
		}
		if path != "" && !strings.HasPrefix(path, "/") {
			return blobfs.ObjectLocation{}, fmt.Errorf("azure location %s: want a path after %q", location, authority)
		}
		key := strings.TrimPrefix(path, "/")
		out := blobfs.NewObjectLocation(scheme, authority, key)
		if key == "" {
			return out, fmt.Errorf("%w: %s", blobfs.ErrEmptyObjectKey, location)
		}
		return out, nil
	}
}
