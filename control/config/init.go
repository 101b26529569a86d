package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// InitOptions describe the lake floe init writes a floe.yaml for. Every
// field but Catalog is optional unless the catalog type needs it
// ([InitOptions.Missing]). No field holds a secret: the file floe init
// writes names the FLOE_ variable of each secret instead.
type InitOptions struct {
	// Name is the floe catalog's name. Default: lake.
	Name string
	// Catalog is the catalog type: rest, glue, hive or sql.
	Catalog string
	// URI is the catalog's address: a REST catalog's base URI, a Hive
	// metastore's thrift://host:9083, a SQL catalog's database (a SQLite
	// file, or postgres://user@host:5432/db). Required but for glue.
	URI string
	// Warehouse is the REST catalog's warehouse (its name, or a location)
	// or the location new tables go under (s3://bucket/prefix, a local
	// directory with Storage local).
	Warehouse string
	// Auth is how floe signs in to a REST catalog: oauth2 (client
	// credentials, from FLOE_CATALOG__<NAME>__CREDENTIAL), token (a bearer
	// token, from FLOE_CATALOG__<NAME>__TOKEN) or none. Default: none.
	Auth string
	// Scope is the OAuth2 scope (Auth oauth2). Default: the catalog's.
	Scope string
	// OAuth2ServerURI is the token endpoint when it is not the catalog's
	// (Auth oauth2).
	OAuth2ServerURI string
	// Region is the AWS region: glue.region for a Glue catalog (its
	// tables' S3 files follow it), else s3.region. Required for glue.
	Region string
	// Storage is where the tables' files are: s3, gcs, azure or local.
	// Default: whatever the catalog hands out (a REST catalog's vended
	// credentials) and the defaults of each store.
	Storage string
	// Endpoint is the object store's endpoint, for an S3-compatible store
	// (MinIO, versitygw, Ceph, R2) or an emulator.
	Endpoint string
	// PathStyle sends S3 requests path-style (the bucket in the path):
	// what most S3-compatible stores want.
	PathStyle bool
	// Account is the Azure storage account (Storage azure). Required for
	// azure.
	Account string
	// Trino and Spark add a distributed engine a policy can send heavy
	// rewrites to: a Trino DSN (http://user@host:8080?catalog=iceberg)
	// and a Spark Connect address (sc://host:15002).
	Trino, Spark string
	// Sources are telemetry sources, each KIND:VALUE: files:PATH[,PATH…],
	// trino:DSN, athena:REGION or snowflake:USER@ACCOUNT.
	Sources []string
	// DataDir is where floe keeps its state (and the local warehouse).
	// Default: ./floe-data, relative to where floe runs.
	DataDir string
}

// InitCatalogTypes are the catalog types floe init writes a floe.yaml
// for; InitStorages the stores; InitAuths a REST catalog's sign-ins.
var (
	InitCatalogTypes = []string{"rest", "glue", "hive", "sql"}
	InitStorages     = []string{"s3", "gcs", "azure", "local"}
	InitAuths        = []string{"oauth2", "token", "none"}
)

// Missing lists the options the catalog type needs that are not set, by
// name (catalog, uri, region, account): floe init asks for them on a
// terminal, and refuses without them elsewhere.
func (o InitOptions) Missing() []string {
	var out []string
	if o.Catalog == "" {
		return []string{"catalog"}
	}
	if o.URI == "" && slices.Contains([]string{"rest", "hive", "sql"}, o.Catalog) {
		out = append(out, "uri")
	}
	if o.Region == "" && o.Catalog == "glue" {
		out = append(out, "region")
	}
	if o.Account == "" && o.Storage == "azure" {
		out = append(out, "account")
	}
	return out
}

