// Package policy holds floe's maintenance policies: what each table's
// maintenance should be (snapshot retention, orphan age, target file size,
// layout, approvals, mode and schedule, triggers, freshness SLA, health
// thresholds) and how a table's effective policy is resolved from the
// rules of floe.yaml.
//
// Rules come at four levels, each later one overriding the earlier key by
// key: default → catalog → namespace → table. Namespace and table rules
// are glob patterns over the qualified name ("local.raw_*",
// "local.web.events"); when two patterns of one level match a table, the
// one with the longer literal prefix (the text before the first '*' or
// '?') wins, a pattern without wildcards beating a glob of the same
// prefix; a true tie is a configuration error naming both lines. A table
// no rule names inherits the default with zero configuration.
//
// A rule's values are kept as text with the file:line they were set at
// ([Rule.Values]), so that [Effective] says for every key which level and
// line set it. Values are checked when the rules are parsed, so a bad
// value is reported even when no table matches its rule: every number
// has bounds (a size written without its unit is bytes, and lands below
// them). What only a whole policy shows — a target_file_size below
// [MinTargetFileSizeBytes] that allow_small_target_file_size does not
// accept, a warning threshold above its critical one, two rules that tie —
// [Set.Resolve] refuses for a table, and [Set.Validate] for a table each
// rule governs, together with schedules that never fire ([NextRun]). A
// set that validates is one every table it names can run with.
//
// Policies read from a catalog (Apache Polaris's applicable policies) come
// in as extra rules at the level the catalog reports; at the same level
// floe.yaml's rule wins ([Set.Resolve]).
package policy
