package collectors

import "errors"

// ErrUnrecognized is returned by [Detect] (and recorded by [Collect]) when
// no parser recognizes a file. Test with errors.Is.
var ErrUnrecognized = errors.New("unrecognized log format")

// ErrUnsupportedCodec is returned when reading a file compressed with a codec
// floe cannot decompress (Spark's lzf stream format). Test with errors.Is.
var ErrUnsupportedCodec = errors.New("unsupported compression codec")

// ErrUnknownSource is returned by [Collect] when CollectOptions.Source names
// no parser. Test with errors.Is.
var ErrUnknownSource = errors.New("unknown source")
