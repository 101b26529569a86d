package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

const slackSecret = "T0AAAAAAA/B0BBBBBBB/XXXXsecretXXXX"

// TestAlertsRefused: each bad alerts: value is an error naming the file,
// line and key, and none repeats a webhook's secret path or header value.
func TestAlertsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        []string
		want       []string
	}{
		{"bad repeat", restFile + "alerts:\n  repeat: often\n", nil,
			[]string{"floe.yaml:7", "alerts.repeat", `"often"`, "12h"}},
		{"repeat too short", restFile + "alerts:\n  repeat: 10s\n", nil,
			[]string{"floe.yaml:7", "alerts.repeat", "at least 1m0s"}},
		{"bad repeat from the environment", restFile, []string{"FLOE_ALERTS_REPEAT=soon"},
			[]string{"FLOE_ALERTS_REPEAT", "alerts.repeat", `"soon"`}},
		{"url not http", restFile + "alerts:\n  webhooks:\n    - name: ops\n      url: ftp://hooks.example.com/services/" + slackSecret + "\n", nil,
			[]string{"floe.yaml:9", "alerts.webhooks[0].url", "ftp://hooks.example.com/services/****", "http:// or https://"}},
		{"url missing", restFile + "alerts:\n  webhooks:\n    - name: ops\n      format: slack\n", nil,
			[]string{"floe.yaml:8", "alerts.webhooks[0].url", "required"}},
		{"url unparseable", restFile + "alerts:\n  webhooks:\n    - name: ops\n      url: \"https://hooks.slack.com/services/" + slackSecret + "%zz\"\n", nil,
			[]string{"floe.yaml:9", "alerts.webhooks[0].url", "not a valid URL"}},
		{"bad format", restFile + "alerts:\n  webhooks:\n    - {name: ops, url: \"https://hooks.slack.com/services/" + slackSecret + "\", format: teams}\n", nil,
			[]string{"floe.yaml:8", "alerts.webhooks[0].format", `"teams"`, "slack or json"}},
		{"duplicate names", restFile + "alerts:\n  webhooks:\n    - {name: ops, url: \"https://a.example.com/x\"}\n    - {name: ops, url: \"https://b.example.com/y\"}\n", nil,
			[]string{"floe.yaml:9", "alerts.webhooks[1].name", `"ops"`, "alerts.webhooks[0]", "unique"}},
		{"name missing", restFile + "alerts:\n  webhooks:\n    - url: \"https://a.example.com/x\"\n", nil,
			[]string{"floe.yaml:8", "alerts.webhooks[0].name", "required"}},
		{"bad header", restFile + "alerts:\n  webhooks:\n    - name: ops\n      url: \"https://a.example.com/x\"\n      headers:\n        \"Bad Header\": " + slackSecret + "\n", nil,
			[]string{"floe.yaml:11", "alerts.webhooks[0].headers.Bad Header", "not a valid HTTP header name"}},
		{"unknown key", restFile + "alerts:\n  webhooks:\n    - {name: ops, url: \"https://a.example.com/x\", retries: 3}\n", nil,
			[]string{"floe.yaml:8", "retries"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "XXXXsecretXXXX", "a webhook secret in an error")
		})
	}
}

func TestAlertsAccepted(t *testing.T) {
	c, err := load(t, restFile)
	require.NoError(t, err)
	require.Equal(t, 6*time.Hour, c.AlertRepeat())
	require.Empty(t, c.Alerts.Webhooks)

	c, err = load(t, restFile+"alerts:\n  repeat: 1d\n  webhooks:\n"+
		"    - {name: ops, url: \"https://hooks.slack.com/services/"+slackSecret+"\", format: slack}\n"+
		"    - name: pager\n      url: \"http://pager.internal:8080/hook?token=abc\"\n      headers: {Authorization: \"Bearer abc\"}\n",
		"FLOE_ALERTS_REPEAT=12h")
	require.NoError(t, err)
	require.Equal(t, 12*time.Hour, c.AlertRepeat(), "the variable beats the file")
	require.Len(t, c.Alerts.Webhooks, 2)
	require.Equal(t, config.FormatSlack, c.Alerts.Webhooks[0].Format)
	require.Equal(t, config.FormatJSON, c.Alerts.Webhooks[1].Format, "json is the default format")
	require.Equal(t, "Bearer abc", c.Alerts.Webhooks[1].Headers["Authorization"])
	require.Equal(t, "ops (https://hooks.slack.com/services/****, slack)", c.Alerts.Webhooks[0].String())
	require.Equal(t, "pager (http://pager.internal:8080/****?****, json)", c.Alerts.Webhooks[1].String())
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/XYZ": "https://hooks.slack.com/services/****",
		"https://example.com/hook/abc":               "https://example.com/****",
		"https://user:pw@example.com":                "https://****@example.com",
		"https://example.com/":                       "https://example.com",
		"https://example.com?token=x":                "https://example.com?****",
		"not a url at all":                           "****",
		"https://example.com/%zz":                    "****",
	} {
		require.Equal(t, want, config.RedactURL(in), in)
	}
}
