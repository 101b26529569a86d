package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmePrint makes TestReadme log what every command printed, for writing
// a new sample: go test -run TestReadme -v -readme.print ./cmd/floe.
var readmePrint = flag.Bool("readme.print", false, "TestReadme: log the output of every README command")

// TestReadme runs README.md: every floe command of its shell and console
// blocks, in the README's order, in one demo warehouse, and compares what
// each prints with the sample under it, so that the README cannot drift
// from floe. The conventions, which README.md's first lines repeat for its
// editors:
//
//   - A ```sh block lists commands without their output. Each is run and
//     must exit 0, or N when its comment begins "exit N"
//     (`floe health --fail-on critical   # exit 3 if …`).
//   - A ```console or ```text block holds "$ floe …" commands, each followed
//     by what it prints (standard output and error together, as a terminal
//     shows them). The output must match line for line, with runs of spaces
//     counted as one, a line of just "…" standing for any number of lines,
//     and "…" within a line for any text (a figure that varies from run to
//     run: keep these few). A sample that is JSON is compared as JSON. A command whose
//     sample holds a "floe: " error line must fail (exit non-zero); any
//     other must exit 0. `echo "…" | floe …` feeds the text to floe.
//   - `<!-- readme-test: not run: REASON -->` on the line before a block
//     marks it illustrative: its commands need what the test does not have
//     (a REST catalog, your own log files, a listener). They are only
//     checked to name a verb and flags floe has, with valid arguments.
//   - `<!-- readme-test: floe.yaml -->` before a ```yaml block makes it
//     ./floe.yaml for the commands after it, as a reader who saves it would.
//
// The warehouse is the README's own `floe demo`, built once with
// --as-of testAsOf in an empty directory that is the working directory, so
// ./floe-data, ./floe.yaml and report.html are where a reader's would be.
// Every command runs in-process with the factory's clock at --as-of plus an
// hour. What still varies from run to run is masked, and nothing else:
// durations (built in 31.2s, a step's 251ms), and the ids floe makes up:
// a plan id, run id or snapshot id in a sample that the README has not used
// before matches any id of its kind at that place and becomes the README's
// name for it, so a later command that names the README's plan id runs with
// floe's, and a later sample must show the same id where floe does. The
// temporary directory reads as /home/me, this process's host:pid (a run's
// runner) as myhost:4242, and $USER is alice.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the demo warehouse")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks := readmeBlocks(string(doc))

	dir := t.TempDir()
	// A FLOE_ variable of the environment would change what floe reads.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "FLOE_") && !strings.HasPrefix(k, "FLOE_TEST_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("USER", "alice") // who runs the README's commands (--by defaults to $USER)
	t.Chdir(dir)
	asOf, err := time.Parse(time.RFC3339, testAsOf)
	require.NoError(t, err)
	host, err := os.Hostname()
	require.NoError(t, err)
	r := &readmeRun{t: t, now: asOf.Add(time.Hour), ids: map[string]string{}, named: map[string]string{},
		local: []string{dir, host + ":" + strconv.Itoa(os.Getpid())}, shown: []string{"/home/me", "myhost:4242"}}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		r.local, r.shown = append(r.local, real), append(r.shown, "/home/me")
	}

	ran, demo := 0, false
	for _, b := range blocks {
		switch {
		case b.marker == "floe.yaml":
			require.Equal(t, "yaml", b.lang, "README.md:%d: the floe.yaml marker goes before a yaml block", b.line)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "floe.yaml"), []byte(strings.Join(b.lines, "\n")+"\n"), 0o644))
			continue
		case b.marker != "" && !strings.HasPrefix(b.marker, "not run: "):
			t.Fatalf("README.md:%d: unknown readme-test marker %q", b.line-1, b.marker)
		}
		cmds := b.commands(t)
		if len(cmds) == 0 {
			continue
		}
		if b.marker != "" {
			for _, c := range cmds {
				checkParses(t, fmt.Sprintf("README.md:%d", c.line), c.args)
			}
			continue
		}
		for _, c := range cmds {
			if c.args[0] == "demo" && !demo {
				// The README's own demo command, on a fixed day.
				c.args, demo = append(c.args, "--as-of", testAsOf), true
			}
			require.True(t, demo, "README.md:%d: %s runs before the README's floe demo", c.line, c.text)
			r.check(c)
			ran++
		}
	}
	require.True(t, demo, "the README builds its warehouse with floe demo")
	require.Greater(t, ran, 30, "the README's commands")
}