var catalogName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Validate reports every problem of the options at once, each naming its
// option; an option the catalog type needs and lacks is one ([Missing]).
// A URI with a password in it is refused: floe init writes no secret.
func (o InitOptions) Validate() error {
	var errs []error
	bad := func(opt, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", opt, fmt.Sprintf(format, args...)))
	}
	for _, m := range o.Missing() {
		switch m {
		case "catalog":
			bad(m, "required: %s", orList(InitCatalogTypes))
		case "account":
			bad(m, "required for --storage azure: the storage account")
		default:
			bad(m, "required for a %s catalog", o.Catalog)
		}
	}
	if o.Name != "" && !catalogName.MatchString(o.Name) {
		bad("name", "%q: lower case letters, digits, - and _", o.Name)
	}
	if o.Catalog != "" && !slices.Contains(InitCatalogTypes, o.Catalog) {
		bad("catalog", "%q: want %s (a hadoop catalog: see docs/storage.md)", o.Catalog, orList(InitCatalogTypes))
	}
	if o.Storage != "" && !slices.Contains(InitStorages, o.Storage) {
		bad("storage", "%q: want %s", o.Storage, orList(InitStorages))
	}
	if o.Auth != "" && !slices.Contains(InitAuths, o.Auth) {
		bad("auth", "%q: want %s", o.Auth, orList(InitAuths))
	}
	if o.Catalog != "rest" {
		for _, opt := range []struct{ name, v string }{{"auth", o.Auth}, {"scope", o.Scope}, {"oauth2-server-uri", o.OAuth2ServerURI}} {
			if opt.v != "" && opt.v != "none" {
				bad(opt.name, "is for a rest catalog")
			}
		}
	} else if o.Auth != "oauth2" && (o.Scope != "" || o.OAuth2ServerURI != "") {
		bad("scope", "is for --auth oauth2")
	}
	if o.Catalog == "glue" && o.URI != "" {
		bad("uri", "a glue catalog has none: it is the region's (--region), or glue.endpoint in the file")
	}
	if o.Endpoint != "" && o.Storage != "s3" && o.Storage != "gcs" && o.Storage != "azure" {
		bad("endpoint", "is for --storage s3, gcs or azure")
	}
	if o.Region != "" && o.Catalog != "glue" && o.Storage != "s3" {
		bad("region", "is for a glue catalog or --storage s3")
	}
	if o.PathStyle && o.Storage != "s3" {
		bad("path-style", "is for --storage s3")
	}
	if o.Account != "" && o.Storage != "azure" {
		bad("account", "is for --storage azure")
	}
	uriEnv := "FLOE_CATALOG__" + envForm(o.name()) + "__URI (the whole URI)"
	if o.Catalog == "sql" {
		uriEnv = "PGPASSWORD, or " + uriEnv
	}
	for _, opt := range []struct{ name, v, env string }{
		{"uri", o.URI, uriEnv}, {"trino", o.Trino, "FLOE_ENGINE__TRINO__PASSWORD"}, {"spark", o.Spark, "FLOE_ENGINE__SPARK__TOKEN"},
	} {
		if hasPassword(opt.v) {
			bad(opt.name, "holds a password or token: floe init writes no secret into floe.yaml; leave it out and set %s", opt.env)
		}
	}
	if o.Trino != "" {
		if u, err := url.Parse(o.Trino); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("trino", "want http://user@host:8080?catalog=iceberg")
		}
	}
	if o.Spark != "" && !strings.HasPrefix(o.Spark, "sc://") {
		bad("spark", "want a Spark Connect address, sc://host:15002")
	}
	for _, s := range o.Sources {
		if _, err := parseInitSource(s); err != nil {
			bad("source", "%v", err)
		}
	}
	return errors.Join(errs...)
}

func (o InitOptions) name() string {
	if o.Name == "" {
		return "lake"
	}
	return o.Name
}

// hasPassword reports whether a URI or DSN carries a secret: a password
// in its user information, a secret query parameter, or a Spark Connect
// ;token=.
func hasPassword(s string) bool {
	return len(URISecrets(s)) > 0 || strings.Contains(strings.ToLower(s), ";token=")
}

// initSource is one --source of floe init.
type initSource struct {
	kind  string
	value string
}

func parseInitSource(s string) (initSource, error) {
	kind, value, ok := strings.Cut(s, ":")
	want := "want KIND:VALUE: files:PATH[,PATH], trino:DSN, athena:REGION or snowflake:USER@ACCOUNT"
	if !ok || value == "" {
		return initSource{}, fmt.Errorf("%q: %s", s, want)
	}
	switch kind {
	case SourceFiles, SourceAthena:
	case SourceTrino:
		if hasPassword(value) {
			return initSource{}, fmt.Errorf("%q holds a password: leave it out and set FLOE_SOURCE__TRINO__PASSWORD", kind+":…")
		}
	case SourceSnowflake:
		if user, account, ok := strings.Cut(value, "@"); !ok || user == "" || account == "" {
			return initSource{}, fmt.Errorf("%q: want snowflake:USER@ACCOUNT, such as snowflake:FLOE@MYORG-MYACCOUNT", s)
		}
	default:
		return initSource{}, fmt.Errorf("kind %q: %s", kind, want)
	}
	return initSource{kind: kind, value: value}, nil
}

