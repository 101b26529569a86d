package control_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/floe-project/floe/control"
	"github.com/floe-project/floe/internal/oracle"
	"github.com/floe-project/floe/internal/restfake"
	"github.com/floe-project/floe/internal/testlake"
	"github.com/floe-project/floe/lake"
)

// vendor is a REST catalog's credential vending over a testlake S3 server
// that checks keys: each table load hands out a new key that expires ttl
// later on the vendor's clock, which the test moves.
type vendor struct {
	s3  *testlake.S3
	ttl time.Duration

	mu  sync.Mutex
	now time.Time
	n   int
}

func newVendor(s3 *testlake.S3, ttl time.Duration) *vendor {
	return &vendor{s3: s3, ttl: ttl, now: time.Now().Truncate(time.Millisecond)}
}

func (v *vendor) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// expire moves the clock past every key handed out so far.
func (v *vendor) expire() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.now = v.now.Add(v.ttl)
}

// issued is how many keys were handed out.
func (v *vendor) issued() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n
}

// vend hands out a fresh key: the table's s3.* properties.
func (v *vendor) vend(table.Identifier) map[string]string {
	v.mu.Lock()
	v.n++
	key, exp := "vended-"+strconv.Itoa(v.n), v.now.Add(v.ttl)
	v.mu.Unlock()
	v.s3.Grant(key, exp)
	props := testlake.S3Props(v.s3.URL)
	props[iceio.S3AccessKeyID] = key
	props[iceio.S3SecretAccessKey] = "secret-" + key
	props[iceio.S3SessionToken] = "token-" + key
	props["s3.session-token-expires-at-ms"] = strconv.FormatInt(exp.UnixMilli(), 10)
	return props
}

// Storage credentials a REST catalog vends, in the table's config or in
// its storage-credentials, that expire during a compaction. While the run
// writes its files (expired at its first output): the run fails before its
// commit, its record says the store refused the credentials and what to do,
// the table is unchanged and the run leaves nothing behind. Once the files
// are written (expired at the first read of the table's metadata after
// them): the commit reloads the table, which comes with fresh credentials,
// and the lease is released with them; the run is done.
func TestCompactionVendedCredentialsExpire(t *testing.T) {
	const policies = "default: {mode: manual, layout: none, enabled: {expire: false, orphans: false, manifests: false}}\n"
	for _, storageCreds := range []bool{false, true} {
		for _, when := range []string{"writing", "committing"} {
			name := map[bool]string{false: "config", true: "storage-credentials"}[storageCreds] + "/" + when
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				w, id, st := setupOn(t, testlake.NewS3(t))
				before := mustTable(t, w, id)
				want, err := oracle.ChecksumIceberg(ctx, before)
				require.NoError(t, err)
				v := newVendor(w.S3, time.Hour)
				var mu sync.Mutex
				var wrote, expired bool
				w.S3.CheckKeys(v.Now, func(method, key string) {
					mu.Lock()
					defer mu.Unlock()
					output := method == "PUT" && strings.HasSuffix(key, ".parquet")
					wrote = wrote || output
					if !expired && (when == "writing" && output || when == "committing" && wrote && strings.Contains(key, "/metadata/")) {
						expired = true
						v.expire()
					}
				})
				s := restfake.New(t, restfake.Options{Backend: w.Catalog, Vend: v.vend, VendStorageCredentials: storageCreds})
				svc := restService(t, s, w, control.Deps{Store: st}, policies)

				rr, err := svc.Run(ctx, control.Request{Table: id, Steps: []string{control.StepCompact}})
				require.True(t, expired, "the credentials expired during the run")
				require.Positive(t, w.S3.Refused(), "the store refused the expired credentials")
				tbl := mustTable(t, w, id)
				testlake.RequireIntact(t, tbl, want)
				require.Empty(t, w.S3.Objects(t, tbl.Location()+"/.floe/runs/"), "the lease is released")
				if when == "committing" {
					require.NoError(t, err)
					require.Equal(t, control.StatusDone, rr.Run.Status)
					require.Equal(t, 1, s.Commits())
					require.Equal(t, table.OpReplace, tbl.CurrentSnapshot().Summary.Operation)
					return
				}
				require.ErrorIs(t, err, lake.ErrStoreRefused)
				require.Equal(t, control.StatusFailed, rr.Run.Status)
				host := strings.TrimPrefix(w.S3.URL, "http://")
				for _, has := range []string{"object store " + host + " of catalog local refused the credentials of PutObject (400 ExpiredToken)", "max_bytes_per_run"} {
					require.Contains(t, rr.Run.Error, has)
				}
				require.Zero(t, s.Commits())
				require.Equal(t, before.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().SnapshotID)
				head, err := lake.LoadState(ctx, id, tbl, lake.LoadOptions{SkipBounds: true})
				require.NoError(t, err)
				var live []string
				for _, f := range head.DataFiles {
					live = append(live, f.Path)
				}
				require.ElementsMatch(t, live, w.S3.Objects(t, tbl.Location()+"/data/"), "no output is left behind")
			})
		}
	}
}
