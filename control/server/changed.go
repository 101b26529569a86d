package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/lake"
)

// ChangedFunc is told that a table changed (a commit was reported): the
// daemon decides it again at once. [control.Scheduler.Changed] is one.
type ChangedFunc func(id lake.Ident)

// ChangedResponse answers POST /api/v1/tables/{table}/changed.
type ChangedResponse struct {
	// Table is the table, as floe names it.
	Table string `json:"table"`
}

// changed records that a table changed: POST
// /api/v1/tables/{table}/changed, for a catalog event hook, a CI job or
// anything that knows of a commit. The table must exist (asked of its
// catalog without reading its metadata): a name that names none is 404,
// not a wake-up that never matches.
func (s *server) changed(r *http.Request) (int, any, error) {
	if s.deps.Changed == nil {
		return 0, nil, errors.Join(errUnavailable, errors.New("this server decides no tables: it was started without a scheduler"))
	}
	id, err := s.ident(r.PathValue("table"))
	if err != nil {
		return 0, nil, err
	}
	cat, err := s.deps.Catalog(r.Context(), id.Catalog)
	if err != nil {
		return 0, nil, err
	}
	ok, err := cat.CheckTableExists(r.Context(), id.TableIdent())
	if err != nil && !errors.Is(err, catalog.ErrNoSuchNamespace) {
		return 0, nil, err
	}
	if !ok {
		// Names are matched without regard to case, as everywhere in floe.
		all, err := lake.ListTables(r.Context(), id.Catalog, cat)
		if err != nil {
			return 0, nil, err
		}
		found := false
		for _, t := range all {
			if strings.EqualFold(t.String(), id.String()) {
				id, found = t, true
				break
			}
		}
		if !found {
			return 0, nil, &lake.NoSuchTableError{Table: id, Cause: catalog.ErrNoSuchTable}
		}
	}
	s.deps.Changed(id)
	return http.StatusAccepted, ChangedResponse{Table: id.String()}, nil
}

// committed is told the table of each Iceberg commit report posted to
// /ingest/iceberg/…/metrics: its engine catalog mapped to a floe catalog
// as telemetry's are (telemetry.catalog_map), the REST path's namespace
// and table. A report of no configured catalog is dropped.
func (s *server) committed(t collectors.TableAccess) {
	cfg := s.deps.Config
	cat, ok := cfg.MapEngineCatalog(string(collectors.EngineIceberg), t.Catalog)
	if !ok || t.Name == "" || t.Namespace == "" {
		s.log.Warn("commit report of a table no catalog holds: ignored", "catalog", t.Catalog, "namespace", t.Namespace, "table", t.Name)
		return
	}
	s.deps.Changed(lake.Ident{Catalog: cat, Namespace: lake.NamespaceParts(t.Namespace), Name: t.Name})
}
