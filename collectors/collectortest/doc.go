// Package collectortest is the conformance suite every [collectors.Parser]
// runs in its tests, plus helpers to parse fixtures and fuzz parsers.
//
// [Run] checks, on the parser's own fixtures and on every other fixture
// under the module's testdata/logs: Detect accepts its own files and
// rejects the others; Parse emits events carrying Source, QueryID, a UTC
// StartTime and a State; Parse stops at and returns the error of emit or
// bad; parsing twice gives identical output; and Parse
// neither panics nor breaks those rules on truncated and garbled copies.
package collectortest
