// Package report is the recommendation report a person reads before
// approving a rewrite: its model ([Report]) and its three renderings —
// GitHub-flavoured Markdown ([Markdown]), one self-contained HTML file with
// inline SVG charts ([HTML]; one table's section alone with [TableHTML], for
// a page that embeds it) and JSON with stable snake_case keys ([JSON]).
//
// The package only renders. Gathering — health, the analyzer's ranking, the
// simulator's projections, the cost/benefit arithmetic, stored plans and runs
// — is control.Report's; this package imports nothing of floe but the
// size formatting of control/config, so that control imports it and not the
// other way round.
//
// Invariants the renderers keep:
//   - Output depends on the Report value only: no clock, no environment, no
//     map iteration order (op mixes are sorted), so a fixed Report renders
//     to the same bytes every time (the golden files in testdata).
//   - The HTML references nothing outside itself: no script, no external
//     style sheet, font or image; every chart is inline SVG with a title, a
//     description (its text alternative), axes, labels and units.
//   - JSON lists are [] and never null; snapshot ids are strings
//     (docs/json.md).
package report
