package lake_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// TestIdentString: plain names are written as before; a part that holds a
// dot, a double quote or whitespace, or is empty, is quoted SQL-style.
func TestIdentString(t *testing.T) {
	for _, tc := range []struct {
		id   lake.Ident
		want string
	}{
		{lake.Ident{Catalog: "local", Namespace: []string{"web"}, Name: "events"}, "local.web.events"},
		{lake.Ident{Catalog: "local", Namespace: []string{"a", "b"}, Name: "events"}, "local.a.b.events"},
		{lake.Ident{Namespace: []string{"web"}, Name: "events"}, "web.events"},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "order-items_2$x"}, "local.db.order-items_2$x"},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "my.table"}, `local.db."my.table"`},
		{lake.Ident{Catalog: "local", Namespace: []string{"a.b"}, Name: "t"}, `local."a.b".t`},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: `say "hi"`}, `local.db."say ""hi"""`},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "first name"}, `local.db."first name"`},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: ""}, `local.db.""`},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "tab\there"}, "local.db.\"tab\there\""},
		{lake.Ident{Catalog: "local", Namespace: []string{"db"}, Name: "ünïcode"}, "local.db.ünïcode"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.id.String())
			back, err := lake.ParseIdent(tc.want, []string{"local"}, "local")
			require.NoError(t, err)
			want := tc.id
			if want.Catalog == "" {
				want.Catalog = "local"
			}
			require.Equal(t, want, back)
		})
	}
}

// TestIdentRoundTripSmallNames: every namespace level and name of up to
// three characters from a, dot, double quote and space reads back as
// itself, in one- and two-level namespaces.
func TestIdentRoundTripSmallNames(t *testing.T) {
	parts, last := []string{""}, []string{""}
	for range 3 {
		var next []string
		for _, p := range last {
			for _, c := range []string{"a", ".", `"`, " "} {
				next = append(next, p+c)
			}
		}
		parts, last = append(parts, next...), next
	}
	require.Len(t, parts, 1+4+16+64)
	for _, ns := range parts {
		for _, name := range parts {
			for _, id := range []lake.Ident{
				{Catalog: "local", Namespace: []string{ns}, Name: name},
				{Catalog: "local", Namespace: []string{"db", ns}, Name: name},
			} {
				back, err := lake.ParseIdent(id.String(), []string{"local"}, "local")
				require.NoError(t, err, id.String())
				require.Equal(t, id, back, id.String())
			}
		}
	}
}

func TestParseIdent(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "web.events", want: "local.web.events"},
		{in: "prod.web.events", want: "prod.web.events"},
		{in: "PROD.web.events", want: "prod.web.events"},
		{in: "a.b.events", want: "local.a.b.events"},
		{in: "  web.events\n", want: "local.web.events"},
		{in: `db."my.table"`, want: `local.db."my.table"`},
		{in: `local.db."my.table"`, want: `local.db."my.table"`},
		{in: `"a.b".t`, want: `local."a.b".t`},
		{in: `"db"."events"`, want: "local.db.events"},
		{in: `db."say ""hi"""`, want: `local.db."say ""hi"""`},
		{in: `db.my table`, want: `local.db."my table"`},
		{in: `db.""`, want: `local.db.""`},
		{in: `"prod".web.events`, want: "prod.web.events"},
		{in: "events", wantErr: "want namespace.table"},
		{in: `"db.events"`, wantErr: "want namespace.table"},
		{in: "", wantErr: "empty name"},
		{in: "web..events", wantErr: "empty part at byte 5"},
		{in: ".events", wantErr: "empty part at byte 1"},
		{in: "web.events.", wantErr: "the name ends with a dot"},
		{in: `db."my.table`, wantErr: "unbalanced quote: the part quoted at byte 4 is not closed"},
		{in: `db."my""table`, wantErr: "unbalanced quote"},
		{in: `db."my"table`, wantErr: `unexpected "t" after the quoted part my at byte 8`},
		{in: `db.my"table`, wantErr: `double quote inside the unquoted part at byte 6: quote the whole part, doubling the quote ("my""table")`},
		{in: `db. events`, wantErr: `starts with whitespace: quote it (" events")`},
		{in: `db .events`, wantErr: `ends with whitespace: quote it ("db ")`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			id, err := lake.ParseIdent(tc.in, []string{"local", "prod"}, "local")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.ErrorContains(t, err, "table name ")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, id.String())
		})
	}
}

