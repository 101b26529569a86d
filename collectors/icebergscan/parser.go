package icebergscan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/floe-project/floe/collectors"
)

// Parser reads files of scan reports: NDJSON (or a JSON array, or
// pretty-printed values) whose records are ReportMetricsRequest bodies,
// bare ScanReports as Iceberg's ScanReportParser writes them (no
// report-type), or capture envelopes wrapping either:
//
//	{"time":"2024-05-01T12:51:30Z","path":"/v1/lake/namespaces/sales/tables/orders/metrics","body":{…}}
//
// An envelope's time ("time", "timestamp" or "received-at"; RFC 3339 or
// epoch seconds) becomes the event's StartTime and its path ("path",
// "uri" or "url") names the table; its body ("body", "request" or
// "report") may be an object or JSON text in a string.
//
// Use a *Parser; the zero value is ready to use.
type Parser struct {
	// Now gives the StartTime of bare reports, which carry no time.
	// Default: time.Now, the time of collection.
	Now func() time.Time

	commits, metadata atomic.Int64
}

var _ collectors.Parser = (*Parser)(nil)

// NewParser returns a Parser that dates bare reports with the time of
// collection.
func NewParser() *Parser { return &Parser{} }

// Source returns "iceberg-scanreport".
func (*Parser) Source() string { return Source }

// CommitReports is how many commit reports Parse has skipped.
func (p *Parser) CommitReports() int64 { return p.commits.Load() }

// MetadataTableReports is how many scan reports of metadata tables
// (t.files, t.snapshots, …) Parse has skipped.
func (p *Parser) MetadataTableReports() int64 { return p.metadata.Load() }

// Detect matches JSON whose head has a report-type of scan-report or
// commit-report, or the leading keys of a bare ScanReport (table-name and
// snapshot-id, as ScanReportParser writes it).
func (*Parser) Detect(_ string, head []byte) bool {
	h := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(h) == 0 || (h[0] != '{' && h[0] != '[') {
		return false
	}
	if bytes.Contains(h, []byte(`"table-name"`)) && bytes.Contains(h, []byte(`"snapshot-id"`)) {
		return true
	}
	return bytes.Contains(h, []byte(`report-type`)) &&
		(bytes.Contains(h, []byte(`scan-report`)) || bytes.Contains(h, []byte(`commit-report`)))
}

type envelope struct {
	Time       json.RawMessage `json:"time"`
	Timestamp  json.RawMessage `json:"timestamp"`
	ReceivedAt json.RawMessage `json:"received-at"`
	Path       string          `json:"path"`
	URI        string          `json:"uri"`
	URL        string          `json:"url"`
	Body       json.RawMessage `json:"body"`
	Request    json.RawMessage `json:"request"`
	Report     json.RawMessage `json:"report"`
}

// Parse emits one event per scan report.
func (p *Parser) Parse(ctx context.Context, name string, r io.Reader, emit func(collectors.QueryEvent) error, bad func(collectors.BadRecord) error) error {
	now := p.Now
	if now == nil {
		now = time.Now
	}
	return collectors.ReadJSONRecords(ctx, name, r, func(rec []byte, pos collectors.BadRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := p.record(rec, now)
		switch {
		case errors.Is(err, errCommitReport):
			p.commits.Add(1)
			return nil
		case errors.Is(err, errMetadataTable):
			p.metadata.Add(1)
			return nil
		case err != nil:
			pos.Reason = err.Error()
			return bad(pos)
		}
		return emit(ev)
	}, bad)
}

func (p *Parser) record(rec []byte, now func() time.Time) (collectors.QueryEvent, error) {
	var r wireReport
	if err := json.Unmarshal(rec, &r); err != nil {
		return collectors.QueryEvent{}, errors.New(collectors.JSONReason(rec, err))
	}
	env := &r.envelope
	body := firstRaw(env.Body, env.Request, env.Report)
	if r.ReportType != "" || len(body) == 0 && r.isBare() {
		return r.event(rec, location{}, now(), true)
	}
	if len(body) == 0 {
		return collectors.QueryEvent{}, fmt.Errorf("record is neither a report (no report-type, table-name or filter) nor an envelope (no body)")
	}
	var text string
	if json.Unmarshal(body, &text) == nil {
		body = []byte(text)
	}
	at := now()
	if raw := firstRaw(env.Time, env.Timestamp, env.ReceivedAt); len(raw) > 0 {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		t, err := collectors.ParseTime(s)
		if err != nil {
			return collectors.QueryEvent{}, fmt.Errorf("envelope time: %w", err)
		}
		at = t
	}
	var loc location
	if path := firstString(env.Path, env.URI, env.URL); path != "" {
		if u, err := url.Parse(path); err == nil {
			var ok bool
			if loc, ok = parsePath(u.EscapedPath()); !ok {
				return collectors.QueryEvent{}, fmt.Errorf("envelope path %q is not …/namespaces/{ns}/tables/{table}/metrics", path)
			}
		}
	}
	return decode(body, loc, at, true)
}

// parsePath reads the namespace and table of a REST metrics path
// (escaped form; namespace levels are joined by %1F).
func parsePath(escaped string) (location, bool) {
	segs := strings.Split(strings.TrimSuffix(escaped, "/"), "/")
	n := len(segs)
	if n < 5 || segs[n-1] != "metrics" || segs[n-3] != "tables" || segs[n-5] != "namespaces" {
		return location{}, false
	}
	ns, err := url.PathUnescape(segs[n-4])
	if err != nil || ns == "" {
		return location{}, false
	}
	tbl, err := url.PathUnescape(segs[n-2])
	if err != nil || tbl == "" {
		return location{}, false
	}
	return location{namespace: strings.Split(ns, "\x1f"), table: tbl}, true
}

func firstRaw(vs ...json.RawMessage) json.RawMessage {
	for _, v := range vs {
		v = bytes.TrimSpace(v)
		if len(v) > 0 && !bytes.Equal(v, []byte("null")) {
			return v
		}
	}
	return nil
}

func firstString(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
