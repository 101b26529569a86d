// Package polaristest is an in-process fake of the parts of Apache
// Polaris's REST API that floe reads policies through, written from the
// published OpenAPI documents (spec/polaris-catalog-apis/policy-apis.yaml,
// oauth-tokens-api.yaml and the Iceberg REST GET /v1/config), with Polaris's
// resolution rules for applicable policies (PolicyCatalog
// getEffectivePolicies): walking catalog → namespaces → target, an
// inheritable policy of a type replaces the one above it, and a policy is
// "inherited" unless it is attached to the target itself.
//
// It serves under <server>/api/catalog, as Polaris does, checks bearer
// tokens (401 without a valid one, 403 for Options.ForbiddenToken) and
// answers errors in the Iceberg REST {"error": {"message", "type", "code"}}
// shape (OAuth2's {"error", "error_description"} from the token endpoint).
// Tests drive it over real HTTP: the set-up helpers [Server.CreatePolicy],
// [Server.Attach] and [Server.Detach] send the same requests a Polaris
// client would.
package polaristest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The policy types the fake knows, all inheritable as in Polaris.
var knownTypes = map[string]bool{
	"system.data-compaction":     true,
	"system.metadata-compaction": true,
	"system.orphan-file-removal": true,
	"system.snapshot-expiry":     true,
}

const sep = "\x1f"

var policyName = regexp.MustCompile(`^[A-Za-z0-9\-_]+$`)

// Options configure a [Server]. Zero values take the defaults given.
type Options struct {
	// Catalog is the Polaris catalog's name: the warehouse to ask /v1/config
	// for, and the prefix it answers. Default "polaris".
	Catalog string
	// ClientID and ClientSecret are the one principal's credentials for
	// POST /v1/oauth/tokens. Default "root" and "s3cr3t-client-secret".
	ClientID, ClientSecret string
	// Token, when set, is a static bearer token the server also accepts.
	Token string
	// ForbiddenToken, when set, is a token the server knows but refuses
	// (403) on the policy routes, as for a principal without privileges.
	ForbiddenToken string
	// PageSize is the most policies one page holds when the client asks to
	// paginate (sends pageToken). Default 2, so tests exercise pagination.
	PageSize int
	// NoContentValidation stores policy content as given. Polaris validates
	// content against the type's schema on create; turn this on to store
	// content floe must reject.
	NoContentValidation bool
}

