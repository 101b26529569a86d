package testlake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// Reads are what reading one table cost through a [CountingCatalog].
type Reads struct {
	// Metadata counts the table's loads: each reads its metadata file (one
	// request to a REST catalog).
	Metadata int64
	// Manifests counts the Avro files (manifest lists and manifests) its
	// IO opened.
	Manifests int64
}

// CountingCatalog is a catalog that counts, per table, the metadata files
// and manifests reading its tables costs: what a pass over a lake reads.
// It lists locations as the catalog it wraps does ([lake.LocationLister]),
// and its tables commit through it. Safe for concurrent use.
type CountingCatalog struct {
	catalog.Catalog

	mu    sync.Mutex
	reads map[string]*Reads
}

// Count wraps cat in a [CountingCatalog].
func Count(cat catalog.Catalog) *CountingCatalog {
	return &CountingCatalog{Catalog: cat, reads: map[string]*Reads{}}
}

// Reads are the reads so far by table (its identifier's parts joined with
// dots, without the catalog), a copy.
func (c *CountingCatalog) Reads() map[string]Reads {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Reads, len(c.reads))
	for k, r := range c.reads {
		out[k] = *r
	}
	return out
}

// MetadataReads is the metadata files read so far, of every table.
func (c *CountingCatalog) MetadataReads() int64 {
	var n int64
	for _, r := range c.Reads() {
		n += r.Metadata
	}
	return n
}

// ManifestReads is the Avro files read so far, of every table.
func (c *CountingCatalog) ManifestReads() int64 {
	var n int64
	for _, r := range c.Reads() {
		n += r.Manifests
	}
	return n
}

// Reset forgets the reads so far.
func (c *CountingCatalog) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.reads)
}

func (c *CountingCatalog) add(id table.Identifier, metadata, manifests int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := strings.Join(id, ".")
	r := c.reads[k]
	if r == nil {
		r = &Reads{}
		c.reads[k] = r
	}
	r.Metadata += metadata
	r.Manifests += manifests
}

// LoadTable loads the table through the wrapped catalog, counting one
// metadata read, and returns it on an IO that counts its Avro files.
func (c *CountingCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, id)
	if err != nil {
		return nil, err
	}
	c.add(id, 1, 0)
	fs := func(ctx context.Context) (iceio.IO, error) {
		fio, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		switch fio.(type) {
		case iceio.LocalFS, *iceio.LocalFS:
			// A local table's IO can also write, list, rename and remove:
			// runs through the catalog (a compaction's lease, its files)
			// need that.
			return countingLocalIO{countingIO: countingIO{IO: fio, c: c, id: tbl.Identifier()}}, nil
		}
		return countingIO{IO: fio, c: c, id: tbl.Identifier()}, nil
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fs, c), nil
}

// ListLocations lists as the wrapped catalog does ([lake.LocationLister]),
// reading no metadata.
func (c *CountingCatalog) ListLocations(ctx context.Context) ([]lake.TableLocation, error) {
	if ll, ok := c.Catalog.(lake.LocationLister); ok {
		return ll.ListLocations(ctx)
	}
	return nil, fmt.Errorf("the counted catalog lists no locations: %w", errors.ErrUnsupported)
}

// countingIO counts the Avro files opened through it for its table.
type countingIO struct {
	iceio.IO
	c  *CountingCatalog
	id table.Identifier
}

func (c countingIO) Open(name string) (iceio.File, error) {
	if strings.HasSuffix(name, ".avro") {
		c.c.add(c.id, 0, 1)
	}
	return c.IO.Open(name)
}

// countingLocalIO is a local file system that counts the Avro files
// opened through it: every method of [iceio.LocalFS], with Open counted.
type countingLocalIO struct {
	iceio.LocalFS
	countingIO
}

func (c countingLocalIO) Open(name string) (iceio.File, error) { return c.countingIO.Open(name) }

func (c countingLocalIO) Remove(name string) error { return c.LocalFS.Remove(name) }
