package report

import (
	"bufio"
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/simulator"
)

// TreeText heads a learned tree's explanation in every rendering.
const TreeText = "How to read it: a row goes left when the cut's predicate is true of it (nulls go left too), right otherwise. " +
	"A cut's share is the queries, weighted by how often they run, that would read the cut's rows but can skip one of its sides, " +
	"replayed on the sample's min/max; rows are the sample's, scaled to the table."

// tree writes a tree's explanation under a heading of kind ("Learned tree",
// "Recorded tree"): its summary, then its top cuts as a nested list.
func (m *mdWriter) tree(kind, name string, e layout.TreeExplanation) {
	m.line("")
	m.line("#### %s of `%s`", kind, name)
	m.line("")
	m.line("%s.", e.Summary())
	if len(e.Cuts) > 0 {
		m.line("")
		for _, it := range e.Outline(0) {
			c := it.Cut
			m.line("%s- %s`%s`: %s", strings.Repeat("  ", it.Level), c.SidePrefix(), c.Predicate, c.Detail())
		}
	}
	m.line("")
	m.line("%s", TreeText)
}

// tree writes a tree's explanation under a heading of kind ("Learned tree",
// "Recorded tree"): the words, then the picture of its top levels.
func (h *htmlWriter) tree(id, kind, name string, e layout.TreeExplanation) {
	h.raw(`<div class="tree" id="` + esc(id) + `">` + "\n")
	h.raw("<h4>" + esc(kind) + " of <code>" + esc(name) + "</code></h4>\n")
	h.el("p", e.Summary()+".")
	// A nested list: a cut's list of the cuts under it sits inside its item.
	level := -1
	for _, it := range e.Outline(0) {
		if it.Level > level {
			h.raw("<ul>")
		} else {
			h.raw("</li>")
			for ; level > it.Level; level-- {
				h.raw("</ul></li>")
			}
		}
		level = it.Level
		c := it.Cut
		h.raw("\n<li>" + esc(c.SidePrefix()) + "<code>" + esc(c.Predicate) + "</code>: " + esc(c.Detail()))
	}
	if level >= 0 {
		h.raw("</li>")
		for ; level > 0; level-- {
			h.raw("</ul></li>")
		}
		h.raw("</ul>")
	}
	h.raw("\n")
	h.el("p", TreeText)
	if len(e.Cuts) > 0 {
		h.figure(treeChart(id+"-chart", name, e), "The top of the learned tree: each box a cut (its column, its predicate, the rows it splits and the share of queries that skip one side), "+
			"the left edge where the predicate is true; below the last cuts shown, each side's leaves and rows.")
	}
	h.raw("</div>\n")
}

// TreeHTML renders a learned tree's explanation — the words and the picture
// [HTML] writes under a tree candidate — as a fragment to embed in another
// page (floe serve's plan view); id names its element and prefixes the
// picture's.
func TreeHTML(id, name string, e layout.TreeExplanation) template.HTML {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	(&htmlWriter{w: bw}).tree(id, "Learned tree", name, e)
	// A bufio.Writer over a strings.Builder cannot fail to flush.
	_ = bw.Flush()
	return template.HTML(b.String()) //nolint:gosec // every value in it went through esc
}

// treeBox is one box of the tree picture: a cut shown (cut >= 0), or the
// side of a cut whose own cuts are not shown (its leaves and rows).
type treeBox struct {
	cut       int
	leaves    int
	rows      int64
	level     int
	x         float64
	side      string
	kids      []*treeBox
	parentCut int
}

