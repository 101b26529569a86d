// Package trinolive collects Trino queries live, in the two ways a running
// cluster offers:
//
//   - [QueryRuntime] polls system.runtime.queries through database/sql and
//     the trino-go-client driver ("trino"). The table lives in the
//     coordinator's memory (query.max-history, default 100 queries, kept
//     at least query.min-expire-age, default 15 minutes), so it must be
//     polled more often than queries expire. Rows carry SQL, user, state
//     and times but no tables, columns, bytes or session catalog/schema.
//   - [NewListenerHandler] is an HTTP endpoint for Trino's HTTP event
//     listener (event-listener.name=http,
//     http-event-listener.connect-ingest-uri=<floe>/…): each POST body is
//     one QueryCompletedEvent, decoded by the Trino file parser
//     ([trino.EventParser]) so both paths yield identical events.
//
// The listener is the recommended path: it sees every query, with the
// referenced tables and columns, and nothing expires before it is read.
package trinolive
