package rewriter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// LeaseDir is where run leases live, under the table location. Spark's and
// Iceberg Java's orphan removal skip hidden paths (names starting with '.'
// or '_'), so they never take a lease for an orphan.
const LeaseDir = ".floe/runs"

// Defaults of [LeaseOptions].
const (
	// DefaultLeaseTTL is how long a lease stays live without a renewal.
	DefaultLeaseTTL = 2 * time.Minute
	// LeaseClockSkew is the margin allowed between the clock of the host
	// holding a lease and the clock that stamps the files it writes (the
	// object store's): files modified up to this long before a live lease
	// started are protected too.
	LeaseClockSkew = 5 * time.Minute
)

// LeaseRecord is the content of a lease file: which run holds the table,
// since when, and until when it stays live unless renewed.
type LeaseRecord struct {
	RunID     string    `json:"run_id"`
	Table     string    `json:"table"`
	Operation string    `json:"operation"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	RenewedAt time.Time `json:"renewed_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Path is where the lease file is; ModTime its modification time.
	Path    string    `json:"path"`
	ModTime time.Time `json:"-"`
	// Unreadable is set when the lease file could not be parsed (a write in
	// progress on a store without atomic writes): it is then taken as live
	// from its modification time for one TTL.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Live reports whether the lease still protects its run's files at now.
func (r LeaseRecord) Live(now time.Time) bool { return now.Before(r.ExpiresAt) }

// Protects reports whether a file modified at mod may belong to the run:
// the run may reference any file written since it started, allowing
// [LeaseClockSkew] between the two clocks.
func (r LeaseRecord) Protects(mod time.Time) bool {
	return !mod.Before(r.StartedAt.Add(-LeaseClockSkew))
}

// LeaseOptions tune [AcquireLease]. A zero value means "use the default".
type LeaseOptions struct {
	// RunID names the run. Default: a random UUID.
	RunID string
	// Table names the table in the lease, for people reading it.
	Table string
	// Operation is what the run does ("compact", "rewrite-manifests").
	Operation string
	// TTL is how long the lease stays live without renewal. Default:
	// [DefaultLeaseTTL].
	TTL time.Duration
	// RenewEvery is how often the lease is renewed (a wall-clock ticker).
	// Default: TTL/4.
	RenewEvery time.Duration
	// Now is the clock the lease's expiry is read on. Default: time.Now.
	Now func() time.Time
}

// Lease is a run's claim on a table that every floe process able to read the
// table location can see: a small JSON file under <location>/[LeaseDir],
// written before the run writes anything else and renewed in the background
// until [Lease.Release]. [PlanOrphans] and [DeleteOrphans] never delete a
// file that a live lease may still need, whatever their age and force
// options say. A process killed without releasing its lease stops renewing
// it, and the lease lapses after its TTL.
//
// A lease that lapsed stays lapsed: once its TTL passed without a
// successful renewal (the store stalled or was down), another floe may
// have taken the run for dead, removed its files as orphans or started a
// run of its own, so a later renewal that gets through does not revive it.
// The renewals stop and [Lease.Check] fails from then on.
type Lease struct {
	rec  LeaseRecord
	fio  iceio.WriteFileIO
	opts LeaseOptions
	// open opens the table's IO for [Lease.Release]; base is the run's
	// context without its cancellation.
	open func(context.Context) (iceio.IO, error)
	// reload opens the IO of the table reloaded from its catalog, for a
	// renewal or release the store refused the credentials of.
	reload func(context.Context) (iceio.IO, error)
	base   context.Context

	mu       sync.Mutex
	err      error // last renewal error
	expires  time.Time
	lapsedAt time.Time // when the lease lapsed, once a renewal found it had
	stop     chan struct{}
	done     chan struct{}
}

// AcquireLease writes a lease for a run on tbl and starts renewing it.
func AcquireLease(ctx context.Context, tbl *table.Table, opts LeaseOptions) (*Lease, error) {
	if opts.RunID == "" {
		opts.RunID = uuid.NewString()
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.RenewEvery <= 0 {
		opts.RenewEvery = opts.TTL / 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if strings.ContainsAny(opts.RunID, "/\\") {
		return nil, fmt.Errorf("acquire lease on %s: run id %q must not contain a path separator", tbl.Location(), opts.RunID)
	}
	// An object store's IO keeps the context it is opened with for every
	// request: renewals and the release must outlive the run's
	// cancellation (Ctrl-C, SIGTERM, a daemon cancel), or a cancelled run
	// leaves its lease behind for orphan removal to honour until it lapses.
	base := context.WithoutCancel(ctx)
	fio, err := tbl.FS(base)
	if err != nil {
		return nil, fmt.Errorf("acquire lease on %s: open table io: %w", tbl.Location(), err)
	}
	wfio, ok := fio.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("acquire lease on %s: io %T cannot write files", tbl.Location(), fio)
	}
	host, _ := os.Hostname()
	now := opts.Now()
	l := &Lease{
		rec: LeaseRecord{RunID: opts.RunID, Table: opts.Table, Operation: opts.Operation, Host: host, PID: os.Getpid(),
			StartedAt: now, Path: leaseDir(tbl.Location()) + "/" + opts.RunID + ".json"},
		fio: wfio, opts: opts, open: tbl.FS, base: base, stop: make(chan struct{}), done: make(chan struct{}),
		reload: func(ctx context.Context) (iceio.IO, error) { return reloadedIO(ctx, tbl) },
	}
	if err := l.write(now); err != nil {
		return nil, fmt.Errorf("acquire lease on %s: %w", tbl.Location(), err)
	}
	go l.renew()
	return l, nil
}

// RunID is the run the lease is for.
func (l *Lease) RunID() string { return l.rec.RunID }

// Record is the lease as last written.
func (l *Lease) Record() LeaseRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rec
	r.ExpiresAt = l.expires
	return r
}

// Check returns an error wrapping [ErrLeaseLost] when the lease may have
// lapsed: its last successful renewal is older than its TTL (now, or at
// any renewal since), so another floe may have taken the run for dead and
// the table with it. A run checks before each commit and stops there.
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lapsedAt.IsZero() && l.opts.Now().Before(l.expires) {
		return nil
	}
	cause := "no renewal since"
	if l.err != nil {
		cause = "last renewal error: " + l.err.Error()
	}
	return fmt.Errorf("lease %s of run %s lapsed at %s (%s); another floe may have taken the table: %w",
		l.rec.Path, l.rec.RunID, l.expires.UTC().Format(time.RFC3339), cause, ErrLeaseLost)
}

