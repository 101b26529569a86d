package collectors

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Input is one logical log: a single file, or a Spark rolling event log
// directory (eventlog_v2_*) whose events_N_* parts are read as one stream in
// N order.
type Input struct {
	// Name is the file path, or the directory path of a rolling log. It is
	// what parsers see as their name and what BadRecords point at. For a
	// rolling log, line numbers count across the concatenated parts.
	Name string
	// Parts are the files read, in order; one for a plain file.
	Parts []string
	// InProgress is true for a log still being written (a ".inprogress"
	// file, or a rolling directory whose appstatus marker is in progress):
	// its last line may be cut short.
	InProgress bool
}

// Open expands paths into inputs. A path may be a file, a directory (walked
// recursively, hidden sub-directories skipped, files in lexical order) or a
// glob pattern. A directory named eventlog_v2_* becomes one Input. A path
// that matches nothing is an error; the same file listed twice is read once.
func Open(ctx context.Context, paths []string) ([]Input, error) {
	var out []Input
	seen := map[string]bool{}
	add := func(in Input) {
		if !seen[in.Name] {
			seen[in.Name] = true
			out = append(out, in)
		}
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		matches := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("expand glob %s: %w", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("expand glob %s: no files match", p)
			}
			matches = m
		}
		for _, m := range matches {
			if err := openPath(ctx, m, add); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func openPath(ctx context.Context, p string, add func(Input)) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("open input: %w", err)
	}
	if !fi.IsDir() {
		add(Input{Name: p, Parts: []string{p}, InProgress: IsInProgress(p)})
		return nil
	}
	if isRollingDir(p) {
		in, err := rollingInput(p)
		if err != nil {
			return err
		}
		add(in)
		return nil
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk %s: %w", p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if path == p {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if isRollingDir(path) {
				in, err := rollingInput(path)
				if err != nil {
					return err
				}
				add(in)
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		add(Input{Name: path, Parts: []string{path}, InProgress: IsInProgress(path)})
		return nil
	})
}

// IsInProgress reports whether name is a log still being written: its base
// name ends in ".inprogress" (possibly before a codec suffix).
func IsInProgress(name string) bool {
	b := filepath.Base(name)
	return strings.HasSuffix(b, ".inprogress") || strings.Contains(b, ".inprogress.")
}

func isRollingDir(p string) bool {
	return strings.HasPrefix(filepath.Base(p), "eventlog_v2_")
}

// rollingInput lists the events_N_* parts of a Spark rolling event log in
// numeric N order. Compacted parts (events_N_….compact) replace the parts
// before them, so reading starts at the last compact part.
func rollingInput(dir string) (Input, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Input{}, fmt.Errorf("read rolling event log %s: %w", dir, err)
	}
	type part struct {
		n    int
		name string
	}
	var parts []part
	in := Input{Name: dir}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, "appstatus_") {
			in.InProgress = IsInProgress(name)
			continue
		}
		rest, ok := strings.CutPrefix(name, "events_")
		if !ok || e.IsDir() {
			continue
		}
		num, _, _ := strings.Cut(rest, "_")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		parts = append(parts, part{n, name})
	}
	if len(parts) == 0 {
		return Input{}, fmt.Errorf("read rolling event log %s: no events_N_* files", dir)
	}
	slices.SortFunc(parts, func(a, b part) int { return a.n - b.n })
	start := 0
	for i, p := range parts {
		if strings.HasSuffix(p.name, ".compact") {
			start = i
		}
	}
	for _, p := range parts[start:] {
		in.Parts = append(in.Parts, filepath.Join(dir, p.name))
	}
	return in, nil
}

// Open returns the decompressed content of the input, its parts
// concatenated (a newline is inserted between parts that lack one).
func (in Input) Open() (io.ReadCloser, error) {
	if len(in.Parts) == 1 {
		return openFile(in.Parts[0])
	}
	return &partsReader{parts: in.Parts, last: '\n'}, nil
}

type partsReader struct {
	parts []string
	cur   io.ReadCloser
	last  byte
	pend  bool // newline to emit between parts
}

func (m *partsReader) Read(p []byte) (int, error) {
	for {
		if m.pend {
			if len(p) == 0 {
				return 0, nil
			}
			p[0] = '\n'
			m.pend, m.last = false, '\n'
			return 1, nil
		}
		if m.cur == nil {
			if len(m.parts) == 0 {
				return 0, io.EOF
			}
			rc, err := openFile(m.parts[0])
			if err != nil {
				return 0, err
			}
			m.cur, m.parts = rc, m.parts[1:]
		}
		n, err := m.cur.Read(p)
		if n > 0 {
			m.last = p[n-1]
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			cerr := m.cur.Close()
			m.cur = nil
			if cerr != nil {
				return 0, cerr
			}
			if m.last != '\n' && len(m.parts) > 0 {
				m.pend = true
			}
			continue
		}
		return 0, err
	}
}

func (m *partsReader) Close() error {
	if m.cur != nil {
		return m.cur.Close()
	}
	return nil
}

var (
	magicGzip      = []byte{0x1f, 0x8b}
	magicZstd      = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicLZ4Block  = []byte("LZ4Block")
	magicSnappyJav = []byte("\x82SNAPPY\x00")
	magicLZF       = []byte("ZV")
)

// openFile opens path and decompresses it by its magic bytes (see
// [Decompress]).
func openFile(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	rc, err := Decompress(f)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: %w", path, err), f.Close())
	}
	return &closeBoth{ReadCloser: rc, f: f}, nil
}

type closeBoth struct {
	io.ReadCloser
	f *os.File
}

func (c *closeBoth) Close() error { return errors.Join(c.ReadCloser.Close(), c.f.Close()) }

// Decompress wraps r in a decoder when its first bytes are the magic number
// of gzip, zstd, or the Java stream formats Spark's lz4 (lz4-java
// LZ4BlockOutputStream) and snappy (snappy-java SnappyOutputStream) codecs
// write, and returns it unchanged (buffered) otherwise. It returns
// [ErrUnsupportedCodec] for Spark's lzf codec. Closing the result does not
// close r.
func Decompress(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(8) // a short or failing peek means plain data; Read reports the error
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case bytes.HasPrefix(head, magicZstd):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return zr.IOReadCloser(), nil
	case bytes.HasPrefix(head, magicLZ4Block):
		return &lz4BlockReader{r: br}, nil
	case bytes.HasPrefix(head, magicSnappyJav):
		return &snappyJavaReader{r: br}, nil
	case bytes.HasPrefix(head, magicLZF) && len(head) >= 3 && head[2] <= 1:
		return nil, fmt.Errorf("lzf stream: %w", ErrUnsupportedCodec)
	}
	return io.NopCloser(br), nil
}
