package collectors

import (
	"fmt"
	"strings"
)

// DetectBytes is how much decompressed content [Collect] gives
// Parser.Detect.
const DetectBytes = 64 << 10

// Detect returns the first parser whose Detect accepts a file with base name
// name and first bytes head. When none does, the error wraps
// [ErrUnrecognized] and lists the sources tried.
func Detect(parsers []Parser, name string, head []byte) (Parser, error) {
	for _, p := range parsers {
		if p.Detect(name, head) {
			return p, nil
		}
	}
	tried := make([]string, len(parsers))
	for i, p := range parsers {
		tried[i] = p.Source()
	}
	return nil, fmt.Errorf("%s: %w (tried %s; use --source to force one)", name, ErrUnrecognized, strings.Join(tried, ", "))
}

// ParserFor returns the parser whose Source is source, compared
// case-insensitively; the error wraps [ErrUnknownSource] and lists the
// known sources.
func ParserFor(parsers []Parser, source string) (Parser, error) {
	names := make([]string, len(parsers))
	for i, p := range parsers {
		if strings.EqualFold(p.Source(), source) {
			return p, nil
		}
		names[i] = p.Source()
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownSource, source, strings.Join(names, ", "))
}