// CleanupTimeout bounds the cleanup a run does on a context of its own,
// which runs even after the run's context is cancelled: removing its lease
// file ([Lease.Release]) and the manifests of a commit attempt the catalog
// did not take.
const CleanupTimeout = 30 * time.Second

// Release stops the renewals and removes the lease file, on a context of
// its own (bounded by [CleanupTimeout]) so that a cancelled run still
// releases its lease. It is safe to call more than once.
func (l *Lease) Release() error {
	select {
	case <-l.stop:
		<-l.done
		return nil
	default:
	}
	close(l.stop)
	<-l.done
	ctx, cancel := context.WithTimeout(l.base, CleanupTimeout)
	defer cancel()
	fio, err := l.open(ctx)
	if err != nil {
		return fmt.Errorf("release lease %s: open table io: %w", l.rec.Path, err)
	}
	err = fio.Remove(l.rec.Path)
	if refused(err) {
		// Credentials a REST catalog vended may have expired during the
		// run: the table reloaded comes with fresh ones.
		if fio, rerr := l.reload(ctx); rerr == nil {
			err = fio.Remove(l.rec.Path)
		}
	}
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("release lease %s: %w", l.rec.Path, err)
	}
	return nil
}

func (l *Lease) renew() {
	defer close(l.done)
	t := time.NewTicker(l.opts.RenewEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.lapse() {
				return
			}
			err := l.write(l.opts.Now())
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			if l.lapse() {
				return
			}
		}
	}
}

