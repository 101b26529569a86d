package restfake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// sep is the namespace separator of paths and the parent query parameter
// (the spec's default, %1F).
const sep = "\x1f"

// Options configure a [Server]. Zero values take the defaults given.
type Options struct {
	// Backend is the catalog whose tables the server serves and commits
	// to. Required.
	Backend catalog.Catalog
	// Prefix, when set, is answered as overrides.prefix by GET /v1/config
	// and every catalog route is served under /v1/{Prefix}/.
	Prefix string
	// ClientID and ClientSecret, when set, are the one principal's
	// credentials for POST /v1/oauth/tokens, and every other request but
	// GET /v1/config needs a bearer token the server issued. Unset: no
	// authentication.
	ClientID, ClientSecret string
	// TokenTTL is each token's lifetime (expires_in), on the server's
	// clock. Default 1h.
	TokenTTL time.Duration
	// TokenUses, when > 0, is how many requests a token serves before the
	// server refuses it (401), whatever its expires_in said: a token
	// revoked early.
	TokenUses int
	// PageSize is the most namespaces or tables one page holds (fewer when
	// the client asks for fewer with pageSize). Default 2, so that tests
	// walk several pages.
	PageSize int
	// Now is the server's clock (token expiry). Default time.Now.
	Now func() time.Time
	// Vend, when set, is the storage configuration the server hands out
	// with a table (s3.access-key-id, s3.session-token-expires-at-ms, …):
	// in the LoadTableResult's config, or in its storage-credentials (and
	// from GET …/credentials) with VendStorageCredentials.
	Vend func(id table.Identifier) map[string]string
	// VendStorageCredentials puts what Vend returns in storage-credentials
	// (prefix: the table's location) instead of config.
	VendStorageCredentials bool
}

// Fault is a failure the server answers instead of serving a request.
type Fault struct {
	// Route is the route it applies to: "config", "token", "namespaces",
	// "namespace", "tables", "load", "exists", "create", "commit",
	// "credentials".
	Route string
	// Status is the HTTP status to answer (503, 429, 409, 500, …).
	Status int
	// RetryAfter, when set, is the Retry-After header answered with it.
	RetryAfter string
	// Times is how many requests it answers. Default 1.
	Times int
}

// Server is a running fake REST catalog. [New] stops it when the test ends.
type Server struct {
	// URL is the catalog's base URI: floe's uri.
	URL string

	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	faults   []*Fault
	tokens   map[string]*token
	issued   int
	requests []string
	commits  int
}

type token struct {
	expires time.Time
	uses    int
}

