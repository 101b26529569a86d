package rewriter

import (
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the history window of the zstd encoders that compress
// Parquet pages. Every page is compressed alone (EncodeAll), so no match
// can reach further back than the page's own start: a window at least as
// large as the largest page loses nothing. Iceberg's defaults are 1 MiB
// data pages (write.parquet.page-size-bytes) and 2 MiB dictionary pages
// (write.parquet.dict-size-bytes); a page larger than the window still
// compresses correctly, only with matches limited to the window.
//
// arrow-go's encoders keep klauspost/compress's default window of 8 MiB at
// SpeedDefault, and an encoder's history buffer is twice its window: 16 MiB
// per encoder, allocated (zeroed, first-touched) each time its sync.Pool
// was emptied by a collection. In a heap profile of bench/rewrite's
// partitioned sort they were a fifth of the live Go heap (32 MiB, two
// encoders).
const zstdWindow = 2 << 20

// zstdPageCodec is the Parquet zstd codec with encoders of [zstdWindow].
// Decoding, streaming and the compress bound are arrow-go's: only the
// encoders' memory differs, and the bytes written for a page no larger than
// the window are the same.
//
// The encoders keep the zstd frame checksum (xxhash64 of the page,
// klauspost/compress's default), although it is optional in zstd and
// libzstd, DuckDB and parquet-mr leave it off. It is the only integrity
// check on the path floe reads its own files by: iceberg-go v0.7.0 builds
// the scan's parquet.ReaderProperties itself (table/internal/
// parquet_files.go) without page CRC verification, so a flipped bit in a
// page without the checksum decodes into wrong values that a rewrite
// would carry into new files, verified against the same wrong values.
// Dropping it saved 0.7% of bench/rewrite's partitioned sort (at cdd11d7)
// and failed TestRewriteGroupNamesUnreadableInput: not a trade to make.
type zstdPageCodec struct {
	base compress.Codec

	mu    sync.Mutex
	pools map[zstd.EncoderLevel]*sync.Pool
}

// useZstdPageCodec replaces arrow-go's zstd codec with [zstdPageCodec], in
// the process-wide registry arrow-go reads its codecs from (there is no
// per-writer hook). It runs from the package's init, before any goroutine
// can read the registry.
func useZstdPageCodec() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // arrow-go without zstd: nothing to replace
	}
	if _, ok := base.(*zstdPageCodec); ok {
		return
	}
	_, streams := base.(compress.StreamingCodec)
	_, errs := base.(compress.ErrorCodec)
	if !streams || !errs {
		return // not arrow-go's codec as this file knows it: leave it be
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &zstdPageCodec{base: base, pools: map[zstd.EncoderLevel]*sync.Pool{}})
}

func init() { useZstdPageCodec() }

// encoderLevel maps a Parquet compression level to klauspost's, as
// arrow-go does: the default level is SpeedDefault (zstd level 3).
func encoderLevel(level int) zstd.EncoderLevel {
	if level == compress.DefaultCompressionLevel {
		return zstd.SpeedDefault
	}
	return zstd.EncoderLevelFromZstd(level)
}

func (c *zstdPageCodec) pool(level zstd.EncoderLevel) *sync.Pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pools[level]
	if !ok {
		p = &sync.Pool{New: func() any {
			// The options of arrow-go's pooled encoders, with the window.
			// The frame checksum stays on (see zstdPageCodec).
			enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(level),
				zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow),
				zstd.WithEncoderCRC(true))
			if err != nil {
				// Only invalid options fail, and these are constants.
				panic("rewriter: zstd encoder: " + err.Error())
			}
			return enc
		}}
		c.pools[level] = p
	}
	return p
}

// Encode compresses src at the default level.
func (c *zstdPageCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// EncodeLevel compresses src at level with a pooled encoder.
func (c *zstdPageCodec) EncodeLevel(dst, src []byte, level int) []byte {
	p := c.pool(encoderLevel(level))
	enc := p.Get().(*zstd.Encoder)
	defer p.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

// CompressBound is arrow-go's.
func (c *zstdPageCodec) CompressBound(n int64) int64 { return c.base.CompressBound(n) }

// Decode is arrow-go's.
func (c *zstdPageCodec) Decode(dst, src []byte) []byte { return c.base.Decode(dst, src) }

// DecodeWithError is arrow-go's: a corrupt page is an error, not a panic.
func (c *zstdPageCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	return c.base.(compress.ErrorCodec).DecodeWithError(dst, src)
}

// NewReader is arrow-go's streaming decoder.
func (c *zstdPageCodec) NewReader(r io.Reader) io.ReadCloser {
	return c.base.(compress.StreamingCodec).NewReader(r)
}

// NewWriter is arrow-go's streaming encoder.
func (c *zstdPageCodec) NewWriter(w io.Writer) io.WriteCloser {
	return c.base.(compress.StreamingCodec).NewWriter(w)
}

// NewWriterLevel is arrow-go's streaming encoder at level.
func (c *zstdPageCodec) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.base.(compress.StreamingCodec).NewWriterLevel(w, level)
}
