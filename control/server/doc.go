// Package server is floe's HTTP side, the handler floe serve mounts: the
// liveness and readiness probes (/healthz, /readyz), the Prometheus
// metrics (/metrics, on the server's own registry), the JSON API under
// /api/v1 (tables with their health, effective policy, report, plans and
// runs; proposing, approving and rejecting plans; running a table now;
// reporting a commit, which wakes the scheduler for the table), and the
// telemetry endpoints of package ingest (/ingest/trino,
// /ingest/iceberg/…, whose commit reports wake the scheduler too), so
// that one daemon receives telemetry, and a
// dashboard for people at / (overview, table and run pages, approving and
// rejecting plans through a sign-in form; docs/api.md).
//
// Inputs: [Deps] — the configuration, the state store, a function that
// opens a catalog by name, the clock, and the scheduler's run function —
// and [Options]. Output: an http.Handler. The server holds no state of its
// own beyond its [Metrics], the dashboard's sign-in sessions and the table
// index (summaries, never table states: those are the service's); every handler calls the same control functions
// the CLI does, so the API and the CLI cannot disagree.
//
// Invariants:
//
//   - A state-changing API request (any method but GET and HEAD) runs only with
//     Authorization: Bearer <server.token>; without it, or with a wrong one,
//     the answer is 401 and nothing changes. Without a configured token
//     every state-changing request is refused. Reads need either token when
//     server.read_token is set, and beyond loopback unless
//     server.public_read opens them (config.ServerConfig.ReadsNeedToken); on
//     loopback they are open otherwise. /healthz is always open. Tokens are
//     compared in constant time and never logged.
//   - Wrong tokens are slowed per client address (the connection's; an
//     IPv6 one by its /64): after Options.AuthFailures of them the address
//     waits, the wait doubling up to Options.AuthBackoffMax, and every
//     attempt it makes meanwhile is 429 with Retry-After, its token
//     unchecked. A right token clears the count.
//   - The dashboard's pages read like the API; its forms change a plan only
//     from a signed-in session (a random id in an HttpOnly, SameSite=Strict
//     cookie, never the token) whose CSRF token the form carries, else 403.
//     Sessions are kept in memory: a restart signs everyone out.
//   - Every API error is JSON {"error": "…"} (the dashboard's, a page) with the status that says what
//     to do next (see docs/api.md): 400 bad input, 401 no or bad token,
//     404 no such table, plan or run, 409 a plan in the wrong state, 422
//     nothing to judge a layout by, 500 a failure, 503 not ready.
//   - Nothing is swallowed: a run that failed is answered with its error
//     and its record; a readiness check that fails names what failed; a
//     catalog that cannot be listed is named, with why, beside the tables of
//     the others (TableList.CatalogErrors, the overview's banner), its
//     secrets redacted.
//   - Costly answers are computed once per change: a table's report
//     workload (its collected queries read, ranked and replayed) is kept
//     under a key of the table's metadata file, snapshot and the mark of
//     its queries (store.Store.EventsMark); concurrent requests share one
//     computation and at most Options.ReportComputations run at once.
//   - The table views read an index, not the lake: GET /api/v1/tables and
//     the overview page, search, filter and sort every table's summary,
//     which a background refresh (one at a time, shared by every request)
//     measures through control.Service.Health; a table a floe run ended on
//     is measured again at the next request. The first request after start
//     waits a bounded time (Options.TableIndexWait) and then says how many
//     tables are measured so far: no request waits for the whole lake.
//   - Lists are paged by opaque keyset tokens (the last item's sort key),
//     so items added meanwhile neither repeat nor skip the others; a token
//     is bound to its list and query.
//   - Redirects stay on this server: sign-in's next is kept only when it is
//     a path of this server after the normalization browsers apply.
package server
