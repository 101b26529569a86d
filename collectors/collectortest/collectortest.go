package collectortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-project/floe/collectors"
	"github.com/stretchr/testify/require"
)

// Run runs the conformance suite for p over fixtures: files or
// directories as [collectors.Open] accepts them, all in p's format (bad
// records allowed). Every other file under the module's testdata/logs is
// taken as a foreign format that p must not detect.
func Run(t *testing.T, p collectors.Parser, fixtures ...string) {
	t.Helper()
	require.NotEmpty(t, fixtures, "no fixtures for %s", p.Source())
	ctx := t.Context()
	own, err := collectors.Open(ctx, fixtures)
	require.NoError(t, err)
	ownNames := map[string]bool{}
	for _, in := range own {
		for _, part := range in.Parts {
			ownNames[abs(t, part)] = true
		}
	}

	t.Run("detect-own", func(t *testing.T) {
		for _, in := range own {
			head := Head(t, in)
			if len(head) == 0 {
				continue
			}
			require.True(t, p.Detect(filepath.Base(in.Name), head), "%s does not detect its fixture %s", p.Source(), in.Name)
		}
	})

	t.Run("detect-foreign", func(t *testing.T) {
		root := filepath.Join(ModuleRoot(t), "testdata", "logs")
		all, err := collectors.Open(ctx, []string{root})
		require.NoError(t, err)
		for _, in := range all {
			if len(in.Parts) == 0 || ownNames[abs(t, in.Parts[0])] {
				continue
			}
			head, err := head(in)
			if err != nil || len(head) == 0 {
				continue // unsupported codecs are another test's business
			}
			require.False(t, p.Detect(filepath.Base(in.Name), head), "%s detects foreign fixture %s", p.Source(), in.Name)
		}
	})

	t.Run("parse", func(t *testing.T) {
		total := 0
		for _, in := range own {
			evs, _, err := parseInput(ctx, p, in)
			require.NoError(t, err, in.Name)
			for _, ev := range evs {
				CheckEvent(t, p.Source(), ev)
			}
			total += len(evs)
		}
		require.Positive(t, total, "%s emitted no events from its fixtures", p.Source())
	})

	t.Run("callback errors stop parsing", func(t *testing.T) {
		stop := errors.New("collectortest: stop")
		for _, in := range own {
			evs, bad, err := parseInput(ctx, p, in)
			require.NoError(t, err, in.Name)
			if len(evs) > 0 {
				n := 0
				err := parseWith(ctx, p, in, func(collectors.QueryEvent) error { n++; return stop }, func(collectors.BadRecord) error { return nil })
				require.ErrorIs(t, err, stop, "%s: Parse must return emit's error", in.Name)
				require.Equal(t, 1, n, "%s: Parse must stop at emit's error", in.Name)
			}
			if len(bad) > 0 {
				err := parseWith(ctx, p, in, func(collectors.QueryEvent) error { return nil }, func(collectors.BadRecord) error { return stop })
				require.ErrorIs(t, err, stop, "%s: Parse must return bad's error", in.Name)
			}
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		for _, in := range own {
			evs1, bad1, err1 := parseInput(ctx, p, in)
			evs2, bad2, err2 := parseInput(ctx, p, in)
			require.Equal(t, err1, err2, in.Name)
			require.Equal(t, evs1, evs2, in.Name)
			require.Equal(t, bad1, bad2, in.Name)
		}
	})

	t.Run("damaged", func(t *testing.T) {
		dir := t.TempDir()
		for _, in := range own {
			content := content(t, in)
			for i, v := range Damage(content, int64(len(in.Name))) {
				path := filepath.Join(dir, fmt.Sprintf("v%d", i), filepath.Base(in.Name))
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, v, 0o644))
				evs, bad, err := parse(ctx, p, path, bytes.NewReader(v))
				_ = err // errors are allowed on damaged input; panics are not
				for _, ev := range evs {
					CheckEvent(t, p.Source(), ev)
				}
				for _, b := range bad {
					require.NotEmpty(t, b.Reason, "bad record without a reason in %s", path)
				}
			}
		}
	})
}

// CheckEvent asserts the invariants every emitted event keeps.
func CheckEvent(t testing.TB, source string, ev collectors.QueryEvent) {
	t.Helper()
	require.Equal(t, source, ev.Source, "event source")
	require.NotEmpty(t, ev.QueryID, "event without QueryID: %+v", ev)
	require.False(t, ev.StartTime.IsZero(), "event %s without StartTime", ev.QueryID)
	require.Equal(t, time.UTC, ev.StartTime.Location(), "event %s StartTime not UTC", ev.QueryID)
	if !ev.EndTime.IsZero() {
		require.Equal(t, time.UTC, ev.EndTime.Location(), "event %s EndTime not UTC", ev.QueryID)
	}
	switch ev.State {
	case collectors.StateSucceeded, collectors.StateFailed, collectors.StateCancelled, collectors.StateUnknown:
	default:
		require.Failf(t, "bad state", "event %s state %q", ev.QueryID, ev.State)
	}
	require.NotEmpty(t, ev.StatementType, "event %s without StatementType", ev.QueryID)
	require.NotEmpty(t, ev.Engine, "event %s without Engine", ev.QueryID)
}

