// Package expr is the predicate vocabulary every stage speaks: the
// comparison operators ([Op]), typed literals ([Value], [Kind]), predicate
// leaves ([Pred]) and the boolean trees over them ([Node]).
//
// The SQL parser (analyzer/extract) produces these types; the collectors,
// the store, the analyzer and the simulator consume them without importing
// the parser. expr imports nothing of floe, so every stage can depend on it.
package expr
