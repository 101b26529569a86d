package control

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/lake/polaris"
)

// catalogPolicies reads the maintenance policies the table's catalog
// applies to it — Apache Polaris's applicable policies, on a REST catalog
// — as rules at the level Polaris reports (see docs/polaris.md), with a
// warning for every Polaris key floe does not map. Other catalog types
// store no policies: none, no error. A catalog that cannot be asked is an
// error naming it, so that a policy is never silently the wrong one.
func catalogPolicies(ctx context.Context, cfg *config.Config, id lake.Ident) ([]policy.Rule, []string, error) {
	props, ok := cfg.Catalogs[id.Catalog]
	if !ok || !isREST(props) {
		return nil, nil, nil
	}
	fail := func(err error) ([]policy.Rule, []string, error) {
		return nil, nil, fmt.Errorf("read the policies catalog %s applies to %s (policies.from_catalog): %w", id.Catalog, id, err)
	}
	c, err := polaris.New(props, nil)
	if err != nil {
		return fail(err)
	}
	pols, err := c.ApplicablePolicies(ctx, id.Namespace, id.Name)
	if err != nil {
		return fail(err)
	}
	settings, warnings, err := polaris.Settings(pols)
	if err != nil {
		return fail(err)
	}
	levels := map[polaris.Level]policy.Level{polaris.LevelCatalog: policy.LevelCatalog,
		polaris.LevelNamespace: policy.LevelNamespace, polaris.LevelTable: policy.LevelTable}
	var rules []policy.Rule
	for _, s := range settings {
		level := levels[s.Level]
		i := slices.IndexFunc(rules, func(r policy.Rule) bool { return r.Level == level })
		if i < 0 {
			rules = append(rules, policy.Rule{Level: level, Pattern: "polaris:" + lake.JoinParts(s.Path...), Where: s.Source,
				Values: map[string]policy.Value{}, External: true})
			i = len(rules) - 1
		}
		rules[i].Values[s.Key] = policy.Value{Raw: s.Value, Where: s.Source}
	}
	return rules, warnings, nil
}

// isREST reports whether catalog properties name an Iceberg REST catalog.
func isREST(props config.Props) bool {
	if t := props["type"]; t != "" {
		return strings.EqualFold(t, "rest")
	}
	u := strings.ToLower(props["uri"])
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}
