package snowfake

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/floe-project/floe/collectors/snowflake"
)

// Options configure a [Fake].
type Options struct {
	// Account is the account identifier JWTs must name. Default:
	// "FLOE-TEST".
	Account string
	// User is the user JWTs must name. Default: "FLOE".
	User string
	// PublicKey verifies KEYPAIR_JWT tokens; nil rejects them all.
	PublicKey *rsa.PublicKey
	// OAuthTokens are the accepted OAuth tokens and when each expires.
	OAuthTokens map[string]time.Time
	// PartitionRows is how many rows each result partition holds.
	// Default: 1000.
	PartitionRows int
	// Now is the fake's clock, against which tokens expire. Default:
	// time.Now.
	Now func() time.Time
}

// Object is one table of an ACCESS_HISTORY objects array.
type Object struct {
	// Name is the table's fully qualified name, DB.SCHEMA.TABLE.
	Name string
	// Columns are the columns accessed.
	Columns []string
}

// Query is one query of the account's history: a QUERY_HISTORY row and,
// when Base, Direct or Modified is set, its ACCESS_HISTORY row.
type Query struct {
	ID, Text         string
	Database, Schema string
	User, QueryType  string
	// Status is EXECUTION_STATUS. Default: SUCCESS.
	Status                  string
	ErrorCode, ErrorMessage string
	Start                   time.Time
	// Elapsed is TOTAL_ELAPSED_TIME; END_TIME is Start+Elapsed, unset
	// while Status is RUNNING or QUEUED.
	Elapsed                                          time.Duration
	BytesScanned, PartitionsScanned, PartitionsTotal int64
	Base, Direct, Modified                           []Object
}

// Outage is how a [Fake] is down.
type Outage int

// The outages of [Fake.Down].
const (
	// Up serves normally.
	Up Outage = iota
	// Unavailable answers every request 503.
	Unavailable
	// Refused closes the listener and every connection: connections are
	// refused until the fake is brought back Up, on the same address.
	Refused
)

// Request is one request the fake received, for tests to inspect.
type Request struct {
	// Method and Path of the request; Partition is its ?partition.
	Method, Path, Partition string
	// Token is the bearer token, TokenType its
	// X-Snowflake-Authorization-Token-Type.
	Token, TokenType string
	// Status is the HTTP status answered.
	Status int
	// RequestID and Retry are the ?requestId and ?retry parameters.
	RequestID, Retry string
}

// Fake is a running fake SQL API. Build it with [New].
type Fake struct {
	t    testing.TB
	opts Options
	iss  string
	sub  string

	mu         sync.Mutex
	queries    []Query
	statements map[string]*statement
	nextHandle int
	stall      int
	throttle   int
	outage     Outage
	requests   []Request
	addr       string
	srv        *http.Server
	served     chan struct{}
}

// statement is a finished statement's result, held for partition reads.
type statement struct {
	rowType    []map[string]any
	partitions [][][]*string
	numRows    int
	stallLeft  int
}

// New starts a fake on a loopback port; it stops when the test ends.
func New(t testing.TB, opts Options) *Fake {
	t.Helper()
	if opts.Account == "" {
		opts.Account = "FLOE-TEST"
	}
	if opts.User == "" {
		opts.User = "FLOE"
	}
	if opts.PartitionRows <= 0 {
		opts.PartitionRows = 1000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	f := &Fake{t: t, opts: opts, statements: map[string]*statement{}}
	f.sub = snowflake.JWTAccount(opts.Account) + "." + strings.ToUpper(opts.User)
	if opts.PublicKey != nil {
		fp, err := snowflake.Fingerprint(opts.PublicKey)
		if err != nil {
			t.Fatalf("snowfake: %v", err)
		}
		f.iss = f.sub + "." + fp
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("snowfake: listen: %v", err)
	}
	f.addr = ln.Addr().String()
	f.serve(ln)
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stop()
	})
	return f
}