// readmeBlock is a fenced block of README.md.
type readmeBlock struct {
	lang string
	// line is the README line of the block's first content line.
	line  int
	lines []string
	// marker is the readme-test marker on the line before the fence.
	marker string
}

var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (.+?) -->$`)

// readmeBlocks reads the fenced blocks of doc.
func readmeBlocks(doc string) []readmeBlock {
	var (
		out  []readmeBlock
		cur  *readmeBlock
		prev string
	)
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &readmeBlock{lang: strings.TrimPrefix(line, "```"), line: i + 2}
			if m := readmeMarker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				cur.marker = m[1]
			}
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
		prev = line
	}
	return out
}

// readmeCmd is one floe command of a block, with its sample output.
type readmeCmd struct {
	line int    // README line of the command
	text string // as written
	args []string
	// stdin is the text an `echo "…" |` feeds it.
	stdin string
	// exit is what it must exit with: 0, or N from a sh comment "exit N";
	// -1 when it must fail (its sample shows a "floe: " error).
	exit int
	// out is the sample output (console and text blocks), each line with
	// its README line; withOut says the block shows output.
	out     []readmeLine
	withOut bool
}

type readmeLine struct {
	n    int
	text string
}

var exitComment = regexp.MustCompile(`^exit (\d+)\b`)

