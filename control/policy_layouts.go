package control

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// PolicyLayoutReport is what [CheckPolicyLayouts] found.
type PolicyLayoutReport struct {
	// Checked are the tables whose layout was checked against them.
	Checked []string
	// Problems are layouts a table cannot take, each at the file:line
	// that set it: the policies are invalid.
	Problems []error
	// Notes say what was not checked and why it need not be: a named
	// table that does not exist yet.
	Notes []string
	// Unchecked are tables that could not be checked: their catalog or
	// table could not be read.
	Unchecked []error
}

// CheckPolicyLayouts checks, against the tables themselves, the layouts
// set's rules give the tables they name: for each table rule whose pattern
// names one table (no wildcard) of a configured catalog, the table's
// effective policy ([ResolvePolicy], with set as cfg's policies) and, when
// it compacts into a fixed layout, [rewriter.CheckLayout] against the
// table's current schema with the z-order key a run uses by default — the
// check a run makes before it reads any data, so a layout on a column the
// table lacks fails here and not at 2 a.m.
// open opens a configured catalog by name, as the verbs do.
func CheckPolicyLayouts(ctx context.Context, cfg *config.Config, set *policy.Set, open func(context.Context, string) (catalog.Catalog, error)) PolicyLayoutReport {
	var rep PolicyLayoutReport
	if set == nil {
		return rep
	}
	with := *cfg
	with.Policies = set
	for _, r := range set.Tables {
		if strings.ContainsAny(r.Pattern, "*?") {
			continue
		}
		id, err := lake.ParseIdent(r.Pattern, cfg.CatalogNames(), "")
		if err != nil || id.Catalog == "" {
			continue // a catalog that is not configured: the policies' own check says so
		}
		eff, err := ResolvePolicy(ctx, &with, id)
		if err != nil {
			continue // a policy that cannot resolve: the policies' own check says so
		}
		p := eff.Policy
		if !p.Enabled.Compact || p.Layout == policy.LayoutAuto || p.Layout == policy.LayoutNone || p.Layout == "" {
			continue
		}
		s, _ := eff.Setting("layout")
		l, err := layout.Parse(p.Layout)
		if err != nil {
			continue // parsing the policy refused it already
		}
		cat, err := open(ctx, id.Catalog)
		if err == nil {
			t, lerr := lake.LoadTable(ctx, cat, id)
			if lerr == nil {
				rep.Checked = append(rep.Checked, id.String())
				if err := rewriter.CheckLayout(t.Schema(), l, layout.ZOrderIcebergExact); err != nil {
					rep.Problems = append(rep.Problems, fmt.Errorf("%s: layout of %s: %w", s.Where, id, err))
				}
				continue
			}
			err = lerr
		}
		if errors.Is(err, lake.ErrNoSuchTable) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s does not exist (yet): its layout %s is checked once it does", s.Where, id, l))
			continue
		}
		rep.Unchecked = append(rep.Unchecked, fmt.Errorf("%s: layout of %s not checked against the table: %w", s.Where, id, err))
	}
	return rep
}
