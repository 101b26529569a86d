package polaris

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The catalog properties [New] reads; they are iceberg-go's REST catalog
// property names, so one floe catalog entry serves both.
const (
	PropURI             = "uri"
	PropWarehouse       = "warehouse"
	PropPrefix          = "prefix"
	PropToken           = "token"
	PropCredential      = "credential"
	PropScope           = "scope"
	PropAudience        = "audience"
	PropResource        = "resource"
	PropOAuth2ServerURI = "oauth2-server-uri"
	// PropAuthURL is iceberg-go's older alias of [PropOAuth2ServerURI],
	// which wins when both are set.
	PropAuthURL       = "rest.authorization-url"
	PropSigV4         = "rest.sigv4-enabled"
	PropTLSSkipVerify = "rest.tls.skip-verify"
	// PropHeaderPrefix starts a property that becomes a request header:
	// header.X-Realm: r sends X-Realm: r.
	PropHeaderPrefix = "header."
)

// DefaultScope is the OAuth2 scope asked for when the scope property is
// unset, as iceberg-go does. Polaris principals usually need
// PRINCIPAL_ROLE:ALL (or a named PRINCIPAL_ROLE:<role>).
const DefaultScope = "catalog"

// namespaceSeparator joins namespace levels in the applicable-policies
// namespace query parameter: the unit separator, as in Iceberg REST. The
// policy API splits on it regardless of the config's namespace-separator.
const namespaceSeparator = "\x1f"

// pageSize is the pageSize asked for; a server may answer with fewer.
const pageSize = 100

// maxPages bounds pagination against a server that never ends it.
const maxPages = 10000

// refreshBefore is how long before its expiry an access token is replaced.
const refreshBefore = 30 * time.Second

// Client reads policies from one Polaris catalog. It is safe for
// concurrent use. Build it with [New].
type Client struct {
	hc        *http.Client
	base      *url.URL // the uri property, e.g. http://polaris:8181/api/catalog
	tokenURL  *url.URL
	warehouse string
	token     string // static bearer token
	clientID  string
	secret    string
	scope     string
	audience  string
	resource  string
	headers   http.Header
	now       func() time.Time

	mu     sync.Mutex // guards prefix and ready
	prefix string     // from props, then the config's overrides
	ready  bool

	tokMu   sync.Mutex // guards access and expires
	access  string     // access token from the exchange
	expires time.Time
}

// New builds a client from a floe catalog's properties (floe.yaml's
// catalogs.<name>). It does no I/O; [Client.Connect] does. A nil hc gets a
// client with a 60 s timeout. Every property problem is reported at once,
// naming the key (never a secret's value). Properties it does not read
// (type, io and storage keys) are ignored.
func New(props map[string]string, hc *http.Client) (*Client, error) {
	c := &Client{
		warehouse: props[PropWarehouse],
		prefix:    props[PropPrefix],
		token:     props[PropToken],
		scope:     props[PropScope],
		audience:  props[PropAudience],
		resource:  props[PropResource],
		headers:   http.Header{},
		now:       time.Now,
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if raw := props[PropURI]; raw == "" {
		bad("%s is required: the Polaris catalog's REST base, e.g. http://polaris:8181/api/catalog", PropURI)
	} else if u, err := parseHTTPURL(raw); err != nil {
		bad("%s: %v", PropURI, err)
	} else {
		c.base = u
	}
	authKey := PropOAuth2ServerURI
	rawAuth, ok := props[PropOAuth2ServerURI]
	if !ok {
		authKey = PropAuthURL
		rawAuth, ok = props[PropAuthURL]
	}
	if ok {
		if u, err := parseHTTPURL(rawAuth); err != nil {
			bad("%s: %v", authKey, err)
		} else {
			c.tokenURL = u
		}
	} else if c.base != nil {
		c.tokenURL = c.base.JoinPath("v1", "oauth", "tokens")
	}
	if cred := props[PropCredential]; cred != "" {
		id, secret, found := strings.Cut(cred, ":")
		if !found {
			id, secret = "", cred
		}
		c.clientID, c.secret = id, secret
	}
	if c.scope == "" {
		c.scope = DefaultScope
	}
	if strings.EqualFold(props[PropSigV4], "true") {
		bad("%s: SigV4 signing is not supported for Polaris's policy API; use token or credential", PropSigV4)
	}
	for k, v := range props {
		if name, found := strings.CutPrefix(k, PropHeaderPrefix); found && name != "" {
			c.headers.Set(name, v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("polaris catalog properties: %w", err)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
		if strings.EqualFold(props[PropTLSSkipVerify], "true") {
			hc.Transport = &http.Transport{
				Proxy:           http.ProxyFromEnvironment,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // asked for by rest.tls.skip-verify
			}
		}
	}
	c.hc = hc
	return c, nil
}

func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%q: want an http:// or https:// URL", u.Redacted())
	}
	return u, nil
}

// Connect gets an access token (when the credential property is set) and
// the catalog's prefix from GET /v1/config (warehouse → overrides.prefix),
// once; later calls return at once. Call it before work to check the
// connection. [Client.ApplicablePolicies] calls it.
func (c *Client) Connect(ctx context.Context) error {
	c.mu.Lock()
	if c.ready {
		c.mu.Unlock()
		return nil
	}
	err := c.connect(ctx)
	c.ready = err == nil
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("connect to polaris %s: %w", c.base.Redacted(), c.scrub(err))
	}
	return nil
}

