// Package polaris reads the maintenance policies an Apache Polaris catalog
// stores and maps them onto floe's policy keys.
//
// Polaris stores four inheritable maintenance policy types
// (system.snapshot-expiry, system.orphan-file-removal,
// system.data-compaction, system.metadata-compaction) but enforces none: it
// leaves that to an external engine, which floe can be. [Client] speaks
// Polaris's policy REST API (spec/polaris-catalog-apis/policy-apis.yaml in
// apache/polaris) with the same catalog properties iceberg-go's REST catalog
// reads (uri, warehouse, prefix, token, credential, scope,
// oauth2-server-uri, header.*). [Client.ApplicablePolicies] returns the
// policies in effect on a table, each with the level it is attached at, and
// [Settings] turns them into floe settings ([Setting]) plus a warning for
// every Polaris key floe cannot honour.
//
// Input: a floe catalog's properties and a table's namespace and name.
// Output: [Policy] values (the wire form plus the attachment level) and
// [Setting] values keyed as floe.yaml spells them. Deciding whether a
// setting applies — floe.yaml wins where it sets a key — belongs to the
// policy resolver in control; this package only reads and translates.
//
// Invariants:
//   - A secret (the token property, the credential or its secret half, an
//     access token) never appears in an error: every error text passes
//     through the client's redactor, and URLs are printed redacted.
//   - The level of a policy is where Polaris says it is attached, never a
//     guess: an ApplicablePolicy's namespace field names the namespace the
//     policy is stored in, not the one it is attached to, so for an
//     inherited policy the client asks each parent in turn (nearest first)
//     and takes the first at which the same policy is directly attached.
//     Polaris's inheritance is override, not merge: a table's policy of a
//     type replaces its namespace's whole policy of that type, and only the
//     policy in effect is returned, so keys of an overridden policy never
//     leak into floe.
//   - Content that floe cannot read (not JSON, no boolean enable, an
//     unknown schema version, a negative or non-integer number where floe
//     needs one) is an error naming the policy, never a silent default.
//   - Polaris keys without a floe equivalent are named in a warning, never
//     dropped silently.
//
// The sub-package polaristest is an in-process fake of the same API,
// written from the published OpenAPI spec, for tests.
package polaris
