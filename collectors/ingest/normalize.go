package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/floe-project/floe/analyzer/extract"
	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/lake"
)

// Dialect returns the SQL dialect of an engine's statements; ok is false
// for an engine whose events carry no SQL of a known dialect.
func Dialect(e collectors.Engine) (extract.Dialect, bool) {
	switch e {
	case collectors.EngineTrino, collectors.EnginePresto:
		return extract.Trino, true
	case collectors.EngineAthena:
		return extract.Athena, true
	case collectors.EngineSpark:
		return extract.Spark, true
	case collectors.EngineSnowflake:
		return extract.Snowflake, true
	case collectors.EngineDuckDB:
		return extract.DuckDB, true
	}
	return "", false
}

// maxWarningKinds caps the distinct warnings a report keeps.
const maxWarningKinds = 200

// Normalizer resolves and canonicalizes events one at a time: what [Run]
// does to every event between parsing and storing, for callers that
// receive events another way (the HTTP ingest endpoints). It caches every
// table lookup for its lifetime, so use one per collection run or bound
// its life when the catalogs change. It is safe for concurrent use.
type Normalizer struct {
	// MaxSQLBytes caps the SQL text an event keeps: a longer text (a
	// generated statement with a huge IN list, say) is cut at a character
	// boundary after its predicates were extracted from all of it, and
	// the event is marked SQLTruncated. Default: [DefaultMaxSQLBytes];
	// negative keeps every text whole.
	MaxSQLBytes int

	cats Catalogs
	res  Resolver

	mu    sync.Mutex
	cache map[string]resolved
	// located are the tables path reads resolved to (Options.Locate), by
	// their lower-cased floe name.
	located map[string]resolved
	// unresolved and warnings collect the notes of the current event.
	unresolved map[string]bool
	warnings   map[string]bool
}

// Notes are what normalizing one event dropped.
type Notes struct {
	// Unresolved are the table names (as the query wrote them, defaults
	// applied) the catalogs do not know, each once.
	Unresolved []string
	// Warnings name dropped columns, each once.
	Warnings []string
}

// resolved is the outcome of looking up one table name.
type resolved struct {
	ok      bool
	catalog string
	ns      []string
	name    string
	schema  *iceberg.Schema
}

// qualified is the table's name in floe's identifier syntax, so the table
// "a.b" of namespace db is not the table b of namespace db.a.
func (r resolved) qualified() string {
	return lake.Ident{Catalog: r.catalog, Namespace: r.ns, Name: r.name}.String()
}

// DefaultMaxSQLBytes is the default of Normalizer.MaxSQLBytes and
// Options.MaxSQLBytes: 1 MiB, far above any hand-written statement.
const DefaultMaxSQLBytes = 1 << 20

// NewNormalizer returns a normalizer that maps engine catalogs to floe
// catalogs with cats and finds tables with res.
func NewNormalizer(cats Catalogs, res Resolver) *Normalizer {
	return &Normalizer{cats: cats, res: res, cache: map[string]resolved{}, located: map[string]resolved{},
		unresolved: map[string]bool{}, warnings: map[string]bool{}}
}

// warn records a warning of the current event; each counts once per event.
func (n *Normalizer) warn(format string, args ...any) {
	n.warnings[fmt.Sprintf(format, args...)] = true
}

// notes returns and clears the current event's notes, sorted.
func (n *Normalizer) notes() Notes {
	var out Notes
	for name := range n.unresolved {
		out.Unresolved = append(out.Unresolved, name)
	}
	for msg := range n.warnings {
		out.Warnings = append(out.Warnings, msg)
	}
	clear(n.unresolved)
	clear(n.warnings)
	slices.Sort(out.Unresolved)
	slices.Sort(out.Warnings)
	return out
}

// access is a TableAccess during normalization, with its resolution.
type access struct {
	t    collectors.TableAccess
	r    resolved
	meta string
}

func (a *access) key() string {
	return strings.ToLower(a.r.qualified()) + "$" + strings.ToLower(a.meta)
}