// New starts a fake REST catalog over opts.Backend and stops it when t ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Backend == nil {
		t.Fatal("restfake: Options.Backend is required")
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 2
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, tokens: map[string]*token{}}
	base := "/v1"
	if opts.Prefix != "" {
		base += "/" + opts.Prefix
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", s.route("config", false, s.config))
	mux.HandleFunc("POST /v1/oauth/tokens", s.route("token", false, s.token))
	mux.HandleFunc("GET "+base+"/namespaces", s.route("namespaces", true, s.listNamespaces))
	mux.HandleFunc("POST "+base+"/namespaces", s.route("namespace", true, s.createNamespace))
	mux.HandleFunc("GET "+base+"/namespaces/{ns}", s.route("namespace", true, s.loadNamespace))
	mux.HandleFunc("HEAD "+base+"/namespaces/{ns}", s.route("namespace", true, s.namespaceExists))
	mux.HandleFunc("GET "+base+"/namespaces/{ns}/tables", s.route("tables", true, s.listTables))
	mux.HandleFunc("POST "+base+"/namespaces/{ns}/tables", s.route("create", true, s.createTable))
	mux.HandleFunc("GET "+base+"/namespaces/{ns}/tables/{table}", s.route("load", true, s.loadTable))
	mux.HandleFunc("HEAD "+base+"/namespaces/{ns}/tables/{table}", s.route("exists", true, s.tableExists))
	mux.HandleFunc("POST "+base+"/namespaces/{ns}/tables/{table}", s.route("commit", true, s.commit))
	mux.HandleFunc("GET "+base+"/namespaces/{ns}/tables/{table}/credentials", s.route("credentials", true, s.credentials))
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Inject makes the server answer the next f.Times requests of f.Route
// with f.Status. Faults of a route are answered in the order injected.
func (s *Server) Inject(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Requests are the requests served so far, each "METHOD path status"
// (path without the query).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count is how many of the requests served so far were answered status on
// route-path suffix pathSuffix with method.
func (s *Server) Count(method, pathSuffix string, status int) int {
	n := 0
	for _, r := range s.Requests() {
		f := strings.Fields(r)
		if f[0] == method && strings.HasSuffix(f[1], pathSuffix) && f[2] == strconv.Itoa(status) {
			n++
		}
	}
	return n
}

// Commits is how many commits the server applied.
func (s *Server) Commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// TokensIssued is how many tokens POST /v1/oauth/tokens has handed out.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

// Endpoints are the routes GET /v1/config advertises.
func (s *Server) endpoints() []string {
	eps := []string{
		"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
		"GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
		"GET /v1/{prefix}/namespaces/{namespace}/tables", "POST /v1/{prefix}/namespaces/{namespace}/tables",
		"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	}
	if s.opts.VendStorageCredentials {
		eps = append(eps, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials")
	}
	return eps
}

// statusWriter records the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// route wraps a handler with the fault injection, the authentication (when
// authed and the server has a principal) and the request log.
func (s *Server) route(name string, authed bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.requests = append(s.requests, fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, sw.status))
			s.mu.Unlock()
		}()
		if f := s.fault(name); f != nil {
			if f.RetryAfter != "" {
				sw.Header().Set("Retry-After", f.RetryAfter)
			}
			typ := map[int]string{
				http.StatusConflict:           "CommitFailedException",
				http.StatusTooManyRequests:    "TooManyRequestsException",
				http.StatusServiceUnavailable: "ServiceUnavailableException",
			}[f.Status]
			if typ == "" {
				typ = "ServerErrorException"
			}
			writeError(sw, f.Status, typ, fmt.Sprintf("injected by restfake (%s)", name))
			return
		}
		if authed && s.opts.ClientID != "" {
			if msg := s.checkToken(r); msg != "" {
				writeError(sw, http.StatusUnauthorized, "NotAuthorizedException", msg)
				return
			}
		}
		h(sw, r)
	}
}

// fault takes the next fault of route, if any.
func (s *Server) fault(route string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.Route != route {
			continue
		}
		f.Times--
		if f.Times <= 0 {
			s.faults = slices.Delete(s.faults, i, i+1)
		}
		return f
	}
	return nil
}

// checkToken says why r's bearer token is refused, or "".
func (s *Server) checkToken(r *http.Request) string {
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "Authentication required: no bearer token"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tok := s.tokens[bearer]
	switch {
	case tok == nil:
		return "Not authorized: unknown token"
	case !s.opts.Now().Before(tok.expires):
		return "Not authorized: token expired"
	case s.opts.TokenUses > 0 && tok.uses >= s.opts.TokenUses:
		return "Not authorized: token revoked"
	}
	tok.uses++
	return ""
}

// writeError answers the spec's ErrorModel ({"error": {message, type, code}}).
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// backendError answers err from the backing catalog with the spec's status.
func backendError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		writeError(w, http.StatusNotFound, "NoSuchTableException", err.Error())
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		writeError(w, http.StatusNotFound, "NoSuchNamespaceException", err.Error())
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		writeError(w, http.StatusConflict, "AlreadyExistsException", err.Error())
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		writeError(w, http.StatusConflict, "AlreadyExistsException", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "ServerErrorException", err.Error())
	}
}

// config is GET /v1/config: the prefix and the endpoints the server serves.
func (s *Server) config(w http.ResponseWriter, _ *http.Request) {
	overrides := map[string]string{}
	if s.opts.Prefix != "" {
		overrides["prefix"] = s.opts.Prefix
	}
	writeJSON(w, http.StatusOK, map[string]any{"defaults": map[string]string{}, "overrides": overrides, "endpoints": s.endpoints()})
}

