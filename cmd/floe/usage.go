package main

import (
	"errors"

	"github.com/floe-project/floe/rewriter"
)

// usageError marks the library's input errors — options the table cannot
// take ([rewriter.ErrInvalidOptions]) — as usage errors (exit 2).
func usageError(err error) error {
	var fe flagError
	if err != nil && errors.Is(err, rewriter.ErrInvalidOptions) && !errors.As(err, &fe) {
		return flagError{err}
	}
	return err
}
