package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/floe-project/floe/lake"
)

// CheckStore is the readiness check of the state store; a catalog's is
// "catalog:" and its name, and the object store of a catalog whose
// warehouse is a location "objectstore:" and the catalog's name.
const CheckStore = "store"

// CheckResult is one readiness check's outcome.
type CheckResult struct {
	Check string `json:"check"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Readiness is the body of /readyz.
type Readiness struct {
	Ready  bool          `json:"ready"`
	Checks []CheckResult `json:"checks"`
	// Error names the failed checks; empty when ready.
	Error string `json:"error,omitempty"`
}

func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz runs every check at once, each bounded by CheckTimeout, records
// each in floe_check_up, and answers 503 naming the failed ones.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	checks := map[string]func(context.Context) error{CheckStore: s.deps.Store.Check}
	for _, name := range s.deps.Config.CatalogNames() {
		checks["catalog:"+name] = func(ctx context.Context) error {
			cat, err := s.deps.Catalog(ctx, name)
			if err != nil {
				return err
			}
			if _, err := cat.ListNamespaces(ctx, nil); err != nil {
				return fmt.Errorf("list namespaces of %s: %w", name, err)
			}
			return nil
		}
	}
	for name, props := range s.deps.Config.Catalogs {
		if wh := props["warehouse"]; strings.Contains(wh, "://") {
			// The catalog answering says nothing of the store its tables
			// live in.
			checks["objectstore:"+name] = func(ctx context.Context) error {
				return lake.CheckStore(ctx, name, props, wh)
			}
		}
	}
	for name, c := range s.deps.Checks {
		checks[name] = c
	}
	out := Readiness{Ready: true, Checks: make([]CheckResult, 0, len(checks))}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for name, check := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), s.opts.CheckTimeout)
			defer cancel()
			res := CheckResult{Check: name, OK: true}
			if err := check(ctx); err != nil {
				res.OK, res.Error = false, s.redactCatalog(strings.TrimPrefix(name, "catalog:"), err.Error())
			}
			s.m.SetCheck(name, res.OK)
			mu.Lock()
			out.Checks = append(out.Checks, res)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(out.Checks, func(a, b CheckResult) int { return strings.Compare(a.Check, b.Check) })
	var failed []string
	for _, c := range out.Checks {
		if !c.OK {
			failed = append(failed, c.Check)
		}
	}
	if len(failed) > 0 {
		out.Ready, out.Error = false, "not ready: "+strings.Join(failed, ", ")
		s.log.Warn("not ready", "checks", strings.Join(failed, ","))
		s.writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	s.writeJSON(w, http.StatusOK, out)
}

// metrics refreshes floe_plans and floe_table_halted from the store, then
// serves the registry. A store that does not answer is logged and marks
// the store check down; the other series are still served.
func (s *server) metrics() http.Handler {
	h := s.m.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := errors.Join(s.m.RefreshPlans(r.Context(), s.deps.Store), s.m.RefreshHolds(r.Context(), s.deps.Service)); err != nil {
			s.log.Error("refresh plan and hold metrics", "err", err)
			s.m.SetCheck(CheckStore, false)
		}
		h.ServeHTTP(w, r)
	})
}
