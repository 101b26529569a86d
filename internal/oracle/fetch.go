package oracle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// isLocal reports whether loc names a file on the local filesystem: a plain
// path or a file:// location.
func isLocal(loc string) bool {
	return !strings.Contains(loc, "://") || strings.HasPrefix(loc, "file://")
}

// localCopies gives each of locs a local path a reader of plain files
// (DuckDB's, without its network extensions) can open: a local location
// is its own path; any other (s3://...) is downloaded through fio, the
// table's own IO, into a temp dir, one file per distinct location. done
// removes the copies.
func localCopies(ctx context.Context, fio iceio.IO, locs []string) (_ map[string]string, _ func() error, err error) {
	local := make(map[string]string, len(locs))
	dir := ""
	done := func() error {
		if dir == "" {
			return nil
		}
		return os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, done())
		}
	}()
	for _, loc := range locs {
		if _, ok := local[loc]; ok {
			continue
		}
		if isLocal(loc) {
			local[loc] = LocalPath(loc)
			continue
		}
		if fio == nil {
			return nil, nil, fmt.Errorf("download %s: no IO to read it through", loc)
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("download %s: %w", loc, err)
		}
		if dir == "" {
			if dir, err = os.MkdirTemp("", "floe-oracle-"); err != nil {
				return nil, nil, fmt.Errorf("download %s: %w", loc, err)
			}
		}
		// The index keeps two files of one base name in different
		// directories (partitions) apart.
		p := filepath.Join(dir, strconv.Itoa(len(local))+"-"+filepath.Base(loc))
		if err := download(fio, loc, p); err != nil {
			return nil, nil, fmt.Errorf("download %s: %w", loc, err)
		}
		local[loc] = p
	}
	return local, done, nil
}

// download copies the file at loc, read through fio, to the local path p.
func download(fio iceio.IO, loc, p string) (err error) {
	src, err := fio.Open(loc)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	dst, err := os.Create(p)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dst.Close()) }()
	_, err = io.Copy(dst, src)
	return err
}

// mapPaths returns the local path localCopies gave each of locs, in order.
func mapPaths(local map[string]string, locs []string) []string {
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = local[l]
	}
	return out
}
