package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/floe-project/floe/control/report"
)

// walk calls fn on every element node under n.
func walk(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

// The HTML parses, references nothing outside itself, and every chart is
// an accessible SVG with a title, a text alternative, axes and labels.
func TestHTMLStructure(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.HTML(&b, fixture()))
	src := b.String()
	require.True(t, strings.HasPrefix(src, "<!DOCTYPE html>"))
	doc, err := html.Parse(strings.NewReader(src))
	require.NoError(t, err)

	counts := map[string]int{}
	ids := map[string]bool{}
	var svgs []*html.Node
	walk(doc, func(n *html.Node) {
		counts[n.Data]++
		if id, ok := attr(n, "id"); ok {
			require.False(t, ids[id], "duplicate id %q", id)
			ids[id] = true
		}
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base":
			t.Errorf("element <%s> in a self-contained report", n.Data)
		case "svg":
			svgs = append(svgs, n)
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "srcset", "action", "formaction", "poster", "xlink:href":
				t.Errorf("<%s %s=%q> references something", n.Data, a.Key, a.Val)
			case "href":
				require.True(t, strings.HasPrefix(a.Val, "#"), "<%s href=%q> leaves the page", n.Data, a.Val)
			case "style":
				require.NotContains(t, a.Val, "url(")
			}
			require.False(t, strings.HasPrefix(a.Key, "on"), "event handler %s on <%s>", a.Key, n.Data)
		}
		if n.Data == "style" {
			css := text(n)
			require.NotContains(t, css, "url(", "the style sheet loads nothing")
			require.NotContains(t, css, "@import")
			require.NotContains(t, css, "@font-face")
		}
	})
	require.Equal(t, 1, counts["style"])
	require.Equal(t, 1, counts["title"]-countIn(svgs, "title"), "one page title")
	require.Equal(t, 5, counts["h2"], "the totals, the queue, the ranking and one section per table shown")
	require.Contains(t, ids, "totals")
	require.Contains(t, ids, "queue")
	require.Contains(t, ids, "ranking")
	require.NotContains(t, ids, "t-local-sales-returns", "a table below the top has no section")
	require.Contains(t, ids, "t-local-web-events")

	// local.web.events draws all four charts and its tree candidate's; local.sales.orders, with no
	// file sizes to compare, no queries' files read and no runs, only the
	// files skipped per candidate.
	var chartIDs []string
	for _, s := range svgs {
		id, _ := attr(s, "id")
		chartIDs = append(chartIDs, id)
		role, _ := attr(s, "role")
		require.Equal(t, "img", role, id)
		labelled, _ := attr(s, "aria-labelledby")
		require.Equal(t, id+"-title "+id+"-desc", labelled)
		var title, desc string
		var lines, texts int
		walk(s, func(n *html.Node) {
			nid, _ := attr(n, "id")
			switch {
			case n.Data == "title" && nid == id+"-title":
				title = text(n)
			case n.Data == "desc":
				desc = text(n)
			case n.Data == "line":
				lines++
			case n.Data == "text":
				texts++
			}
		})
		require.NotEmpty(t, title, id)
		require.Greater(t, len(desc), 40, "%s: a text alternative", id)
		require.GreaterOrEqual(t, lines, 2, "%s: axes", id)
		require.GreaterOrEqual(t, texts, 4, "%s: tick and axis labels", id)
	}
	require.Equal(t, []string{
		"t-local-web-events-skipped", "t-local-web-events-tree-3-chart", "t-local-web-events-recorded-tree-3-chart",
		"t-local-web-events-sizes", "t-local-web-events-read", "t-local-web-events-history",
		"t-local-sales-orders-skipped",
	}, chartIDs)
	require.True(t, strings.Contains(src, "Cost/benefit:"), "the recommendation's cost/benefit line")
}

func countIn(nodes []*html.Node, tag string) int {
	n := 0
	for _, s := range nodes {
		walk(s, func(e *html.Node) {
			if e.Data == tag {
				n++
			}
		})
	}
	return n
}

// TableHTML is exactly the table's section of the whole page, so that the
// dashboard shows what the report file shows.
func TestTableHTMLIsTheSection(t *testing.T) {
	r := fixture()
	var b bytes.Buffer
	require.NoError(t, report.HTML(&b, r))
	for _, tb := range r.Tables {
		frag := string(report.TableHTML(tb))
		require.True(t, strings.HasPrefix(frag, `<section class="table"`), frag[:min(len(frag), 80)])
		require.Contains(t, b.String(), frag, tb.Table)
		require.Contains(t, frag, "<svg")
	}
	require.Contains(t, string(report.Style()), "svg.chart")
}

