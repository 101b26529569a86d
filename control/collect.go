package control

import (
	"context"
	"fmt"

	"github.com/floe-project/floe/collectors/ingest"
	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/store"
)

// The configuration and the state store are what ingestion asks of the
// control plane.
var (
	_ ingest.Catalogs = (*config.Config)(nil)
	_ ingest.Store    = (*store.Store)(nil)
)

// CollectOptions configure [Collect]; see [ingest.Options] for each field.
type CollectOptions struct {
	Paths       []string
	Source      string
	Strict      bool
	Force       bool
	MaxSQLBytes int
}

// Collect reads query-log files into st with every parser of [Parsers],
// resolving tables against the catalogs of cfg opened with open.
func Collect(ctx context.Context, st *store.Store, cfg *config.Config, open ingest.OpenCatalogFunc, opts CollectOptions) (ingest.Report, error) {
	rep, err := ingest.Run(ctx, ingest.Options{
		Paths: opts.Paths, Source: opts.Source, Strict: opts.Strict, Force: opts.Force, MaxSQLBytes: opts.MaxSQLBytes,
		Parsers: Parsers(), Catalogs: cfg,
		Resolver: ingest.NewCatalogResolver(cfg, open),
	}, st)
	if err != nil {
		return rep, fmt.Errorf("collect: %w", err)
	}
	return rep, nil
}
