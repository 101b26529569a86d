package config_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control/config"
)

func TestServerDefaults(t *testing.T) {
	c, err := load(t, restFile)
	require.NoError(t, err)
	require.Equal(t, config.ServerConfig{Listen: "127.0.0.1:8080", MaxConcurrentRuns: 2, ShutdownGrace: "2m0s", CheckInterval: "5m0s", LeaseTTL: "2m0s",
		UnreachableAfter: "15m0s", RunLateAfter: "1h0m0s", RunRetention: "90d"}, c.Server)
	require.Equal(t, 90*24*time.Hour, c.Server.RunRetentionDuration())
	require.Equal(t, 2*time.Minute, c.Server.ShutdownGraceDuration())
	require.Equal(t, 5*time.Minute, c.Server.CheckIntervalDuration())
	require.Equal(t, 2*time.Minute, c.Server.LeaseTTLDuration())
	require.NoError(t, c.CheckServerListen(), "loopback needs no token")
}

// strongToken is 64 hexadecimal characters, as openssl rand -hex 32 prints.
const strongToken = "8f1c2a9b7e4d6f30a5c8b1e2d9f47a6c3b0e5d8a1f2c7b9e4a6d3f0c8b5e1a27"

func TestServerSettings(t *testing.T) {
	file := restFile + "server:\n  listen: 0.0.0.0:9090\n  token: " + strongToken + "\n  max_concurrent_runs: 4\n  shutdown_grace: 30s\n  check_interval: 1m\n  unreachable_after: 20m\n  run_retention: 30d\n"
	c, err := load(t, file)
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0:9090", c.Server.Listen)
	require.Equal(t, strongToken, c.Server.Token.Reveal())
	require.Equal(t, 4, c.Server.MaxConcurrentRuns)
	require.Equal(t, 30*time.Second, c.Server.ShutdownGraceDuration())
	require.Equal(t, time.Minute, c.Server.CheckIntervalDuration())
	require.Equal(t, 20*time.Minute, c.Server.UnreachableAfterDuration())
	require.Equal(t, config.DefaultServerRunLateAfter, c.Server.RunLateAfterDuration(), "unset: the default")
	require.Equal(t, 30*24*time.Hour, c.Server.RunRetentionDuration())
	require.NoError(t, c.CheckServerListen(), "a strong token allows any address")
	require.False(t, c.Server.Loopback())
	require.True(t, c.Server.ReadsNeedToken(), "beyond loopback reads need a token too")

	c, err = load(t, file, "FLOE_SERVER_TOKEN=env-token", "FLOE_SERVER_READ_TOKEN=reader", "FLOE_SERVER_LISTEN=[::1]:7000",
		"FLOE_SERVER_MAX_CONCURRENT_RUNS=1", "FLOE_SERVER_SHUTDOWN_GRACE=5s", "FLOE_SERVER_CHECK_INTERVAL=10s",
		"FLOE_SERVER_UNREACHABLE_AFTER=2m", "FLOE_SERVER_RUN_LATE_AFTER=3h", "FLOE_SERVER_RUN_RETENTION=2160h")
	require.NoError(t, err)
	require.Equal(t, "env-token", c.Server.Token.Reveal(), "the environment wins over the file")
	require.Equal(t, "reader", c.Server.ReadToken.Reveal())
	require.Equal(t, "[::1]:7000", c.Server.Listen)
	require.Equal(t, 1, c.Server.MaxConcurrentRuns)
	require.Equal(t, 5*time.Second, c.Server.ShutdownGraceDuration())
	require.Equal(t, 10*time.Second, c.Server.CheckIntervalDuration())
	require.Equal(t, 2*time.Minute, c.Server.UnreachableAfterDuration())
	require.Equal(t, 3*time.Hour, c.Server.RunLateAfterDuration())
	require.Equal(t, 90*24*time.Hour, c.Server.RunRetentionDuration(), "hours as well as days")
}

