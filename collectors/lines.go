package collectors

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one line read by [LineReader]; Spark plans make lines
// of several megabytes, so the bound is generous.
const MaxLineBytes = 256 << 20

// LineReader reads lines of any length (bufio.Scanner stops at 64 KiB),
// numbering them from 1 and stripping "\n" or "\r\n".
type LineReader struct {
	br   *bufio.Reader
	line int
	buf  []byte
}

// NewLineReader returns a LineReader over r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 256<<10)}
}

// Next returns the next line and its 1-based number. The slice is valid
// until the next call. At the end it returns io.EOF; a last line without a
// terminator is returned first.
func (l *LineReader) Next() ([]byte, int, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.buf = append(l.buf, chunk...)
			if len(l.buf) > MaxLineBytes {
				return nil, l.line + 1, fmt.Errorf("line %d longer than %d bytes", l.line+1, MaxLineBytes)
			}
			continue
		}
		var line []byte
		if len(l.buf) > 0 {
			l.buf = append(l.buf, chunk...)
			line = l.buf
		} else {
			line = chunk
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, l.line + 1, err
		}
		if len(line) == 0 && err != nil {
			return nil, l.line, io.EOF
		}
		l.line++
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		}
		return line, l.line, nil
	}
}

// StableID returns a hex hash of parts, for sources whose records have no
// id of their own: the same record collected twice gets the same QueryID.
func StableID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		_, _ = io.WriteString(h, p) // hash writes never fail
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
