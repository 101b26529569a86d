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
	// its last line, and the compressed block or frame it is in, may be
	// cut short.
	InProgress bool
	// Note says why an input without Parts has nothing to read yet: a
	// rolling event log directory holding no events_N_* part (only an
	// appstatus_* marker, or nothing: an application that just started or
	// crashed first). Such an input is skipped, not an error.
	Note string
	// Err is why the input could not be listed (an unreadable directory).
	// [Input.Open] returns it, so that it counts against this input only.
	Err error
}

// Open expands paths into inputs. A path may be a file, a directory (walked
// recursively, hidden sub-directories skipped, files in lexical order) or a
// glob pattern. A directory named eventlog_v2_* becomes one Input (with a
// Note and no Parts when it has no events_N_* part yet). A path that
// matches nothing is an error; a directory below a path that cannot be
// read becomes an Input with Err, so that it fails alone. The same file
// listed twice is read once.
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
		add(rollingInput(p))
		return nil
	}
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			add(Input{Name: path, Err: fmt.Errorf("walk %s: %w", path, err)})
			if d != nil && d.IsDir() && path != p {
				return filepath.SkipDir
			}
			return nil
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
				add(rollingInput(path))
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
func rollingInput(dir string) Input {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Input{Name: dir, Err: fmt.Errorf("read rolling event log %s: %w", dir, err)}
	}
	type part struct {
		n    int
		name string
	}
	var parts []part
	in := Input{Name: dir}
	status := ""
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, "appstatus_") {
			status = name
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
		in.Note = "rolling event log without events_N_* parts yet (empty directory: an application that just started or failed to start)"
		if status != "" {
			in.Note = "rolling event log without events_N_* parts yet (only " + status + ": an application that just started or crashed)"
		}
		return in
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
	return in
}

// Open returns the decompressed content of the input, its parts
// concatenated (a newline is inserted between parts that lack one); an
// input without parts is empty, and one with Err returns it.
//
// When the input is InProgress, its last part is still being written, and
// when it is compressed it may end inside a block or frame (Spark closes a
// zstd frame only when the application ends): it then reads as ending
// after its last complete block, and [CutOff] on the result names the
// part. Anywhere else a cut-off stream is a read error.
func (in Input) Open() (io.ReadCloser, error) {
	switch {
	case in.Err != nil:
		return nil, in.Err
	case len(in.Parts) == 0:
		return io.NopCloser(strings.NewReader("")), nil
	case len(in.Parts) == 1:
		rc, err := openFile(in.Parts[0], in.InProgress)
		if err != nil {
			return nil, err
		}
		return rc, nil
	}
	return &partsReader{parts: in.Parts, last: '\n', tolerateCut: in.InProgress}, nil
}

// CutOff returns the part of an in-progress input opened by [Input.Open]
// whose compressed stream was cut off before its end, or "".
func CutOff(rc io.Reader) string {
	switch r := rc.(type) {
	case *closeBoth:
		if r.cut.cut {
			return r.path
		}
	case *partsReader:
		return r.cut
	}
	return ""
}

type partsReader struct {
	parts       []string
	cur         *closeBoth
	last        byte
	pend        bool   // newline to emit between parts
	tolerateCut bool   // the last part may end inside a block
	cut         string // the part whose compressed stream was cut off
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
			rc, err := openFile(m.parts[0], m.tolerateCut && len(m.parts) == 1)
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
			if m.cur.cut.cut {
				m.cut = m.cur.path
			}
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
// [Decompress]); with tolerateCut, a compressed stream cut off at the end
// of the file ends there (see [Input.Open]).
func openFile(path string, tolerateCut bool) (*closeBoth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	rc, err := Decompress(f)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open %s: %w", path, err), f.Close())
	}
	c := &closeBoth{rc: rc, f: f, path: path}
	c.cut.r, c.cut.tolerate = rc, tolerateCut
	return c, nil
}

type closeBoth struct {
	rc   io.ReadCloser
	cut  cutReader
	f    *os.File
	path string
}

func (c *closeBoth) Read(p []byte) (int, error) { return c.cut.Read(p) }

// Close closes the decoder and the file. A decoder that reports the cut
// stream again on Close (gzip) is not an error once the cut was seen.
func (c *closeBoth) Close() error {
	err := c.rc.Close()
	if c.cut.cut && errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return errors.Join(err, c.f.Close())
}

// cutReader, when tolerate is set, turns the io.ErrUnexpectedEOF a
// decoder returns when its compressed input ends inside a block or frame
// into io.EOF, after the data decoded so far, and remembers it. Only the
// reader of a file still being written does this: there the end of the
// input is where the writer has got to.
type cutReader struct {
	r        io.Reader
	tolerate bool
	cut      bool
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.cut {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	if err != nil && c.tolerate && errors.Is(err, io.ErrUnexpectedEOF) {
		c.cut = true
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

// maxCodecLayers bounds how many compressions [Decompress] peels off one
// file (a zstd log gzipped again for transfer has two).
const maxCodecLayers = 3

// Decompress wraps r in decoders while its first bytes are the magic
// number of gzip, zstd, or the Java stream formats Spark's lz4 (lz4-java
// LZ4BlockOutputStream) and snappy (snappy-java SnappyOutputStream) codecs
// write — so a gzipped zstd log is read too — and returns it unchanged
// (buffered) otherwise. It returns [ErrUnsupportedCodec] for Spark's lzf
// codec. Closing the result does not close r.
func Decompress(r io.Reader) (io.ReadCloser, error) {
	var layers []io.ReadCloser
	closeAll := func() error {
		var errs []error
		for i := len(layers) - 1; i >= 0; i-- {
			errs = append(errs, layers[i].Close())
		}
		return errors.Join(errs...)
	}
	for range maxCodecLayers {
		br := bufio.NewReaderSize(r, 64<<10)
		head, perr := br.Peek(8)
		if perr != nil && !errors.Is(perr, io.EOF) {
			// The layer below failed within its first bytes (a damaged
			// block): Peek consumed the error, so hand it on after them.
			r = io.MultiReader(bytes.NewReader(bytes.Clone(head)), errReader{perr})
			break
		}
		dec, err := decoder(br, head)
		if err != nil {
			return nil, errors.Join(err, closeAll())
		}
		if dec == nil {
			if len(layers) == 0 {
				return io.NopCloser(br), nil
			}
			return &layered{Reader: br, close: closeAll}, nil
		}
		layers = append(layers, dec)
		r = dec
	}
	if len(layers) == 0 {
		return io.NopCloser(r), nil
	}
	return &layered{Reader: r, close: closeAll}, nil
}

// layered reads the innermost of nested decoders and closes them all.
type layered struct {
	io.Reader
	close func() error
}

func (l *layered) Close() error { return l.close() }

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// decoder returns the decoder for the compressed stream br starts with
// (head is its first bytes, fewer for a short stream), or nil when br does
// not start with one.
func decoder(br *bufio.Reader, head []byte) (io.ReadCloser, error) {
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
	return nil, nil
}
