package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/control/server"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// A tree plan is explained on its table's page as the report explains a tree
// candidate: the plan's own explanation, in words and drawn. The workload
// asks for v = 3 most often and id = 42 less, so that a tree on (v, id) is
// sorted on one and cut on the other.
func TestDashboardExplainsATreePlan(t *testing.T) {
	e := newEnv(t, envOptions{server: tokenYAML})
	var evs []collectors.QueryEvent
	for i := range 12 {
		col, val, sql := "v", "3", "SELECT * FROM db.p WHERE v = 3"
		if i%3 == 0 {
			col, val, sql = "id", "42", "SELECT * FROM db.p WHERE id = 42"
		}
		ts := e.now.Add(-time.Duration(i+1) * time.Hour)
		filter := &expr.Node{Kind: expr.NodePred, Pred: &expr.Pred{Table: e.id.String(), Column: col, Op: expr.OpEq,
			Values: []expr.Value{{Kind: expr.KindNumber, Text: val}}}}
		evs = append(evs, collectors.QueryEvent{
			Source: "trino-event", Engine: collectors.EngineTrino, QueryID: fmt.Sprintf("q%d", i), User: "alice",
			StartTime: ts, EndTime: ts.Add(time.Second), State: collectors.StateSucceeded, StatementType: "SELECT", SQL: sql,
			Tables: []collectors.TableAccess{{Catalog: "local", Namespace: "db", Name: "p", Direct: true, Filter: filter, Evidence: collectors.EvidenceSQL,
				Columns: []collectors.ColumnUse{{Name: col, Roles: []collectors.Role{collectors.RoleFilter}, Evidence: collectors.EvidenceSQL}}}},
		})
	}
	_, _, err := e.st.InsertEvents(context.Background(), evs)
	require.NoError(t, err)

	rec := e.do("POST", "/api/v1/tables/db.p/plans", writeToken, `{"by":"carol","layouts":["tree(v, id) target 4KiB"],"force":true}`)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	resp := decode[server.ProposeResponse](t, rec)
	require.NotNil(t, resp.Plan)
	ex := resp.Plan.Projection.TreeExplanation
	require.NotNil(t, ex, "the API carries the tree's explanation")
	require.NotEmpty(t, ex.Cuts, "the tree cuts: %s", ex.Summary())
	t.Log(ex.Lines(0))

	doc := e.browser().page("/tables/db.p")
	plans := one(t, doc, "section", "id", "plans")
	tree := one(t, plans, "div", "id", "plan-"+resp.Plan.ID+"-tree")
	words := textOf(tree)
	require.Contains(t, words, ex.Summary())
	for _, c := range ex.Cuts {
		require.Contains(t, words, c.Predicate+": "+c.Detail())
	}
	svg := one(t, tree, "svg", "", "")
	require.Len(t, elements(svg, "g", "class", "cut"), len(ex.Cuts), "a box per cut")
	require.Equal(t, layout.FormatCount(ex.Cuts[0].RowsLeft+ex.Cuts[0].RowsRight)+" rows · "+layout.FormatShare(ex.Cuts[0].QueryShare),
		textOf(elements(elements(svg, "g", "class", "cut")[len(ex.Cuts)-1], "text", "", "")[2]), "the root's box, drawn last")
	require.Empty(t, elements(plans, "p", "class", "recorded-tree"), "the table records no tree yet")

	// The table records that plan's tree, as its rewrite would: the next tree plan is
	// shown beside it. (Its target differs: a plan of the same layout on the same
	// snapshot is the plan already stored.)
	tbl, err := lake.LoadTable(t.Context(), e.w.Catalog, e.id)
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{rewriter.PropLayout: resp.Plan.Layout.String(), rewriter.PropLayoutTree: string(resp.Plan.Projection.Tree)}))
	_, err = tx.Commit(t.Context())
	require.NoError(t, err)
	rec = e.do("POST", "/api/v1/tables/db.p/plans", writeToken, `{"by":"carol","layouts":["tree(v, id) target 8KiB"],"force":true}`)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	again := decode[server.ProposeResponse](t, rec)
	r := again.Plan.Projection.RecordedTree
	require.NotNil(t, r, "the API carries the recorded tree beside the re-learned one")
	doc = e.browser().page("/tables/db.p")
	beside := elements(one(t, doc, "section", "id", "plans"), "p", "class", "recorded-tree")
	require.NotEmpty(t, beside)
	require.Contains(t, textOf(beside[len(beside)-1]), "Beside it: "+r.Compare(again.Plan.Projection.SkippedPct))
}