// URL is the base URL to give [snowflake.ClientOptions].URL.
func (f *Fake) URL() string { return "http://" + f.addr }

// Account is the account identifier the fake expects.
func (f *Fake) Account() string { return f.opts.Account }

// User is the user the fake expects.
func (f *Fake) User() string { return f.opts.User }

// AddQueries appends queries to the account's history.
func (f *Fake) AddQueries(qs ...Query) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, qs...)
}

// SetStatus changes the EXECUTION_STATUS of a query already added (a
// RUNNING query finishing, say).
func (f *Fake) SetStatus(id, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.queries {
		if f.queries[i].ID == id {
			f.queries[i].Status = status
		}
	}
}

// Stall makes the next statement answer 202 "still running" on submission
// and on the next n-1 status checks, then its result.
func (f *Fake) Stall(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stall = n
}

// Throttle makes the next n requests answer 429.
func (f *Fake) Throttle(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.throttle = n
}

// Down takes the fake down the given way, or brings it back Up.
func (f *Fake) Down(o Outage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := f.outage
	f.outage = o
	switch {
	case o == Refused && was != Refused:
		f.stop()
	case o != Refused && was == Refused:
		ln, err := net.Listen("tcp", f.addr)
		if err != nil {
			f.t.Fatalf("snowfake: listen again on %s: %v", f.addr, err)
		}
		f.serve(ln)
	}
}

// Requests returns every request received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// serve starts serving ln; f.mu is held or f is not shared yet.
func (f *Fake) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(f.handle), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed when stopped
	}()
	f.srv, f.served = srv, done
}

// stop closes the listener and every connection and waits for the
// server; f.mu is held.
func (f *Fake) stop() {
	if f.srv == nil {
		return
	}
	_ = f.srv.Close() // the listener is ours; a close error leaves nothing to do
	<-f.served
	f.srv, f.served = nil, nil
}

// snowErr is Snowflake's error body.
type snowErr struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	SQLState string `json:"sqlState,omitempty"`
}

func (f *Fake) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := Request{Method: r.Method, Path: r.URL.Path, Partition: r.URL.Query().Get("partition"), RequestID: r.URL.Query().Get("requestId"), Retry: r.URL.Query().Get("retry")}
	rec.Token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	rec.TokenType = r.Header.Get("X-Snowflake-Authorization-Token-Type")
	status, body := f.answer(r, rec)
	rec.Status = status
	f.requests = append(f.requests, rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// A client that hung up gets nothing; there is no one to tell.
	_ = json.NewEncoder(w).Encode(body)
}

