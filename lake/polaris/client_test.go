package polaris_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake/polaris"
	"github.com/floe-project/floe/lake/polaris/polaristest"
)

const (
	expiry   = polaris.TypeSnapshotExpiry
	orphans  = polaris.TypeOrphanFileRemoval
	compact  = polaris.TypeDataCompaction
	metadata = polaris.TypeMetadataCompaction
)

// lakehouse builds a fake with namespaces web, web.raw and ops, tables
// web.events and web.raw.clicks, and policies:
//   - ops/catalog_expiry (snapshot-expiry) on the catalog,
//   - ops/catalog_meta (metadata-compaction) on the catalog,
//   - web/web_compaction (data-compaction) on namespace web,
//   - web/web_orphans (orphan-file-removal) on namespace web,
//   - web/events_expiry (snapshot-expiry) on table web.events.
func lakehouse(t *testing.T, opts polaristest.Options) *polaristest.Server {
	t.Helper()
	ctx := t.Context()
	s := polaristest.New(t, opts)
	s.CreateNamespace("ops")
	s.CreateTable([]string{"web"}, "events")
	s.CreateTable([]string{"web", "raw"}, "clicks")
	for _, p := range []struct {
		ns                 []string
		name, typ, content string
		targetType         string
		target             []string
	}{
		{[]string{"ops"}, "catalog_expiry", expiry, `{"version":"2025-02-03","enable":true,"config":{"min_snapshot_to_keep":5,"max_snapshot_age_days":7}}`, "catalog", nil},
		{[]string{"ops"}, "catalog_meta", metadata, `{"enable":false}`, "catalog", nil},
		{[]string{"web"}, "web_compaction", compact, `{"enable":true,"config":{"target_file_size_bytes":536870912,"compaction_strategy":"bin-pack"}}`, "namespace", []string{"web"}},
		{[]string{"web"}, "web_orphans", orphans, `{"enable":true,"max_orphan_file_age_in_days":3,"locations":["s3://b/web"]}`, "namespace", []string{"web"}},
		{[]string{"web"}, "events_expiry", expiry, `{"enable":true,"config":{"max_snapshot_age_days":1.5}}`, "table-like", []string{"web", "events"}},
	} {
		require.NoError(t, s.CreatePolicy(ctx, p.ns, p.name, p.typ, p.content))
		require.NoError(t, s.Attach(ctx, p.ns, p.name, p.targetType, p.target...))
	}
	return s
}

func client(t *testing.T, props map[string]string) *polaris.Client {
	t.Helper()
	c, err := polaris.New(props, nil)
	require.NoError(t, err)
	return c
}

type got struct {
	name      string
	level     polaris.Level
	at        string
	inherited bool
}

func summary(ps []polaris.Policy) []got {
	out := make([]got, 0, len(ps))
	for _, p := range ps {
		out = append(out, got{p.Name, p.Level, strings.Join(p.AttachedTo, "."), p.Inherited})
	}
	return out
}

func TestApplicablePoliciesLevels(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	c := client(t, s.Props())
	ctx := t.Context()

	events, err := c.ApplicablePolicies(ctx, []string{"web"}, "events")
	require.NoError(t, err)
	require.ElementsMatch(t, []got{
		{"catalog_meta", polaris.LevelCatalog, "", true},
		{"web_compaction", polaris.LevelNamespace, "web", true},
		{"web_orphans", polaris.LevelNamespace, "web", true},
		{"events_expiry", polaris.LevelTable, "web.events", false}, // the table's own replaces the catalog's
	}, summary(events))
	for _, p := range events {
		if p.Name == "catalog_meta" {
			require.Equal(t, []string{"ops"}, p.Namespace, "namespace is where the policy is stored, not where attached")
		}
	}

	// A table in a child namespace inherits from the parent namespace and
	// the catalog.
	clicks, err := c.ApplicablePolicies(ctx, []string{"web", "raw"}, "clicks")
	require.NoError(t, err)
	require.ElementsMatch(t, []got{
		{"catalog_expiry", polaris.LevelCatalog, "", true},
		{"catalog_meta", polaris.LevelCatalog, "", true},
		{"web_compaction", polaris.LevelNamespace, "web", true},
		{"web_orphans", polaris.LevelNamespace, "web", true},
	}, summary(clicks))

	// A namespace and the catalog can be asked about too.
	web, err := c.ApplicablePolicies(ctx, []string{"web"}, "")
	require.NoError(t, err)
	require.ElementsMatch(t, []got{
		{"catalog_expiry", polaris.LevelCatalog, "", true},
		{"catalog_meta", polaris.LevelCatalog, "", true},
		{"web_compaction", polaris.LevelNamespace, "web", false},
		{"web_orphans", polaris.LevelNamespace, "web", false},
	}, summary(web))
	cat, err := c.ApplicablePolicies(ctx, nil, "")
	require.NoError(t, err)
	require.ElementsMatch(t, []got{
		{"catalog_expiry", polaris.LevelCatalog, "", false},
		{"catalog_meta", polaris.LevelCatalog, "", false},
	}, summary(cat))
	require.Equal(t, "polaris", c.Prefix())
}

