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
// them but floe's own ([PropCatalogTimeout], [PropIOTimeout],
// [PropRetries]). A Glue
// catalog's region and static keys (glue.region, glue.access-key-id,
// glue.secret-access-key, glue.session-token) also become its S3 IO's
// (s3.region, s3.access-key-id, …) when the catalog sets none of its own:
// iceberg-go's Glue catalog hands its tables' IO the catalog's properties
// as they are, and its S3 IO reads only s3.* (and client.region), so
// without this a Glue catalog configured with a region and keys would
// reach its tables' files through the AWS default chain, in another
// region or as another principal.
func IOProps(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if k != PropCatalogTimeout && k != PropIOTimeout && k != PropRetries {
			out[k] = v
		}
	}
	if props["type"] == "glue" {
		glueToS3(out)
	}
	return out
}

// glueToS3 fills a Glue catalog's S3 region and keys from its Glue ones
// where it sets none: the region unless s3.region or client.region is set,
// the keys (and session token) as a set unless either S3 key is set.
func glueToS3(props map[string]string) {
	if _, ok := props[iceio.S3Region]; !ok {
		if _, ok := props[iceio.S3ClientRegion]; !ok {
			if r := props["glue.region"]; r != "" {
				props[iceio.S3Region] = r
			}
		}
	}
	_, hasKey := props[iceio.S3AccessKeyID]
	_, hasSecret := props[iceio.S3SecretAccessKey]
	if hasKey || hasSecret || props["glue.access-key-id"] == "" {
		return
	}
	props[iceio.S3AccessKeyID] = props["glue.access-key-id"]
	props[iceio.S3SecretAccessKey] = props["glue.secret-access-key"]
	if tok := props["glue.session-token"]; tok != "" {
		props[iceio.S3SessionToken] = tok
	}
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