// Parse parses the fixture at path (file or directory, as
// [collectors.Open] accepts) with p and returns what it emitted. It fails
// the test when Parse returns an error.
func Parse(t testing.TB, p collectors.Parser, path string) ([]collectors.QueryEvent, []collectors.BadRecord) {
	t.Helper()
	ins, err := collectors.Open(context.Background(), []string{path})
	require.NoError(t, err)
	var evs []collectors.QueryEvent
	var bad []collectors.BadRecord
	for _, in := range ins {
		e, b, err := parseInput(context.Background(), p, in)
		require.NoError(t, err, in.Name)
		evs = append(evs, e...)
		bad = append(bad, b...)
	}
	return evs, bad
}

// Fuzz seeds f with the fixtures' contents and fuzzes p.Parse: it must not
// panic, and every event it emits keeps Source and QueryID.
func Fuzz(f *testing.F, p collectors.Parser, fixtures ...string) {
	ins, err := collectors.Open(context.Background(), fixtures)
	require.NoError(f, err)
	for _, in := range ins {
		f.Add(content(f, in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := p.Parse(context.Background(), "fuzz", bytes.NewReader(data), func(ev collectors.QueryEvent) error {
			require.Equal(t, p.Source(), ev.Source)
			require.NotEmpty(t, ev.QueryID)
			return nil
		}, func(b collectors.BadRecord) error {
			require.NotEmpty(t, b.Reason)
			return nil
		})
		_ = err // errors are fine on garbage; panics are not
	})
}

// Damage returns truncated and garbled copies of b, deterministic for a
// seed: cuts at several points, flipped bytes, a line of junk, doubled
// content and an empty input.
func Damage(b []byte, seed int64) [][]byte {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	var out [][]byte
	for _, cut := range []int{1, len(b) / 3, len(b) / 2, len(b) - 7, len(b) - 1} {
		if cut > 0 && cut < len(b) {
			out = append(out, bytes.Clone(b[:cut]))
		}
	}
	for range 4 {
		g := bytes.Clone(b)
		for range 1 + len(g)/200 {
			if len(g) == 0 {
				break
			}
			g[r.IntN(len(g))] = byte(r.IntN(256))
		}
		out = append(out, g)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		junk := append(bytes.Clone(b[:i+1]), []byte("}{\",\x00garbage ]] 'unterminated\n")...)
		out = append(out, append(junk, b[i+1:]...))
	}
	out = append(out, append(bytes.Clone(b), b...), nil)
	return out
}

// Head returns the first [collectors.DetectBytes] decompressed bytes of in.
func Head(t testing.TB, in collectors.Input) []byte {
	t.Helper()
	h, err := head(in)
	require.NoError(t, err, in.Name)
	return h
}

func head(in collectors.Input) ([]byte, error) {
	rc, err := in.Open()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, collectors.DetectBytes)
	n, err := io.ReadFull(rc, buf)
	cerr := rc.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], cerr
}

func content(t testing.TB, in collectors.Input) []byte {
	t.Helper()
	rc, err := in.Open()
	require.NoError(t, err)
	b, err := io.ReadAll(rc)
	require.NoError(t, err, in.Name)
	require.NoError(t, rc.Close())
	return b
}

func parseInput(ctx context.Context, p collectors.Parser, in collectors.Input) ([]collectors.QueryEvent, []collectors.BadRecord, error) {
	rc, err := in.Open()
	if err != nil {
		return nil, nil, err
	}
	evs, bad, err := parse(ctx, p, in.Name, rc)
	return evs, bad, errors.Join(err, rc.Close())
}

func parseWith(ctx context.Context, p collectors.Parser, in collectors.Input, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	rc, err := in.Open()
	if err != nil {
		return err
	}
	return errors.Join(p.Parse(ctx, in.Name, rc, emit, bad), rc.Close())
}

func parse(ctx context.Context, p collectors.Parser, name string, r io.Reader) ([]collectors.QueryEvent, []collectors.BadRecord, error) {
	var evs []collectors.QueryEvent
	var bad []collectors.BadRecord
	err := p.Parse(ctx, name, r, func(ev collectors.QueryEvent) error {
		evs = append(evs, ev)
		return nil
	}, func(b collectors.BadRecord) error {
		bad = append(bad, b)
		return nil
	})
	return evs, bad, err
}

// ModuleRoot returns the directory holding go.mod above the test's working
// directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found")
		dir = parent
	}
}

func abs(t testing.TB, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}
