package rewriter

import (
	"context"
	"fmt"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// reloadedIO is the IO of tbl as its catalog hands it out now: a REST
// catalog that vends storage credentials hands out fresh ones with each
// load of the table, where the IO tbl was loaded with keeps the ones it
// was given (iceberg-go renews only credentials vended in
// storage-credentials, and only on the real clock).
func reloadedIO(ctx context.Context, tbl *table.Table) (iceio.IO, error) {
	fresh := *tbl
	if err := fresh.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("reload table for fresh store credentials: %w", err)
	}
	return fresh.FS(ctx)
}

// refused reports whether err is the object store refusing the request's
// credentials ([lake.StoreRefusal]): worth one more try on the table's IO
// reloaded from its catalog.
func refused(err error) bool { return lake.StoreRefusal("", err) != nil }