// catalogConfig is the Iceberg REST CatalogConfig.
type catalogConfig struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
}

// connect runs with c.mu held.
func (c *Client) connect(ctx context.Context) error {
	u := c.base.JoinPath("v1", "config")
	if c.warehouse != "" {
		u.RawQuery = url.Values{PropWarehouse: {c.warehouse}}.Encode()
	}
	var cfg catalogConfig
	if err := c.do(ctx, http.MethodGet, u, &cfg); err != nil {
		return err
	}
	// defaults, then the client's properties, then overrides (Iceberg REST).
	if c.prefix == "" {
		c.prefix = cfg.Defaults[PropPrefix]
	}
	if p, ok := cfg.Overrides[PropPrefix]; ok {
		c.prefix = p
	}
	if c.prefix == "" {
		return errors.New("the catalog has no prefix: set warehouse to the Polaris catalog's name (GET /v1/config returned no overrides.prefix)")
	}
	return nil
}

// Prefix is the catalog's REST prefix (for Polaris, the catalog's name),
// known after [Client.Connect].
func (c *Client) Prefix() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prefix
}

// applicableResponse is GetApplicablePoliciesResponse.
type applicableResponse struct {
	NextPageToken *string  `json:"next-page-token"`
	Policies      []Policy `json:"applicable-policies"`
}

// ApplicablePolicies returns the maintenance policies (the four [Types])
// in effect on a table — or on a namespace when table is empty, or on the
// catalog when namespace is empty too — each with the Level and AttachedTo
// where it is attached. It follows pagination. Policies of other types are
// left out.
func (c *Client) ApplicablePolicies(ctx context.Context, namespace []string, table string) ([]Policy, error) {
	target := strings.Join(append(slices.Clone(namespace), table), ".")
	if table == "" {
		target = strings.Join(namespace, ".")
	}
	if target == "" {
		target = "the catalog"
	}
	fail := func(err error) ([]Policy, error) {
		return nil, fmt.Errorf("polaris applicable policies for %s: %w", target, c.scrub(err))
	}
	if table != "" && len(namespace) == 0 {
		return fail(errors.New("a table needs a namespace"))
	}
	if slices.Contains(namespace, "") {
		return fail(errors.New("a namespace level is empty"))
	}
	if err := c.Connect(ctx); err != nil {
		return nil, err
	}
	cache := map[string][]Policy{}
	got, err := c.fetch(ctx, cache, namespace, table)
	if err != nil {
		return fail(err)
	}
	level, path := LevelTable, append(slices.Clone(namespace), table)
	switch {
	case len(namespace) == 0:
		level, path = LevelCatalog, nil
	case table == "":
		level, path = LevelNamespace, slices.Clone(namespace)
	}
	out := make([]Policy, 0, len(got))
	for _, p := range got {
		if !p.Inherited {
			p.Level, p.AttachedTo = level, path
		} else if err := c.attachment(ctx, cache, &p, namespace, table); err != nil {
			return fail(err)
		}
		out = append(out, p)
	}
	return out, nil
}