// lookup resolves an engine table name: defaults from the event, the
// engine catalog mapped to a floe catalog, then the catalog lookup.
func (n *Normalizer) lookup(ctx context.Context, ev *collectors.QueryEvent, cat, ns, name string) (resolved, string, error) {
	if ns == "" {
		ns = ev.DefaultSchema
		if cat == "" {
			cat = ev.DefaultCatalog
		}
	}
	if cat == "" {
		cat = ev.DefaultCatalog
	}
	written := strings.Join(nonEmpty(cat, ns, name), ".")
	if r, ok := n.located[strings.ToLower(written)]; ok {
		return r, written, nil
	}
	floeCat, ok := n.cats.MapEngineCatalog(string(ev.Engine), cat)
	if !ok || floeCat == "" || ns == "" || name == "" {
		return resolved{}, written, nil
	}
	key := strings.ToLower(floeCat + "\x00" + ns + "\x00" + name)
	if r, ok := n.cache[key]; ok {
		return r, written, nil
	}
	schema, cns, cname, ok, err := lookupSchema(ctx, n.res, floeCat, ns, name)
	if err != nil {
		return resolved{}, written, fmt.Errorf("resolve table %s: %w", written, err)
	}
	r := resolved{ok: ok}
	if ok {
		r = resolved{ok: true, catalog: floeCat, ns: cns, name: cname, schema: schema}
	}
	n.cache[key] = r
	return r, written, nil
}

// sourceAccess resolves a table the source reported. A name that does not
// resolve but reads as a metadata table (Trino "t$snapshots", Spark
// db.t.snapshots) is looked up as its base table.
func (n *Normalizer) sourceAccess(ctx context.Context, ev *collectors.QueryEvent, t collectors.TableAccess) (*access, string, error) {
	name, meta := t.Name, ""
	if base, m, ok := strings.Cut(t.Name, "$"); ok && base != "" {
		name, meta = base, strings.ToLower(m)
		if meta == "data" {
			meta = ""
		}
	}
	r, written, err := n.lookup(ctx, ev, t.Catalog, t.Namespace, name)
	if err != nil {
		return nil, "", err
	}
	if !r.ok && meta == "" && expr.IsMetadataTable(t.Name) && t.Namespace != "" {
		parts := lake.NamespaceParts(t.Namespace)
		if len(parts) >= 2 {
			r2, _, err := n.lookup(ctx, ev, t.Catalog, lake.JoinParts(parts[:len(parts)-1]...), parts[len(parts)-1])
			if err != nil {
				return nil, "", err
			}
			if r2.ok {
				r, meta = r2, strings.ToLower(t.Name)
			}
		}
	}
	if !r.ok {
		return nil, written, nil
	}
	return &access{t: t, r: r, meta: meta}, written, nil
}

// Normalize rewrites ev in place: times in UTC; SQL parsed with the
// engine's dialect and merged with the tables the source reported; tables
// resolved to the floe catalogs' spelling; column names spelled as the
// schema spells them; literals typed by their columns (see the package
// documentation). Tables the catalogs do not know are dropped and named in
// the notes. The error is a failure to ask a catalog, not a property of
// the event.
func (n *Normalizer) Normalize(ctx context.Context, ev *collectors.QueryEvent) (Notes, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	err := n.normalize(ctx, ev)
	return n.notes(), err
}

func (n *Normalizer) normalize(ctx context.Context, ev *collectors.QueryEvent) error {
	ev.StartTime = ev.StartTime.UTC()
	if !ev.EndTime.IsZero() {
		ev.EndTime = ev.EndTime.UTC()
	}
	var accs []*access
	byKey := map[string]*access{}
	add := func(a *access) *access {
		if prev, ok := byKey[a.key()]; ok {
			mergeAccess(prev, a)
			return prev
		}
		byKey[a.key()] = a
		accs = append(accs, a)
		return a
	}
	for _, t := range ev.Tables {
		a, written, err := n.sourceAccess(ctx, ev, t)
		if err != nil {
			return err
		}
		if a == nil {
			n.unresolved[written] = true
			continue
		}
		add(a)
	}
	var res *extract.Result
	if d, ok := Dialect(ev.Engine); ok && strings.TrimSpace(ev.SQL) != "" {
		src := &sqlSchemas{n: n, ctx: ctx, ev: ev}
		r := extract.ParseWith(d, ev.SQL, extract.Options{Schemas: src, Locate: src.locate})
		if src.err != nil {
			return src.err
		}
		res = &r
	}
	// refKey maps a TableRef's qualified name as written to its access.
	refKey := map[string]*access{}
	if res != nil {
		sqlAccs, err := n.sqlAccesses(ctx, ev, res, refKey)
		if err != nil {
			return err
		}
		for _, a := range sqlAccs {
			merged := add(a)
			for k, v := range refKey {
				if v == a {
					refKey[k] = merged
				}
			}
		}
	}
	var data []*access
	for _, a := range accs {
		if a.meta == "" {
			data = append(data, a)
		}
	}
	if res != nil {
		n.sqlColumns(res, refKey, data)
	}
	ev.Tables = ev.Tables[:0]
	for _, a := range accs {
		n.canonicalize(ev, a)
		ev.Tables = append(ev.Tables, a.t)
	}
	n.capSQL(ev)
	return nil
}

