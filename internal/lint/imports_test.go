package lint_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/floe-project/floe/"

// rank is a package's layer: a package may import floe packages of a lower
// layer, and of its own area (its top-level directory). DESIGN.md: cmd →
// control → stages (analyzer, simulator, rewriter, collectors' sources) →
// the shared model (the collectors package's QueryEvent, internal helpers)
// → lake → the vocabulary (expr, layout), which imports nothing of floe.
func rank(pkg string) (int, bool) {
	area, _, _ := strings.Cut(pkg, "/")
	switch {
	case area == "expr" || area == "layout":
		return 0, true
	case pkg == "internal/editdist" || pkg == "internal/jsonenc":
		// Leaf helpers that import nothing of floe: lake's table
		// suggestions and the configuration's key suggestions share
		// editdist; every hand-written MarshalJSON encodes with jsonenc.
		return 0, true
	case area == "lake":
		return 1, true
	case pkg == "collectors" || area == "internal":
		return 2, true
	case area == "analyzer" || area == "simulator" || area == "rewriter" || area == "collectors":
		return 3, true
	case area == "control":
		return 4, true
	case area == "cmd" || area == "bench":
		return 5, true
	}
	return 0, false
}

// allowed are the edges across stages that the layering permits on
// purpose, with why.
var allowed = map[string]string{
	// The simulator replays a workload file of SQL statements: only code that
	// parses SQL imports the parser.
	"simulator -> analyzer/extract": "WorkloadFromSQL parses SQL workload files",
	// Telemetry ingestion normalizes each event before it is stored: the
	// tables and filters of its SQL, parsed in the engine's dialect, are
	// merged with what the source reported. The parsers of the sources
	// themselves never parse SQL.
	"collectors/ingest -> analyzer/extract": "ingestion parses each event's SQL with the engine's dialect",
}

type listed struct {
	ImportPath string
	Imports    []string
}

// TestImportDirection fails when a floe package imports against the
// direction DESIGN.md states.
func TestImportDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v: %s", err, ee.Stderr)
	}
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []listed
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.Greater(t, len(pkgs), 10, "go list listed floe's packages")
	require.Empty(t, check(pkgs), "imports against DESIGN.md's direction (cmd → control → stages → lake → expr, layout)")
}

// check returns the imports of pkgs that break the rules.
func check(pkgs []listed) []string {
	var problems []string
	for _, p := range pkgs {
		from := strings.TrimPrefix(p.ImportPath, module)
		fromRank, ok := rank(from)
		if !ok {
			problems = append(problems, from+": a top-level package DESIGN.md does not place; add it to rank")
			continue
		}
		fromArea, _, _ := strings.Cut(from, "/")
		for _, imp := range p.Imports {
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			toRank, ok := rank(to)
			toArea, _, _ := strings.Cut(to, "/")
			switch {
			case !ok:
				problems = append(problems, from+" -> "+to+": unplaced package")
			case fromRank == 0:
				problems = append(problems, from+" -> "+to+": the vocabulary imports nothing of floe")
			case toArea == "cmd":
				problems = append(problems, from+" -> "+to+": nothing imports cmd")
			case toRank < fromRank, fromArea == toArea && toRank <= fromRank:
			case allowed[from+" -> "+to] != "":
			default:
				problems = append(problems, from+" -> "+to+": against the import direction")
			}
		}
	}
	return problems
}

func TestCheckCatchesWrongImports(t *testing.T) {
	m := func(s string) string { return module + s }
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"control", "rewriter", true},
		{"rewriter", "lake", true},
		{"rewriter", "layout", true},
		{"collectors/trinolive", "collectors/trino", true},
		{"simulator", "analyzer/extract", true},
		{"collectors/ingest", "analyzer/extract", true},
		{"collectors/ingest", "collectors", true},
		{"collectors/ingest", "control/store", false},
		{"collectors/ingest", "control/config", false},
		{"collectors/trino", "analyzer/extract", false},
		{"rewriter", "simulator", false},
		{"analyzer", "simulator", false},
		{"lake", "rewriter", false},
		{"layout", "lake", false},
		{"expr", "layout", false},
		{"control", "cmd/floe", false},
		{"rewriter", "control", false},
		{"newtop", "lake", false},
	} {
		got := check([]listed{{ImportPath: m(tc.from), Imports: []string{m(tc.to), "fmt"}}})
		require.Equal(t, tc.ok, len(got) == 0, "%s -> %s: %v", tc.from, tc.to, got)
	}
}
