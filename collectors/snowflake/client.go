package snowflake

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// Values of the X-Snowflake-Authorization-Token-Type header.
const (
	TokenTypeKeyPairJWT = "KEYPAIR_JWT"
	TokenTypeOAuth      = "OAUTH"
)

// MaxJWTLifetime is the longest lifetime Snowflake accepts for a key-pair
// JWT (exp - iat).
const MaxJWTLifetime = time.Hour

// jwtRefreshBefore is how long before its expiry a JWT is replaced.
const jwtRefreshBefore = time.Minute

// maxBackoff caps the wait between retries.
const maxBackoff = 30 * time.Second

// Secret is a credential. It prints as "<redacted>" so options holding it
// can be logged.
type Secret string

// String returns "<redacted>" unless s is empty.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "<redacted>"
}

// GoString is [Secret.String], so %#v does not print it either.
func (s Secret) GoString() string { return s.String() }

// ClientOptions configure a [Client] of Snowflake's SQL API. Exactly one
// of PrivateKeyPEM and OAuthToken is set.
type ClientOptions struct {
	// Account is the account identifier: "MYORG-MYACCOUNT", or an account
	// locator such as "xy12345.us-east-1". Required.
	Account string
	// URL is the base URL of the account. Default:
	// https://<account>.snowflakecomputing.com.
	URL string
	// User is the Snowflake user the key pair belongs to. Required with
	// PrivateKeyPEM.
	User string
	// PrivateKeyPEM is the user's unencrypted RSA private key in PEM
	// (PKCS#8 "PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY"), for key-pair JWT
	// authentication.
	PrivateKeyPEM Secret
	// OAuthToken is an OAuth access token, for OAuth authentication.
	OAuthToken Secret
	// Warehouse and Role run the statements; empty means the user's
	// defaults.
	Warehouse, Role string
	// HTTPClient sends the requests. Default: a client with a 60 s timeout.
	HTTPClient *http.Client
	// Now is the clock the JWT's iat and exp come from. Default: time.Now.
	Now func() time.Time
	// JWTLifetime is how long a signed JWT is valid; a new one is signed
	// a minute before it expires. Default and maximum: [MaxJWTLifetime].
	JWTLifetime time.Duration
	// StatementTimeout is the timeout Snowflake is given for a statement,
	// in whole seconds. Default: 120 s.
	StatementTimeout time.Duration
	// StatusInterval is the wait between checks of a statement still
	// running (HTTP 202). Default: 1 s.
	StatusInterval time.Duration
	// Retries is how many times a request answered 429 or 5xx, or not
	// answered at all, is sent again. Default: 5.
	Retries int
	// RetryBackoff is the wait before the first retry; it doubles for
	// each next one, up to 30 s. A Retry-After header, when sent, is used
	// instead. Default: 500 ms.
	RetryBackoff time.Duration
}

// DefaultClientOptions returns the defaults of every tunable.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{
		JWTLifetime:      MaxJWTLifetime,
		StatementTimeout: 120 * time.Second,
		StatusInterval:   time.Second,
		Retries:          5,
		RetryBackoff:     500 * time.Millisecond,
	}
}

// Validate reports every problem of o at once.
func (o ClientOptions) Validate() error {
	var errs []error
	if strings.TrimSpace(o.Account) == "" {
		errs = append(errs, errors.New("account is required"))
	}
	switch {
	case o.PrivateKeyPEM == "" && o.OAuthToken == "":
		errs = append(errs, errors.New("one of private key and oauth token is required"))
	case o.PrivateKeyPEM != "" && o.OAuthToken != "":
		errs = append(errs, errors.New("private key and oauth token are exclusive"))
	case o.PrivateKeyPEM != "" && strings.TrimSpace(o.User) == "":
		errs = append(errs, errors.New("user is required with a private key"))
	}
	if o.URL != "" {
		if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("url %q is not an http(s) URL", o.URL))
		}
	}
	if o.JWTLifetime < 0 || o.JWTLifetime > MaxJWTLifetime {
		errs = append(errs, fmt.Errorf("jwt lifetime %s must be between 0 and %s", o.JWTLifetime, MaxJWTLifetime))
	}
	if o.JWTLifetime > 0 && o.JWTLifetime <= jwtRefreshBefore {
		errs = append(errs, fmt.Errorf("jwt lifetime %s must be longer than %s", o.JWTLifetime, jwtRefreshBefore))
	}
	if o.StatementTimeout < 0 {
		errs = append(errs, fmt.Errorf("statement timeout %s must be >= 0", o.StatementTimeout))
	}
	if o.StatusInterval < 0 {
		errs = append(errs, fmt.Errorf("status interval %s must be >= 0", o.StatusInterval))
	}
	if o.Retries < 0 {
		errs = append(errs, fmt.Errorf("retries %d must be >= 0", o.Retries))
	}
	if o.RetryBackoff < 0 {
		errs = append(errs, fmt.Errorf("retry backoff %s must be >= 0", o.RetryBackoff))
	}
	return errors.Join(errs...)
}