// sqlSchemas gives the extractor the Iceberg schemas of the tables a
// statement names, so that its unqualified columns are attributed, and
// the tables whose locations hold the paths it reads. The first failure
// to ask a catalog is kept in err.
type sqlSchemas struct {
	n   *Normalizer
	ctx context.Context
	ev  *collectors.QueryEvent
	err error
}

// Columns implements [extract.Schemas].
func (s *sqlSchemas) Columns(ref extract.TableRef) ([]extract.Column, bool) {
	if s.err != nil {
		return nil, false
	}
	r, _, err := s.n.lookup(s.ctx, s.ev, ref.Catalog, ref.Namespace, ref.Name)
	if err != nil {
		s.err = err
		return nil, false
	}
	if !r.ok || r.schema == nil {
		return nil, false
	}
	return schemaColumns(r.schema), true
}

// schemaColumns are the top-level columns of an Iceberg schema as the
// extractor takes them.
func schemaColumns(schema *iceberg.Schema) []extract.Column {
	fields := schema.Fields()
	cols := make([]extract.Column, len(fields))
	for i, f := range fields {
		cols[i] = extract.Column{Name: f.Name, Type: f.Type.String()}
	}
	return cols
}

// Locator is a [Resolver] that also finds the table whose location holds
// a path (s3://bucket/wh/db/t/data/…), for SQL that reads files directly.
type Locator interface {
	Locate(ctx context.Context, path string) (floeCatalog string, namespace []string, table string, ok bool, err error)
}

func (s *sqlSchemas) locate(path string) (extract.TableRef, bool) {
	if s.err != nil {
		return extract.TableRef{}, false
	}
	src := &SQLSchemas{Ctx: s.ctx, Resolver: s.n.res}
	ref, ok := src.Locate(path)
	if s.err = src.Err(); s.err != nil || !ok {
		return extract.TableRef{}, false
	}
	cat, ns, name := ref.Catalog, lake.NamespaceParts(ref.Namespace), ref.Name
	r := resolved{ok: true, catalog: cat, ns: ns, name: name}
	schema, _, _, found, err := s.n.res.Schema(s.ctx, cat, ns, name)
	if err != nil {
		s.err = err
		return extract.TableRef{}, false
	}
	if found {
		r.schema = schema
	}
	s.n.located[strings.ToLower(ref.QualifiedName())] = r
	return ref, true
}

