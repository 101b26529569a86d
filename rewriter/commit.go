package rewriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/lake"
)

// Snapshot summary properties floe writes on every commit it makes.
const (
	// PropRunID names the floe run that made the snapshot.
	PropRunID = "floe.run-id"
	// PropLayout is the layout the rewritten files follow (such as
	// "sort(tenant_id,ts)" or "binpack").
	PropLayout = "floe.layout"
	// PropContent is the digest of the rows a replace snapshot added, read
	// back from its files and found equal to the rows of the files it
	// replaced ("rows=… sum=… xor=…", see [ContentCheck]).
	PropContent = "floe.content"
	// PropLayoutTreeID is the [layout.Tree.Fingerprint] of the learned tree a
	// tree layout's rewrite routed its rows by: the snapshot summary of a
	// tree rewrite carries it next to floe.layout, so that a later
	// compaction knows which files are in the tree the table records
	// ([PropLayoutTree]) and which were written by a tree learned before it.
	PropLayoutTreeID = "floe.layout.tree-id"
)

// Table properties floe declares a layout with, besides floe.layout
// ([PropLayout], also a table property) and the Iceberg sort order.
const (
	// PropLayoutTree is the learned tree of a table whose floe.layout is a
	// tree layout, as compact JSON ([layout.Tree.MarshalJSON]). It is set in
	// the same commit as the files written in that tree, and removed by the
	// commit that declares another layout (bin-pack declares none and keeps
	// it). A compaction with no plan routes new rows into the same leaves
	// with it ([RecordedTree]). At most [MaxTreePropertyBytes].
	PropLayoutTree = "floe.layout.tree"
)

// MaxTreePropertyBytes bounds the JSON of a tree recorded in
// [PropLayoutTree]: 256 KiB, about 2,500 leaves. Table properties live in
// the table's metadata file, which every commit writes anew and every
// reader parses, so a large tree would tax every writer of the table for
// as long as the layout lasts. A tree too large is refused before the
// rewrite reads anything (see [CompactOptions.Validate]), not trimmed: a
// trimmed tree would route rows to other leaves than the ones projected.
// Learn a coarser one (a larger target file size makes fewer leaves).
const MaxTreePropertyBytes = 256 << 10

// CommitGroup is one rewritten group of files, ready to replace its inputs in
// one atomic replace snapshot.
type CommitGroup struct {
	// Name identifies the group in reports, such as its partition key.
	Name string
	// Inputs are the live data files the group replaces, as read from the
	// base state passed to [CommitGroups].
	Inputs []lake.File
	// Deletes are the deletes (delete files and deletion vectors) that are
	// dead once Inputs are replaced (see [DeadDeletes]); they are removed
	// in the same commit. A planned delete that is no longer dead or live
	// at commit time is kept instead.
	Deletes []lake.File
	// Outputs are the new data files written for the group, not yet
	// committed (see [RewriteGroup]).
	Outputs []iceberg.DataFile
	// Content is the group's content check (GroupStats.Content of the
	// RewriteGroup that wrote Outputs): [CommitGroups] commits no group
	// whose rows written and read back differ from the rows read, or
	// whose check does not count every row of Outputs.
	Content ContentCheck
}

// NewCommitGroup builds the [CommitGroup] that replaces the data files of
// tasks (as planned on base) with outputs, and removes the delete files that
// become dead. It returns an error wrapping [ErrStaleGroup] when a task's file
// is not live in base.
func NewCommitGroup(base *lake.State, name string, tasks []table.FileScanTask, outputs []iceberg.DataFile, content ContentCheck) (CommitGroup, error) {
	byPath := make(map[string]lake.File, len(base.DataFiles))
	for _, f := range base.DataFiles {
		byPath[f.Path] = f
	}
	g := CommitGroup{Name: name, Outputs: outputs, Content: content}
	seen := map[string]bool{}
	for _, t := range tasks {
		p := t.File.FilePath()
		if seen[p] {
			continue // split tasks of one file
		}
		seen[p] = true
		f, ok := byPath[p]
		if !ok {
			return CommitGroup{}, fmt.Errorf("group %s: input %s is not live in snapshot %d: %w", name, p, snapshotID(base), ErrStaleGroup)
		}
		g.Inputs = append(g.Inputs, f)
	}
	g.Deletes = DeadDeletes(base, seen)
	return g, nil
}

