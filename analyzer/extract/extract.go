package extract

import (
	"fmt"
	"strings"

	pexpr "github.com/floe-project/floe/expr"
	"github.com/floe-project/floe/internal/jsonenc"
)

// ParseDialect maps a dialect name (case-insensitive; "presto" is Trino,
// "sparksql"/"spark-sql"/"databricks" are Spark) to a [Dialect].
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "trino", "presto":
		return Trino, nil
	case "athena":
		return Athena, nil
	case "spark", "sparksql", "spark-sql", "spark_sql", "databricks", "hive":
		return Spark, nil
	case "snowflake":
		return Snowflake, nil
	case "duckdb":
		return DuckDB, nil
	}
	return "", fmt.Errorf("parse dialect %q (want trino, athena, spark, snowflake or duckdb): %w", s, ErrUnknownDialect)
}

// maxWarnings caps the warnings of one statement.
const maxWarnings = 20

// warnList collects distinct warnings in order.
type warnList struct {
	list []string
}

func (w *warnList) add(s string) {
	for _, x := range w.list {
		if x == s {
			return
		}
	}
	if len(w.list) == maxWarnings {
		w.list = append(w.list, "further warnings omitted")
		return
	}
	if len(w.list) > maxWarnings {
		return
	}
	w.list = append(w.list, s)
}

// Parse extracts the tables, scans and predicates of sql written in
// dialect d. It never fails and never panics: syntax it does not know is
// reported in Result.Warnings and everything else is still extracted.
// Several ';'-separated statements are merged into one Result.
func Parse(d Dialect, sql string) Result { return ParseWith(d, sql, Options{}) }

// ParseWith is [Parse] with the schemas of the tables and the locations of
// paths the caller knows.
func ParseWith(d Dialect, sql string, opts Options) Result {
	warns := &warnList{}
	p := &parser{d: d, src: sql, warns: warns, locate: opts.Locate}
	p.toks = tokenize(d, sql, warns)
	stmts := p.parseStatements()
	r := &resolver{d: d, src: sql, warns: warns, schemas: opts.Schemas}
	var res Result
	for _, st := range stmts {
		if res.Statement == "" || res.Statement == "other" && st.kind != "other" {
			res.Statement = st.kind
		}
		r.statement(st)
	}
	r.finish(&res)
	if len(stmts) == 0 && strings.TrimSpace(sql) != "" && len(warns.list) == 0 {
		warns.add("no statement found")
	}
	res.Warnings = warns.list
	if res.Tables == nil {
		res.Tables = []TableRef{}
	}
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	return res
}

// ContractTable is a table in the CLI's JSON output.
type ContractTable struct {
	Catalog   string `json:"catalog"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Alias     string `json:"alias"`
	Metadata  string `json:"metadata,omitempty"`
	AsOf      string `json:"as_of,omitempty"`
	Write     bool   `json:"write,omitempty"`
}

// ContractPred is a predicate leaf in the CLI's JSON output: values as
// strings with their kinds in a parallel array.
type ContractPred struct {
	Table     string       `json:"table"`
	Column    string       `json:"column"`
	Op        string       `json:"op"`
	Values    []string     `json:"values"`
	Kinds     []pexpr.Kind `json:"kinds"`
	Transform string       `json:"transform"`
	// Path is the top-level column and field names of a nested field.
	Path []string `json:"path,omitempty"`
}

// ContractScan is one scan in the CLI's JSON output: the table's
// qualified name and its pushable filter rendered by [pexpr.Node.String] ("" when
// the scan reads the whole table).
type ContractScan struct {
	Table  string `json:"table"`
	Filter string `json:"filter"`
}

// Contract is the stable JSON shape `floe extract --output json` prints.
type Contract struct {
	Statement  string          `json:"statement,omitempty"`
	Tables     []ContractTable `json:"tables"`
	Predicates []ContractPred  `json:"predicates"`
	Scans      []ContractScan  `json:"scans"`
	Joins      []Join          `json:"joins"`
	Warnings   []string        `json:"warnings"`
}

// Contract converts r to the CLI's JSON shape; arrays are never nil.
func (r Result) Contract() Contract {
	c := Contract{
		Statement:  r.Statement,
		Tables:     make([]ContractTable, 0, len(r.Tables)),
		Predicates: make([]ContractPred, 0, len(r.Predicates)),
		Scans:      make([]ContractScan, 0, len(r.Scans)),
		Joins:      append([]Join{}, r.Joins...),
		Warnings:   append([]string{}, r.Warnings...),
	}
	for _, t := range r.Tables {
		c.Tables = append(c.Tables, ContractTable{Catalog: t.Catalog, Namespace: t.Namespace, Name: t.Name,
			Alias: t.Alias, Metadata: t.Metadata, AsOf: t.AsOf, Write: t.Write})
	}
	for _, p := range r.Predicates {
		cp := ContractPred{Table: p.Table, Column: p.Column, Op: string(p.Op), Transform: p.Transform, Path: p.Path,
			Values: make([]string, len(p.Values)), Kinds: make([]pexpr.Kind, len(p.Values))}
		for i, v := range p.Values {
			cp.Values[i] = v.Text
			cp.Kinds[i] = v.Kind
		}
		c.Predicates = append(c.Predicates, cp)
	}
	for _, s := range r.Scans {
		cs := ContractScan{}
		if s.Table >= 0 && s.Table < len(r.Tables) {
			cs.Table = r.Tables[s.Table].QualifiedName()
			if a := r.Tables[s.Table].Alias; a != "" {
				cs.Table += " " + a
			}
		}
		if s.Filter != nil {
			cs.Filter = s.Filter.String()
		}
		c.Scans = append(c.Scans, cs)
	}
	return c
}

// MarshalContract renders r as the CLI's JSON contract, with its
// operators as written (>=, not \u003e=).
func (r Result) MarshalContract() ([]byte, error) {
	b, err := jsonenc.Marshal(r.Contract())
	if err != nil {
		return nil, fmt.Errorf("marshal extract result: %w", err)
	}
	return b, nil
}
