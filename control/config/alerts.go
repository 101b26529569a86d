package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/floe-project/floe/control/policy"
)

// AlertsConfig is floe.yaml's alerts: section: where the daemon sends its
// alerts and how often it repeats one that keeps firing (see
// docs/alerts.md).
type AlertsConfig struct {
	// Repeat is how often an alert that keeps firing is sent again, as a
	// duration such as 6h or 1d. At least 1m. Default: 6h
	// ([DefaultAlertRepeat]).
	Repeat string `yaml:"repeat"`
	// Webhooks are the sinks; every alert goes to every one of them.
	Webhooks []Webhook `yaml:"webhooks"`
}

// Webhook is one alert sink: an HTTP(S) endpoint that receives a POST per
// alert. Its URL and header values may hold secrets (a Slack incoming
// webhook's path is one); [Webhook.String] and every error floe makes
// redact them.
type Webhook struct {
	// Name identifies the sink in logs and errors; unique among webhooks.
	Name string `yaml:"name"`
	// URL is the http:// or https:// endpoint.
	URL string `yaml:"url" redact:"url"`
	// Format is slack ({"text": …}) or json (the whole alert). Default:
	// json.
	Format string `yaml:"format"`
	// Headers are sent with every request (Authorization, …); their values
	// are never printed.
	Headers map[string]string `yaml:"headers" redact:"all"`
}

// Webhook formats.
const (
	FormatSlack = "slack"
	FormatJSON  = "json"
)

// WebhookFormats are the values of alerts.webhooks[].format.
var WebhookFormats = []string{FormatSlack, FormatJSON}

// DefaultAlertRepeat is alerts.repeat's default.
const DefaultAlertRepeat = 6 * time.Hour

// MinAlertRepeat and MaxAlertRepeat bound alerts.repeat: a typo (1s) must
// not page someone every evaluation, nor one (365d) silence a firing alert
// for good.
const (
	MinAlertRepeat = time.Minute
	MaxAlertRepeat = 30 * 24 * time.Hour
)

// AlertRepeat is alerts.repeat parsed, or its default.
func (c *Config) AlertRepeat() time.Duration {
	d, err := policy.ParseDuration(c.Alerts.Repeat)
	if err != nil || d < MinAlertRepeat || d > MaxAlertRepeat {
		return DefaultAlertRepeat
	}
	return d
}

// String names the webhook with its URL redacted (see [RedactURL]).
func (w Webhook) String() string {
	return fmt.Sprintf("%s (%s, %s)", w.Name, RedactURL(w.URL), w.Format)
}

// RedactURL returns raw with everything that may be a secret replaced by
// "****": the user information, the path and the query. The scheme and
// host stay, to say where it points: https://hooks.slack.com/services/****.
// Slack's first path segment is kept as it is public and tells Slack's
// kinds of URL apart; any other path is redacted whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "****"
	}
	out := u.Scheme + "://"
	if u.User != nil {
		out += "****@"
	}
	out += u.Host
	if p := strings.Trim(u.Path, "/"); p != "" {
		first, _, _ := strings.Cut(p, "/")
		if first == "services" || first == "triggers" || first == "workflows" {
			out += "/" + first
		}
		out += "/****"
	}
	if u.RawQuery != "" {
		out += "?****"
	}
	return out
}

// checkAlerts reports what is wrong with the alerts: section, each
// problem under its key. It never prints a URL or header value unredacted.
func (c *Config) checkAlerts(bad func(segs []string, format string, args ...any)) {
	a := c.Alerts
	if d, err := policy.ParseDuration(a.Repeat); err != nil {
		bad([]string{"alerts", "repeat"}, "%v", err)
	} else if d < MinAlertRepeat || d > MaxAlertRepeat {
		bad([]string{"alerts", "repeat"}, "%q: want at least %s and at most %s, such as 6h", a.Repeat, MinAlertRepeat, policy.FormatDuration(MaxAlertRepeat))
	}
	seen := map[string]int{}
	for i, w := range a.Webhooks {
		item := "[" + strconv.Itoa(i) + "]"
		key := func(k string) []string { return []string{"alerts", "webhooks", item, k} }
		switch prev, dup := seen[w.Name]; {
		case strings.TrimSpace(w.Name) == "":
			bad(key("name"), "required: a name for the sink in logs and errors")
		case dup:
			bad(key("name"), "%q is already the name of alerts.webhooks[%d]; names must be unique", w.Name, prev)
		default:
			seen[w.Name] = i
		}
		if msg := checkWebhookURL(w.URL); msg != "" {
			bad(key("url"), "%s", msg)
		}
		if !slices.Contains(WebhookFormats, w.Format) {
			bad(key("format"), "%q: want %s", w.Format, orList(WebhookFormats))
		}
		names := make([]string, 0, len(w.Headers))
		for h := range w.Headers {
			names = append(names, h)
		}
		slices.Sort(names)
		for _, h := range names {
			if !validHeaderName(h) {
				bad([]string{"alerts", "webhooks", item, "headers", h}, "not a valid HTTP header name")
			} else if strings.ContainsAny(w.Headers[h], "\r\n") {
				bad([]string{"alerts", "webhooks", item, "headers", h}, "the value may not contain line breaks")
			}
		}
	}
}

// checkWebhookURL says what is wrong with a webhook URL, or "", without
// repeating more of the URL than [RedactURL] shows.
func checkWebhookURL(raw string) string {
	if raw == "" {
		return "required: the http:// or https:// endpoint to POST alerts to"
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the whole URL: never show it.
		return "not a valid URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("%s: want an http:// or https:// URL", RedactURL(raw))
	}
	if u.Host == "" {
		return "the URL has no host"
	}
	return ""
}

// validHeaderName reports whether h is an HTTP header field name (an RFC
// 9110 token).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
