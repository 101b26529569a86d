package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// IOProps are the properties iceberg-go's IO takes from a catalog's: all of
// them but floe's own ([PropCatalogTimeout], [PropIOTimeout]).
func IOProps(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if k != PropCatalogTimeout && k != PropIOTimeout {
			out[k] = v
		}
	}
	return out
}

// CheckStore lists the first entry under location (a warehouse or table
// location) through the IO catalog catName's properties open: an object
// store that is down, stalls past ctx or refuses the credentials fails it.
// A location with nothing under it yet passes.
func CheckStore(ctx context.Context, catName string, props map[string]string, location string) error {
	fio, err := iceio.LoadFS(ctx, IOProps(props), location)
	if err != nil {
		return fmt.Errorf("object store %s of catalog %s: open: %w", location, catName, err)
	}
	lister, ok := fio.(iceio.ListableIO)
	if !ok {
		return fmt.Errorf("object store %s of catalog %s: %T cannot list: %w", location, catName, fio, errors.ErrUnsupported)
	}
	root := strings.TrimSuffix(location, "/")
	atRoot := true
	err = lister.WalkDir(root, func(_ string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if atRoot {
			atRoot = false
			return nil
		}
		return fs.SkipAll
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("object store %s of catalog %s: list: %w", location, catName, err)
	}
	return nil
}