func TestApplicablePoliciesPaginates(t *testing.T) {
	s := lakehouse(t, polaristest.Options{PageSize: 1})
	c := client(t, s.Props())
	ps, err := c.ApplicablePolicies(t.Context(), []string{"web", "raw"}, "clicks")
	require.NoError(t, err)
	require.Len(t, ps, 4, "all four pages were read")
	var pages []string
	for _, r := range s.Requests() {
		if strings.Contains(r, "target-name=clicks") {
			pages = append(pages, r)
		}
	}
	require.Len(t, pages, 4, "one request a page: %v", pages)
	require.Contains(t, pages[0], "pageToken=&")
	require.Contains(t, pages[0], "namespace=web%1Fraw", "namespace levels are joined by the unit separator")
	require.Contains(t, pages[3], "pageToken=offset-3")
}

func TestConnectAuth(t *testing.T) {
	s := lakehouse(t, polaristest.Options{Token: "static-token-1234", ForbiddenToken: "reader-token-5678"})
	with := func(change map[string]string) map[string]string {
		p := s.Props()
		for k, v := range change {
			if v == "" {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		props  map[string]string
		want   []string // in the error
		secret string   // never in the error
	}{
		{"wrong secret", with(map[string]string{"credential": "root:wrong-secret-value"}),
			[]string{"POST " + s.URL + "/v1/oauth/tokens", "401", "unauthorized_client", "The client is not authorized", "check credential and scope"}, "wrong-secret-value"},
		{"wrong token", with(map[string]string{"credential": "", "token": "bad-token-0000"}),
			[]string{"GET " + s.URL + "/v1/config?warehouse=polaris", "401", "NotAuthorizedException", "Not authorized to make this request"}, "bad-token-0000"},
		{"forbidden", with(map[string]string{"credential": "", "token": "reader-token-5678"}),
			[]string{"applicable-policies", "403 Forbidden", "ForbiddenException", "not authorized"}, "reader-token-5678"},
		{"no auth", with(map[string]string{"credential": ""}),
			[]string{"401", "NotAuthorizedException"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t, tc.props)
			_, err := c.ApplicablePolicies(t.Context(), []string{"web"}, "events")
			require.Error(t, err)
			require.ErrorIs(t, err, polaris.ErrAuth)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			if tc.secret != "" {
				require.NotContains(t, err.Error(), tc.secret)
			}
			require.NotContains(t, err.Error(), "s3cr3t")
		})
	}

	t.Run("static token", func(t *testing.T) {
		c := client(t, with(map[string]string{"credential": "", "token": "static-token-1234"}))
		ps, err := c.ApplicablePolicies(t.Context(), []string{"web"}, "events")
		require.NoError(t, err)
		require.Len(t, ps, 4)
	})
}

func TestSecretEchoedByServerIsRedacted(t *testing.T) {
	// A server that echoes what it was sent must not get a secret into
	// floe's error: a policy name carrying the token's text stands in for
	// such an echo (the fake quotes the unknown catalog prefix).
	s := lakehouse(t, polaristest.Options{Token: "tok-abcdef"})
	c := client(t, map[string]string{"uri": s.URL, "token": "tok-abcdef", "prefix": "tok-abcdef", "warehouse": "polaris"})
	_, err := c.ApplicablePolicies(t.Context(), []string{"web"}, "events")
	require.NoError(t, err, "overrides.prefix wins over the prefix property")

	s2 := polaristest.New(t, polaristest.Options{Catalog: "tok-abcdef", Token: "tok-abcdef"})
	s2.CreateTable([]string{"web"}, "events")
	c2 := client(t, map[string]string{"uri": s2.URL, "token": "tok-abcdef", "warehouse": "tok-abcdef"})
	_, err = c2.ApplicablePolicies(t.Context(), []string{"web"}, "missing")
	require.ErrorIs(t, err, polaris.ErrNotFound)
	require.NotContains(t, err.Error(), "tok-abcdef")
	require.Contains(t, err.Error(), "<redacted>")
	var herr *polaris.HTTPError
	require.ErrorAs(t, err, &herr)
	require.NotContains(t, herr.URL+herr.Message, "tok-abcdef")
}

func TestApplicablePoliciesNotFound(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	c := client(t, s.Props())
	_, err := c.ApplicablePolicies(t.Context(), []string{"web"}, "nope")
	require.ErrorIs(t, err, polaris.ErrNotFound)
	require.ErrorContains(t, err, "polaris applicable policies for web.nope: GET "+s.URL+"/polaris/v1/polaris/applicable-policies?")
	require.ErrorContains(t, err, "404 Not Found: NoSuchTableException: Table does not exist: web.nope")

	c = client(t, map[string]string{"uri": s.URL, "warehouse": "other", "credential": s.Props()["credential"]})
	_, err = c.ApplicablePolicies(t.Context(), []string{"web"}, "events")
	require.ErrorIs(t, err, polaris.ErrNotFound)
	require.ErrorContains(t, err, "connect to polaris "+s.URL+": GET "+s.URL+"/v1/config?warehouse=other: 404 Not Found: NotFoundException: Unable to find warehouse other")
}

func TestTokenRefreshedAfterRevoke(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	props := s.Props()
	delete(props, "scope")
	c := client(t, props)
	ctx := t.Context()
	_, err := c.ApplicablePolicies(ctx, []string{"web"}, "events")
	require.NoError(t, err)
	s.RevokeTokens()
	_, err = c.ApplicablePolicies(ctx, []string{"web"}, "events")
	require.NoError(t, err, "a 401 gets one retry with a fresh token")
	require.Equal(t, []string{polaris.DefaultScope, polaris.DefaultScope}, s.Scopes())
}

func TestOAuth2ServerURIHonoured(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	props := s.Props()
	props["oauth2-server-uri"] = s.URL + "/elsewhere/tokens"
	props["rest.authorization-url"] = s.URL + "/ignored/tokens"
	c := client(t, props)
	err := c.Connect(t.Context())
	require.ErrorContains(t, err, "POST "+s.URL+"/elsewhere/tokens: 404")
	require.Empty(t, s.Scopes(), "the default token endpoint was not asked")
}

func TestNewReportsEveryProblem(t *testing.T) {
	_, err := polaris.New(map[string]string{
		"oauth2-server-uri":  "ftp://x",
		"rest.sigv4-enabled": "true",
		"credential":         "id:very-secret",
	}, nil)
	require.Error(t, err)
	for _, w := range []string{"uri is required", "oauth2-server-uri", "rest.sigv4-enabled"} {
		require.ErrorContains(t, err, w)
	}
	require.NotContains(t, err.Error(), "very-secret")

	_, err = polaris.New(map[string]string{"uri": "http://u:pw@host/api/catalog", "header.X-Realm": "r"}, nil)
	require.NoError(t, err)
}

func TestApplicablePoliciesBadTarget(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	c := client(t, s.Props())
	_, err := c.ApplicablePolicies(t.Context(), nil, "events")
	require.ErrorContains(t, err, "a table needs a namespace")
	_, err = c.ApplicablePolicies(t.Context(), []string{"web", ""}, "events")
	require.ErrorContains(t, err, "a namespace level is empty")
}

func TestContextHonoured(t *testing.T) {
	s := lakehouse(t, polaristest.Options{})
	c := client(t, s.Props())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.ApplicablePolicies(ctx, []string{"web"}, "events")
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
}
