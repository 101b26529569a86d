package collectors_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/floe-project/floe/collectors"
	"github.com/floe-project/floe/collectors/spark"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
)

// lz4Java frames data as lz4-java's LZ4BlockOutputStream does: blocks of
// blockSize, alternating LZ4 and raw blocks, then an empty end block.
func lz4Java(t *testing.T, data []byte, blockSize int) []byte {
	t.Helper()
	var out bytes.Buffer
	block := func(method byte, comp []byte, dlen int) {
		out.WriteString("LZ4Block")
		out.WriteByte(method | 6)
		var b [12]byte
		binary.LittleEndian.PutUint32(b[0:], uint32(len(comp)))
		binary.LittleEndian.PutUint32(b[4:], uint32(dlen))
		out.Write(b[:]) // checksum left zero: the reader does not verify it
		out.Write(comp)
	}
	for i := 0; i < len(data); i += blockSize {
		chunk := data[i:min(len(data), i+blockSize)]
		if (i/blockSize)%2 == 1 {
			block(0x10, chunk, len(chunk))
			continue
		}
		buf := make([]byte, lz4.CompressBlockBound(len(chunk)))
		n, err := lz4.CompressBlock(chunk, buf, nil)
		require.NoError(t, err)
		require.Positive(t, n)
		block(0x20, buf[:n], len(chunk))
	}
	block(0x10, nil, 0)
	return out.Bytes()
}

// snappyJava frames data as snappy-java's SnappyOutputStream does.
func snappyJava(data []byte, blockSize int) []byte {
	var out bytes.Buffer
	out.WriteString("\x82SNAPPY\x00")
	out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	for i := 0; i < len(data); i += blockSize {
		enc := s2.EncodeSnappy(nil, data[i:min(len(data), i+blockSize)])
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(enc)))
		out.Write(l[:])
		out.Write(enc)
	}
	return out.Bytes()
}

func TestJavaCodecs(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join(logs, "spark", "application_1714560000000_0042"))
	require.NoError(t, err)
	lz := lz4Java(t, plain, 32<<10)
	sn := snappyJava(plain, 32<<10)
	tests := []struct {
		name string
		data []byte
		tail bool
	}{
		{"lz4", lz, false},
		{"lz4 two streams", append(bytes.Clone(lz), lz4Java(t, []byte("tail\n"), 32<<10)...), true},
		{"snappy", sn, false},
		{"snappy two streams", append(bytes.Clone(sn), snappyJava([]byte("tail\n"), 32<<10)...), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := collectors.Decompress(bytes.NewReader(tc.data))
			require.NoError(t, err)
			got, err := io.ReadAll(rc)
			require.NoError(t, err)
			require.NoError(t, rc.Close())
			want := plain
			if tc.tail {
				want = append(bytes.Clone(plain), "tail\n"...)
			}
			require.True(t, bytes.Equal(want, got), "decoded %d bytes, want %d", len(got), len(want))
		})
	}

	t.Run("spark log through Collect", func(t *testing.T) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "application_1714560000000_0042.lz4"), lz)
		write(t, filepath.Join(dir, "application_1714560000000_0043.snappy"), sn)
		st, err := collectors.Collect(t.Context(), []collectors.Parser{spark.EventLogParser{}}, collectors.CollectOptions{Strict: true}, []string{dir}, func(collectors.QueryEvent) error { return nil })
		require.NoError(t, err)
		require.Equal(t, 5, st.Files[0].Events)
		require.Equal(t, 5, st.Files[1].Duplicates, "the same application in two codecs")
	})

	t.Run("damaged", func(t *testing.T) {
		for i, data := range [][]byte{lz[:len(lz)/2], sn[:len(sn)/2], append(bytes.Clone(lz[:30]), bytes.Repeat([]byte{0xff}, 40)...),
			append(bytes.Clone(sn[:16]), 0x7f, 0xff, 0xff, 0xff)} {
			rc, err := collectors.Decompress(bytes.NewReader(data))
			require.NoError(t, err)
			_, err = io.ReadAll(rc)
			require.Error(t, err, "case %d", i)
		}
	})
	t.Run("lzf unsupported", func(t *testing.T) {
		_, err := collectors.Decompress(bytes.NewReader([]byte("ZV\x01\x00\x10\x00\x20abc")))
		require.ErrorIs(t, err, collectors.ErrUnsupportedCodec)
	})
}

func FuzzDecompress(f *testing.F) {
	f.Add([]byte("LZ4Block\x20\x05\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x50hello"))
	f.Add([]byte("\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x07\x05\x10hello"))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0})
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	// gzip of zstd, and a zstd frame whose blocks were flushed but not closed.
	var unclosed bytes.Buffer
	zw, err := zstd.NewWriter(&unclosed, zstd.WithEncoderConcurrency(1))
	require.NoError(f, err)
	_, err = zw.Write([]byte(`{"Event":"SparkListenerLogStart"}` + "\n"))
	require.NoError(f, err)
	require.NoError(f, zw.Flush())
	f.Add(bytes.Clone(unclosed.Bytes()))
	require.NoError(f, zw.Close())
	var nested bytes.Buffer
	gw := gzip.NewWriter(&nested)
	_, err = gw.Write(unclosed.Bytes())
	require.NoError(f, err)
	require.NoError(f, gw.Close())
	f.Add(nested.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		rc, err := collectors.Decompress(bytes.NewReader(data))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(rc, 1<<24)) // errors are fine on garbage; panics are not
		_ = rc.Close()                                        // gzip reports a damaged stream again on Close
	})
}
