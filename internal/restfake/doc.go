// Package restfake is an in-process Iceberg REST catalog for tests: it
// speaks the wire protocol of the Iceberg REST OpenAPI document
// (apache/iceberg open-api/rest-catalog-open-api.yaml) — GET /v1/config,
// POST /v1/oauth/tokens (client_credentials, with expires_in), namespaces
// and tables listed a page at a time (pageToken / next-page-token), load
// table (LoadTableResult with config and storage-credentials), commit with
// requirements (409 CommitFailedException when one fails), create table,
// and the credentials endpoint — over real HTTP.
//
// Its tables are real Iceberg tables: it serves the tables of a backing
// catalog (an iceberg-go SQL catalog of an [testlake] warehouse, on local
// disk or the in-process S3 server), checks each commit's requirements
// against the table's current metadata, and applies the updates through
// the backing catalog, which builds the new metadata with iceberg-go's own
// metadata builder and writes it next to the table.
//
// Failure modes are knobs: [Server.Inject] answers the next requests of a
// route with an HTTP status (503 or 429 with Retry-After, a 409 on the next
// commit); [Options.TokenTTL] and [Options.TokenUses] make bearer tokens
// expire on the server's clock ([Options.Now]) or after a number of
// requests; [Options.Vend] hands out storage credentials with each table it
// loads. [Server.Requests] is what the server was asked and answered.
package restfake
