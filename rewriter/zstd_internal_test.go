package rewriter

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// TestZstdPageCodec checks that the registered Parquet zstd codec is floe's,
// that its pages decode with arrow-go's decoder, and that for pages no
// larger than the window they are the bytes arrow-go's own encoder (8 MiB
// window) writes, frame checksum included: the checksum is what catches a
// damaged page on iceberg-go's read path (see zstdPageCodec).
func TestZstdPageCodec(t *testing.T) {
	codec, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	require.IsType(t, &zstdPageCodec{}, codec)

	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"furiously", "regular", "deposits", "sleep", "quickly", "final", "ideas"}
	tests := []struct {
		name string
		size int
	}{
		{"small", 100},
		{"data page", 1 << 20},
		{"dictionary page", zstdWindow},
		{"past the window", zstdWindow + 300<<10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var page bytes.Buffer
			for page.Len() < tt.size {
				page.WriteString(words[rng.IntN(len(words))])
				page.WriteByte(byte(rng.IntN(256)))
			}
			src := page.Bytes()[:tt.size]
			for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
				got := codec.EncodeLevel(nil, src, level)
				fh := zstd.Header{}
				require.NoError(t, fh.Decode(got))
				require.True(t, fh.HasCheckSum, "level %d: frame has no checksum", level)
				back, err := compress.Decode(codec, nil, got)
				require.NoError(t, err)
				require.Equal(t, src, back, "level %d", level)

				ref, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(encoderLevel(level)),
					zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
				require.NoError(t, err)
				want := ref.EncodeAll(src, nil)
				// arrow-go's own page: decoded, and its checksum checked.
				back, err = compress.Decode(codec, nil, want)
				require.NoError(t, err)
				require.Equal(t, src, back, "level %d", level)
				bad := bytes.Clone(want)
				bad[len(bad)-1] ^= 0xff
				_, err = compress.Decode(codec, nil, bad)
				require.Error(t, err, "level %d: a wrong checksum must fail the read", level)
				if tt.size <= zstdWindow {
					require.Equal(t, want, got, "level %d: bytes differ from arrow-go's encoder's", level)
				} else {
					require.InDelta(t, len(want), len(got), float64(len(want))/20, "level %d", level)
				}
			}
		})
	}
	_, err = compress.Decode(codec, nil, []byte("not zstd"))
	require.Error(t, err)
}