// Declaration is the layout a table declares: its floe.layout property
// and, for a sort, its default sort order. [CommitGroups] stages it in the
// same transaction as each batch's files, re-validated on every attempt
// like the files themselves, so the declaration and the files in that
// layout become visible together or not at all.
type Declaration struct {
	// Layout is the floe.layout property value; empty (bin-pack) leaves
	// the property as it is.
	Layout string
	// TargetFileSizeBytes, when positive, is recorded as
	// lake.PropRewriteTargetFileSize: the size the files were written for.
	TargetFileSizeBytes int64
	// SortOrder, when set, becomes the table's default sort order; the
	// output files carry SortOrderID, the id it has (or gets) in the table.
	// If the table's sort orders changed so that the order would get another
	// id, the batch fails with [ErrConflict] instead of committing files
	// whose sort_order_id names the wrong order.
	SortOrder   *table.SortOrder
	SortOrderID int
	// Tree, with a tree Layout, is the learned tree's JSON, recorded as
	// [PropLayoutTree]. With another Layout, a recorded tree is removed: it
	// no longer describes the table's files. An empty Layout (bin-pack)
	// keeps it.
	Tree []byte
}

// stage adds the declaration's metadata updates to tx, made on head.
func (d *Declaration) stage(head *lake.State, tx *table.Transaction) error {
	if d == nil {
		return nil
	}
	if d.SortOrder != nil {
		if id := sortOrderIDIn(head.Metadata, *d.SortOrder); id != d.SortOrderID {
			return fmt.Errorf("declare sort order %s: it would get id %d in snapshot %d, the new files carry %d: %w",
				d.SortOrder, id, snapshotID(head), d.SortOrderID, ErrConflict)
		}
		if !sameFields(head.Metadata.SortOrder(), *d.SortOrder) {
			if err := tx.ReplaceSortOrder(*d.SortOrder); err != nil {
				return fmt.Errorf("declare sort order %s: %w", d.SortOrder, err)
			}
		}
	}
	props := iceberg.Properties{}
	have := head.Metadata.Properties()
	if d.Layout != "" && have.Get(PropLayout, "") != d.Layout {
		props[PropLayout] = d.Layout
	}
	var drop []string
	switch {
	case len(d.Tree) > 0 && have.Get(PropLayoutTree, "") != string(d.Tree):
		props[PropLayoutTree] = string(d.Tree)
	case len(d.Tree) == 0 && d.Layout != "":
		if _, ok := have[PropLayoutTree]; ok {
			drop = append(drop, PropLayoutTree)
		}
	}
	if len(drop) > 0 {
		if err := tx.RemoveProperties(drop); err != nil {
			return fmt.Errorf("remove %v: %w", drop, err)
		}
	}
	if d.TargetFileSizeBytes > 0 {
		if v := strconv.FormatInt(d.TargetFileSizeBytes, 10); head.Metadata.Properties().Get(lake.PropRewriteTargetFileSize, "") != v {
			props[lake.PropRewriteTargetFileSize] = v
		}
	}
	if len(props) == 0 {
		return nil
	}
	if err := tx.SetProperties(props); err != nil {
		return fmt.Errorf("declare %v: %w", propNames(props), err)
	}
	return nil
}

