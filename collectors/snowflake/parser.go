package snowflake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/floe-project/floe/collectors"
)

// Parser reads one QUERY_HISTORY or ACCESS_HISTORY export, or an export of
// both joined, and emits one event per row. It keeps no state; see [Joiner]
// to join two files.
type Parser struct{}

var _ collectors.Parser = Parser{}

// Source returns "snowflake".
func (Parser) Source() string { return Source }

// Detect matches a header row or JSON keys holding QUERY_ID together with
// QUERY_TEXT or one of ACCESS_HISTORY's object columns, in any case.
func (Parser) Detect(_ string, head []byte) bool { return detect(head) }

func detect(head []byte) bool {
	h := trimHead(head)
	if len(h) == 0 {
		return false
	}
	up := bytes.ToUpper(h)
	if h[0] == '{' || h[0] == '[' {
		if !bytes.Contains(up, []byte(`"QUERY_ID"`)) {
			return false
		}
		for _, c := range []string{"QUERY_TEXT", "BASE_OBJECTS_ACCESSED", "DIRECT_OBJECTS_ACCESSED"} {
			if bytes.Contains(up, []byte(`"`+c+`"`)) {
				return true
			}
		}
		return false
	}
	first, _, _ := bytes.Cut(up, []byte("\n"))
	sep := ","
	if bytes.Count(first, []byte("\t")) > bytes.Count(first, []byte(",")) {
		sep = "\t"
	}
	cols := map[string]bool{}
	for f := range strings.SplitSeq(string(first), sep) {
		cols[strings.Trim(strings.TrimSpace(f), `"`)] = true
	}
	return cols["QUERY_ID"] && (cols["QUERY_TEXT"] || cols["BASE_OBJECTS_ACCESSED"] || cols["DIRECT_OBJECTS_ACCESSED"])
}

// Parse emits one event per row: rows with QUERY_HISTORY columns give
// complete events (with tables when the row also has ACCESS_HISTORY
// columns); ACCESS_HISTORY-only rows give events with State UNKNOWN.
func (Parser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return readRows(ctx, name, r, func(rw row, pos collectors.BadRecord) error {
		h, err := split(rw)
		if errors.Is(err, errUnfinished) {
			return nil
		}
		if err != nil {
			pos.Reason = err.Error()
			return bad(pos)
		}
		return emit(join(h.qh, h.ah))
	}, bad)
}

// Joiner joins QUERY_HISTORY and ACCESS_HISTORY rows on QUERY_ID across
// any number of files given in any order. Parse emits a query's event as
// soon as both halves have been read (at once for a row holding both);
// [Joiner.Flush] emits the halves still waiting for their other half.
// Events emitted by Flush do not pass through the Parse caller, so a
// caller that counts or deduplicates events must pass Flush the same sink.
//
// A Joiner is safe for concurrent use. Memory is proportional to the
// number of queries waiting for their other half.
type Joiner struct {
	mu      sync.Mutex
	pending map[string]*halves
	order   []string
	done    map[string]bool
}

var _ collectors.Parser = (*Joiner)(nil)

// NewJoiner returns an empty Joiner.
func NewJoiner() *Joiner {
	return &Joiner{pending: map[string]*halves{}, done: map[string]bool{}}
}

// Source returns "snowflake".
func (*Joiner) Source() string { return Source }

// Detect is [Parser.Detect].
func (*Joiner) Detect(_ string, head []byte) bool { return detect(head) }

// Parse reads one file, emitting the queries it completes.
func (j *Joiner) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	return readRows(ctx, name, r, func(rw row, pos collectors.BadRecord) error {
		h, err := split(rw)
		if errors.Is(err, errUnfinished) {
			return nil
		}
		if err != nil {
			pos.Reason = err.Error()
			return bad(pos)
		}
		ev, ok := j.add(h)
		if !ok {
			return nil
		}
		return emit(ev)
	}, bad)
}

// add records h and returns the joined event when the query is complete.
// Halves of a query already emitted are dropped.
func (j *Joiner) add(h halves) (collectors.QueryEvent, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.done[h.id] {
		return collectors.QueryEvent{}, false
	}
	p, ok := j.pending[h.id]
	if !ok {
		p = &halves{id: h.id}
		j.pending[h.id] = p
		j.order = append(j.order, h.id)
	}
	if h.qh != nil && p.qh == nil {
		p.qh = h.qh
	}
	if h.ah != nil && p.ah == nil {
		p.ah = h.ah
	}
	if p.qh == nil || p.ah == nil {
		return collectors.QueryEvent{}, false
	}
	delete(j.pending, h.id)
	j.done[h.id] = true
	return join(p.qh, p.ah), true
}

// Pending is the number of queries read with only one half so far.
func (j *Joiner) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.pending)
}

// Flush emits every query still missing a half, in the order first read,
// as far as its one half tells, and empties the Joiner's pending set. It
// stops at the first error from emit, keeping the rest pending.
func (j *Joiner) Flush(emit func(collectors.QueryEvent) error) error {
	for {
		j.mu.Lock()
		var next *halves
		for len(j.order) > 0 && next == nil {
			id := j.order[0]
			j.order = j.order[1:]
			if p, ok := j.pending[id]; ok {
				next = p
			}
		}
		if next == nil {
			j.mu.Unlock()
			return nil
		}
		delete(j.pending, next.id)
		j.done[next.id] = true
		j.mu.Unlock()
		if err := emit(join(next.qh, next.ah)); err != nil {
			return err
		}
	}
}
