package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDoctorCheckIgnoringContext runs a check whose library ignores its
// context: it is still reported as timed out at the deadline, and the
// other outcomes of runCheck keep their meaning.
func TestDoctorCheckIgnoringContext(t *testing.T) {
	d := &doctor{opts: DoctorOptions{Timeout: 300 * time.Millisecond, Now: time.Now}}
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name    string
		fn      func(context.Context) (string, int, error)
		ok      bool
		detail  string
		wantErr string
	}{
		{name: "ignores its context", fn: func(context.Context) (string, int, error) {
			<-release
			return "late", 1, nil
		}, wantErr: "no answer within 300ms"},
		{name: "heeds its context", fn: func(ctx context.Context) (string, int, error) {
			<-ctx.Done()
			return "", 0, ctx.Err()
		}, wantErr: "no answer within 300ms: context deadline exceeded"},
		{name: "fails", fn: func(context.Context) (string, int, error) {
			return "", 0, errors.New("dial tcp: connection refused (token tok-s3cret)")
		}, wantErr: "dial tcp: connection refused (token ****)"},
		{name: "passes", fn: func(context.Context) (string, int, error) { return "fine", 7, nil }, ok: true, detail: "fine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c, v := runCheck(t.Context(), d, CheckCatalog, "prod", []string{"tok-s3cret"}, tc.fn)
			// Well before never (release comes at the test's end); the
			// slack is for a loaded machine, not for the check.
			require.Less(t, time.Since(start), 300*time.Millisecond+2*timeoutGrace+3*time.Second)
			require.Equal(t, tc.ok, c.OK)
			require.Equal(t, tc.detail, c.Detail)
			require.Equal(t, tc.wantErr, c.Error)
			if tc.ok {
				require.Equal(t, 7, v)
			} else {
				require.Zero(t, v, "a failed check passes no value on")
			}
		})
	}
}