// propNames lists the names of props, sorted, for an error: a tree's JSON is
// too long to print.
func propNames(props iceberg.Properties) []string {
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sortOrderIDIn is the id so has, or would get when added, in md: the id of
// an order with the same fields, else one more than the largest id (as
// iceberg-go's metadata builder assigns them).
func sortOrderIDIn(md table.Metadata, so table.SortOrder) int {
	next := table.UnsortedSortOrderID + 1
	for _, o := range md.SortOrders() {
		if sameFields(o, so) {
			return o.OrderID()
		}
		next = max(next, o.OrderID()+1)
	}
	return next
}

// Backoff is the wait between commit attempts: Base doubled per attempt, at
// most Max, each wait jittered down to between half and all of it.
type Backoff struct {
	// Base is the first wait. Default: 100ms.
	Base time.Duration
	// Max caps every wait. Default: 5s.
	Max time.Duration
}

// CommitOptions tune [CommitGroups]. A zero value means "use the default".
type CommitOptions struct {
	// MaxAttempts bounds the commit attempts of one batch, the first
	// included. Default: 5.
	MaxAttempts int
	// Backoff is the wait between attempts.
	Backoff Backoff
	// GroupsPerCommit is how many groups share one snapshot; each commit is
	// kept even when a later one fails (partial progress). Default: 1.
	GroupsPerCommit int
	// RunID and Layout are written to each snapshot summary as floe.run-id
	// and floe.layout when set.
	RunID  string
	Layout string
	// Lease, when set, is the run's lease: a lapsed lease (see
	// [Lease.Check]) fails the batch with [ErrLeaseLost] before it commits.
	Lease *Lease
	// Declare, when set, is the layout the table declares, made part of
	// every commit (see [Declaration]): the table's declared layout changes
	// only together with files written in it, and a run that commits no
	// files changes none of the table's metadata.
	Declare *Declaration
	// SnapshotProps are more snapshot summary properties.
	SnapshotProps iceberg.Properties
	// Load returns the table's current state from its catalog. Default:
	// a copy of the table, refreshed.
	Load func(ctx context.Context, tbl *table.Table) (*table.Table, error)
	// Sleep waits d or until ctx ends. Default: a timer. Tests inject one.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0,1). Default: math/rand/v2.
	Jitter func() float64
	// Now is the clock used for durations. Default: time.Now.
	Now func() time.Time
	// BeforeCommit, when set, runs after a batch is staged and before it is
	// sent to the catalog (attempt counts from 1); an error aborts the run.
	// Tests use it to commit concurrently at the worst moment.
	BeforeCommit func(ctx context.Context, batch, attempt int) error
	// Logger receives one line per commit, retry and skipped group.
	// Default: discard.
	Logger *slog.Logger
}

// Validate reports every invalid option at once.
func (o CommitOptions) Validate() error {
	var errs []error
	if o.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("max attempts must be >= 1, got %d", o.MaxAttempts))
	}
	if o.GroupsPerCommit < 0 {
		errs = append(errs, fmt.Errorf("groups per commit must be >= 1, got %d", o.GroupsPerCommit))
	}
	if o.Backoff.Base < 0 || o.Backoff.Max < 0 {
		errs = append(errs, fmt.Errorf("backoff must not be negative, got base %s max %s", o.Backoff.Base, o.Backoff.Max))
	}
	return errors.Join(errs...)
}