type policy struct {
	Type        string   `json:"policy-type"`
	Inheritable bool     `json:"inheritable"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Content     string   `json:"content,omitempty"`
	Version     int      `json:"version"`
	Namespace   []string `json:"-"`
}

type applicable struct {
	*policy
	Inherited bool     `json:"inherited"`
	Namespace []string `json:"namespace"`
}

// Server is a running fake. Close it with Close (New registers that with
// t.Cleanup).
type Server struct {
	// URL is the catalog's REST base, <server>/api/catalog: floe's uri.
	URL string

	srv  *httptest.Server
	opts Options

	mu         sync.Mutex
	namespaces map[string]bool     // levels joined by sep
	tables     map[string]bool     // namespace key + "\x00" + name
	policies   map[string]*policy  // namespace key + "\x00" + policy name
	mappings   map[string][]string // target key → policy keys, in attach order
	tokens     map[string]bool
	issued     int
	scopes     []string
	requests   []string
}

// New starts a fake Polaris and stops it when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Catalog == "" {
		opts.Catalog = "polaris"
	}
	if opts.ClientID == "" {
		opts.ClientID = "root"
	}
	if opts.ClientSecret == "" {
		opts.ClientSecret = "s3cr3t-client-secret"
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 2
	}
	s := &Server{
		opts:       opts,
		namespaces: map[string]bool{},
		tables:     map[string]bool{},
		policies:   map[string]*policy{},
		mappings:   map[string][]string{},
		tokens:     map[string]bool{"fake-admin-token": true},
	}
	if opts.Token != "" {
		s.tokens[opts.Token] = true
	}
	if opts.ForbiddenToken != "" {
		s.tokens[opts.ForbiddenToken] = true
	}
	mux := http.NewServeMux()
	const base = "/api/catalog"
	const pol = base + "/polaris/v1/{prefix}"
	mux.HandleFunc("POST "+base+"/v1/oauth/tokens", s.token)
	mux.HandleFunc("GET "+base+"/v1/config", s.authed(false, s.config))
	mux.HandleFunc("POST "+pol+"/namespaces/{namespace}/policies", s.authed(true, s.createPolicy))
	mux.HandleFunc("PUT "+pol+"/namespaces/{namespace}/policies/{name}/mappings", s.authed(true, s.attach))
	mux.HandleFunc("POST "+pol+"/namespaces/{namespace}/policies/{name}/mappings", s.authed(true, s.detach))
	mux.HandleFunc("GET "+pol+"/applicable-policies", s.authed(true, s.applicable))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		iceErr(w, http.StatusNotFound, "NotFoundException", "no route "+r.Method+" "+r.URL.Path)
	})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL + base
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Props are floe catalog properties that reach this server with the
// client-credentials flow.
func (s *Server) Props() map[string]string {
	return map[string]string{
		"type":       "rest",
		"uri":        s.URL,
		"warehouse":  s.opts.Catalog,
		"credential": s.opts.ClientID + ":" + s.opts.ClientSecret,
		"scope":      "PRINCIPAL_ROLE:ALL",
	}
}

// Requests lists the requests served so far, as "METHOD /path?query".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Scopes lists the scopes token requests asked for.
func (s *Server) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.scopes)
}

// RevokeTokens forgets every token the server issued, as when they expire
// early.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok := range s.tokens {
		if strings.HasPrefix(tok, "issued-") {
			delete(s.tokens, tok)
		}
	}
}

// CreateNamespace creates a namespace and, as a convenience, its parents.
// (Namespaces and tables belong to the Iceberg REST API, which the fake
// does not serve.)
func (s *Server) CreateNamespace(levels ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 1; i <= len(levels); i++ {
		s.namespaces[strings.Join(levels[:i], sep)] = true
	}
}

// CreateTable creates a table and its namespace.
func (s *Server) CreateTable(namespace []string, name string) {
	s.CreateNamespace(namespace...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[strings.Join(namespace, sep)+"\x00"+name] = true
}

// CreatePolicy sends createPolicy: a policy of type typ named name,
// stored in namespace.
func (s *Server) CreatePolicy(ctx context.Context, namespace []string, name, typ, content string) error {
	body := map[string]string{"name": name, "type": typ, "content": content, "description": "created by a test"}
	return s.send(ctx, http.MethodPost, s.policiesPath(namespace), body)
}

// Attach sends attachPolicy: the policy namespace/name to a target of
// type catalog, namespace or table-like, at path (namespace levels, then
// the table for table-like; nothing for the catalog).
func (s *Server) Attach(ctx context.Context, namespace []string, name, targetType string, path ...string) error {
	body := map[string]any{"target": map[string]any{"type": targetType, "path": path}}
	return s.send(ctx, http.MethodPut, s.policiesPath(namespace)+"/"+url.PathEscape(name)+"/mappings", body)
}

// Detach sends detachPolicy.
func (s *Server) Detach(ctx context.Context, namespace []string, name, targetType string, path ...string) error {
	body := map[string]any{"target": map[string]any{"type": targetType, "path": path}}
	return s.send(ctx, http.MethodPost, s.policiesPath(namespace)+"/"+url.PathEscape(name)+"/mappings", body)
}

func (s *Server) policiesPath(namespace []string) string {
	return s.URL + "/polaris/v1/" + url.PathEscape(s.opts.Catalog) + "/namespaces/" +
		url.PathEscape(strings.Join(namespace, sep)) + "/policies"
}

// send is the set-up helpers' client.
func (s *Server) send(ctx context.Context, method, u string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer fake-admin-token")
	req.Header.Set("Content-Type", "application/json")
	rsp, err := s.srv.Client().Do(req)
	if err != nil {
		return err
	}
	defer rsp.Body.Close() //nolint:errcheck // a test helper's read-only body
	msg, _ := io.ReadAll(rsp.Body)
	if rsp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d: %s", method, u, rsp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}

// iceErr writes the Iceberg REST error shape.
func iceErr(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client sees a cut body as a decode error
}

// authed checks the bearer token; policy routes also refuse the forbidden
// token and an unknown prefix.
func (s *Server) authed(policyRoute bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		valid := ok && s.tokens[tok]
		s.mu.Unlock()
		if !valid {
			iceErr(w, http.StatusUnauthorized, "NotAuthorizedException", "Not authorized to make this request")
			return
		}
		if policyRoute && s.opts.ForbiddenToken != "" && tok == s.opts.ForbiddenToken {
			iceErr(w, http.StatusForbidden, "ForbiddenException", "Principal 'reader' is not authorized for op "+r.Method+" on the policies of catalog "+s.opts.Catalog)
			return
		}
		if policyRoute && r.PathValue("prefix") != s.opts.Catalog {
			iceErr(w, http.StatusNotFound, "NotFoundException", "Unable to find catalog "+r.PathValue("prefix"))
			return
		}
		h(w, r)
	}
}

// token is POST /v1/oauth/tokens, client_credentials only.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(code int, e, desc string) {
		writeJSON(w, code, map[string]string{"error": e, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		oauthErr(http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		oauthErr(http.StatusBadRequest, "unsupported_grant_type", "grant_type "+gt+" is not supported")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.opts.ClientID || secret != s.opts.ClientSecret {
		oauthErr(http.StatusUnauthorized, "unauthorized_client", "The client is not authorized")
		return
	}
	s.mu.Lock()
	s.issued++
	tok := "issued-" + strconv.Itoa(s.issued)
	s.tokens[tok] = true
	s.scopes = append(s.scopes, r.PostForm.Get("scope"))
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":      tok,
		"token_type":        "bearer",
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
		"expires_in":        3600,
	})
}

// config is GET /v1/config?warehouse=…; Polaris answers the catalog's name
// as overrides.prefix.
func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	wh := r.URL.Query().Get("warehouse")
	switch wh {
	case "":
		iceErr(w, http.StatusBadRequest, "BadRequestException", "Please specify a warehouse")
	case s.opts.Catalog:
		writeJSON(w, http.StatusOK, map[string]any{
			"defaults":  map[string]string{"default-base-location": "file:///tmp/" + wh},
			"overrides": map[string]string{"prefix": wh},
			"endpoints": []string{
				"GET /v1/{prefix}/namespaces",
				"GET /polaris/v1/{prefix}/applicable-policies",
			},
		})
	default:
		iceErr(w, http.StatusNotFound, "NotFoundException", "Unable to find warehouse "+wh)
	}
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// createPolicy is POST …/namespaces/{namespace}/policies.
func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
		Content     string `json:"content"`
	}
	if err := decodeBody(r, &req); err != nil {
		iceErr(w, http.StatusBadRequest, "BadRequestException", "Invalid value: "+err.Error())
		return
	}
	ns := strings.Split(r.PathValue("namespace"), sep)
	switch {
	case !policyName.MatchString(req.Name):
		iceErr(w, http.StatusBadRequest, "BadRequestException", "Invalid policy name "+strconv.Quote(req.Name))
		return
	case !knownTypes[req.Type]:
		iceErr(w, http.StatusBadRequest, "IllegalArgumentException", "Unknown policy type: "+req.Type)
		return
	}
	if !s.opts.NoContentValidation {
		if err := validate(req.Type, req.Content); err != nil {
			iceErr(w, http.StatusBadRequest, "InvalidPolicyException", "Invalid policy: "+err.Error())
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nsKey := strings.Join(ns, sep)
	if !s.namespaces[nsKey] {
		iceErr(w, http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: "+strings.Join(ns, "."))
		return
	}
	key := nsKey + "\x00" + req.Name
	if s.policies[key] != nil {
		iceErr(w, http.StatusConflict, "AlreadyExistsException", "Policy already exists: "+req.Name)
		return
	}
	p := &policy{Type: req.Type, Inheritable: true, Name: req.Name, Description: req.Description, Content: req.Content, Namespace: ns}
	s.policies[key] = p
	writeJSON(w, http.StatusOK, map[string]any{"policy": p})
}

// validate checks content as Polaris's validators do: a JSON object with a
// boolean enable, the schema's version if any, and no field the schema
// does not define.
func validate(typ, content string) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &top); err != nil || top == nil {
		return errors.New("content is not a JSON object")
	}
	var enable bool
	if raw, ok := top["enable"]; !ok || json.Unmarshal(raw, &enable) != nil || string(raw) == "null" {
		return errors.New("enable is required and must be a boolean")
	}
	for k, raw := range top {
		switch {
		case k == "enable", k == "config":
		case k == "version":
			var v string
			if json.Unmarshal(raw, &v) != nil || v != "2025-02-03" {
				return errors.New("version must be 2025-02-03")
			}
		case typ == "system.orphan-file-removal" && (k == "max_orphan_file_age_in_days" || k == "locations"):
		default:
			return fmt.Errorf("unrecognized field %q", k)
		}
	}
	return nil
}

// target is a PolicyAttachmentTarget.
type target struct {
	Type string   `json:"type"`
	Path []string `json:"path"`
}

// targetKey checks a target exists and names it; the message is for a 404.
func (s *Server) targetKey(t target) (key string, status int, msg string) {
	switch t.Type {
	case "catalog":
		if len(t.Path) > 0 {
			return "", http.StatusBadRequest, "a catalog target has no path"
		}
		return "catalog", 0, ""
	case "namespace":
		k := strings.Join(t.Path, sep)
		if len(t.Path) == 0 || !s.namespaces[k] {
			return "", http.StatusNotFound, "The given target does not exist: namespace " + strings.Join(t.Path, ".")
		}
		return "ns:" + k, 0, ""
	case "table-like":
		if len(t.Path) < 2 {
			return "", http.StatusBadRequest, "a table-like target's path is its namespace and name"
		}
		k := strings.Join(t.Path[:len(t.Path)-1], sep) + "\x00" + t.Path[len(t.Path)-1]
		if !s.tables[k] {
			return "", http.StatusNotFound, "The given target does not exist: table " + strings.Join(t.Path, ".")
		}
		return "tbl:" + k, 0, ""
	}
	return "", http.StatusBadRequest, "Invalid target type " + strconv.Quote(t.Type)
}

// mapping reads a mapping request and finds its policy and target.
func (s *Server) mapping(w http.ResponseWriter, r *http.Request, withParams bool) (polKey, tgtKey string, ok bool) {
	var req struct {
		Target     *target           `json:"target"`
		Parameters map[string]string `json:"parameters,omitempty"`
	}
	var err error
	if withParams {
		err = decodeBody(r, &req)
	} else {
		var detach struct {
			Target *target `json:"target"`
		}
		err = decodeBody(r, &detach)
		req.Target = detach.Target
	}
	if err != nil || req.Target == nil {
		iceErr(w, http.StatusBadRequest, "BadRequestException", "Invalid value: a target is required")
		return "", "", false
	}
	polKey = r.PathValue("namespace") + "\x00" + r.PathValue("name")
	if s.policies[polKey] == nil {
		iceErr(w, http.StatusNotFound, "NoSuchPolicyException", "Policy does not exist: "+r.PathValue("name"))
		return "", "", false
	}
	tgtKey, status, msg := s.targetKey(*req.Target)
	if status != 0 {
		typ := "NoSuchTargetException"
		if status == http.StatusBadRequest {
			typ = "BadRequestException"
		}
		iceErr(w, status, typ, msg)
		return "", "", false
	}
	return polKey, tgtKey, true
}

// attach is PUT …/policies/{name}/mappings.
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	polKey, tgtKey, ok := s.mapping(w, r, true)
	if !ok {
		return
	}
	p := s.policies[polKey]
	for _, other := range s.mappings[tgtKey] {
		if other == polKey {
			w.WriteHeader(http.StatusNoContent) // re-attaching updates the parameters
			return
		}
		if o := s.policies[other]; o.Inheritable && o.Type == p.Type {
			iceErr(w, http.StatusConflict, "ConflictPolicyAttachmentException",
				"The policy type is inheritable and there is already a policy of the same type attached to the target entity: "+o.Name)
			return
		}
	}
	s.mappings[tgtKey] = append(s.mappings[tgtKey], polKey)
	w.WriteHeader(http.StatusNoContent)
}

// detach is POST …/policies/{name}/mappings.
func (s *Server) detach(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	polKey, tgtKey, ok := s.mapping(w, r, false)
	if !ok {
		return
	}
	i := slices.Index(s.mappings[tgtKey], polKey)
	if i < 0 {
		iceErr(w, http.StatusNotFound, "NoSuchMappingException", "The given mapping between policy and target does not exist")
		return
	}
	s.mappings[tgtKey] = slices.Delete(s.mappings[tgtKey], i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

// applicable is GET /polaris/v1/{prefix}/applicable-policies.
func (s *Server) applicable(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var ns []string
	if v := q.Get("namespace"); v != "" {
		ns = strings.Split(v, sep)
	}
	name := q.Get("target-name")
	typ := q.Get("policyType")
	if typ != "" && !knownTypes[typ] {
		iceErr(w, http.StatusBadRequest, "IllegalArgumentException", "Unknown policy type: "+typ)
		return
	}
	if name != "" && len(ns) == 0 {
		iceErr(w, http.StatusBadRequest, "BadRequestException", "target-name needs a namespace")
		return
	}
	s.mu.Lock()
	// The path of entities from the catalog down to the target.
	path := []string{"catalog"}
	for i := 1; i <= len(ns); i++ {
		k := strings.Join(ns[:i], sep)
		if !s.namespaces[k] {
			s.mu.Unlock()
			iceErr(w, http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: "+strings.Join(ns, "."))
			return
		}
		path = append(path, "ns:"+k)
	}
	if name != "" {
		k := strings.Join(ns, sep) + "\x00" + name
		if !s.tables[k] {
			s.mu.Unlock()
			iceErr(w, http.StatusNotFound, "NoSuchTableException", "Table does not exist: "+strings.Join(append(ns, name), "."))
			return
		}
		path = append(path, "tbl:"+k)
	}
	// Polaris's getEffectivePolicies: parents carry inheritable policies
	// down, a nearer one of a type replacing a farther one; the target's
	// own are not inherited.
	byType := map[string]*policy{}
	direct := map[*policy]bool{}
	var nonInheritable []*policy
	for i, entity := range path {
		last := i == len(path)-1
		for _, key := range s.mappings[entity] {
			p := s.policies[key]
			if typ != "" && p.Type != typ {
				continue
			}
			switch {
			case p.Inheritable:
				byType[p.Type] = p
				if last {
					direct[p] = true
				}
			case last:
				nonInheritable = append(nonInheritable, p)
			}
		}
	}
	var out []applicable
	for _, p := range nonInheritable {
		out = append(out, applicable{policy: p, Namespace: p.Namespace})
	}
	for _, p := range byType {
		out = append(out, applicable{policy: p, Inherited: !direct[p], Namespace: p.Namespace})
	}
	s.mu.Unlock()
	// Polaris answers a set; the fake orders it so pages are stable.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if x, y := strings.Join(a.Namespace, sep), strings.Join(b.Namespace, sep); x != y {
			return x < y
		}
		return a.Name < b.Name
	})
	next, page, err := s.page(q, len(out))
	if err != nil {
		iceErr(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	if out == nil {
		out = []applicable{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"next-page-token": next, "applicable-policies": out[page[0]:page[1]]})
}

// page picks the slice of n results to answer: all of them unless the
// request has a pageToken (an empty one starts), then at most the smaller
// of pageSize and Options.PageSize. next is nil on the last page.
func (s *Server) page(q url.Values, n int) (next *string, bounds [2]int, err error) {
	if !q.Has("pageToken") {
		return nil, [2]int{0, n}, nil
	}
	from := 0
	if tok := q.Get("pageToken"); tok != "" {
		v, ok := strings.CutPrefix(tok, "offset-")
		from, err = strconv.Atoi(v)
		if !ok || err != nil || from < 0 || from > n {
			return nil, bounds, fmt.Errorf("invalid page token %q", tok)
		}
	}
	size := s.opts.PageSize
	if v := q.Get("pageSize"); v != "" {
		asked, err := strconv.Atoi(v)
		if err != nil || asked < 1 {
			return nil, bounds, fmt.Errorf("invalid pageSize %q", v)
		}
		size = min(size, asked)
	}
	to := min(from+size, n)
	if to < n {
		t := "offset-" + strconv.Itoa(to)
		next = &t
	}
	return next, [2]int{from, to}, nil
}