// attachment finds where an inherited policy is attached: the nearest
// parent of the target at which the same policy is applicable and not
// inherited. The policy's namespace field cannot say it: it is where the
// policy is stored.
func (c *Client) attachment(ctx context.Context, cache map[string][]Policy, p *Policy, namespace []string, table string) error {
	n := len(namespace)
	if table == "" {
		n-- // a namespace's parents start above it
	}
	for ; n >= 0; n-- {
		parents, err := c.fetch(ctx, cache, namespace[:n], "")
		if err != nil {
			return err
		}
		for _, q := range parents {
			if q.Inherited || q.Type != p.Type || q.Name != p.Name || !slices.Equal(q.Namespace, p.Namespace) {
				continue
			}
			if n == 0 {
				p.Level, p.AttachedTo = LevelCatalog, nil
			} else {
				p.Level, p.AttachedTo = LevelNamespace, slices.Clone(namespace[:n])
			}
			return nil
		}
	}
	return fmt.Errorf("policy %s is inherited but attached to none of the target's parents (did it change during the read?)", p.Ref())
}

// fetch gets the maintenance policies applicable to one resource, all
// pages, once per resource.
func (c *Client) fetch(ctx context.Context, cache map[string][]Policy, namespace []string, table string) ([]Policy, error) {
	key := strings.Join(namespace, namespaceSeparator) + "\x00" + table
	if got, ok := cache[key]; ok {
		return got, nil
	}
	c.mu.Lock()
	prefix := c.prefix
	c.mu.Unlock()
	u := c.base.JoinPath("polaris", "v1", prefix, "applicable-policies")
	q := url.Values{"pageSize": {fmt.Sprint(pageSize)}}
	if len(namespace) > 0 {
		q.Set("namespace", strings.Join(namespace, namespaceSeparator))
	}
	if table != "" {
		q.Set("target-name", table)
	}
	var (
		out  []Policy
		seen = map[string]bool{}
	)
	token := "" // an empty pageToken asks a paginating server to paginate
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("more than %d pages of applicable policies", maxPages)
		}
		q.Set("pageToken", token)
		u.RawQuery = q.Encode()
		var rsp applicableResponse
		if err := c.do(ctx, http.MethodGet, u, &rsp); err != nil {
			return nil, err
		}
		for _, p := range rsp.Policies {
			id := p.Type + "\x00" + strings.Join(p.Namespace, namespaceSeparator) + "\x00" + p.Name
			if !isMaintenanceType(p.Type) || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, p)
		}
		if rsp.NextPageToken == nil || *rsp.NextPageToken == "" {
			break
		}
		if *rsp.NextPageToken == token {
			return nil, fmt.Errorf("GET %s: the server repeated page token %q", redacted(u), token)
		}
		token = *rsp.NextPageToken
	}
	cache[key] = out
	return out, nil
}

// do sends a request with the catalog's headers and bearer token and
// decodes a 2xx JSON answer into out. With a credential, a 401 gets one
// retry with a fresh token (the old one may have been revoked early).
func (c *Client) do(ctx context.Context, method string, u *url.URL, out any) error {
	err := c.send(ctx, method, u, out)
	if herr := (*HTTPError)(nil); errors.As(err, &herr) && herr.Status == http.StatusUnauthorized && c.secret != "" && c.token == "" {
		c.tokMu.Lock()
		c.access = ""
		c.tokMu.Unlock()
		err = c.send(ctx, method, u, out)
	}
	return err
}

func (c *Client) send(ctx context.Context, method string, u *url.URL, out any) error {
	bearer, err := c.bearer(ctx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, redacted(u), err)
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rsp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, redacted(u), err)
	}
	return c.decode(rsp, method, u, out)
}

