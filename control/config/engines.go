package config

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
)

// EngineConfig is one distributed engine under engines: in floe.yaml, the
// cluster a policy's engine key can send a table's maintenance to.
//
//	engines:
//	  trino:
//	    type: trino
//	    dsn: "http://floe@trino.example.com:8080?catalog=iceberg"
//	    catalogs: {local: iceberg}
//	    timeout: 6h
//	  spark:
//	    type: spark
//	    remote: "sc://spark-connect.example.com:15002"
//	    catalogs: {local: spark_catalog}
type EngineConfig struct {
	// Type is trino or spark.
	Type string `yaml:"type"`
	// DSN is a trino-go-client DSN (type trino). Its password, if any, is
	// better given as FLOE_ENGINE__<NAME>__PASSWORD. Never printed.
	DSN Secret `yaml:"dsn"`
	// Remote is a Spark Connect connection string, sc://host:port (type
	// spark). A token is better given as FLOE_ENGINE__<NAME>__TOKEN.
	// Never printed.
	Remote Secret `yaml:"remote"`
	// Catalogs maps a floe catalog to the engine's name for the same
	// catalog. A floe catalog missing here keeps its own name.
	Catalogs map[string]string `yaml:"catalogs"`
	// Timeout bounds each statement the engine runs, as a Go duration
	// ("6h"). Default: none; the run's context still bounds it.
	Timeout string `yaml:"timeout"`
	// Password (trino) and Token (spark) come from
	// FLOE_ENGINE__<NAME>__PASSWORD and FLOE_ENGINE__<NAME>__TOKEN.
	Password Secret `yaml:"password"`
	Token    Secret `yaml:"token"`
}

// Engine types.
const (
	EngineTrino = "trino"
	EngineSpark = "spark"
)

// EngineTypes are the values of engines.<name>.type.
var EngineTypes = []string{EngineTrino, EngineSpark}

// MaxEngineTimeout is the longest engines.<name>.timeout: 7 days.
const MaxEngineTimeout = 7 * 24 * time.Hour

// ReservedEngineNames are engine names a policy gives a meaning of their
// own, so engines: may not use them.
var ReservedEngineNames = []string{"native", "auto"}

// TimeoutDuration is the parsed timeout, zero when unset (validated when
// the configuration loads).
func (e EngineConfig) TimeoutDuration() time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(e.Timeout))
	if err != nil {
		return 0
	}
	return d
}

// EngineCatalog is the engine's name for floe catalog cat.
func (e EngineConfig) EngineCatalog(cat string) string {
	if n, ok := e.Catalogs[cat]; ok && n != "" {
		return n
	}
	return cat
}

// EngineNames lists the configured engines, sorted.
func (c *Config) EngineNames() []string {
	names := make([]string, 0, len(c.Engines))
	for n := range c.Engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *Config) validateEngines(bad func(segs []string, format string, args ...any)) {
	key := func(segs ...string) []string { return segs }
	for _, name := range c.EngineNames() {
		e := c.Engines[name]
		for _, r := range ReservedEngineNames {
			if strings.EqualFold(name, r) {
				bad(key("engines", name), "%q means something of its own in a policy's engine key; name the engine after its cluster", name)
			}
		}
		if name == "" || strings.ContainsAny(name, ". ") || name != strings.ToLower(name) {
			bad(key("engines", name), "engine names are lower case, without dots or spaces")
		}
		switch e.Type {
		case EngineTrino:
			if e.DSN == "" {
				bad(key("engines", name, "dsn"), "required for type trino: a trino-go-client DSN such as http://floe@trino.example.com:8080?catalog=iceberg")
			} else if u, err := url.Parse(e.DSN.Reveal()); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				// The value is not echoed: it may hold a password.
				bad(key("engines", name, "dsn"), "want http://user@host:port?catalog=… or https://…")
			}
			if e.Remote != "" {
				bad(key("engines", name, "remote"), "is for type spark; a trino engine takes dsn")
			}
		case EngineSpark:
			if e.Remote == "" {
				bad(key("engines", name, "remote"), "required for type spark: a Spark Connect address such as sc://spark-connect.example.com:15002")
			} else if !strings.HasPrefix(e.Remote.Reveal(), "sc://") {
				bad(key("engines", name, "remote"), "want sc://host:port")
			}
			if e.DSN != "" {
				bad(key("engines", name, "dsn"), "is for type trino; a spark engine takes remote")
			}
		default:
			bad(key("engines", name, "type"), "%q: want %s", e.Type, orList(EngineTypes))
		}
		if e.Timeout != "" {
			if d, err := time.ParseDuration(strings.TrimSpace(e.Timeout)); err != nil || d <= 0 || d > MaxEngineTimeout {
				bad(key("engines", name, "timeout"), "%q: want a positive duration of at most %s, such as 6h", e.Timeout, policy.FormatDuration(MaxEngineTimeout))
			}
		}
		cats := make([]string, 0, len(e.Catalogs))
		for cat := range e.Catalogs {
			cats = append(cats, cat)
		}
		sort.Strings(cats)
		for _, cat := range cats {
			if _, ok := c.Catalogs[cat]; !ok {
				bad(key("engines", name, "catalogs", cat), "%q is not one of the catalogs (%s)", cat, strings.Join(c.CatalogNames(), ", "))
			}
			if e.Catalogs[cat] == "" {
				bad(key("engines", name, "catalogs", cat), "empty: name the engine's catalog")
			}
		}
	}
}

// applyEngineEnv sets engines.<name>.password or .token from
// FLOE_ENGINE__<NAME>__PASSWORD / __TOKEN; it returns a problem or "".
func (c *Config) applyEngineEnv(k, rest, v string) string {
	parts := strings.Split(strings.TrimPrefix(rest, "ENGINE__"), "__")
	if len(parts) != 2 || parts[0] == "" {
		return k + ": want FLOE_ENGINE__<NAME>__PASSWORD or FLOE_ENGINE__<NAME>__TOKEN"
	}
	name := strings.ToLower(parts[0])
	e, ok := c.Engines[name]
	if !ok {
		return fmt.Sprintf("%s: no engine %q in %s (engines: %s); define engines.%s there first", k, name, c.Source, strings.Join(c.EngineNames(), ", "), name)
	}
	if v == "" {
		return ""
	}
	switch parts[1] {
	case "PASSWORD":
		e.Password = Secret(v)
		c.setBy("engines."+name+".password", k)
	case "TOKEN":
		e.Token = Secret(v)
		c.setBy("engines."+name+".token", k)
	default:
		return k + ": want FLOE_ENGINE__<NAME>__PASSWORD or FLOE_ENGINE__<NAME>__TOKEN"
	}
	c.Engines[name] = e
	return ""
}