func (o CommitOptions) withDefaults() CommitOptions {
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 5
	}
	if o.GroupsPerCommit == 0 {
		o.GroupsPerCommit = 1
	}
	if o.Backoff.Base == 0 {
		o.Backoff.Base = 100 * time.Millisecond
	}
	if o.Backoff.Max == 0 {
		o.Backoff.Max = 5 * time.Second
	}
	if o.Load == nil {
		o.Load = func(ctx context.Context, tbl *table.Table) (*table.Table, error) {
			fresh := *tbl
			if err := fresh.Refresh(ctx); err != nil {
				return nil, err
			}
			return &fresh, nil
		}
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// wait is the jittered backoff before attempt (attempt >= 2).
func (o CommitOptions) wait(attempt int) time.Duration {
	d := o.Backoff.Base
	for i := 2; i < attempt && d < o.Backoff.Max; i++ {
		d *= 2
	}
	d = min(d, o.Backoff.Max)
	return time.Duration(float64(d) * (0.5 + 0.5*o.Jitter()))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Commit is one snapshot made by [CommitGroups].
type Commit struct {
	SnapshotID int64
	// Groups names the groups it holds.
	Groups []string
	// FilesIn and BytesIn count the data files replaced; FilesOut and
	// BytesOut the files added; DeletesRemoved the dead deletes removed
	// (delete files, and deletion vectors one by one).
	FilesIn, FilesOut, DeletesRemoved int
	BytesIn, BytesOut                 int64
	// Attempts counts catalog commits tried, the successful one included.
	Attempts int
	Duration time.Duration
	// Content is the content check of the groups committed, together.
	Content ContentCheck
}

// SkippedGroup is a group that was not committed.
type SkippedGroup struct {
	Name string
	// Err wraps [ErrStaleGroup] when the group's inputs changed, or
	// [ErrConflict] when its batch ran out of attempts.
	Err error
	// Orphans are the group's output files: never committed, they are
	// left for orphan removal.
	Orphans []string
}

// CommitReport is what [CommitGroups] did.
type CommitReport struct {
	Commits []Commit
	Skipped []SkippedGroup
	// Table is the table after the last commit (or the last reload).
	Table *table.Table
}

// FilesIn sums the data files replaced over all commits.
func (r CommitReport) FilesIn() int {
	n := 0
	for _, c := range r.Commits {
		n += c.FilesIn
	}
	return n
}

// FilesOut sums the data files added over all commits.
func (r CommitReport) FilesOut() int {
	n := 0
	for _, c := range r.Commits {
		n += c.FilesOut
	}
	return n
}

// CommitGroups commits groups, read from base, as replace snapshots of
// GroupsPerCommit groups each, in order. Each batch is validated against the
// table's head before every attempt: a group whose inputs are no longer
// live, or that a delete file added since base may touch, is skipped and
// reported (never committed); the rest are staged with iceberg-go's
// RewriteFiles and committed. On a retryable error (see
// [IsRetryableCommitError]) the table is reloaded and the batch re-validated
// and re-staged, with backoff, at most MaxAttempts times; a batch that runs
// out of attempts is skipped and the run goes on. Commits already made are
// kept when a later batch fails: the returned report lists them together
// with the error. Output files of skipped groups are listed as orphans.
func CommitGroups(ctx context.Context, base *lake.State, groups []CommitGroup, opts CommitOptions) (CommitReport, error) {
	if err := opts.Validate(); err != nil {
		return CommitReport{}, fmt.Errorf("commit groups of %s: %w", base.Ident, err)
	}
	opts = opts.withDefaults()
	rep := CommitReport{Table: base.Table}
	for _, g := range groups {
		if err := g.Content.covers(g.Outputs); err != nil {
			return rep, fmt.Errorf("commit groups of %s: group %s: %w", base.Ident, g.Name, err)
		}
	}
	known := make(map[lake.DeleteKey]bool, len(base.DeleteFiles))
	for _, d := range base.DeleteFiles {
		known[d.DeleteKey()] = true
	}
	cur := base.Table
	for start, batch := 0, 1; start < len(groups); start, batch = start+opts.GroupsPerCommit, batch+1 {
		end := min(start+opts.GroupsPerCommit, len(groups))
		next, err := commitBatch(ctx, base, known, cur, groups[start:end], batch, opts, &rep)
		if next != nil {
			cur = next
			rep.Table = next
		}
		if err != nil {
			return rep, fmt.Errorf("commit groups of %s: batch %d: %w", base.Ident, batch, err)
		}
	}
	return rep, nil
}

// commitBatch commits one batch, retrying; it returns the newest table seen.
func commitBatch(ctx context.Context, base *lake.State, known map[lake.DeleteKey]bool, cur *table.Table, batch []CommitGroup, n int, opts CommitOptions, rep *CommitReport) (*table.Table, error) {
	started := opts.Now()
	pending := make([]*CommitGroup, len(batch))
	for i := range batch {
		pending[i] = &batch[i]
	}
	skip := func(g *CommitGroup, err error) {
		s := SkippedGroup{Name: g.Name, Err: err}
		for _, o := range g.Outputs {
			s.Orphans = append(s.Orphans, o.FilePath())
		}
		rep.Skipped = append(rep.Skipped, s)
		opts.Logger.Warn("group skipped, outputs left as orphans", "table", base.Ident.String(), "group", g.Name, "err", err, "orphans", len(s.Orphans))
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return cur, err
		}
		if attempt > 1 {
			if err := opts.Sleep(ctx, opts.wait(attempt)); err != nil {
				return cur, err
			}
		}
		// Always start from the catalog's newest metadata: staging on a
		// known-stale head only wastes an attempt and leaves its manifests
		// behind as orphans.
		fresh, err := opts.Load(ctx, cur)
		if err != nil {
			return cur, fmt.Errorf("reload table for attempt %d: %w", attempt, err)
		}
		cur = fresh
		head, err := lake.LoadState(ctx, base.Ident, cur, lake.LoadOptions{SkipBounds: true})
		if err != nil {
			return cur, fmt.Errorf("load head for attempt %d: %w", attempt, err)
		}
		pending, err = checkBatch(head, known, pending, skip)
		if err != nil {
			return cur, err
		}
		if len(pending) == 0 {
			return cur, nil
		}
		if attempt > opts.MaxAttempts {
			for _, g := range pending {
				skip(g, fmt.Errorf("%d attempts: %w: %w", opts.MaxAttempts, ErrConflict, lastErr))
			}
			return cur, nil
		}
		tx, c, err := stageBatch(ctx, head, pending, opts)
		if err != nil {
			return cur, err
		}
		// Until the catalog takes the commit, the manifests staged for it
		// are floe's own litter: removed when the attempt surely failed.
		drop := func(err error) error {
			return errors.Join(err, removeStaged(ctx, tx, head))
		}
		if opts.BeforeCommit != nil {
			if err := opts.BeforeCommit(ctx, n, attempt); err != nil {
				return cur, drop(fmt.Errorf("before commit: %w", err))
			}
		}
		if opts.Lease != nil {
			if err := opts.Lease.Check(); err != nil {
				return cur, drop(err)
			}
		}
		if err := verifyOutputs(ctx, head.Table, pending); err != nil {
			return cur, drop(err)
		}
		next, err := tx.Commit(ctx)
		if err == nil {
			c.Attempts = attempt
			c.Duration = opts.Now().Sub(started)
			if s := next.CurrentSnapshot(); s != nil {
				c.SnapshotID = s.SnapshotID
			}
			rep.Commits = append(rep.Commits, c)
			opts.Logger.Info("rewrite committed", "table", base.Ident.String(), "snapshot_id", c.SnapshotID,
				"files_in", c.FilesIn, "files_out", c.FilesOut, "attempts", attempt)
			return next, nil
		}
		if !IsRetryableCommitError(err) {
			// The catalog may or may not have taken the commit: leave the
			// outputs alone (orphan removal sorts them out if unreferenced).
			return cur, fmt.Errorf("commit attempt %d: %w", attempt, err)
		}
		// A lost compare-and-swap: the catalog did not take this attempt.
		if rerr := removeStaged(ctx, tx, head); rerr != nil {
			opts.Logger.Warn("staged manifests of a failed attempt left for orphan removal", "table", base.Ident.String(), "err", rerr)
		}
		lastErr = err
		opts.Logger.Info("commit conflict, retrying", "table", base.Ident.String(), "attempt", attempt, "err", err)
	}
}

// checkBatch drops stale groups from pending (reporting them through skip).
// A group whose outputs are already live was committed by an attempt whose
// result was lost: that is only consistent when all its outputs are live and
// none of its inputs are.
func checkBatch(head *lake.State, known map[lake.DeleteKey]bool, pending []*CommitGroup, skip func(*CommitGroup, error)) ([]*CommitGroup, error) {
	live := make(map[string]bool, len(head.DataFiles))
	for _, f := range head.DataFiles {
		live[f.Path] = true
	}
	var keep []*CommitGroup
	for _, g := range pending {
		outLive := 0
		for _, o := range g.Outputs {
			if live[o.FilePath()] {
				outLive++
			}
		}
		if outLive > 0 {
			return nil, fmt.Errorf("group %s: %d of %d outputs already live in snapshot %d before its commit: %w",
				g.Name, outLive, len(g.Outputs), snapshotID(head), ErrInvariant)
		}
		if reason := staleReason(head, known, g); reason != "" {
			skip(g, fmt.Errorf("group %s: %s: %w", g.Name, reason, ErrStaleGroup))
			continue
		}
		keep = append(keep, g)
	}
	return keep, nil
}

// stageBatch stages pending groups on head as one replace snapshot.
func stageBatch(ctx context.Context, head *lake.State, pending []*CommitGroup, opts CommitOptions) (*table.Transaction, Commit, error) {
	props := iceberg.Properties{}
	for k, v := range opts.SnapshotProps {
		props[k] = v
	}
	if opts.RunID != "" {
		props[PropRunID] = opts.RunID
	}
	if opts.Layout != "" {
		props[PropLayout] = opts.Layout
	}
	rewritten := map[string]bool{}
	for _, g := range pending {
		for _, in := range g.Inputs {
			rewritten[in.Path] = true
		}
	}
	dead := map[lake.DeleteKey]lake.File{}
	for _, d := range DeadDeletes(head, rewritten) {
		dead[d.DeleteKey()] = d
	}
	headData := make(map[string]lake.File, len(head.DataFiles))
	for _, f := range head.DataFiles {
		headData[f.Path] = f
	}
	tx := head.Table.NewTransaction()
	if err := opts.Declare.stage(head, tx); err != nil {
		return nil, Commit{}, err
	}
	var c Commit
	for _, g := range pending {
		c.Content = c.Content.plus(g.Content)
	}
	props[PropContent] = c.Content.Written.String()
	rw := tx.NewRewrite(props)
	removed := map[lake.DeleteKey]bool{}
	for _, g := range pending {
		c.Groups = append(c.Groups, g.Name)
		for _, in := range g.Inputs {
			rw.DeleteFile(headData[in.Path].DataFile)
			c.FilesIn++
			c.BytesIn += in.SizeBytes
		}
		for _, d := range g.Deletes {
			// Only deletes still live and still dead on head go: keeping
			// a delete that applies to nothing is always safe. A vector is
			// removed on its own (iceberg-go matches it by its data file),
			// its Puffin file's other vectors stay.
			k := d.DeleteKey()
			if hd, ok := dead[k]; ok && !removed[k] {
				removed[k] = true
				rw.DeleteFile(hd.DataFile)
				c.DeletesRemoved++
			}
		}
		for _, o := range g.Outputs {
			rw.AddDataFile(o)
			c.FilesOut++
			c.BytesOut += o.FileSizeBytes()
		}
	}
	if err := rw.Commit(ctx); err != nil {
		return nil, Commit{}, fmt.Errorf("stage rewrite of %d groups on snapshot %d: %w", len(pending), snapshotID(head), err)
	}
	return tx, c, nil
}

func snapshotID(st *lake.State) int64 {
	if st.Current == nil {
		return -1
	}
	return st.Current.SnapshotID
}

// verifyOutputs checks, just before a commit, that every file the batch adds
// exists with the size it was written with: a file removed since it was
// written (by a careless orphan removal, say) must fail the commit, not be
// committed as a dangling reference.
func verifyOutputs(ctx context.Context, tbl *table.Table, pending []*CommitGroup) error {
	fio, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("verify outputs: open table io: %w", err)
	}
	for _, g := range pending {
		for _, o := range g.Outputs {
			if err := ctx.Err(); err != nil {
				return err
			}
			size, err := fileSize(fio, o.FilePath())
			if err != nil {
				return fmt.Errorf("group %s: output %s: %w: %w", g.Name, o.FilePath(), ErrMissingOutput, err)
			}
			if size != o.FileSizeBytes() {
				return fmt.Errorf("group %s: output %s has %d bytes, %d were written: %w", g.Name, o.FilePath(), size, o.FileSizeBytes(), ErrMissingOutput)
			}
		}
	}
	return nil
}