// token is POST /v1/oauth/tokens, client_credentials only (RFC 6749 4.4;
// errors as {"error", "error_description"}).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": "grant_type " + g})
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	if s.opts.ClientID == "" || id != s.opts.ClientID || secret != s.opts.ClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "The client is not authorized"})
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	access := "tok-" + hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[access] = &token{expires: s.opts.Now().Add(s.opts.TokenTTL)}
	s.issued++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":      access,
		"token_type":        "bearer",
		"expires_in":        int(s.opts.TokenTTL / time.Second),
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
	})
}

// page answers one page of items: the client's pageToken is the offset the
// server handed it, pageSize caps the page below the server's own size.
func (s *Server) page(r *http.Request, n int) (lo, hi int, next string, err error) {
	size := s.opts.PageSize
	if v := r.URL.Query().Get("pageSize"); v != "" {
		ps, err := strconv.Atoi(v)
		if err != nil || ps < 1 {
			return 0, 0, "", fmt.Errorf("pageSize %q: want a positive integer", v)
		}
		size = min(size, ps)
	}
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		off, ok := strings.CutPrefix(tok, "offset-")
		lo, err = strconv.Atoi(off)
		if !ok || err != nil || lo < 0 || lo > n {
			return 0, 0, "", fmt.Errorf("pageToken %q: not a token this server handed out", tok)
		}
	}
	hi = min(lo+size, n)
	if hi < n {
		next = "offset-" + strconv.Itoa(hi)
	}
	return lo, hi, next, nil
}

func namespaceOf(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), sep)
}

func identOf(r *http.Request) table.Identifier {
	return append(namespaceOf(r), r.PathValue("table"))
}