// A tree candidate is explained in words and drawn: the summary and every
// cut in a nested list, and a picture with a box per cut shown and one per
// side whose cuts are not, every value escaped (a set cut's too).
func TestHTMLExplainsTheTree(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.HTML(&b, fixture()))
	src := b.String()
	require.NotContains(t, src, "<click>", "a value holding markup is escaped")
	doc, err := html.Parse(strings.NewReader(src))
	require.NoError(t, err)
	var tree *html.Node
	walk(doc, func(n *html.Node) {
		if id, _ := attr(n, "id"); id == "t-local-web-events-tree-3" {
			tree = n
		}
	})
	require.NotNil(t, tree, "the tree candidate's explanation")
	words := text(tree)
	for _, w := range []string{
		"9 leaves, 4 levels deep; 52.0k to 190k rows a leaf (median 110k).",
		"tenant_id < 40: 500k rows left, 480k right; 62% of queries skip a side (31% the left, 31% the right)",
		"left: ts < '2026-11-10 00:00:00': 210k rows left, 290k right; 18% of queries skip a side",
		"right: event_type IN ('<click>', 'purchase'): 300k rows left, 180k right; <1% of queries skip a side (<1% the left, 0% the right)",
		"right: ts <= '2026-11-20 06:00:00'",
		report.TreeText,
	} {
		require.Contains(t, words, w)
	}
	// The outline nests, each cut's list inside its item: the root, its left
	// side's cut, that cut's right side's, then the root's right side's.
	var depths []int
	walk(tree, func(n *html.Node) {
		if n.Data != "li" {
			return
		}
		d := 0
		for p := n.Parent; p != tree; p = p.Parent {
			if p.Data == "ul" {
				d++
			}
		}
		depths = append(depths, d)
	})
	require.Equal(t, []int{1, 2, 3, 2}, depths)
	walk(tree, func(n *html.Node) {
		if n.Data == "ul" && n.Parent != tree {
			require.Equal(t, "li", n.Parent.Data, "a nested list sits inside its cut's item")
		}
	})

	var cuts, leaves int
	var boxText []string
	walk(tree, func(n *html.Node) {
		if n.Data != "g" {
			return
		}
		class, _ := attr(n, "class")
		switch class {
		case "cut":
			cuts++
		case "leaves":
			leaves++
		}
		boxText = append(boxText, text(n))
	})
	require.Equal(t, 4, cuts, "a box per cut shown")
	require.Equal(t, 5, leaves, "the first cut's left leaf, the second's two sides, the fourth's two sides")
	require.Contains(t, boxText, "left side of ts < '2026-11-10 00:00:00': a leaf, 210k rowsa leaf210k rows")
	require.Contains(t, boxText, "left side of event_type IN ('<click>', 'purchase'): 3 leaves, 300k rows3 leaves300k rows")
	// A set cut's box holds its predicate, long ones cut short.
	require.Contains(t, boxText, "event_type IN ('<click>', 'purchase'): 300k rows left, 180k right; <1% of queries skip a side (<1% the left, 0% the right)event_typeIN ('<click>', 'purc…480k rows · <1%")
}

// The Markdown explains the tree in the same words, as a nested list.
func TestMarkdownExplainsTheTree(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, report.Markdown(&b, fixture()))
	require.Contains(t, b.String(), "#### Learned tree of `tree(tenant_id, ts, event_type) target 4MiB`\n\n9 leaves, 4 levels deep; 52.0k to 190k rows a leaf (median 110k).\n\n"+
		"- `tenant_id < 40`: 500k rows left, 480k right; 62% of queries skip a side (31% the left, 31% the right)\n"+
		"  - left: `ts < '2026-11-10 00:00:00'`: 210k rows left, 290k right; 18% of queries skip a side (10% the left, 8% the right)\n"+
		"    - right: `ts <= '2026-11-20 06:00:00'`: 100k rows left, 190k right; 5% of queries skip a side (5% the left, 0% the right)\n"+
		"  - right: `event_type IN ('<click>', 'purchase')`: 300k rows left, 180k right; <1% of queries skip a side (<1% the left, 0% the right)\n")
}
