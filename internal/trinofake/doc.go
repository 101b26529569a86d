// Package trinofake is an in-process Trino coordinator for tests: it
// speaks Trino's client protocol (POST /v1/statement, then GET nextUri)
// for the statement floe's live collector sends to
// system.runtime.queries, filtering its rows by the statement's "end"
// watermark as Trino does. It is for tests only: nothing outside _test.go
// files imports it.
package trinofake