// FuzzParseIdent: any Ident, written by String, parses back to itself; and
// ParseIdent never panics on any text, and what it accepts it writes in a
// form it reads back the same.
func FuzzParseIdent(f *testing.F) {
	for _, seed := range []struct{ cat, ns, name, text string }{
		{"local", "db", "events", "db.events"},
		{"local", "db\x00a.b", "my.table", `local.db."my.table"`},
		{"prod", `"`, `""`, `"a.b".t`},
		{"", " x ", "", `db."say ""hi"""`},
		{"c.d", "a", "\t", `db."unclosed`},
		{"local", "", "b", "web..events"},
		{"local", "db", "a\xffb", `db."a"b`},
	} {
		f.Add(seed.cat, seed.ns, seed.name, seed.text)
	}
	f.Fuzz(func(t *testing.T, cat, ns, name, text string) {
		// ns holds the namespace levels separated by NUL; a namespace has
		// at least one level.
		id := lake.Ident{Catalog: cat, Namespace: strings.Split(ns, "\x00"), Name: name}
		def := "default"
		if cat != "" {
			def = cat
		}
		s := id.String()
		back, err := lake.ParseIdent(s, []string{def}, def)
		if err != nil {
			t.Fatalf("ParseIdent(%q) of %#v: %v", s, id, err)
		}
		want := id
		want.Catalog = def
		if back.Catalog != want.Catalog || back.Name != want.Name || !slices.Equal(back.Namespace, want.Namespace) {
			t.Fatalf("ParseIdent(%q) = %#v, want %#v", s, back, want)
		}
		got, err := lake.ParseIdent(text, []string{"local"}, "local")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "table name ") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		again, err := lake.ParseIdent(got.String(), []string{"local"}, "local")
		if err != nil || again.String() != got.String() || again.Name != got.Name || !slices.Equal(again.Namespace, got.Namespace) {
			t.Fatalf("ParseIdent(%q) = %#v; its String %q reads back as %#v, %v", text, got, got.String(), again, err)
		}
	})
}

// TestListTablesDottedNames: iceberg-go's SQL catalog stores a table
// whose name holds a dot, and a namespace level that does; ListTables
// lists each as its own table, none merged with the table whose dotted
// path reads the same (db."a.b" is not db.a.b), and each loads by the
// Ident its String parses back to.
func TestListTablesDottedNames(t *testing.T) {
	ctx := context.Background()
	w := testlake.New(t)
	w.CreateTable(t, "db", "a.b", schema, nil, nil, nil)
	require.NoError(t, w.Catalog.CreateNamespace(ctx, table.Identifier{"db", "a"}, nil))
	_, err := w.Catalog.CreateTable(ctx, table.Identifier{"db", "a", "b"}, schema)
	require.NoError(t, err)
	w.CreateTable(t, "x.y", "t", schema, nil, nil, nil)

	ids, err := lake.ListTables(ctx, w.Name, w.Catalog)
	require.NoError(t, err)
	var names []string
	for _, id := range ids {
		names = append(names, id.String())
		back, err := lake.ParseIdent(id.String(), []string{w.Name}, w.Name)
		require.NoError(t, err)
		require.Equal(t, id, back)
		tbl, err := lake.LoadTable(ctx, w.Catalog, back)
		require.NoError(t, err, id.String())
		require.Equal(t, id.TableIdent(), tbl.Identifier())
	}
	require.Equal(t, []string{`local."x.y".t`, `local.db."a.b"`, "local.db.a.b"}, names)
}
