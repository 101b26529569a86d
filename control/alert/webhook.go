package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/control/config"
)

// Sink receives alerts. Send delivers one alert or returns why it could
// not; it makes its own retries and honours ctx.
type Sink interface {
	// Name identifies the sink in logs, errors and the store's delivery
	// records.
	Name() string
	Send(ctx context.Context, a Alert) error
}

// WebhookOptions tune how a [Webhook] sends. A zero field takes its
// default.
type WebhookOptions struct {
	// Client sends the requests. Default: a client with
	// http.DefaultTransport.
	Client *http.Client
	// Attempts bounds the requests per alert. Default: 4.
	Attempts int
	// Backoff is the wait after the first failed attempt; each further
	// wait doubles it, up to MaxBackoff. Default: 1s.
	Backoff time.Duration
	// MaxBackoff caps a wait. A receiver asking (Retry-After) for a longer
	// wait is not retried within this send: the alert is retried at the
	// next evaluation instead. Default: 30s.
	MaxBackoff time.Duration
	// Timeout bounds one request. Default: 10s.
	Timeout time.Duration
	// Now reads Retry-After dates. Default: time.Now.
	Now func() time.Time
	// Sleep waits d or until ctx is done. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultWebhookOptions are the defaults of [WebhookOptions].
func DefaultWebhookOptions() WebhookOptions {
	return WebhookOptions{Attempts: 4, Backoff: time.Second, MaxBackoff: 30 * time.Second, Timeout: 10 * time.Second}
}

func (o WebhookOptions) withDefaults() WebhookOptions {
	d := DefaultWebhookOptions()
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Attempts <= 0 {
		o.Attempts = d.Attempts
	}
	if o.Backoff <= 0 {
		o.Backoff = d.Backoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = d.MaxBackoff
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return o
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Webhook is a [Sink] that POSTs each alert to a URL: {"text": summary}
// for format slack, the whole [Alert] for json.
type Webhook struct {
	cfg config.Webhook
	o   WebhookOptions
}

// NewWebhook returns the sink of w (a validated alerts.webhooks entry).
func NewWebhook(w config.Webhook, o WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alert sink %s: url %s: want an http:// or https:// URL", w.Name, config.RedactURL(w.URL))
	}
	if w.Format == "" {
		w.Format = config.FormatJSON
	}
	if w.Format != config.FormatSlack && w.Format != config.FormatJSON {
		return nil, fmt.Errorf("alert sink %s: format %q: want slack or json", w.Name, w.Format)
	}
	return &Webhook{cfg: w, o: o.withDefaults()}, nil
}

// Sinks returns a [Webhook] per alerts.webhooks entry, in order.
func Sinks(cfg config.AlertsConfig, o WebhookOptions) ([]Sink, error) {
	out := make([]Sink, 0, len(cfg.Webhooks))
	for _, w := range cfg.Webhooks {
		s, err := NewWebhook(w, o)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Name is the webhook's name.
func (w *Webhook) Name() string { return w.cfg.Name }

// String names the webhook with its URL redacted.
func (w *Webhook) String() string { return w.cfg.String() }

// Body is the request body the webhook sends for a.
func (w *Webhook) Body(a Alert) ([]byte, error) {
	if w.cfg.Format == config.FormatSlack {
		return json.Marshal(struct {
			Text string `json:"text"`
		}{SlackText(a)})
	}
	return json.Marshal(a)
}

// SlackText is the text of a slack-format alert: its state and summary.
func SlackText(a Alert) string {
	tag := "[" + string(a.State) + "]"
	if a.Repeat {
		tag = "[still firing]"
	}
	return tag + " " + a.Summary
}

// Send POSTs a, retrying a network error, a 408, a 429 or a 5xx with
// exponential backoff (a 429's or 503's Retry-After is honoured) up to
// Attempts requests. Other statuses are not retried. The error is a
// [*SinkError], which never holds the webhook's URL unredacted.
func (w *Webhook) Send(ctx context.Context, a Alert) error {
	body, err := w.Body(a)
	if err != nil {
		return w.fail(0, fmt.Errorf("encode alert: %w", err))
	}
	wait := w.o.Backoff
	var last error
	for attempt := 1; attempt <= w.o.Attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return w.fail(attempt-1, errors.Join(last, err))
		}
		retry, after, err := w.post(ctx, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry || attempt == w.o.Attempts {
			return w.fail(attempt, last)
		}
		d := min(wait, w.o.MaxBackoff)
		wait *= 2
		if after > 0 {
			if after > w.o.MaxBackoff {
				return w.fail(attempt, fmt.Errorf("%w; the receiver asks to retry after %s, longer than the %s a send waits", last, after, w.o.MaxBackoff))
			}
			d = after
		}
		if err := w.o.Sleep(ctx, d); err != nil {
			return w.fail(attempt, errors.Join(last, err))
		}
	}
	return w.fail(w.o.Attempts, last)
}

// post makes one request: whether a failure is worth retrying, and the
// wait the receiver asked for.
func (w *Webhook) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, 0, errors.New("build request: bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "floe")
	for k, v := range w.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := w.o.Client.Do(req)
	if err != nil {
		// The client's *url.Error quotes the URL: put the redacted one in.
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = config.RedactURL(w.cfg.URL)
		}
		return true, 0, err
	}
	// The status decides: a 2xx was delivered even if reading the rest of
	// the response fails, and an error status is an error either way, so
	// read errors only shorten the text quoted.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, 0, nil
	}
	msg := strings.TrimSpace(strings.ReplaceAll(string(snippet), w.cfg.URL, config.RedactURL(w.cfg.URL)))
	err = fmt.Errorf("status %s", resp.Status)
	if msg != "" {
		err = fmt.Errorf("status %s: %s", resp.Status, clip(msg))
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return true, retryAfter(resp.Header.Get("Retry-After"), w.o.Now()), err
	case code == http.StatusRequestTimeout || code >= 500:
		return true, 0, err
	}
	return false, 0, err
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (w *Webhook) fail(attempts int, err error) error {
	return &SinkError{Sink: w.cfg.Name, URL: config.RedactURL(w.cfg.URL), Attempts: attempts, Err: err}
}

// SinkError is a sink that could not deliver an alert after its retries.
type SinkError struct {
	// Sink is the sink's name, URL its redacted URL.
	Sink, URL string
	// Attempts is how many requests were made.
	Attempts int
	Err      error
}

func (e *SinkError) Error() string {
	return fmt.Sprintf("alert sink %s (%s): %d attempt(s): %v", e.Sink, e.URL, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *SinkError) Unwrap() error { return e.Err }