// lapse reports whether the lease has lapsed: its expiry passed before a
// renewal extended it. It then marks the lease lapsed for good, so that
// no later renewal extends it.
func (l *Lease) lapse() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lapsedAt.IsZero() && !l.opts.Now().Before(l.expires) {
		l.lapsedAt = l.expires
	}
	return !l.lapsedAt.IsZero()
}

// write writes the lease file renewed at now. The new expiry takes effect
// only if the write completed before the current one passed: a renewal
// that gets through after the lease lapsed does not revive it.
func (l *Lease) write(now time.Time) error {
	l.mu.Lock()
	rec := l.rec
	rec.RenewedAt = now
	rec.ExpiresAt = now.Add(l.opts.TTL)
	l.mu.Unlock()
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode lease: %w", err)
	}
	err = l.fio.WriteFile(rec.Path, b)
	if refused(err) {
		// As in Release: the renewal goes on with the reloaded table's
		// credentials.
		if fio, rerr := l.reload(l.base); rerr == nil {
			if wfio, ok := fio.(iceio.WriteFileIO); ok {
				l.fio = wfio
				err = l.fio.WriteFile(rec.Path, b)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("write lease %s: %w", rec.Path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.expires.IsZero()
	if first || (l.lapsedAt.IsZero() && l.opts.Now().Before(l.expires)) {
		l.expires = rec.ExpiresAt
	} else if l.lapsedAt.IsZero() {
		l.lapsedAt = l.expires
	}
	return nil
}

// Leases lists the lease files under tbl's location, live or not, sorted
// by start time.
func Leases(ctx context.Context, tbl *table.Table) ([]LeaseRecord, error) {
	fio, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("list leases of %s: open table io: %w", tbl.Location(), err)
	}
	return listLeases(ctx, fio, tbl.Location())
}

func listLeases(ctx context.Context, fio iceio.IO, location string) ([]LeaseRecord, error) {
	lister, ok := fio.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("list leases of %s: io %T cannot list files", location, fio)
	}
	dir := leaseDir(location)
	var out []LeaseRecord
	err := lister.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		rec, err := readLease(fio, p)
		if err != nil {
			// Half-written or foreign: live for one default TTL from its
			// modification time, so a write in progress is never missed.
			rec = LeaseRecord{RunID: strings.TrimSuffix(path.Base(p), ".json"), StartedAt: info.ModTime(),
				ExpiresAt: info.ModTime().Add(DefaultLeaseTTL), Unreadable: true}
		}
		rec.Path, rec.ModTime = p, info.ModTime()
		out = append(out, rec)
		return nil
	})
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("list leases under %s: %w", dir, err)
	}
	sortLeases(out)
	return out, nil
}

// sortLeases sorts leases by start time, then path.
func sortLeases(leases []LeaseRecord) {
	slices.SortFunc(leases, func(a, b LeaseRecord) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), strings.Compare(a.Path, b.Path))
	})
}

func readLease(fio iceio.IO, p string) (LeaseRecord, error) {
	f, err := fio.Open(p)
	if err != nil {
		return LeaseRecord{}, err
	}
	b, err := io.ReadAll(f)
	err = errors.Join(err, f.Close())
	if err != nil {
		return LeaseRecord{}, err
	}
	var rec LeaseRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return LeaseRecord{}, err
	}
	if rec.RunID == "" || rec.StartedAt.IsZero() || rec.ExpiresAt.IsZero() {
		return LeaseRecord{}, errors.New("lease without run id, start or expiry")
	}
	return rec, nil
}

func leaseDir(location string) string {
	return strings.TrimSuffix(location, "/") + "/" + LeaseDir
}
