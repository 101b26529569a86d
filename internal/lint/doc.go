// Package lint holds the rules about floe's code that no linter expresses,
// as ordinary tests run by make test: today, that packages import each
// other only in the direction DESIGN.md states.
package lint
