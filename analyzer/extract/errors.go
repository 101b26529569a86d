package extract

import "errors"

// ErrUnknownDialect is returned by [ParseDialect] for a name it does not
// know; test for it with errors.Is. [Parse] itself never returns an error.
var ErrUnknownDialect = errors.New("unknown sql dialect")
