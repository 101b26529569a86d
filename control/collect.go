package control

import (
	"context"
	"fmt"
	"strings"

	"github.com/floe-project/floe/collectors"
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
	// ingest.Run's errors begin with "collect:" already.
	return rep, err
}

// LogEvents returns the keys of the events the query-log files under paths
// hold, read exactly as [Collect] reads them — every file, whether or not
// it was collected before — and stored nowhere. With [store.Forget] it
// deletes what a set of logs brought into the store, including the events
// that read no table the catalogs know; `floe demo --reset` forgets its
// previous logs' events this way before collecting the new ones. Files
// that fail to read are reported in the returned report, as Collect's are.
func LogEvents(ctx context.Context, cfg *config.Config, open ingest.OpenCatalogFunc, paths []string) ([]store.EventKey, ingest.Report, error) {
	ks := &keyStore{}
	rep, err := ingest.Run(ctx, ingest.Options{
		Paths: paths, Force: true, Parsers: Parsers(), Catalogs: cfg,
		Resolver: ingest.NewCatalogResolver(cfg, open),
	}, ks)
	if err != nil {
		return nil, rep, fmt.Errorf("read the events of %s: %w", strings.Join(paths, ", "), err)
	}
	return ks.keys, rep, nil
}

// keyStore is an [ingest.Store] that keeps the keys of the events it is
// given and remembers no file.
type keyStore struct {
	keys []store.EventKey
}

func (k *keyStore) InsertEvents(_ context.Context, events []collectors.QueryEvent) (int, int, error) {
	for _, ev := range events {
		k.keys = append(k.keys, store.EventKey{Source: ev.Source, QueryID: ev.QueryID})
	}
	return len(events), 0, nil
}

func (k *keyStore) File(context.Context, string) (collectors.FileRecord, bool, error) {
	return collectors.FileRecord{}, false, nil
}

func (k *keyStore) RecordFile(context.Context, collectors.FileRecord) error { return nil }