// commands are the floe commands of b: every command of a sh block, the
// "$ " lines of a console or text block. A block of other commands (make)
// has none.
func (b readmeBlock) commands(t *testing.T) []readmeCmd {
	t.Helper()
	var cmds []readmeCmd
	switch b.lang {
	case "sh":
		for i := 0; i < len(b.lines); i++ {
			n, text := b.line+i, b.lines[i]
			for strings.HasSuffix(text, `\`) && i+1 < len(b.lines) {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.lines[i])
			}
			c, comment, ok := parseReadmeCmd(t, n, text)
			if !ok {
				continue
			}
			if m := exitComment.FindStringSubmatch(comment); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
			}
			cmds = append(cmds, c)
		}
		if len(cmds) > 0 && b.marker == "" && len(cmds) != len(nonBlank(b.lines))-continued(b.lines) {
			t.Fatalf("README.md:%d: a sh block that runs floe runs nothing else (mark it not run)", b.line)
		}
	case "console", "text", "":
		for i := 0; i < len(b.lines); i++ {
			line := b.lines[i]
			if !strings.HasPrefix(line, "$ ") {
				if len(cmds) == 0 {
					if strings.TrimSpace(line) != "" {
						return nil // output without a command: not a command block
					}
					continue
				}
				c := &cmds[len(cmds)-1]
				c.out = append(c.out, readmeLine{b.line + i, line})
				continue
			}
			n, text := b.line+i, strings.TrimPrefix(line, "$ ")
			for strings.HasSuffix(text, `\`) && i+1 < len(b.lines) {
				i++
				text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.lines[i])
			}
			c, _, ok := parseReadmeCmd(t, n, text)
			require.True(t, ok, "README.md:%d: %q is not a floe command", n, text)
			c.withOut = true
			cmds = append(cmds, c)
		}
		for i := range cmds {
			for len(cmds[i].out) > 0 && strings.TrimSpace(cmds[i].out[len(cmds[i].out)-1].text) == "" {
				cmds[i].out = cmds[i].out[:len(cmds[i].out)-1]
			}
			for _, l := range cmds[i].out {
				if strings.HasPrefix(l.text, "floe: ") {
					cmds[i].exit = -1
				}
			}
		}
	}
	return cmds
}

func nonBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func continued(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasSuffix(l, `\`) {
			n++
		}
	}
	return n
}

// parseReadmeCmd reads text as a shell does, as far as the README needs:
// words with single or double quotes, a "# comment", and `echo "…" |`
// before floe. ok is false when it does not run floe.
func parseReadmeCmd(t *testing.T, n int, text string) (c readmeCmd, comment string, ok bool) {
	t.Helper()
	words, comment, err := shellSplit(text)
	require.NoError(t, err, "README.md:%d: %s", n, text)
	c.line, c.text = n, strings.TrimSpace(text)
	if len(words) > 3 && words[0] == "echo" && words[2] == "|" {
		c.stdin, words = words[1]+"\n", words[3:]
	}
	if len(words) < 2 || words[0] != "floe" {
		return c, comment, false
	}
	c.args = words[1:]
	return c, comment, true
}

// shellSplit splits a command line into words: single quotes keep
// everything, double quotes all but \" and \\, a backslash outside quotes
// the next character; a # starting a word begins the comment, returned
// apart. A lone | is a word of its own.
func shellSplit(s string) (words []string, comment string, err error) {
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unbalanced ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, "", fmt.Errorf("unbalanced \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '#' && !inWord:
			return words, strings.TrimSpace(s[i+1:]), nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, "", nil
}

// checkParses checks that args name a verb floe has (or are flags of floe
// itself, as --version), with flags it has and values they accept, and
// arguments its verb takes, without running it.
func checkParses(t *testing.T, where string, args []string) {
	t.Helper()
	root := newRootCmd(newFactory(nil))
	cmd, rest, err := root.Find(args)
	require.NoError(t, err, "%s: floe %s", where, strings.Join(args, " "))
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	require.NoError(t, cmd.ParseFlags(rest), "%s: floe %s", where, strings.Join(args, " "))
	if cmd == root {
		require.Empty(t, cmd.Flags().Args(), "%s: floe %s names a verb", where, strings.Join(args, " "))
		return
	}
	if cmd.Args != nil {
		require.NoError(t, cmd.Args(cmd, cmd.Flags().Args()), "%s: floe %s", where, strings.Join(args, " "))
	}
}

// readmeRun is the state of one run of the README.
type readmeRun struct {
	t   *testing.T
	now time.Time
	// ids maps the README's ids to floe's, named the other way.
	ids, named map[string]string
	// local are strings of this run that read as shown in the samples.
	local, shown []string
}

// readmeKinds are the kinds of ids floe makes up, most specific first:
// run ids, plan ids (and other random hex names), snapshot ids.
var readmeKinds = []string{`\d{8}T\d{6}Z-[0-9a-f]{8}`, `[0-9a-f]{12}`, `\d{15,20}`}

// readmeIDs finds an id of any kind, its kind by the group it matched.
var readmeIDs = regexp.MustCompile(`\b(?:(` + strings.Join(readmeKinds, `)|(`) + `))\b`)

// readmeDuration is a duration as floe prints one: 31.2s, 251ms, 1m2s.
var readmeDuration = regexp.MustCompile(`-?\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)(\d+(\.\d+)?(ns|µs|us|ms|s|m|h))*\b`)

// check runs c and compares what it prints and its exit code with the
// README's.
func (r *readmeRun) check(c readmeCmd) {
	t := r.t
	t.Helper()
	args := make([]string, len(c.args))
	for i, a := range c.args {
		for readme, real := range r.ids {
			a = strings.ReplaceAll(a, readme, real)
		}
		args[i] = a
	}
	var out bytes.Buffer
	start := time.Now()
	code := r.floe(args, c.stdin, &out)
	t.Logf("README.md:%d: %s: exit %d in %s", c.line, c.text, code, time.Since(start).Round(time.Millisecond))
	if *readmePrint {
		t.Logf("README.md:%d: floe printed:\n%s", c.line, r.rename(replaceAll(out.String(), r.local, r.shown)))
	}
	got := replaceAll(out.String(), r.local, r.shown)
	where := fmt.Sprintf("README.md:%d: %s", c.line, c.text)
	switch {
	case c.exit < 0:
		if code == 0 {
			t.Errorf("%s: exit 0, the README shows an error:\n%s", where, got)
		}
	case code != c.exit:
		t.Errorf("%s: exit %d, want %d:\n%s", where, code, c.exit, got)
	}
	if !c.withOut {
		return
	}
	if ok, diff := r.match(c.out, got); !ok {
		got = r.rename(got)
		t.Errorf("%s: the output differs from the README's (- README, + floe):\n%s\nfloe printed:\n%s", where, diff, got)
	}
}

// floe runs floe with args in-process, at the run's clock, stdin on its
// input, standard output and error both to out; it returns the exit code.
func (r *readmeRun) floe(args []string, stdin string, out *bytes.Buffer) int {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	f := newFactory(&IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: out})
	f.Now = func() time.Time { return r.now }
	return execute(r.t.Context(), f, args)
}

// rename names the ids in got as the README does, where it has named them.
func (r *readmeRun) rename(got string) string {
	return readmeIDs.ReplaceAllStringFunc(got, func(id string) string {
		if readme, ok := r.named[id]; ok {
			return readme
		}
		return id
	})
}

// replaceAll replaces each of from in s with the to at its index.
func replaceAll(s string, from, to []string) string {
	for i, f := range from {
		s = strings.ReplaceAll(s, f, to[i])
	}
	return s
}

var spaces = regexp.MustCompile(`[ \t]+`)

// readmeNormal is a line as samples are compared: durations masked, runs
// of spaces one space, no trailing space.
func readmeNormal(s string) string {
	s = readmeDuration.ReplaceAllString(s, "<duration>")
	return strings.TrimRight(spaces.ReplaceAllString(s, " "), " ")
}

// match compares got with the sample want: as JSON when the sample is
// JSON, else line by line, a line "…" standing for any lines and "…"
// within a line for any text. An id of the
// sample that the README has not named yet matches any id of its kind,
// and names the id it matched, the same for each of its occurrences; one
// it has named matches only that id. When they differ it returns a diff,
// each README line with its line number.
func (r *readmeRun) match(want []readmeLine, got string) (bool, string) {
	var wantText []string
	for _, l := range want {
		wantText = append(wantText, l.text)
	}
	var wj, gj any
	if len(want) > 0 && json.Unmarshal([]byte(strings.Join(wantText, "\n")), &wj) == nil {
		if json.Unmarshal([]byte(got), &gj) == nil && reflect.DeepEqual(wj, gj) {
			return true, ""
		}
	}
	var (
		pat    strings.Builder
		groups []string // the README id each capture group stands for
	)
	pat.WriteString(`^`)
	for _, l := range want {
		if strings.TrimSpace(l.text) == "…" {
			pat.WriteString(`(?:[^\n]*\n)*?`)
			continue
		}
		line := readmeNormal(l.text)
		// Within a line, "…" stands for any text: a figure that varies.
		literal := func(s string) string {
			return strings.ReplaceAll(regexp.QuoteMeta(s), "…", `[^\n]*?`)
		}
		last := 0
		for _, m := range readmeIDs.FindAllStringSubmatchIndex(line, -1) {
			pat.WriteString(literal(line[last:m[0]]))
			id := line[m[0]:m[1]]
			switch real, ok := r.ids[id]; {
			case ok:
				pat.WriteString(regexp.QuoteMeta(real))
			default:
				kind := 1
				for m[2*kind] < 0 {
					kind++
				}
				pat.WriteString("(" + readmeKinds[kind-1] + ")")
				groups = append(groups, id)
			}
			last = m[1]
		}
		pat.WriteString(literal(line[last:]) + `\n`)
	}
	pat.WriteString(`$`)
	gotLines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if got == "" {
		gotLines = nil
	}
	var norm strings.Builder
	for _, l := range gotLines {
		norm.WriteString(readmeNormal(l) + "\n")
	}
	m := regexp.MustCompile(pat.String()).FindStringSubmatch(norm.String())
	if m != nil {
		found, taken := map[string]string{}, map[string]string{}
		for i, id := range groups {
			real := m[i+1]
			if prev, ok := found[id]; ok && prev != real {
				return false, fmt.Sprintf("the README's %s stands for both %s and %s", id, prev, real)
			}
			if other, ok := taken[real]; (ok && other != id) || r.named[real] != "" {
				return false, fmt.Sprintf("floe's %s is both the README's %s and %s", real, id, other+r.named[real])
			}
			found[id], taken[real] = real, id
		}
		for id, real := range found {
			r.ids[id], r.named[real] = real, id
		}
		return true, ""
	}
	renamed := make([]string, len(gotLines))
	for i, l := range gotLines {
		renamed[i] = r.rename(l)
	}
	return false, readmeDiff(want, renamed)
}

// readmeDiff is a line diff of the sample want against got (the longest
// common subsequence of their normalized lines; "…" lines left out).
func readmeDiff(want []readmeLine, got []string) string {
	var w []readmeLine
	for _, l := range want {
		if strings.TrimSpace(l.text) != "…" {
			w = append(w, l)
		}
	}
	lcs := make([][]int, len(w)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if readmeNormal(w[i].text) == readmeNormal(got[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(w) || j < len(got) {
		switch {
		case i < len(w) && j < len(got) && readmeNormal(w[i].text) == readmeNormal(got[j]):
			fmt.Fprintf(&b, "  %s\n", got[j])
			i, j = i+1, j+1
		case j < len(got) && (i == len(w) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&b, "+ %s\n", got[j])
			j++
		default:
			fmt.Fprintf(&b, "- README.md:%d: %s\n", w[i].n, w[i].text)
			i++
		}
	}
	return b.String()
}