// Client runs statements through Snowflake's SQL API (POST
// /api/v2/statements, GET /api/v2/statements/{handle}). It is safe for
// concurrent use. Build it with [NewClient].
type Client struct {
	opts    ClientOptions
	base    *url.URL
	key     *rsa.PrivateKey
	iss     string // ACCOUNT.USER.SHA256:<fingerprint>
	sub     string // ACCOUNT.USER
	account string // as given, for errors

	mu      sync.Mutex // guards jwt and expires
	jwt     string
	expires time.Time
}

// NewClient checks opts, parses the private key and returns a Client.
// Nothing is sent until the first statement.
func NewClient(opts ClientOptions) (*Client, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("snowflake client options: %w", err)
	}
	def := DefaultClientOptions()
	if opts.JWTLifetime == 0 {
		opts.JWTLifetime = def.JWTLifetime
	}
	if opts.StatementTimeout == 0 {
		opts.StatementTimeout = def.StatementTimeout
	}
	if opts.StatusInterval == 0 {
		opts.StatusInterval = def.StatusInterval
	}
	if opts.Retries == 0 {
		opts.Retries = def.Retries
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = def.RetryBackoff
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	account := strings.TrimSpace(opts.Account)
	raw := opts.URL
	if raw == "" {
		raw = "https://" + strings.ToLower(account) + ".snowflakecomputing.com"
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return nil, fmt.Errorf("snowflake account %s: parse url: %w", account, err)
	}
	c := &Client{opts: opts, base: base, account: account}
	if opts.PrivateKeyPEM != "" {
		if c.key, err = ParsePrivateKey([]byte(opts.PrivateKeyPEM)); err != nil {
			return nil, fmt.Errorf("snowflake account %s: %w", account, err)
		}
		fp, err := Fingerprint(&c.key.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("snowflake account %s: %w", account, err)
		}
		c.sub = JWTAccount(account) + "." + strings.ToUpper(strings.TrimSpace(opts.User))
		c.iss = c.sub + "." + fp
	}
	return c, nil
}

// Account returns the account identifier the client was built with.
func (c *Client) Account() string { return c.account }