// InitYAML writes the commented floe.yaml of o (call [InitOptions.Validate]
// first): the catalog with the keys its type and storage take, the
// engines and telemetry sources asked for, and for every secret a comment
// naming the FLOE_ variable it is read from. Every key it writes is one
// [Load] takes.
func InitYAML(o InitOptions) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	name := o.name()
	env := "FLOE_CATALOG__" + envForm(name) + "__"
	var b strings.Builder
	line := func(indent int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", indent) + fmt.Sprintf(format, args...) + "\n")
	}
	kv := func(indent int, k, v, comment string) {
		s := yamlString(k) + ": " + yamlString(v)
		if comment != "" {
			s += "  # " + comment
		}
		line(indent, "%s", s)
	}
	line(0, "# floe.yaml for the %s catalog %s, written by floe init.", o.Catalog, name)
	line(0, "# It extends floe's embedded default: what it leaves out keeps the default")
	line(0, "# (floe config view --sources shows every value and where it came from;")
	line(0, "# docs/config.md). Secrets are not in this file: floe reads each from the")
	line(0, "# environment variable named beside it.")
	if o.DataDir != "" {
		kv(0, "data_dir", o.DataDir, "floe's state (and a local warehouse) goes here")
	}
	kv(0, "default_catalog", name, "table names without a catalog part are in it")
	line(0, "catalogs:")
	line(1, "%s:", yamlString(name))
	kv(2, "type", o.Catalog, "")
	switch o.Catalog {
	case "rest":
		kv(2, "uri", o.URI, "")
		if o.Warehouse != "" {
			kv(2, "warehouse", o.Warehouse, "the catalog's warehouse (its name, or a location)")
		}
		switch o.Auth {
		case "oauth2":
			line(2, "# OAuth2 client credentials, read from the environment:")
			line(2, "#   export %sCREDENTIAL='<client_id>:<client_secret>'", env)
			if o.Scope != "" {
				kv(2, "scope", o.Scope, "")
			}
			if o.OAuth2ServerURI != "" {
				kv(2, "oauth2-server-uri", o.OAuth2ServerURI, "the token endpoint")
			}
		case "token":
			line(2, "# a bearer token, read from the environment:")
			line(2, "#   export %sTOKEN='<token>'", env)
		}
	case "glue":
		kv(2, "glue.region", o.Region, "its tables' S3 files follow it unless s3.region says otherwise")
		if o.Warehouse != "" {
			kv(2, "warehouse", localWarehouse(o.Warehouse, o.Storage), "")
		}
		line(2, "# credentials: the AWS default chain (AWS_PROFILE, web identity, the")
		line(2, "# instance's role), or static keys from the environment:")
		line(2, "#   export %sGLUE_ACCESS_KEY_ID=… %sGLUE_SECRET_ACCESS_KEY=…", env, env)
	case "hive":
		kv(2, "uri", o.URI, "the metastore")
		if o.Warehouse != "" {
			kv(2, "warehouse", localWarehouse(o.Warehouse, o.Storage), "")
		}
	case "sql":
		driver, dialect := "sqlite", "sqlite"
		if strings.HasPrefix(o.URI, "postgres://") || strings.HasPrefix(o.URI, "postgresql://") {
			driver, dialect = "pgx", "postgres"
		}
		kv(2, "sql.driver", driver, "")
		kv(2, "sql.dialect", dialect, "")
		kv(2, "uri", o.URI, "")
		if dialect == "postgres" {
			line(2, "# the database password: PGPASSWORD in the environment, or the whole URI")
			line(2, "# in %sURI", env)
		}
		wh := o.Warehouse
		if wh == "" && o.Storage == "local" {
			wh = "file://{data_dir}/warehouse"
		}
		if wh != "" {
			kv(2, "warehouse", localWarehouse(wh, o.Storage), "")
		}
	}
	o.storageYAML(kv, line, env)
	if o.Trino != "" || o.Spark != "" {
		line(0, "engines:  # clusters a policy's engine key can send heavy rewrites to (docs/engines.md)")
		if o.Trino != "" {
			line(1, "trino:")
			kv(2, "type", "trino", "")
			kv(2, "dsn", o.Trino, "")
			line(2, "# catalogs: {%s: iceberg}  # Trino's name for %s, when it is not %s", name, name, name)
			line(2, "# a password: export FLOE_ENGINE__TRINO__PASSWORD=…")
		}
		if o.Spark != "" {
			line(1, "spark:")
			kv(2, "type", "spark", "")
			kv(2, "remote", o.Spark, "")
			line(2, "# a token: export FLOE_ENGINE__SPARK__TOKEN=…")
		}
	}
	if len(o.Sources) > 0 {
		line(0, "telemetry:")
		line(1, "sources:  # where floe collects query telemetry (docs/telemetry.md)")
		seen := map[string]int{}
		for _, raw := range o.Sources {
			s, _ := parseInitSource(raw)
			seen[s.kind]++
			sname := s.kind
			if n := seen[s.kind]; n > 1 {
				sname += "-" + strconv.Itoa(n)
			}
			senv := "FLOE_SOURCE__" + envForm(sname) + "__"
			line(2, "- name: %s", yamlString(sname))
			kv(3, "kind", s.kind, "")
			switch s.kind {
			case SourceFiles:
				line(3, "paths:")
				for _, p := range strings.Split(s.value, ",") {
					line(4, "- %s", yamlString(strings.TrimSpace(p)))
				}
			case SourceTrino:
				kv(3, "dsn", s.value, "")
				line(3, "# a password: export %sPASSWORD=…", senv)
			case SourceAthena:
				kv(3, "region", s.value, "")
				line(3, "# credentials: the AWS default chain, or %sAWS_ACCESS_KEY_ID=… and", senv)
				line(3, "# %sAWS_SECRET_ACCESS_KEY=… in the environment", senv)
			case SourceSnowflake:
				user, account, _ := strings.Cut(s.value, "@")
				kv(3, "account", account, "")
				kv(3, "user", user, "")
				line(3, "# the user's private key (PEM), read from the environment:")
				line(3, "#   export %sPRIVATE_KEY_FILE=/path/to/key.p8", senv)
			}
		}
	}
	return []byte(b.String()), nil
}

