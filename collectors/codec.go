package collectors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"
)

// maxCodecBlock bounds one decompressed block of the Java stream codecs
// (Spark uses 32 KiB blocks; lz4-java allows at most 32 MiB).
const maxCodecBlock = 64 << 20

// lz4BlockReader reads lz4-java's LZ4BlockOutputStream format, which Spark's
// lz4 codec writes (it is not the LZ4 frame format): blocks of
// "LZ4Block" magic, a token (method 0x10 raw or 0x20 LZ4 in the high
// nibble), compressed and original lengths and an xxhash32 checksum (all
// little-endian int32), then the data. A block of original length 0 ends a
// stream; streams may follow each other. Checksums are not verified: a
// corrupt block shows up as unparseable records.
type lz4BlockReader struct {
	r    *bufio.Reader
	out  []byte
	comp []byte
	buf  []byte
}

func (z *lz4BlockReader) Read(p []byte) (int, error) {
	for len(z.out) == 0 {
		if err := z.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, z.out)
	z.out = z.out[n:]
	return n, nil
}

func (z *lz4BlockReader) Close() error { return nil }

func (z *lz4BlockReader) next() error {
	var hdr [21]byte
	if _, err := io.ReadFull(z.r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("lz4 block header: %w", err)
	}
	if !bytes.Equal(hdr[:8], magicLZ4Block) {
		return fmt.Errorf("lz4 block: bad magic %q", hdr[:8])
	}
	method := hdr[8] & 0xf0
	clen := int64(binary.LittleEndian.Uint32(hdr[9:13]))
	dlen := int64(binary.LittleEndian.Uint32(hdr[13:17]))
	if dlen > maxCodecBlock || clen > maxCodecBlock {
		return fmt.Errorf("lz4 block: length %d/%d out of range", clen, dlen)
	}
	if cap(z.comp) < int(clen) {
		z.comp = make([]byte, clen)
	}
	comp := z.comp[:clen]
	if _, err := io.ReadFull(z.r, comp); err != nil {
		return fmt.Errorf("lz4 block data: %w", noEOF(err))
	}
	switch method {
	case 0x10:
		if clen != dlen {
			return fmt.Errorf("lz4 block: raw block lengths %d != %d", clen, dlen)
		}
		z.out = comp
	case 0x20:
		if cap(z.buf) < int(dlen) {
			z.buf = make([]byte, dlen)
		}
		n, err := lz4.UncompressBlock(comp, z.buf[:dlen])
		if err != nil {
			return fmt.Errorf("lz4 block: %w", err)
		}
		if int64(n) != dlen {
			return fmt.Errorf("lz4 block: %d bytes decompressed, header says %d", n, dlen)
		}
		z.out = z.buf[:n]
	default:
		return fmt.Errorf("lz4 block: unknown method 0x%02x", method)
	}
	return nil
}

// snappyJavaReader reads snappy-java's SnappyOutputStream format, which
// Spark's snappy codec writes (it is not the snappy framing format): a
// 16-byte header (magic "\x82SNAPPY\x00", version, compatible version), then
// chunks of a big-endian int32 length and a raw snappy block. Concatenated
// streams repeat the header.
type snappyJavaReader struct {
	r   *bufio.Reader
	out []byte
	buf []byte
}

func (z *snappyJavaReader) Read(p []byte) (int, error) {
	for len(z.out) == 0 {
		if err := z.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, z.out)
	z.out = z.out[n:]
	return n, nil
}

func (z *snappyJavaReader) Close() error { return nil }

func (z *snappyJavaReader) next() error {
	if head, _ := z.r.Peek(8); bytes.Equal(head, magicSnappyJav) {
		if _, err := z.r.Discard(16); err != nil {
			return fmt.Errorf("snappy-java header: %w", noEOF(err))
		}
	}
	var l [4]byte
	if _, err := io.ReadFull(z.r, l[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("snappy-java chunk length: %w", err)
	}
	n := int64(binary.BigEndian.Uint32(l[:]))
	if n > maxCodecBlock {
		return fmt.Errorf("snappy-java chunk: length %d out of range", n)
	}
	chunk := make([]byte, n)
	if _, err := io.ReadFull(z.r, chunk); err != nil {
		return fmt.Errorf("snappy-java chunk: %w", noEOF(err))
	}
	dlen, err := s2.DecodedLen(chunk)
	if err != nil {
		return fmt.Errorf("snappy-java chunk: %w", err)
	}
	if dlen > maxCodecBlock {
		return fmt.Errorf("snappy-java chunk: decoded length %d out of range", dlen)
	}
	z.buf, err = s2.Decode(z.buf[:cap(z.buf)], chunk)
	if err != nil {
		return fmt.Errorf("snappy-java chunk: %w", err)
	}
	z.out = z.buf
	return nil
}

// noEOF turns a clean EOF inside a block into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