func (f *Fake) answer(r *http.Request, rec Request) (int, any) {
	if f.outage == Unavailable {
		return http.StatusServiceUnavailable, snowErr{Code: "000000", Message: "Service Unavailable"}
	}
	if f.throttle > 0 {
		f.throttle--
		return http.StatusTooManyRequests, snowErr{Code: "000000", Message: "Too many requests. Please retry later."}
	}
	if status, e := f.authenticate(rec); status != 0 {
		return status, e
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v2/statements":
		return f.submit(r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v2/statements/"):
		return f.status(strings.TrimPrefix(r.URL.Path, "/api/v2/statements/"), rec.Partition)
	}
	return http.StatusNotFound, snowErr{Code: "390404", Message: "Not found: " + r.Method + " " + r.URL.Path}
}

// authenticate returns a status and body when the request's credentials
// are refused, else 0.
func (f *Fake) authenticate(rec Request) (int, any) {
	switch rec.TokenType {
	case snowflake.TokenTypeKeyPairJWT:
		if f.opts.PublicKey == nil {
			return http.StatusUnauthorized, snowErr{Code: "390144", Message: "JWT token is invalid."}
		}
		var claims jwt.RegisteredClaims
		_, err := jwt.ParseWithClaims(rec.Token, &claims, func(*jwt.Token) (any, error) { return f.opts.PublicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(f.opts.Now),
			jwt.WithIssuer(f.iss), jwt.WithSubject(f.sub), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
		if errors.Is(err, jwt.ErrTokenExpired) {
			return http.StatusUnauthorized, snowErr{Code: "390198", Message: "Keypair access token expired."}
		}
		if err != nil || claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > snowflake.MaxJWTLifetime {
			return http.StatusUnauthorized, snowErr{Code: "390144", Message: "JWT token is invalid."}
		}
		return 0, nil
	case snowflake.TokenTypeOAuth, "":
		exp, ok := f.opts.OAuthTokens[rec.Token]
		if !ok || rec.Token == "" {
			return http.StatusUnauthorized, snowErr{Code: "390303", Message: "Invalid OAuth access token."}
		}
		if !f.opts.Now().Before(exp) {
			return http.StatusUnauthorized, snowErr{Code: "390318", Message: "OAuth access token expired."}
		}
		return 0, nil
	}
	return http.StatusUnauthorized, snowErr{Code: "390101", Message: "Unsupported authorization token type " + rec.TokenType + "."}
}

// submitted is the body of POST /api/v2/statements.
type submitted struct {
	Statement string `json:"statement"`
	Bindings  map[string]struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"bindings"`
}

func (f *Fake) submit(r *http.Request) (int, any) {
	var body submitted
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return http.StatusBadRequest, snowErr{Code: "391900", Message: "Unable to parse the request body: " + err.Error()}
	}
	st, err := f.run(body)
	if err != nil {
		return http.StatusUnprocessableEntity, snowErr{Code: "001003", Message: "SQL compilation error: " + err.Error(), SQLState: "42000"}
	}
	f.nextHandle++
	handle := fmt.Sprintf("01b2c3d4-0000-%04d-0000-0001deadbeef", f.nextHandle)
	f.statements[handle] = st
	if f.stall > 0 {
		st.stallLeft = f.stall - 1
		f.stall = 0
		return http.StatusAccepted, map[string]any{
			"code":               "333334",
			"message":            "Asynchronous execution in progress. Use provided query id to perform query monitoring and management.",
			"statementHandle":    handle,
			"statementStatusUrl": "/api/v2/statements/" + handle,
		}
	}
	return http.StatusOK, f.resultSet(handle, st)
}

func (f *Fake) status(handle, partition string) (int, any) {
	st, ok := f.statements[handle]
	if !ok {
		return http.StatusNotFound, snowErr{Code: "333333", Message: "Statement " + handle + " not found."}
	}
	if st.stallLeft > 0 {
		st.stallLeft--
		return http.StatusAccepted, map[string]any{
			"code": "333334", "message": "Asynchronous execution in progress.",
			"statementHandle": handle, "statementStatusUrl": "/api/v2/statements/" + handle,
		}
	}
	if partition == "" || partition == "0" {
		return http.StatusOK, f.resultSet(handle, st)
	}
	p, err := strconv.Atoi(partition)
	if err != nil || p < 0 || p >= len(st.partitions) {
		return http.StatusUnprocessableEntity, snowErr{Code: "391902", Message: "Invalid partition " + partition + "."}
	}
	return http.StatusOK, map[string]any{"data": st.partitions[p]}
}

func (f *Fake) resultSet(handle string, st *statement) map[string]any {
	info := make([]map[string]any, len(st.partitions))
	for i, p := range st.partitions {
		size := 0
		for _, r := range p {
			for _, c := range r {
				if c != nil {
					size += len(*c)
				}
			}
		}
		info[i] = map[string]any{"rowCount": len(p), "uncompressedSize": size}
	}
	var first [][]*string
	if len(st.partitions) > 0 {
		first = st.partitions[0]
	}
	return map[string]any{
		"resultSetMetaData": map[string]any{
			"numRows": st.numRows, "format": "jsonv2", "rowType": st.rowType, "partitionInfo": info,
		},
		"data":               first,
		"code":               "090001",
		"statementStatusUrl": "/api/v2/statements/" + handle,
		"sqlState":           "00000",
		"statementHandle":    handle,
		"message":            "Statement executed successfully.",
		"createdOn":          f.opts.Now().UnixMilli(),
	}
}

// run executes a statement: SELECT 1, or the query-history poll.
func (f *Fake) run(body submitted) (*statement, error) {
	sql := strings.TrimSpace(body.Statement)
	if strings.EqualFold(sql, "SELECT 1") {
		one := "1"
		return f.partition([]map[string]any{{"name": "1", "type": "fixed", "nullable": false}}, [][]*string{{&one}}), nil
	}
	upper := strings.ToUpper(sql)
	if !strings.Contains(upper, "FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY") {
		return nil, errors.New("the fake answers only SELECT 1 and the ACCOUNT_USAGE.QUERY_HISTORY poll")
	}
	from := strings.Index(upper, "FROM ")
	if !strings.HasPrefix(upper, "SELECT ") || from < 0 {
		return nil, errors.New("syntax error: want SELECT ... FROM")
	}
	var names []string
	for item := range strings.SplitSeq(sql[len("SELECT "):from], ",") {
		item = strings.TrimSpace(item)
		if i := strings.LastIndexByte(item, '.'); i >= 0 {
			item = item[i+1:]
		}
		names = append(names, strings.ToUpper(item))
	}
	bind := func(n string) (string, error) {
		b, ok := body.Bindings[n]
		if !ok {
			return "", fmt.Errorf("bind variable %s not set", n)
		}
		return b.Value, nil
	}
	var after, upTo time.Time
	limit := 0
	for i, dst := range []*time.Time{&after, &upTo} {
		v, err := bind(strconv.Itoa(i + 1))
		if err != nil {
			return nil, err
		}
		if *dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, fmt.Errorf("can't parse %q as timestamp_ltz", v)
		}
	}
	v, err := bind("3")
	if err != nil {
		return nil, err
	}
	if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
		return nil, fmt.Errorf("invalid LIMIT %q", v)
	}
	var picked []Query
	for _, q := range f.queries {
		if q.Start.After(after) && !q.Start.After(upTo) {
			picked = append(picked, q)
		}
	}
	slices.SortStableFunc(picked, func(a, b Query) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(picked) > limit {
		picked = picked[:limit]
	}
	rowType := make([]map[string]any, len(names))
	for i, n := range names {
		typ, ok := columnTypes[n]
		if !ok {
			return nil, fmt.Errorf("invalid identifier '%s'", n)
		}
		rowType[i] = map[string]any{"name": n, "type": typ, "nullable": true}
	}
	rows := make([][]*string, len(picked))
	for i, q := range picked {
		rows[i] = make([]*string, len(names))
		for j, n := range names {
			rows[i][j] = cell(q, n)
		}
	}
	return f.partition(rowType, rows), nil
}

// partition splits rows into partitions of PartitionRows.
func (f *Fake) partition(rowType []map[string]any, rows [][]*string) *statement {
	st := &statement{rowType: rowType, numRows: len(rows)}
	for c := range slices.Chunk(rows, f.opts.PartitionRows) {
		st.partitions = append(st.partitions, c)
	}
	if len(st.partitions) == 0 {
		st.partitions = [][][]*string{{}}
	}
	return st
}

// columnTypes are the jsonv2 rowType types of the columns the fake knows.
var columnTypes = map[string]string{
	"QUERY_ID": "text", "QUERY_TEXT": "text", "DATABASE_NAME": "text", "SCHEMA_NAME": "text",
	"QUERY_TYPE": "text", "USER_NAME": "text", "EXECUTION_STATUS": "text", "ERROR_CODE": "text",
	"ERROR_MESSAGE": "text", "START_TIME": "timestamp_ltz", "END_TIME": "timestamp_ltz",
	"TOTAL_ELAPSED_TIME": "fixed", "BYTES_SCANNED": "fixed", "PARTITIONS_SCANNED": "fixed",
	"PARTITIONS_TOTAL": "fixed", "QUEUED_OVERLOAD_TIME": "fixed", "QUEUED_PROVISIONING_TIME": "fixed",
	"QUEUED_REPAIR_TIME": "fixed", "RELEASE_VERSION": "text", "ROOT_QUERY_ID": "text",
	"BASE_OBJECTS_ACCESSED": "array", "DIRECT_OBJECTS_ACCESSED": "array", "OBJECTS_MODIFIED": "array",
}

// cell is q's value of column n as jsonv2 text; nil is NULL.
func cell(q Query, n string) *string {
	s := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	num := func(v int64) *string { t := strconv.FormatInt(v, 10); return &t }
	epoch := func(t time.Time) *string {
		v := fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond())
		return &v
	}
	status := q.Status
	if status == "" {
		status = "SUCCESS"
	}
	running := status == "RUNNING" || status == "QUEUED"
	hasAccess := q.Base != nil || q.Direct != nil || q.Modified != nil
	switch n {
	case "QUERY_ID":
		return s(q.ID)
	case "QUERY_TEXT":
		return s(q.Text)
	case "DATABASE_NAME":
		return s(q.Database)
	case "SCHEMA_NAME":
		return s(q.Schema)
	case "QUERY_TYPE":
		return s(q.QueryType)
	case "USER_NAME":
		return s(q.User)
	case "EXECUTION_STATUS":
		return s(status)
	case "ERROR_CODE":
		return s(q.ErrorCode)
	case "ERROR_MESSAGE":
		return s(q.ErrorMessage)
	case "START_TIME":
		return epoch(q.Start)
	case "END_TIME":
		if running {
			return nil
		}
		return epoch(q.Start.Add(q.Elapsed))
	case "TOTAL_ELAPSED_TIME":
		return num(q.Elapsed.Milliseconds())
	case "BYTES_SCANNED":
		return num(q.BytesScanned)
	case "PARTITIONS_SCANNED":
		return num(q.PartitionsScanned)
	case "PARTITIONS_TOTAL":
		return num(q.PartitionsTotal)
	case "QUEUED_OVERLOAD_TIME", "QUEUED_PROVISIONING_TIME", "QUEUED_REPAIR_TIME":
		return num(0)
	case "RELEASE_VERSION":
		return s("8.20.1")
	case "ROOT_QUERY_ID":
		return nil
	case "BASE_OBJECTS_ACCESSED", "DIRECT_OBJECTS_ACCESSED", "OBJECTS_MODIFIED":
		if !hasAccess || running {
			return nil
		}
		objs := map[string][]Object{"BASE_OBJECTS_ACCESSED": q.Base, "DIRECT_OBJECTS_ACCESSED": q.Direct, "OBJECTS_MODIFIED": q.Modified}[n]
		return objectsJSON(objs)
	}
	return nil
}

// objectsJSON writes objects as ACCESS_HISTORY does, pretty-printed as
// Snowflake returns VARIANT text.
func objectsJSON(objs []Object) *string {
	type col struct {
		ColumnID   int    `json:"columnId"`
		ColumnName string `json:"columnName"`
	}
	type obj struct {
		Columns      []col  `json:"columns"`
		ObjectDomain string `json:"objectDomain"`
		ObjectID     int    `json:"objectId"`
		ObjectName   string `json:"objectName"`
	}
	out := make([]obj, 0, len(objs))
	for i, o := range objs {
		oo := obj{ObjectDomain: "Table", ObjectID: 1000 + i, ObjectName: o.Name}
		for j, c := range o.Columns {
			oo.Columns = append(oo.Columns, col{ColumnID: 2000 + j, ColumnName: c})
		}
		out = append(out, oo)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err) // plain structs of strings and ints always marshal
	}
	v := string(b)
	return &v
}