// Tokens are secrets: no way of printing the configuration shows them.
func TestServerTokensNeverPrinted(t *testing.T) {
	c, err := load(t, restFile+"server:\n  token: s3cr3t-write\n  read_token: s3cr3t-read\n")
	require.NoError(t, err)
	js, err := json.Marshal(c.Server)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprint(c.Server), fmt.Sprintf("%+v", c.Server), fmt.Sprintf("%#v", c.Server), string(js), c.Server.Token.String()} {
		require.NotContains(t, s, "s3cr3t", s)
	}
	require.Contains(t, string(js), `"****"`)
	require.Empty(t, config.Secret("").String())
}

func TestServerValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"listen without port", restFile + "server:\n  listen: localhost\n", nil, []string{"floe.yaml:7", "server.listen", `"localhost"`, "host:port"}},
		{"bad port", restFile + "server:\n  listen: 127.0.0.1:99999\n", nil, []string{"server.listen", "0 to 65535"}},
		{"zero runs", restFile + "server:\n  max_concurrent_runs: 0\n", nil, []string{"floe.yaml:7", "server.max_concurrent_runs", "at least 1"}},
		{"negative grace", restFile + "server:\n  shutdown_grace: -1s\n", nil, []string{"floe.yaml:7", "server.shutdown_grace", "positive"}},
		{"tiny interval", restFile + "server:\n  check_interval: 1ms\n", nil, []string{"server.check_interval", "at least 1s"}},
		{"bad duration", restFile + "server:\n  check_interval: soon\n", nil, []string{"floe.yaml:7", "server.check_interval", `"soon"`}},
		{"unknown key", restFile + "server:\n  port: 80\n", nil, []string{"floe.yaml:7", "port"}},
		{"token with a space", restFile + "server:\n  token: 'two words'\n", nil, []string{"floe.yaml:7", "server.token", "white space"}},
		{"read token alone", restFile + "server:\n  read_token: r\n", nil, []string{"server.read_token", "server.token"}},
		{"public read with a read token", restFile + "server:\n  token: w\n  read_token: r\n  public_read: true\n", nil, []string{"floe.yaml:9", "server.public_read", "server.read_token"}},
		{"public read not a boolean", restFile + "server:\n  public_read: maybe\n", nil, []string{"floe.yaml:7", "public_read"}},
		{"public read from the environment", restFile, []string{"FLOE_SERVER_PUBLIC_READ=sometimes"}, []string{"FLOE_SERVER_PUBLIC_READ", "true or false"}},
		{"runs from the environment", restFile, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS=many"}, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS", "whole number"}},
		{"zero runs from the environment", restFile, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS=0"}, []string{"FLOE_SERVER_MAX_CONCURRENT_RUNS", "at least 1"}},
		{"grace from the environment", restFile, []string{"FLOE_SERVER_SHUTDOWN_GRACE=later"}, []string{"FLOE_SERVER_SHUTDOWN_GRACE", "server.shutdown_grace", `"later"`}},
		{"misspelt variable", restFile, []string{"FLOE_SERVER_TOKN=x"}, []string{"FLOE_SERVER_TOKN", "did you mean FLOE_SERVER_TOKEN?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, tc.env...)
			require.ErrorIs(t, err, config.ErrInvalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.NotContains(t, err.Error(), "two words", "a token is never echoed")
		})
	}
}

func TestCheckServerListen(t *testing.T) {
	for _, tc := range []struct {
		listen string
		token  bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"127.0.0.2:8080", false, true},
		{"localhost:8080", false, true},
		{"[::1]:8080", false, true},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"[::]:8080", false, false},
		{"10.0.0.5:8080", false, false},
		{"floe.internal:8080", false, false},
		{"0.0.0.0:8080", true, true},
	} {
		t.Run(fmt.Sprintf("%s,token=%v", tc.listen, tc.token), func(t *testing.T) {
			env := []string{"FLOE_SERVER_LISTEN=" + tc.listen}
			if tc.token {
				env = append(env, "FLOE_SERVER_TOKEN="+strongToken)
			}
			c, err := load(t, restFile, env...)
			require.NoError(t, err)
			err = c.CheckServerListen()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, config.ErrInvalid)
			require.ErrorContains(t, err, "FLOE_SERVER_LISTEN: server.listen: "+tc.listen+" is reachable from other hosts")
			require.ErrorContains(t, err, "server.token")
		})
	}
}

