// Package snowfake is an in-process fake of Snowflake's SQL API for tests,
// written from the vendor's API reference: POST /api/v2/statements and
// GET /api/v2/statements/{handle} (with ?partition=N), over real HTTP.
//
// It holds a list of queries ([Query]) and answers the statement
// [snowflake.PollStatement] runs against SNOWFLAKE.ACCOUNT_USAGE
// QUERY_HISTORY joined with ACCESS_HISTORY, honouring its select list, its
// bindings (watermark, upper bound, limit) and its order, plus SELECT 1.
// Any other statement is answered 422 as a compilation error.
//
// Answers are shaped as Snowflake's: a ResultSet with resultSetMetaData
// (numRows, format jsonv2, rowType, partitionInfo) and the first
// partition's data; later partitions only by GET with ?partition=N;
// timestamps as epoch seconds with nine decimals, VARIANT as JSON text,
// NULL as null.
//
// Authentication is checked on every request. KEYPAIR_JWT tokens must be
// RS256, signed by the configured public key, with iss
// ACCOUNT.USER.SHA256:<fingerprint>, sub ACCOUNT.USER, iat, and exp no
// more than an hour after iat and not past the fake's clock; an expired
// one gets 401 code 390198, any other fault 401 code 390144. OAUTH tokens
// must be among the configured ones and unexpired (401 code 390318 when
// expired, 390303 when unknown).
//
// Knobs make it misbehave the ways the real service does: [Fake.Stall]
// (202 "still running" for a number of status checks), [Fake.Throttle]
// (429 for a number of requests) and [Fake.Down] (503, or connections
// refused, until brought back up).
package snowfake
