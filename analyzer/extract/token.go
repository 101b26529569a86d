package extract

import (
	"strconv"
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // unquoted identifier or keyword
	tQuoted         // quoted identifier ("x", `x`)
	tString         // string literal in any quoting
	tNumber         // numeric literal as written
	tParam          // ?, $1, :name, ${var}, $name
	tJinja          // {{ … }}
	tStage          // Snowflake @stage/path
	tOp             // operator or punctuation
)

// String escape rules, stored in token.esc.
const (
	escNone      uint8 = iota // no escapes (raw, dollar-quoted)
	escDouble                 // doubled quote char only
	escBackslash              // doubled quote and backslash escapes
)

// token is a span of the source. For tString and tQuoted, vpos:vend is the
// content between the quotes; for other kinds it equals pos:end.
type token struct {
	kind       tokKind
	esc        uint8
	quote      byte
	pos, end   int32
	vpos, vend int32
}

// tokenizer state: the source, the dialect and the warnings it adds.
type tokenizer struct {
	d     Dialect
	s     string
	toks  []token
	warns *warnList
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tokenize splits s into tokens. It never fails: unterminated strings,
// comments and templates run to the end of the input with a warning.
func tokenize(d Dialect, s string, warns *warnList) []token {
	t := tokenizer{d: d, s: s, warns: warns, toks: make([]token, 0, len(s)/4+4)}
	t.run()
	return t.toks
}

func (t *tokenizer) emit(k tokKind, pos, end int) {
	t.toks = append(t.toks, token{kind: k, pos: int32(pos), end: int32(end), vpos: int32(pos), vend: int32(end)})
}

func (t *tokenizer) prevKind() (tokKind, string) {
	if len(t.toks) == 0 {
		return tEOF, ""
	}
	p := t.toks[len(t.toks)-1]
	return p.kind, t.s[p.pos:p.end]
}

func (t *tokenizer) run() {
	s := t.s
	n := len(s)
	i := 0
	for i < n {
		c := s[i]
		switch {
		case c <= ' ':
			i++
		case c == '-' && i+1 < n && s[i+1] == '-':
			i = lineEnd(s, i)
		case c == '/' && i+1 < n && s[i+1] == '/' && t.d == Snowflake:
			i = lineEnd(s, i)
		case c == '/' && i+1 < n && s[i+1] == '*':
			i = t.blockComment(i)
		case c == '{' && i+1 < n && (s[i+1] == '{' || s[i+1] == '%' || s[i+1] == '#'):
			i = t.jinja(i)
		case c == '\'':
			i = t.str(i, i, '\'', t.stringEsc())
		case c == '"':
			if t.d == Spark {
				i = t.str(i, i, '"', escBackslash)
			} else {
				i = t.quoted(i, '"')
			}
		case c == '`':
			i = t.quoted(i, '`')
		case c == '$':
			i = t.dollar(i)
		case isDigit(c) || c == '.' && i+1 < n && isDigit(s[i+1]) && !t.afterName():
			i = t.number(i)
		case isIdentStart(c):
			i = t.ident(i)
		case c == ':':
			i = t.colon(i)
		case c == '?':
			t.emit(tParam, i, i+1)
			i++
		case c == '@' && i+1 < n && (isIdentStart(s[i+1]) || s[i+1] == '%' || s[i+1] == '~'):
			j := i + 1
			for j < n && (isIdentPart(s[j]) || s[j] == '.' || s[j] == '/' || s[j] == '%' || s[j] == '~' || s[j] == '-') {
				j++
			}
			t.emit(tStage, i, j)
			i = j
		default:
			i = t.op(i)
		}
	}
}

func lineEnd(s string, i int) int {
	j := strings.IndexByte(s[i:], '\n')
	if j < 0 {
		return len(s)
	}
	return i + j + 1
}

func (t *tokenizer) blockComment(i int) int {
	s := t.s
	nest := t.d == Spark || t.d == DuckDB
	depth := 0
	for j := i; j+1 < len(s); j++ {
		switch {
		case s[j] == '/' && s[j+1] == '*':
			if depth == 0 || nest {
				depth++
			}
			j++
		case s[j] == '*' && s[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	t.warns.add("unterminated block comment at offset " + strconv.Itoa(i))
	return len(s)
}

// jinja handles {{ expr }}, {% block %} and {# comment #}. Expressions
// become a tJinja token; blocks and comments are skipped.
func (t *tokenizer) jinja(i int) int {
	s := t.s
	var closer string
	switch s[i+1] {
	case '{':
		closer = "}}"
	case '%':
		closer = "%}"
	default:
		closer = "#}"
	}
	t.warns.add("statement contains jinja templating; templates were read as placeholders")
	j := strings.Index(s[i+2:], closer)
	end := len(s)
	if j >= 0 {
		end = i + 2 + j + 2
	} else {
		t.warns.add("unterminated jinja template at offset " + strconv.Itoa(i))
	}
	if closer == "}}" {
		t.emit(tJinja, i, end)
	}
	return end
}

func (t *tokenizer) stringEsc() uint8 {
	switch t.d {
	case Spark, Snowflake:
		return escBackslash
	}
	return escDouble
}

// str scans a string literal whose opening quote is at q; pos is where the
// token starts (before any prefix such as E or r).
func (t *tokenizer) str(pos, q int, quote byte, esc uint8) int {
	s := t.s
	j := q + 1
	for j < len(s) {
		c := s[j]
		if c == '\\' && esc == escBackslash {
			j += 2
			continue
		}
		if c == quote {
			if j+1 < len(s) && s[j+1] == quote && esc != escNone {
				j += 2
				continue
			}
			t.toks = append(t.toks, token{kind: tString, esc: esc, quote: quote, pos: int32(pos), end: int32(j + 1), vpos: int32(q + 1), vend: int32(j)})
			return j + 1
		}
		j++
	}
	if j > len(s) {
		j = len(s)
	}
	t.warns.add("unterminated string literal at offset " + strconv.Itoa(pos))
	t.toks = append(t.toks, token{kind: tString, esc: esc, quote: quote, pos: int32(pos), end: int32(len(s)), vpos: int32(q + 1), vend: int32(len(s))})
	return len(s)
}

func (t *tokenizer) quoted(i int, quote byte) int {
	s := t.s
	j := i + 1
	for j < len(s) {
		if s[j] == quote {
			if j+1 < len(s) && s[j+1] == quote {
				j += 2
				continue
			}
			t.toks = append(t.toks, token{kind: tQuoted, esc: escDouble, quote: quote, pos: int32(i), end: int32(j + 1), vpos: int32(i + 1), vend: int32(j)})
			return j + 1
		}
		j++
	}
	t.warns.add("unterminated quoted identifier at offset " + strconv.Itoa(i))
	t.toks = append(t.toks, token{kind: tQuoted, esc: escDouble, quote: quote, pos: int32(i), end: int32(len(s)), vpos: int32(i + 1), vend: int32(len(s))})
	return len(s)
}

func (t *tokenizer) dollar(i int) int {
	s := t.s
	n := len(s)
	switch {
	case i+1 < n && isDigit(s[i+1]):
		j := i + 1
		for j < n && isDigit(s[j]) {
			j++
		}
		t.emit(tParam, i, j)
		return j
	case i+1 < n && s[i+1] == '{':
		j := strings.IndexByte(s[i:], '}')
		end := n
		if j >= 0 {
			end = i + j + 1
		}
		t.emit(tParam, i, end)
		return end
	}
	// $$…$$ or $tag$…$tag$
	j := i + 1
	for j < n && (isIdentStart(s[j]) || isDigit(s[j])) {
		j++
	}
	if j < n && s[j] == '$' {
		tag := s[i : j+1]
		k := strings.Index(s[j+1:], tag)
		if k < 0 {
			t.warns.add("unterminated dollar-quoted string at offset " + strconv.Itoa(i))
			t.toks = append(t.toks, token{kind: tString, esc: escNone, pos: int32(i), end: int32(n), vpos: int32(j + 1), vend: int32(n)})
			return n
		}
		end := j + 1 + k
		t.toks = append(t.toks, token{kind: tString, esc: escNone, pos: int32(i), end: int32(end + len(tag)), vpos: int32(j + 1), vend: int32(end)})
		return end + len(tag)
	}
	if j > i+1 {
		// $name: a Snowflake session variable (or a DuckDB named
		// parameter), a value unknown until run time.
		t.emit(tParam, i, j)
		return j
	}
	t.emit(tOp, i, i+1)
	return i + 1
}

// afterName reports whether the previous token ends a name, so that a
// following '.' is a qualifier dot rather than the start of a number.
func (t *tokenizer) afterName() bool {
	k, txt := t.prevKind()
	return k == tIdent || k == tQuoted || k == tOp && (txt == ")" || txt == "]")
}

func (t *tokenizer) number(i int) int {
	s := t.s
	n := len(s)
	j := i
	if j+1 < n && s[j] == '0' && (s[j+1]|0x20) == 'x' {
		j += 2
		for j < n && (isDigit(s[j]) || (s[j]|0x20) >= 'a' && (s[j]|0x20) <= 'f') {
			j++
		}
		t.emit(tNumber, i, j)
		return j
	}
	for j < n && (isDigit(s[j]) || s[j] == '_') {
		j++
	}
	if j < n && s[j] == '.' && (j+1 >= n || s[j+1] != '.') {
		j++
		for j < n && (isDigit(s[j]) || s[j] == '_') {
			j++
		}
	}
	if j < n && (s[j]|0x20) == 'e' {
		k := j + 1
		if k < n && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < n && isDigit(s[k]) {
			for k < n && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	if t.d == Spark && j < n {
		// Spark typed numeric suffixes: 10L, 2S, 1Y, 1.5D, 1.5F, 1BD.
		c := s[j] | 0x20
		switch {
		case c == 'b' && j+1 < n && (s[j+1]|0x20) == 'd' && (j+2 >= n || !isIdentPart(s[j+2])):
			j += 2
		case (c == 'l' || c == 's' || c == 'y' || c == 'd' || c == 'f') && (j+1 >= n || !isIdentPart(s[j+1])):
			j++
		}
	}
	t.emit(tNumber, i, j)
	return j
}

func (t *tokenizer) ident(i int) int {
	s := t.s
	n := len(s)
	j := i + 1
	for j < n && isIdentPart(s[j]) {
		j++
	}
	if j < n && s[j] == '\'' && j-i <= 2 {
		// Prefixed strings: E'…' (escapes), r'…' (raw), X'…', B'…', N'…', U&'…'.
		switch strings.ToLower(s[i:j]) {
		case "e":
			return t.str(i, j, '\'', escBackslash)
		case "r":
			return t.str(i, j, '\'', escNone)
		case "x", "b", "n":
			return t.str(i, j, '\'', t.stringEsc())
		}
	}
	if j+1 < n && s[j] == '&' && s[j+1] == '\'' && j-i == 1 && (s[i]|0x20) == 'u' {
		return t.str(i, j+1, '\'', escDouble)
	}
	if j < n && s[j] == '"' && t.d == Spark && j-i == 1 && (s[i]|0x20) == 'r' {
		return t.str(i, j, '"', escNone)
	}
	t.emit(tIdent, i, j)
	return j
}

func (t *tokenizer) colon(i int) int {
	s := t.s
	n := len(s)
	if i+1 < n && (s[i+1] == ':' || s[i+1] == '=') {
		t.emit(tOp, i, i+2)
		return i + 2
	}
	if i+1 < n && (isIdentStart(s[i+1]) || isDigit(s[i+1])) && !t.afterName() {
		j := i + 1
		for j < n && isIdentPart(s[j]) {
			j++
		}
		t.emit(tParam, i, j)
		return j
	}
	t.emit(tOp, i, i+1)
	return i + 1
}

// opLen returns the length of the operator at the start of s: the
// multi-character operators <=> ->> !~~ <> != == <= >= || -> => ~~ !~ << >>
// ** // @> <@ && or a single character.
func opLen(s string) int {
	var b1, b2 byte
	if len(s) > 1 {
		b1 = s[1]
	}
	if len(s) > 2 {
		b2 = s[2]
	}
	switch s[0] {
	case '<':
		switch {
		case b1 == '=' && b2 == '>':
			return 3
		case b1 == '>' || b1 == '=' || b1 == '<' || b1 == '@':
			return 2
		}
	case '-':
		switch {
		case b1 == '>' && b2 == '>':
			return 3
		case b1 == '>':
			return 2
		}
	case '!':
		switch {
		case b1 == '~' && b2 == '~':
			return 3
		case b1 == '=' || b1 == '~':
			return 2
		}
	case '>':
		if b1 == '=' || b1 == '>' {
			return 2
		}
	case '=':
		if b1 == '=' || b1 == '>' {
			return 2
		}
	case '|':
		if b1 == '|' {
			return 2
		}
	case '~':
		if b1 == '~' {
			return 2
		}
	case '*':
		if b1 == '*' {
			return 2
		}
	case '/':
		if b1 == '/' {
			return 2
		}
	case '@':
		if b1 == '>' {
			return 2
		}
	case '&':
		if b1 == '&' {
			return 2
		}
	}
	return 1
}

func (t *tokenizer) op(i int) int {
	n := opLen(t.s[i:])
	t.emit(tOp, i, i+n)
	return i + n
}

// unescape returns the content of a string or quoted-identifier token.
func unescape(src string, tk token) string {
	v := src[tk.vpos:tk.vend]
	if tk.esc == escNone {
		return v
	}
	q := tk.quote
	if q == 0 {
		q = '\''
	}
	if strings.IndexByte(v, q) < 0 && (tk.esc != escBackslash || strings.IndexByte(v, '\\') < 0) {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == q && i+1 < len(v) && v[i+1] == q:
			b.WriteByte(q)
			i++
		case c == '\\' && tk.esc == escBackslash && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				b.WriteByte(v[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
