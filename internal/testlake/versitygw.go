package testlake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/lake"
)

// VersitygwVersion is the versitygw release the S3 suite runs against: the
// one internal/tools/versitygw/go.mod requires.
const VersitygwVersion = "v1.8.0"

// EnvVersitygw names the versitygw binary to run (make test-s3 builds it
// and sets this); unset, a versitygw in PATH, then one built into the user
// cache directory from internal/tools/versitygw, is used.
const EnvVersitygw = "FLOE_TEST_VERSITYGW"

// VersitygwStartTimeout bounds building (when needed) and starting one
// versitygw server.
const VersitygwStartTimeout = 5 * time.Minute

// versitygwStopTimeout is how long a stopped server gets after SIGTERM
// before it is killed (and after SIGKILL before Stop fails).
const versitygwStopTimeout = 5 * time.Second

// Versitygw is a versitygw S3 gateway running as a child process with its
// POSIX backend on a temporary directory: a real S3 server, as users run
// in front of a file system, rather than an in-process fake.
type Versitygw struct {
	// URL is the server's endpoint, as s3.endpoint.
	URL string
	// Root is the backend's directory: bucket b's object k is the file
	// Root/b/k.
	Root string

	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan error

	stopOnce sync.Once
	stopErr  error
}

// NewVersitygw opens a fresh warehouse whose files live in bucket
// [S3Bucket] of a versitygw server started for t (see [StartVersitygw]),
// under s3://floe/warehouse, with a SQL catalog on SQLite in t.TempDir().
// The server stops when t ends.
func NewVersitygw(t testing.TB) *Warehouse {
	t.Helper()
	dir := t.TempDir()
	gw := StartVersitygw(t)
	props := lake.LocalCatalogProps(dir)
	props["warehouse"] = "s3://" + S3Bucket + "/warehouse"
	for k, v := range S3Props(gw.URL) {
		props[k] = v
	}
	w := Open(t, dir, props, nil)
	w.Gateway = gw
	return w
}

// StartVersitygw starts a versitygw server for t with its POSIX backend on
// a fresh directory, the test's static keys ([S3Props]) and bucket
// [S3Bucket], on a free loopback port, and stops it when t ends. The
// binary is found as [EnvVersitygw] says; without one, it is built.
func StartVersitygw(t testing.TB) *Versitygw {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), VersitygwStartTimeout)
	defer cancel()
	bin, err := VersitygwBinary(ctx)
	require.NoError(t, err)
	gw, err := startVersitygw(ctx, bin, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, gw.Stop()) })
	return gw
}

// VersitygwBinary is the path of a versitygw binary: [EnvVersitygw], else
// versitygw in PATH, else the binary built (once, then reused) into the
// user cache directory from the tools module internal/tools/versitygw.
func VersitygwBinary(ctx context.Context) (string, error) {
	if p := os.Getenv(EnvVersitygw); p != "" {
		if !isExec(p) {
			return "", fmt.Errorf("%s=%s: not an executable file", EnvVersitygw, p)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locate versitygw: %w", err)
	}
	out := filepath.Join(cache, "floe", "versitygw-"+VersitygwVersion, "versitygw")
	if isExec(out) {
		return out, nil
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("build versitygw: cannot locate the testlake sources")
	}
	tools := filepath.Join(filepath.Dir(self), "..", "tools", "versitygw")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("build versitygw: %w", err)
	}
	// Built beside its final name and renamed: test binaries of several
	// packages may build it at once, and none may run a half-written file.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	build := exec.CommandContext(ctx, "go", "build", "-o", tmp, "github.com/versity/versitygw/cmd/versitygw")
	build.Dir = tools
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build versitygw in %s (set %s to a versitygw binary to skip the build): %w\n%s", tools, EnvVersitygw, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("build versitygw: %w", err)
	}
	return out, nil
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// startVersitygw starts bin on a free loopback port with its POSIX backend
// on root/gw and bucket [S3Bucket] made there; the caller stops it.
func startVersitygw(ctx context.Context, bin, dir string) (_ *Versitygw, err error) {
	root := filepath.Join(dir, "gw")
	// A bucket of the POSIX backend is a directory under its root.
	if err := os.MkdirAll(filepath.Join(root, S3Bucket), 0o755); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	props := S3Props("")
	gw := &Versitygw{URL: "http://" + addr, Root: root, log: &lockedBuffer{}, done: make(chan error, 1)}
	gw.cmd = exec.Command(bin, "--port", addr, "--quiet",
		"--access", props["s3.access-key-id"], "--secret", props["s3.secret-access-key"], "--region", props["s3.region"],
		"posix", root)
	gw.cmd.Dir = dir
	gw.cmd.Stdout, gw.cmd.Stderr = gw.log, gw.log
	// Killed with the test binary, so that a test that times out or
	// panics leaves no server behind.
	gw.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := gw.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start versitygw %s: %w", bin, err)
	}
	go func() { gw.done <- gw.cmd.Wait() }()
	if err := gw.waitReady(ctx); err != nil {
		return nil, errors.Join(err, gw.Stop())
	}
	return gw, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// waitReady waits until the server answers HTTP (any status: an unsigned
// request is refused, which is an answer).
func (gw *Versitygw) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL+"/", nil)
		if err != nil {
			return fmt.Errorf("versitygw readiness: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			return resp.Body.Close()
		}
		select {
		case werr := <-gw.done:
			gw.done <- werr
			return fmt.Errorf("versitygw exited while starting: %v\n%s", werr, gw.log.String())
		case <-ctx.Done():
			return fmt.Errorf("versitygw did not answer on %s: %w (last: %v)\n%s", gw.URL, ctx.Err(), err, gw.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after a grace period). It
// is safe to call twice; the backend's directory is the test's to remove.
func (gw *Versitygw) Stop() error {
	gw.stopOnce.Do(func() {
		if err := gw.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			gw.stopErr = fmt.Errorf("stop versitygw: %w", err)
		}
		select {
		case <-gw.done:
		case <-time.After(versitygwStopTimeout):
			// versitygw's graceful shutdown waits for every open connection
			// to close, idle keep-alive ones included, and a client of the
			// test binary (the AWS SDK's pool) may hold one for as long as
			// the binary runs: kill it, which is what the grace is for, and
			// fail only if that does not end it.
			if err := gw.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				gw.stopErr = errors.Join(gw.stopErr, fmt.Errorf("stop versitygw: not stopped %s after SIGTERM, and kill: %w\n%s", versitygwStopTimeout, err, gw.log.String()))
				return
			}
			select {
			case <-gw.done:
			case <-time.After(versitygwStopTimeout):
				gw.stopErr = errors.Join(gw.stopErr, fmt.Errorf("stop versitygw: still running %s after SIGKILL\n%s", versitygwStopTimeout, gw.log.String()))
			}
		}
	})
	return gw.stopErr
}

// path is the backend file of the object at loc (s3://floe/key).
func (gw *Versitygw) path(t testing.TB, loc string) string {
	t.Helper()
	key, ok := strings.CutPrefix(loc, "s3://"+S3Bucket+"/")
	require.True(t, ok, "%s is not in bucket %s", loc, S3Bucket)
	return filepath.Join(gw.Root, S3Bucket, filepath.FromSlash(key))
}

// lockedBuffer is the server's output, written by exec's copying goroutine
// while a failed start reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