// ParsePrivateKey reads an unencrypted RSA private key in PEM, PKCS#8 or
// PKCS#1.
func ParsePrivateKey(pemText []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, errors.New("read private key: no PEM block")
	}
	switch block.Type {
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("read private key: encrypted keys are not supported; decrypt it first (openssl pkcs8 -topk8 -nocrypt)")
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("read private key: %w", err)
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("read private key: %w", err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("read private key: a %T, Snowflake needs an RSA key", k)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("read private key: PEM block %q is not a private key", block.Type)
}

// Fingerprint is Snowflake's RSA_PUBLIC_KEY_FP of pub: "SHA256:" and the
// base64 of the SHA-256 of its DER SubjectPublicKeyInfo.
func Fingerprint(pub *rsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("fingerprint public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + base64.StdEncoding.EncodeToString(sum[:]), nil
}

// JWTAccount is the account as a key-pair JWT names it: upper case, and
// for an account locator without its region ("xy12345.us-east-1" is
// "XY12345").
func JWTAccount(account string) string {
	a, _, _ := strings.Cut(strings.TrimSpace(account), ".")
	return strings.ToUpper(a)
}

// authorize sets the authentication headers of req, signing a new JWT when
// the last one is within a minute of expiring.
func (c *Client) authorize(req *http.Request) error {
	if c.key == nil {
		req.Header.Set("Authorization", "Bearer "+string(c.opts.OAuthToken))
		req.Header.Set("X-Snowflake-Authorization-Token-Type", TokenTypeOAuth)
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	if c.jwt == "" || !now.Add(jwtRefreshBefore).Before(c.expires) || now.Before(c.expires.Add(-c.opts.JWTLifetime)) {
		exp := now.Add(c.opts.JWTLifetime)
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
			Issuer:    c.iss,
			Subject:   c.sub,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		})
		signed, err := tok.SignedString(c.key)
		if err != nil {
			return fmt.Errorf("sign jwt: %w", err)
		}
		c.jwt, c.expires = signed, exp
	}
	req.Header.Set("Authorization", "Bearer "+c.jwt)
	req.Header.Set("X-Snowflake-Authorization-Token-Type", TokenTypeKeyPairJWT)
	return nil
}

// binding is one bind variable of a statement.
type binding struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// statementRequest is the body of POST /api/v2/statements.
type statementRequest struct {
	Statement string             `json:"statement"`
	Timeout   int64              `json:"timeout,omitempty"`
	Warehouse string             `json:"warehouse,omitempty"`
	Role      string             `json:"role,omitempty"`
	Bindings  map[string]binding `json:"bindings,omitempty"`
}

// column is one element of resultSetMetaData.rowType.
type column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// answer is every shape of a statement answer: a ResultSet (200), a
// QueryStatus (202) or a QueryFailureStatus (422), or an error body.
type answer struct {
	Code               string `json:"code"`
	Message            string `json:"message"`
	StatementHandle    string `json:"statementHandle"`
	StatementStatusURL string `json:"statementStatusUrl"`
	ResultSetMetaData  *struct {
		NumRows       int64    `json:"numRows"`
		Format        string   `json:"format"`
		RowType       []column `json:"rowType"`
		PartitionInfo []struct {
			RowCount int64 `json:"rowCount"`
		} `json:"partitionInfo"`
	} `json:"resultSetMetaData"`
	Data [][]*string `json:"data"`
}

// resultSet is a statement's whole result: its columns and every row of
// every partition. A nil cell is SQL NULL.
type resultSet struct {
	cols []column
	rows [][]*string
}

// query runs one statement with its bindings (bound in order as ?) and
// returns every partition of its result.
func (c *Client) query(ctx context.Context, statement string, binds ...binding) (*resultSet, error) {
	body := statementRequest{
		Statement: statement,
		Timeout:   int64(c.opts.StatementTimeout / time.Second),
		Warehouse: c.opts.Warehouse,
		Role:      c.opts.Role,
	}
	if len(binds) > 0 {
		body.Bindings = map[string]binding{}
		for i, b := range binds {
			body.Bindings[strconv.Itoa(i+1)] = b
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode statement: %w", err)
	}
	q := url.Values{"requestId": {uuid.NewString()}}
	ans, err := c.send(ctx, http.MethodPost, "/api/v2/statements", q, raw)
	if err != nil {
		return nil, err
	}
	// 202: still running. Ask again until the result is there; the number
	// of checks is bounded by the statement's own timeout.
	checks := int(c.opts.StatementTimeout/max(c.opts.StatusInterval, time.Millisecond)) + 2
	for ans.ResultSetMetaData == nil {
		if ans.StatementHandle == "" {
			return nil, fmt.Errorf("snowflake account %s: the answer has neither a result nor a statement handle (code %s: %s)", c.account, ans.Code, ans.Message)
		}
		if checks == 0 {
			return nil, fmt.Errorf("snowflake account %s: statement %s still running after %s", c.account, ans.StatementHandle, c.opts.StatementTimeout)
		}
		checks--
		if err := sleep(ctx, c.opts.StatusInterval); err != nil {
			return nil, err
		}
		if ans, err = c.send(ctx, http.MethodGet, "/api/v2/statements/"+url.PathEscape(ans.StatementHandle), nil, nil); err != nil {
			return nil, err
		}
	}
	md := ans.ResultSetMetaData
	if md.Format != "" && md.Format != "jsonv2" {
		return nil, fmt.Errorf("snowflake account %s: result format %q, want jsonv2", c.account, md.Format)
	}
	rs := &resultSet{cols: md.RowType, rows: ans.Data}
	for p := 1; p < len(md.PartitionInfo); p++ {
		part, err := c.send(ctx, http.MethodGet, "/api/v2/statements/"+url.PathEscape(ans.StatementHandle), url.Values{"partition": {strconv.Itoa(p)}}, nil)
		if err != nil {
			return nil, fmt.Errorf("partition %d of %d: %w", p+1, len(md.PartitionInfo), err)
		}
		if int64(len(part.Data)) != md.PartitionInfo[p].RowCount {
			return nil, fmt.Errorf("snowflake account %s: partition %d has %d rows, its partitionInfo says %d", c.account, p, len(part.Data), md.PartitionInfo[p].RowCount)
		}
		rs.rows = append(rs.rows, part.Data...)
	}
	if int64(len(rs.rows)) != md.NumRows {
		return nil, fmt.Errorf("snowflake account %s: read %d rows, numRows is %d", c.account, len(rs.rows), md.NumRows)
	}
	for i, r := range rs.rows {
		if len(r) != len(rs.cols) {
			return nil, fmt.Errorf("snowflake account %s: row %d has %d cells for %d columns", c.account, i, len(r), len(rs.cols))
		}
	}
	return rs, nil
}

// send does one request, retrying throttling (429), server errors (5xx)
// and unanswered requests with backoff. A retried POST keeps its requestId and adds retry=true, so
// Snowflake runs the statement once.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body []byte) (*answer, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	if q == nil {
		q = url.Values{}
	}
	wait := c.opts.RetryBackoff
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 && method == http.MethodPost {
			q.Set("retry", "true")
		}
		u.RawQuery = q.Encode()
		ans, retryAfter, err := c.once(ctx, method, u.String(), body)
		if err == nil {
			return ans, nil
		}
		if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return nil, err
		}
		last = err
		if attempt >= c.opts.Retries {
			break
		}
		d := wait
		if retryAfter > 0 {
			d = retryAfter
		}
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
		wait = min(wait*2, maxBackoff)
	}
	return nil, fmt.Errorf("%s %s after %d retries: %w", method, path, c.opts.Retries, last)
}