func fileSize(fio iceio.IO, p string) (int64, error) {
	f, err := fio.Open(p)
	if err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// removeStaged deletes the manifest list and the new manifests that staging
// tx on head wrote, for an attempt the catalog did not take, on a context of
// its own (bounded by [CleanupTimeout]) so a cancelled run cleans up too.
func removeStaged(ctx context.Context, tx *table.Transaction, head *lake.State) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
	defer cancel()
	staged, err := tx.StagedTable()
	if err != nil {
		return fmt.Errorf("staged table: %w", err)
	}
	snap := staged.CurrentSnapshot()
	if snap == nil || (head.Current != nil && snap.SnapshotID == head.Current.SnapshotID) {
		return nil
	}
	fio, err := staged.FS(ctx)
	if err != nil {
		return fmt.Errorf("open table io: %w", err)
	}
	manifests, err := snap.Manifests(fio)
	if err != nil {
		return fmt.Errorf("read staged manifest list %s: %w", snap.ManifestList, err)
	}
	files := fileSet{snap.ManifestList: 0}
	for _, m := range manifests {
		if m.SnapshotID() == snap.SnapshotID {
			files[m.FilePath()] = m.Length()
		}
	}
	_, _, err = deleteFiles(ctx, fio, files, 4)
	return err
}