// Reads need a token beyond loopback unless server.public_read opens them;
// on loopback they stay open unless server.read_token is set.
func TestReadsNeedToken(t *testing.T) {
	for _, tc := range []struct {
		name, server string
		loopback     bool
		want         bool
	}{
		{"loopback", "  listen: 127.0.0.1:8080\n", true, false},
		{"loopback with a read token", "  listen: 127.0.0.1:8080\n  token: w\n  read_token: r\n", true, true},
		{"beyond loopback", "  listen: 0.0.0.0:8080\n  token: w\n", false, true},
		{"beyond loopback, empty host", "  listen: ':8080'\n  token: w\n", false, true},
		{"beyond loopback, opened", "  listen: 10.0.0.5:8080\n  token: w\n  public_read: true\n", false, false},
		{"beyond loopback with a read token", "  listen: '[::]:8080'\n  token: w\n  read_token: r\n", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, restFile+"server:\n"+tc.server)
			require.NoError(t, err)
			require.Equal(t, tc.loopback, c.Server.Loopback())
			require.Equal(t, tc.want, c.Server.ReadsNeedToken())
		})
	}
	c, err := load(t, restFile, "FLOE_SERVER_PUBLIC_READ=true")
	require.NoError(t, err)
	require.True(t, c.Server.PublicRead)
}

// Beyond loopback a token must be strong: a one-word token is refused at
// start, naming the key and where it was set, never quoting it; on
// loopback any token still does.
func TestCheckServerListenTokenStrength(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		ok    bool
	}{
		{"one character", "Q", false},
		{"one word", "letmein", false},
		{"31 hexadecimal characters", strongToken[:31], false},
		{"32 hexadecimal characters", strongToken[:32], true},
		{"64 hexadecimal characters", strongToken, true},
		{"32 digits", "48207139562801736495028173640591", false},
		{"one character repeated", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"a pattern repeated", "Ab3$Ef6&Ab3$Ef6&Ab3$Ef6&Ab3$Ef6&Ab3$Ef6&", false},
		{"few distinct characters", "abababababcbcbcbcbcbcdcdcdcdcdcdcdcdcdcd", false},
		{"base64 of 32 random bytes", "q3Jx0vH2mZ8kR1tYw5nB7cE4uL9sA6dF0gP2hQ8jK1M=", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, restFile+"server:\n  listen: 0.0.0.0:8080\n  token: '"+tc.token+"'\n")
			require.NoError(t, err, "Load itself does not judge strength: only serving beyond loopback does")
			err = c.CheckServerListen()
			if tc.ok {
				require.NoError(t, err)
				require.GreaterOrEqual(t, config.TokenBits(tc.token), float64(config.MinTokenBits))
				return
			}
			require.ErrorIs(t, err, config.ErrInvalid)
			require.ErrorContains(t, err, "floe.yaml:8: server.token: too weak for an address other hosts can reach")
			require.ErrorContains(t, err, "want at least 32 characters and 128 bits")
			require.NotContains(t, err.Error(), tc.token, "a token is never quoted")

			c, err = load(t, restFile+"server:\n  listen: 127.0.0.1:8080\n  token: '"+tc.token+"'\n")
			require.NoError(t, err)
			require.NoError(t, c.CheckServerListen(), "on loopback any token does")
		})
	}

	// Both tokens are judged, and both problems reported at once.
	c, err := load(t, restFile, "FLOE_SERVER_LISTEN=0.0.0.0:8080", "FLOE_SERVER_TOKEN=short", "FLOE_SERVER_READ_TOKEN=shorter")
	require.NoError(t, err)
	err = c.CheckServerListen()
	require.ErrorIs(t, err, config.ErrInvalid)
	require.ErrorContains(t, err, "FLOE_SERVER_TOKEN: server.token: too weak")
	require.ErrorContains(t, err, "FLOE_SERVER_READ_TOKEN: server.read_token: too weak")
	require.NotContains(t, err.Error(), "short")
}