// once sends one request and reads its answer. Errors that a retry may
// cure wrap [ErrUnavailable]; retryAfter is the server's Retry-After.
func (c *Client) once(ctx context.Context, method, target string, body []byte) (ans *answer, retryAfter time.Duration, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("snowflake account %s: build request: %w", c.account, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "floe")
	if err := c.authorize(req); err != nil {
		return nil, 0, fmt.Errorf("snowflake account %s: %w", c.account, err)
	}
	rsp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, fmt.Errorf("snowflake account %s: %w: %w", c.account, ErrUnavailable, err)
	}
	raw, rerr := io.ReadAll(io.LimitReader(rsp.Body, 1<<30))
	if cerr := rsp.Body.Close(); rerr == nil {
		rerr = cerr
	}
	if rerr != nil {
		return nil, 0, fmt.Errorf("snowflake account %s: read answer: %w: %w", c.account, ErrUnavailable, rerr)
	}
	if rsp.StatusCode == http.StatusOK || rsp.StatusCode == http.StatusAccepted {
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, 0, fmt.Errorf("snowflake account %s: decode answer: %w", c.account, err)
		}
		return &a, 0, nil
	}
	e := &APIError{Account: c.account, Status: rsp.StatusCode}
	var a answer
	if json.Unmarshal(raw, &a) == nil && (a.Code != "" || a.Message != "") {
		e.Code, e.Message = a.Code, a.Message
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
		if e.Message == "" {
			e.Message = http.StatusText(rsp.StatusCode)
		}
	}
	if rsp.StatusCode == http.StatusTooManyRequests || rsp.StatusCode >= 500 {
		if s, err := strconv.Atoi(rsp.Header.Get("Retry-After")); err == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
	}
	return nil, retryAfter, e
}

// Check runs SELECT 1, proving the URL, the credentials, the warehouse and
// the role work.
func (c *Client) Check(ctx context.Context) error {
	rs, err := c.query(ctx, "SELECT 1")
	if err != nil {
		return err
	}
	if len(rs.rows) != 1 {
		return fmt.Errorf("snowflake account %s: SELECT 1 returned %d rows", c.account, len(rs.rows))
	}
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
