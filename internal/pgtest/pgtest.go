package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the superuser initdb creates; connections need no password
// (trust authentication on loopback).
const User = "floe"

// StartTimeout bounds initdb plus the server's start-up.
const StartTimeout = 60 * time.Second

// StopTimeout is how long a stopped server gets to shut down after SIGINT
// before it is killed.
const StopTimeout = 10 * time.Second

// Cluster is one running PostgreSQL server.
type Cluster struct {
	dir  string // parent of data and socket dirs, removed at Stop
	port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan error
	seq  atomic.Int64

	stopOnce sync.Once
	stopErr  error
}

// Bins are the PostgreSQL programs a cluster needs.
type Bins struct {
	InitDB, Postgres string
}

// FindBins looks initdb and postgres up in PATH, then in the highest
// version of /usr/lib/postgresql/*/bin.
func FindBins() (Bins, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if pg, err := exec.LookPath("postgres"); err == nil {
			return Bins{InitDB: initdb, Postgres: pg}, nil
		}
		if pg := filepath.Join(filepath.Dir(initdb), "postgres"); isExec(pg) {
			return Bins{InitDB: initdb, Postgres: pg}, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		b := Bins{InitDB: filepath.Join(d, "initdb"), Postgres: filepath.Join(d, "postgres")}
		if isExec(b.InitDB) && isExec(b.Postgres) {
			return b, nil
		}
	}
	return Bins{}, errors.New("PostgreSQL not found: no initdb in PATH nor in /usr/lib/postgresql/*/bin; install Debian's postgresql package (apt-get install postgresql; .ci/run installs it)")
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Start starts a cluster for tb and stops it when tb ends. Without the
// PostgreSQL binaries it fails tb, or skips it under -short.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	bins, err := FindBins()
	if err != nil {
		if testing.Short() {
			tb.Skip(err)
		}
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	c, err := StartCluster(ctx, bins)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// StartCluster initializes and starts a cluster with bins; the caller
// stops it with [Cluster.Stop].
func StartCluster(ctx context.Context, bins Bins) (_ *Cluster, err error) {
	// Under /tmp and 0755, not a test's temp dir: as root the server runs
	// as nobody, who must be able to traverse every parent.
	dir, err := os.MkdirTemp("/tmp", "floe-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	for _, d := range []string{data, sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("start postgres: %w", err)
		}
	}
	cred, err := credential()
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if cred != nil {
		for _, d := range []string{dir, data, sock} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("start postgres: give %s to the unprivileged user: %w", d, err)
			}
		}
	}
	initdb := exec.CommandContext(ctx, bins.InitDB, "-D", data, "-A", "trust", "-U", User, "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb %s: %w\n%s", data, err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &Cluster{dir: dir, port: port, log: &bytes.Buffer{}, done: make(chan error, 1)}
	c.cmd = exec.Command(bins.Postgres, "-D", data, "-k", sock, "-c", "listen_addresses=127.0.0.1",
		"-p", strconv.Itoa(port), "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	c.cmd.Dir = dir
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	// Its own process group, so that kill reaches the backends too; and
	// killed with the test binary, so that a test that times out or
	// panics leaves no server behind (its backends exit when they see the
	// postmaster gone).
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	if err := c.waitReady(ctx); err != nil {
		return nil, errors.Join(err, c.kill())
	}
	return c, nil
}

// credential is the unprivileged user to run PostgreSQL as when this
// process is root, else nil.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("running as root, and PostgreSQL refuses root: look up user nobody: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("uid of nobody: %w", err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("gid of nobody: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func (c *Cluster) waitReady(ctx context.Context) error {
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(pctx, c.DSN("postgres"))
		if err == nil {
			err = errors.Join(conn.Ping(pctx), conn.Close(pctx))
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-c.done:
			c.done <- werr
			return fmt.Errorf("postgres exited while starting: %v\n%s", werr, c.log.String())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections: %w (last: %v)\n%s", ctx.Err(), err, c.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN is the URL of database db on the cluster, as user [User].
func (c *Cluster) DSN(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(User), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Port is the TCP port the cluster listens on (127.0.0.1).
func (c *Cluster) Port() int { return c.port }

// CreateDatabase creates an empty database with a fresh name and returns
// its DSN.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), c.seq.Add(1))
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	if err = errors.Join(err, conn.Close(ctx)); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return c.DSN(name), nil
}

// NewDatabase creates an empty database for tb and returns its DSN. The
// database is left behind; the cluster's directory goes at Stop.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, err := c.CreateDatabase(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// Stop shuts the server down (SIGINT: fast shutdown, then SIGKILL after
// [StopTimeout]) and removes its directory. It is safe to call twice.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var err error
		if sigErr := c.cmd.Process.Signal(os.Interrupt); sigErr != nil && !errors.Is(sigErr, os.ErrProcessDone) {
			err = fmt.Errorf("stop postgres: %w", sigErr)
		}
		select {
		case <-c.done:
		case <-time.After(StopTimeout):
			err = errors.Join(err, c.kill(), fmt.Errorf("stop postgres: not stopped %s after SIGINT; killed", StopTimeout))
		}
		c.stopErr = errors.Join(err, os.RemoveAll(c.dir))
	})
	return c.stopErr
}

func (c *Cluster) kill() error {
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill postgres: %w", err)
	}
	<-c.done
	c.done <- nil
	return nil
}