// decode reads a JSON answer, or turns a non-2xx one into an [*HTTPError].
func (c *Client) decode(rsp *http.Response, method string, u *url.URL, out any) (err error) {
	defer func() {
		if cerr := rsp.Body.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s %s: close body: %w", method, redacted(u), cerr)
		}
	}()
	if rsp.StatusCode < 200 || rsp.StatusCode > 299 {
		return c.httpError(rsp, method, u)
	}
	if err := json.NewDecoder(io.LimitReader(rsp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, redacted(u), err)
	}
	return nil
}

// httpError reads the error body: Iceberg REST's {"error": {...}} or
// OAuth2's {"error": "...", "error_description": "..."}.
func (c *Client) httpError(rsp *http.Response, method string, u *url.URL) error {
	body, _ := io.ReadAll(io.LimitReader(rsp.Body, 64<<10)) // the status alone is the error if the body is cut short
	e := &HTTPError{Method: method, URL: redacted(u), Status: rsp.StatusCode}
	var ice struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	var oauth struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	switch {
	case json.Unmarshal(body, &ice) == nil && (ice.Error.Message != "" || ice.Error.Type != ""):
		e.Type, e.Message = ice.Error.Type, ice.Error.Message
	case json.Unmarshal(body, &oauth) == nil && oauth.Error != "":
		e.Type, e.Message = oauth.Error, oauth.Description
	default:
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	return e // the caller's scrub takes secrets out of Type and Message
}

// tokenResponse is OAuthTokenResponse.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// bearer is the token to send: the static token, else a cached or freshly
// exchanged access token, else none.
func (c *Client) bearer(ctx context.Context) (string, error) {
	if c.token != "" {
		return c.token, nil
	}
	if c.secret == "" {
		return "", nil
	}
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	if c.access != "" && (c.expires.IsZero() || c.now().Before(c.expires.Add(-refreshBefore))) {
		return c.access, nil
	}
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.clientID},
		"client_secret": {c.secret},
		"scope":         {c.scope},
	}
	if c.audience != "" {
		form.Set("audience", c.audience)
	}
	if c.resource != "" {
		form.Set("resource", c.resource)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.tokenURL.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("get a token: POST %s: %w", redacted(c.tokenURL), err)
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	rsp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("get a token: POST %s: %w", redacted(c.tokenURL), err)
	}
	var tok tokenResponse
	if err := c.decode(rsp, http.MethodPost, c.tokenURL, &tok); err != nil {
		if herr := (*HTTPError)(nil); errors.As(err, &herr) && (herr.Status == http.StatusBadRequest || herr.Status == http.StatusUnauthorized) {
			return "", fmt.Errorf("get a token (check credential and scope): %w: %w", ErrAuth, err)
		}
		return "", fmt.Errorf("get a token: %w", err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("get a token: POST %s: the answer has no access_token", redacted(c.tokenURL))
	}
	c.access = tok.AccessToken
	c.expires = time.Time{}
	if tok.ExpiresIn > 0 {
		c.expires = c.now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	return c.access, nil
}

// redacted prints a URL without its user info's password.
func redacted(u *url.URL) string { return u.Redacted() }

// scrub returns err with every secret the client holds replaced, in its
// text and in the fields of an [*HTTPError] it holds (a server may echo what
// it was sent). Every exported method passes its errors through scrub; it
// must not be called with tokMu held.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	c.tokMu.Lock()
	secrets := []string{c.token, c.secret, c.access}
	c.tokMu.Unlock()
	clean := func(s string) string {
		for _, secret := range secrets {
			if len(secret) >= 4 {
				s = strings.ReplaceAll(s, secret, "<redacted>")
			}
		}
		return s
	}
	if herr := (*HTTPError)(nil); errors.As(err, &herr) {
		herr.URL, herr.Type, herr.Message = clean(herr.URL), clean(herr.Type), clean(herr.Message)
	}
	msg := err.Error()
	if s := clean(msg); s != msg {
		return &scrubbed{msg: s, err: err}
	}
	return err
}

// scrubbed is an error whose text had a secret taken out; errors.Is and As
// still see the cause.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
