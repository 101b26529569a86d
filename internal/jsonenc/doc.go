// Package jsonenc encodes JSON as floe prints it: without HTML escaping.
//
// encoding/json's Marshal writes <, > and & as \u003c, \u003e and \u0026,
// for JSON embedded in HTML. floe's JSON is read by people, jq and scripts,
// where `>=` in a predicate or `&` in a path should read as written. An
// encoder's SetEscapeHTML(false) does not reach into a value's own
// MarshalJSON: whatever that method returns is copied as it is, so a
// MarshalJSON that calls json.Marshal escapes regardless. Every
// hand-written MarshalJSON in floe encodes with [Marshal] instead.
package jsonenc