// storageYAML writes the keys of o.Storage.
func (o InitOptions) storageYAML(kv func(int, string, string, string), line func(int, string, ...any), env string) {
	switch o.Storage {
	case "s3":
		if o.Catalog == "glue" {
			line(2, "# storage: S3, in glue.region and with the Glue keys unless s3.region or")
			line(2, "# the S3 keys below are set")
		} else {
			line(2, "# storage: S3")
		}
		if o.Region != "" && o.Catalog != "glue" {
			kv(2, "s3.region", o.Region, "")
		}
		if o.Endpoint != "" {
			kv(2, "s3.endpoint", o.Endpoint, "an S3-compatible store")
		}
		if o.PathStyle {
			kv(2, "s3.force-virtual-addressing", "false", "path-style requests")
		}
		if o.Catalog != "glue" {
			line(2, "# credentials: what the catalog vends with each table, else the AWS default")
			line(2, "# chain, or static keys from the environment:")
		}
		line(2, "#   export %sS3_ACCESS_KEY_ID=… %sS3_SECRET_ACCESS_KEY=…", env, env)
	case "gcs":
		line(2, "# storage: GCS, with Application Default Credentials")
		line(2, "# (GOOGLE_APPLICATION_CREDENTIALS) unless the catalog vends them")
		if o.Endpoint != "" {
			kv(2, "gcs.endpoint", o.Endpoint, "")
		}
	case "azure":
		line(2, "# storage: Azure (ADLS Gen2)")
		kv(2, "adls.auth.shared-key.account.name", o.Account, "")
		if o.Endpoint != "" {
			kv(2, "adls.endpoint", o.Endpoint, "")
		}
		line(2, "# the account key, read from the environment:")
		line(2, "#   export %sADLS_AUTH_SHARED_KEY_ACCOUNT_KEY=…", env)
	}
}

// localWarehouse is a warehouse location: a local directory (storage
// local) as a file:// URI, anything else as it is.
func localWarehouse(wh, storage string) string {
	if storage != "local" || strings.Contains(wh, "://") {
		return wh
	}
	if abs, err := filepath.Abs(wh); err == nil {
		wh = abs
	}
	return "file://" + wh
}
