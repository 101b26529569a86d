package athena

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/floe-project/floe/collectors"
)

// forEachJSON calls fn with every top-level JSON value of r and the
// position to report it under: each element of a top-level array (Index),
// each line of NDJSON (Line), or each value of a stream of pretty-printed
// values (Index). An NDJSON line that is not JSON is reported to bad and
// skipped; a syntax error inside an array or a pretty-printed stream is
// reported once and ends the file, since nothing after it can be framed.
func forEachJSON(ctx context.Context, name string, r io.Reader,
	fn func(raw json.RawMessage, pos collectors.BadRecord) error,
	bad func(collectors.BadRecord) error,
) error {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := firstByte(br)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if first == '[' {
		return decodeStream(ctx, name, br, true, fn, bad)
	}
	line, err := br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if !json.Valid(bytes.TrimSpace(line)) {
		// Not NDJSON: one pretty-printed value or several concatenated.
		return decodeStream(ctx, name, io.MultiReader(bytes.NewReader(line), br), false, fn, bad)
	}
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n > 1 {
			line, err = br.ReadBytes('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read %s: %w", name, err)
			}
			if len(line) == 0 && errors.Is(err, io.EOF) {
				return nil
			}
		}
		trimmed := bytes.TrimSpace(line)
		pos := collectors.BadRecord{File: name, Line: n}
		switch {
		case len(trimmed) == 0:
		case !json.Valid(trimmed):
			pos.Reason = "invalid JSON"
			if e := bad(pos); e != nil {
				return e
			}
		default:
			if e := fn(json.RawMessage(trimmed), pos); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

func decodeStream(ctx context.Context, name string, r io.Reader, array bool,
	fn func(raw json.RawMessage, pos collectors.BadRecord) error,
	bad func(collectors.BadRecord) error,
) error {
	dec := json.NewDecoder(r)
	if array {
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
	for i := 1; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if array && !dec.More() {
			return nil
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if !array && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var syn *json.SyntaxError
			var typ *json.UnmarshalTypeError
			if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) {
				return bad(collectors.BadRecord{File: name, Index: i, Reason: "invalid JSON: " + err.Error()})
			}
			return fmt.Errorf("read %s: %w", name, err)
		}
		if e := fn(raw, collectors.BadRecord{File: name, Index: i}); e != nil {
			return e
		}
	}
}

// firstByte returns the first byte of br that is not white space or a
// UTF-8 byte order mark, without consuming it.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
		case 0xEF:
			bom, _ := br.Peek(3)
			if bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				_, _ = br.Discard(3)
				continue
			}
			return b[0], nil
		default:
			return b[0], nil
		}
	}
}

// headStart returns head without leading white space and byte order mark.
func headStart(head []byte) []byte {
	head = bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte{0xEF, 0xBB, 0xBF})
	return bytes.TrimLeft(head, " \t\r\n")
}