// treeChart draws the top of a learned tree: a box per cut shown, an edge
// per side (the left one where the predicate is true), and for each side
// whose cuts are not shown a box with its leaves and rows.
func treeChart(id, name string, e layout.TreeExplanation) string {
	const boxW, boxH, slotW, rowH, top, pad = 156.0, 56.0, 166.0, 92.0, 40.0, 12.0
	// Build the boxes from the cuts' parent links, left side first.
	boxes := make([]*treeBox, len(e.Cuts))
	for i, c := range e.Cuts {
		boxes[i] = &treeBox{cut: i, level: c.Depth, rows: c.RowsLeft + c.RowsRight, side: c.Side, parentCut: c.Parent}
	}
	// The first cut is the root: [layout.TreeExplanation.Cuts] are breadth first.
	root := boxes[0]
	for i, b := range boxes {
		c := e.Cuts[i]
		left, right := childOf(boxes, i, "left"), childOf(boxes, i, "right")
		if left == nil {
			left = &treeBox{cut: -1, leaves: c.LeavesLeft, rows: c.RowsLeft, side: "left", parentCut: i}
		}
		if right == nil {
			right = &treeBox{cut: -1, leaves: c.LeavesRight, rows: c.RowsRight, side: "right", parentCut: i}
		}
		left.level, right.level = b.level+1, b.level+1
		b.kids = []*treeBox{left, right}
	}
	// Slots: the boxes without children left to right; a cut centred over its two.
	slot, depth := 0, 0
	var place func(b *treeBox)
	place = func(b *treeBox) {
		depth = max(depth, b.level)
		if len(b.kids) == 0 {
			b.x = pad + float64(slot)*slotW + slotW/2
			slot++
			return
		}
		for _, k := range b.kids {
			place(k)
		}
		b.x = (b.kids[0].x + b.kids[1].x) / 2
	}
	place(root)
	w := int(math.Max(chartWidth, 2*pad+float64(slot)*slotW))
	h := int(top + float64(depth)*rowH + boxH + 30)
	ch := newChart(id, w, h, "Learned tree of "+name,
		"Tree diagram of the learned tree's top cuts. "+strings.Join(e.Lines(0), "; ")+".")
	y := func(level int) float64 { return top + float64(level)*rowH }
	var draw func(b *treeBox)
	draw = func(b *treeBox) {
		x0, y0 := b.x-boxW/2, y(b.level)
		for _, k := range b.kids {
			ch.line(b.x, y0+boxH, k.x, y(k.level), colorAxis)
			label := "no"
			if k.side == "left" {
				label = "yes"
			}
			mx, my := (b.x+k.x)/2, (y0+boxH+y(k.level))/2
			anchor := "end"
			if k.side == "right" {
				anchor = "start"
			}
			off := map[string]float64{"end": -6, "start": 6}[anchor]
			ch.text(mx+off, my+4, anchor, "tick", label)
			draw(k)
		}
		if b.cut >= 0 {
			c := e.Cuts[b.cut]
			ch.add(`<g class="cut"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="4" fill="#ebf4ff" stroke="%s"><title>%s</title></rect>`,
				x0, y0, boxW, boxH, colorThen, esc(c.Sentence()))
			ch.text(b.x, y0+16, "middle", "label", truncate(c.Column, 21))
			ch.text(b.x, y0+32, "middle", "value", truncate(strings.TrimPrefix(c.Predicate, c.Column+" "), 21))
			ch.text(b.x, y0+48, "middle", "value", layout.FormatCount(b.rows)+" rows · "+layout.FormatShare(c.QueryShare))
			ch.add(`</g>`)
			return
		}
		what := fmt.Sprintf("%d leaves", b.leaves)
		fill, stroke := "#f7f7f7", colorNow
		if b.leaves == 1 {
			what, fill, stroke = "a leaf", "#f0fff4", colorAccent
		}
		title := fmt.Sprintf("%s side of %s: %s, %s rows", b.side, e.Cuts[b.parentCut].Predicate, what, layout.FormatCount(b.rows))
		ch.add(`<g class="leaves"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="4" fill="%s" stroke="%s"><title>%s</title></rect>`,
			x0, y0, boxW, boxH-14, fill, stroke, esc(title))
		ch.text(b.x, y0+16, "middle", "label", what)
		ch.text(b.x, y0+32, "middle", "value", layout.FormatCount(b.rows)+" rows")
		ch.add(`</g>`)
	}
	draw(root)
	ch.legend(pad, 18, [2]string{"cut: rows · share of queries that skip a side", colorThen}, [2]string{"leaf", colorAccent}, [2]string{"leaves below", colorNow})
	return ch.String()
}

// childOf is the box of the cut on parent's side, nil when none is shown.
func childOf(boxes []*treeBox, parent int, side string) *treeBox {
	for _, b := range boxes {
		if b.parentCut == parent && b.side == side {
			return b
		}
	}
	return nil
}

// recordedTree writes, under tree candidate c, the tree the table records
// beside the one re-learned for c: the sentence comparing them, then, when
// they differ, the recorded tree's explanation.
func (m *mdWriter) recordedTree(c Candidate, r simulator.RecordedProjection) {
	m.line("")
	m.line("Beside it: %s.", r.Compare(c.SkippedPct))
	if !r.SameAsLearned && r.TreeExplanation != nil {
		m.tree("Recorded tree", r.Layout.String(), *r.TreeExplanation)
	}
}

func (h *htmlWriter) recordedTree(id string, c Candidate, r simulator.RecordedProjection) {
	h.el("p", "Beside it: "+r.Compare(c.SkippedPct)+".")
	if !r.SameAsLearned && r.TreeExplanation != nil {
		h.tree(id, "Recorded tree", r.Layout.String(), *r.TreeExplanation)
	}
}