// listNamespaces is GET /v1/{prefix}/namespaces?parent=…, a page at a time.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, sep)
	}
	nss, err := s.opts.Backend.ListNamespaces(r.Context(), parent)
	if err != nil {
		backendError(w, err)
		return
	}
	slices.SortFunc(nss, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, sep), strings.Join(b, sep)) })
	lo, hi, next, err := s.page(r, len(nss))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	out := map[string]any{"namespaces": nss[lo:hi]}
	if next != "" {
		out["next-page-token"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

// createNamespace is POST /v1/{prefix}/namespaces.
func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace  table.Identifier   `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Namespace) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequestException", fmt.Sprintf("create namespace: want {namespace, properties}: %v", err))
		return
	}
	if err := s.opts.Backend.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		backendError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespace": req.Namespace, "properties": req.Properties})
}

// loadNamespace is GET /v1/{prefix}/namespaces/{namespace}.
func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request) {
	ns := namespaceOf(r)
	props, err := s.opts.Backend.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		backendError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespace": ns, "properties": props})
}

// namespaceExists is HEAD /v1/{prefix}/namespaces/{namespace}.
func (s *Server) namespaceExists(w http.ResponseWriter, r *http.Request) {
	ok, err := s.opts.Backend.CheckNamespaceExists(r.Context(), namespaceOf(r))
	switch {
	case err != nil:
		w.WriteHeader(http.StatusInternalServerError)
	case ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// listTables is GET /v1/{prefix}/namespaces/{namespace}/tables, a page at
// a time.
func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	ns := namespaceOf(r)
	if ok, err := s.opts.Backend.CheckNamespaceExists(r.Context(), ns); err != nil || !ok {
		backendError(w, errors.Join(catalog.ErrNoSuchNamespace, err))
		return
	}
	var ids []table.Identifier
	for id, err := range s.opts.Backend.ListTables(r.Context(), ns) {
		if err != nil {
			backendError(w, err)
			return
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b table.Identifier) int { return strings.Compare(strings.Join(a, sep), strings.Join(b, sep)) })
	lo, hi, next, err := s.page(r, len(ids))
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	type ident struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	page := make([]ident, 0, hi-lo)
	for _, id := range ids[lo:hi] {
		page = append(page, ident{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	out := map[string]any{"identifiers": page}
	if next != "" {
		out["next-page-token"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

// loadResult is the spec's LoadTableResult for tbl.
func (s *Server) loadResult(tbl *table.Table) map[string]any {
	out := map[string]any{
		"metadata-location": tbl.MetadataLocation(),
		"metadata":          tbl.Metadata(),
		"config":            map[string]string{},
	}
	if s.opts.Vend == nil {
		return out
	}
	vended := s.opts.Vend(tbl.Identifier())
	if s.opts.VendStorageCredentials {
		out["storage-credentials"] = []map[string]any{{"prefix": tbl.Metadata().Location(), "config": vended}}
	} else {
		out["config"] = vended
	}
	return out
}

// loadTable is GET /v1/{prefix}/namespaces/{namespace}/tables/{table}.
func (s *Server) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.opts.Backend.LoadTable(r.Context(), identOf(r))
	if err != nil {
		backendError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.loadResult(tbl))
}

// tableExists is HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}.
func (s *Server) tableExists(w http.ResponseWriter, r *http.Request) {
	ok, err := s.opts.Backend.CheckTableExists(r.Context(), identOf(r))
	switch {
	case err != nil:
		w.WriteHeader(http.StatusInternalServerError)
	case ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// credentials is GET …/tables/{table}/credentials: fresh vended
// credentials for the table.
func (s *Server) credentials(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.opts.Backend.LoadTable(r.Context(), identOf(r))
	if err != nil {
		backendError(w, err)
		return
	}
	var vended map[string]string
	if s.opts.Vend != nil {
		vended = s.opts.Vend(tbl.Identifier())
	}
	writeJSON(w, http.StatusOK, map[string]any{"storage-credentials": []map[string]any{{"prefix": tbl.Metadata().Location(), "config": vended}}})
}

// createTable is POST /v1/{prefix}/namespaces/{namespace}/tables (no
// staged create).
func (s *Server) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		StageCreate   bool                   `json:"stage-create"`
		Properties    iceberg.Properties     `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || req.Schema == nil {
		writeError(w, http.StatusBadRequest, "BadRequestException", fmt.Sprintf("create table: want {name, schema, …}: %v", err))
		return
	}
	if req.StageCreate {
		writeError(w, http.StatusNotImplemented, "UnsupportedOperationException", "restfake does not stage creates")
		return
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(req.Properties)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	if req.PartitionSpec != nil {
		opts = append(opts, catalog.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, catalog.WithSortOrder(*req.WriteOrder))
	}
	tbl, err := s.opts.Backend.CreateTable(r.Context(), append(namespaceOf(r), req.Name), req.Schema, opts...)
	if err != nil {
		backendError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.loadResult(tbl))
}

// commit is POST /v1/{prefix}/namespaces/{namespace}/tables/{table}: the
// requirements are checked against the table's current metadata (409
// CommitFailedException when one fails), then the updates are applied by
// the backing catalog, which checks them again under its own commit.
func (s *Server) commit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Identifier *struct {
			Namespace []string `json:"namespace"`
			Name      string   `json:"name"`
		} `json:"identifier"`
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestException", "commit table: "+err.Error())
		return
	}
	id := identOf(r)
	if req.Identifier != nil && !slices.Equal(append(slices.Clone(req.Identifier.Namespace), req.Identifier.Name), id) {
		writeError(w, http.StatusBadRequest, "BadRequestException", "commit table: identifier does not match the path")
		return
	}
	ctx := context.WithoutCancel(r.Context())
	cur, err := s.opts.Backend.LoadTable(ctx, id)
	if err != nil {
		backendError(w, err)
		return
	}
	for _, rq := range req.Requirements {
		if err := rq.Validate(cur.Metadata()); err != nil {
			writeError(w, http.StatusConflict, "CommitFailedException", "Requirement failed: "+err.Error())
			return
		}
	}
	md, loc, err := s.opts.Backend.CommitTable(ctx, id, req.Requirements, req.Updates)
	if err != nil {
		if errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed") {
			writeError(w, http.StatusConflict, "CommitFailedException", err.Error())
			return
		}
		backendError(w, err)
		return
	}
	s.mu.Lock()
	s.commits++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": md})
}