// capSQL cuts an SQL text longer than MaxSQLBytes, at a UTF-8 character
// boundary, and marks the event truncated.
func (n *Normalizer) capSQL(ev *collectors.QueryEvent) {
	limit := n.MaxSQLBytes
	if limit == 0 {
		limit = DefaultMaxSQLBytes
	}
	if limit < 0 || len(ev.SQL) <= limit {
		return
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(ev.SQL[cut]) {
		cut--
	}
	n.warn("SQL text longer than %d bytes truncated (its predicates were read from the whole text)", limit)
	ev.SQL = strings.Clone(ev.SQL[:cut])
	ev.SQLTruncated = true
}

// sqlAccesses turns the tables and scans of a parsed statement into
// resolved accesses with evidence sql-parse, one per table (the scans of a
// table read twice are OR-ed). Tables that do not resolve — CTE names the
// extractor could not follow, views, temp tables — are counted unresolved.
func (n *Normalizer) sqlAccesses(ctx context.Context, ev *collectors.QueryEvent, res *extract.Result, refKey map[string]*access) ([]*access, error) {
	var out []*access
	byKey := map[string]*access{}
	perRef := make([]*access, len(res.Tables))
	for i, ref := range res.Tables {
		r, written, err := n.lookup(ctx, ev, ref.Catalog, ref.Namespace, ref.Name)
		if err != nil {
			return nil, err
		}
		if !r.ok {
			if ref.Metadata != "" {
				written += "$" + ref.Metadata
			}
			n.unresolved[written] = true
			continue
		}
		a := &access{r: r, meta: strings.ToLower(ref.Metadata), t: collectors.TableAccess{
			Catalog: ref.Catalog, Namespace: ref.Namespace, Name: ref.Name,
			Direct: true, Write: ref.Write, Evidence: collectors.EvidenceSQL,
		}}
		if prev, ok := byKey[a.key()]; ok {
			prev.t.Write = prev.t.Write || ref.Write
			a = prev
		} else {
			byKey[a.key()] = a
			out = append(out, a)
		}
		perRef[i] = a
		refKey[strings.ToLower(ref.QualifiedName())] = a
	}
	// Scan filters: a table's filter is the OR of its scans' filters; one
	// scan of the whole table makes it nil.
	type scans struct {
		whole   bool
		filters []*expr.Node
	}
	per := map[*access]*scans{}
	for _, sc := range res.Scans {
		if sc.Table < 0 || sc.Table >= len(perRef) || perRef[sc.Table] == nil {
			continue
		}
		a := perRef[sc.Table]
		s := per[a]
		if s == nil {
			s = &scans{}
			per[a] = s
		}
		if sc.Filter == nil {
			s.whole = true
		} else {
			s.filters = append(s.filters, sc.Filter)
		}
	}
	for a, s := range per {
		if s.whole || len(s.filters) == 0 || a.meta != "" {
			continue
		}
		if len(s.filters) == 1 {
			a.t.Filter = s.filters[0]
		} else {
			a.t.Filter = &expr.Node{Kind: expr.NodeOr, Children: s.filters}
		}
	}
	return out, nil
}

// mergeAccess folds b (the same table, learned another way) into a. A
// filter the source reported structurally (pushed filter, scan report)
// beats one parsed from SQL; column uses of both are kept with their
// evidence.
func mergeAccess(a, b *access) {
	a.t.Write = a.t.Write || b.t.Write
	a.t.Direct = a.t.Direct || b.t.Direct
	if a.t.Filter == nil && b.t.Filter != nil {
		a.t.Filter = b.t.Filter
		a.t.Evidence = b.t.Evidence
	}
	if a.t.SnapshotID == nil {
		a.t.SnapshotID = b.t.SnapshotID
	}
	a.t.FilterText = append(a.t.FilterText, b.t.FilterText...)
	for _, c := range b.t.Columns {
		for _, r := range c.Roles {
			addColumn(&a.t, c.Name, r, c.Evidence)
		}
	}
}

// addColumn records a column use, merging roles of uses with the same
// name (case-insensitively) and evidence.
func addColumn(t *collectors.TableAccess, name string, role collectors.Role, ev collectors.Evidence) {
	for i := range t.Columns {
		c := &t.Columns[i]
		if strings.EqualFold(c.Name, name) && c.Evidence == ev {
			for _, r := range c.Roles {
				if r == role {
					return
				}
			}
			c.Roles = append(c.Roles, role)
			return
		}
	}
	t.Columns = append(t.Columns, collectors.ColumnUse{Name: name, Roles: []collectors.Role{role}, Evidence: ev})
}

// sqlColumns adds the filter and join columns of a parsed statement as
// column uses (evidence sql-parse). A column whose table the extractor
// could not tell ("*") goes to the statement's one data table when there is
// exactly one, and is dropped otherwise.
func (n *Normalizer) sqlColumns(res *extract.Result, refKey map[string]*access, data []*access) {
	target := func(table, column string) *access {
		if table == "*" {
			if len(data) == 1 {
				return data[0]
			}
			n.warn("column %s of no single table dropped", column)
			return nil
		}
		a := refKey[strings.ToLower(table)]
		if a == nil || a.meta != "" {
			return nil // an unresolved table, already counted, or a metadata table
		}
		return a
	}
	for _, p := range res.Predicates {
		if a := target(p.Table, p.Column); a != nil {
			addColumn(&a.t, p.Column, collectors.RoleFilter, collectors.EvidenceSQL)
		}
	}
	for _, j := range res.Joins {
		for _, c := range []extract.ColumnRef{j.Left, j.Right} {
			if a := target(c.Table, c.Column); a != nil {
				addColumn(&a.t, c.Column, collectors.RoleJoin, collectors.EvidenceSQL)
			}
		}
	}
}

// canonicalize gives a resolved access the catalog's names, the schema's
// column spelling and literals typed by their columns. Columns the schema
// does not have are dropped (filter leaves become opaque, so pruning stays
// sound) and counted as warnings.
func (n *Normalizer) canonicalize(ev *collectors.QueryEvent, a *access) {
	t := &a.t
	t.Catalog, t.Namespace, t.Name = a.r.catalog, lake.JoinParts(a.r.ns...), a.r.name
	qualified := t.QualifiedName()
	if a.meta != "" {
		t.Evidence = collectors.MetadataEvidence(a.meta)
		t.Filter, t.Columns = nil, nil
		return
	}
	schema := a.r.schema
	canon := func(col string) (string, iceberg.Type, bool) {
		if schema == nil {
			return col, nil, true
		}
		f, ok := schema.FindFieldByNameCaseInsensitive(col)
		if !ok {
			return "", nil, false
		}
		name, ok := schema.FindColumnName(f.ID)
		if !ok {
			name = f.Name
		}
		return name, f.Type, true
	}
	cols := t.Columns[:0]
	for _, c := range t.Columns {
		name, _, ok := canon(c.Name)
		if !ok {
			n.warn("column %s.%s not in schema", qualified, c.Name)
			continue
		}
		c.Name = name
		merged := false
		for i := range cols {
			if cols[i].Name == name && cols[i].Evidence == c.Evidence {
				for _, r := range c.Roles {
					if !hasRole(cols[i].Roles, r) {
						cols[i].Roles = append(cols[i].Roles, r)
					}
				}
				merged = true
				break
			}
		}
		if !merged {
			cols = append(cols, c)
		}
	}
	t.Columns = cols
	if t.Filter == nil {
		return
	}
	typeOf := func(col string) string {
		if _, typ, ok := canon(col); ok && typ != nil {
			return typ.String()
		}
		return ""
	}
	f := t.Filter
	if ev.Engine == collectors.EngineSpark && t.Evidence == collectors.EvidencePushedFilter {
		// Iceberg prints Spark's pushed DATE literals as day numbers and
		// TIMESTAMP literals as epoch microseconds.
		f = spark.RetypeFilter(f, func(_, col string) string { return typeOf(col) })
	}
	t.Filter = n.rewrite(f, qualified, canon, typeOf)
}

func hasRole(rs []collectors.Role, r collectors.Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// rewrite returns a copy of f with leaves on the table's canonical name and
// column spelling and string literals typed as dates / timestamps on such
// columns; leaves on unknown columns become opaque terms.
func (n *Normalizer) rewrite(f *expr.Node, qualified string, canon func(string) (string, iceberg.Type, bool), typeOf func(string) string) *expr.Node {
	if f == nil {
		return nil
	}
	c := *f
	if f.Pred != nil {
		p := *f.Pred
		name, _, ok := canon(p.Column)
		if !ok {
			n.warn("column %s.%s not in schema", qualified, p.Column)
			return &expr.Node{Kind: expr.NodeOpaque, Text: p.String()}
		}
		p.Table, p.Column = qualified, name
		if p.Transform == "" {
			if typ := typeOf(name); typ != "" {
				p.Values = retypeValues(typ, p.Values)
			}
		}
		c.Pred = &p
	}
	if len(f.Children) > 0 {
		c.Children = make([]*expr.Node, len(f.Children))
		for i, ch := range f.Children {
			c.Children[i] = n.rewrite(ch, qualified, canon, typeOf)
		}
	}
	return &c
}

// retypeValues types string literals compared with a date or timestamp
// column ('2024-04-01' on a date column is a date); other values are kept.
func retypeValues(icebergType string, vals []expr.Value) []expr.Value {
	var out []expr.Value
	for i, v := range vals {
		nv := retypeValue(icebergType, v)
		if nv != v && out == nil {
			out = append([]expr.Value(nil), vals...)
		}
		if out != nil {
			out[i] = nv
		}
	}
	if out == nil {
		return vals
	}
	return out
}

func retypeValue(icebergType string, v expr.Value) expr.Value {
	if v.Kind != expr.KindString {
		return v
	}
	text := strings.TrimSpace(v.Text)
	switch {
	case icebergType == "date":
		if t, ok := expr.ParseDate(text); ok {
			return expr.Value{Kind: expr.KindDate, Text: t.Format(expr.DateLayout)}
		}
	case strings.HasPrefix(icebergType, "timestamp"):
		if t, ok := expr.ParseDate(text); ok {
			return expr.Value{Kind: expr.KindTimestamp, Text: t.Format(expr.DateLayout) + " 00:00:00"}
		}
		if _, ok := expr.ParseTime(text); ok {
			return expr.Value{Kind: expr.KindTimestamp, Text: text}
		}
	}
	return v
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
