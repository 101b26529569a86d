package rewriter

import (
	"context"

	"github.com/floe-project/floe/layout"
)

// Native is floe's own engine: every step runs in this process, through
// [Compact], [Expire], [DeleteOrphans] and [RewriteManifests]. It writes
// every layout.
type Native struct{}

// NativeName is the native engine's name in policies (engine: native).
const NativeName = "native"

// Name returns "native".
func (Native) Name() string { return NativeName }

// Kind returns [KindNative].
func (Native) Kind() string { return KindNative }

// CanWrite returns true: the native engine writes every layout.
func (Native) CanWrite(layout.Strategy) bool { return true }

// Compact rewrites job.Plan with [Compact].
func (Native) Compact(ctx context.Context, job CompactJob) (StepReport, error) {
	res, err := Compact(ctx, job.State, job.Plan, job.Options)
	return StepReport{Compact: &res}, err
}

// Expire commits job.Plan with [Expire].
func (Native) Expire(ctx context.Context, job ExpireJob) (StepReport, error) {
	res, err := Expire(ctx, job.Catalog, job.Tbl, job.Plan, job.Options)
	return StepReport{Expire: &res}, err
}

// RemoveOrphans deletes job.Plan's files with [DeleteOrphans], which checks
// each file again against the table and the live leases.
func (Native) RemoveOrphans(ctx context.Context, job OrphanJob) (StepReport, error) {
	res, err := DeleteOrphans(ctx, job.Tbl, job.Plan, job.Options.Concurrency)
	return StepReport{Orphans: &res}, err
}

// RewriteManifests runs [RewriteManifests].
func (Native) RewriteManifests(ctx context.Context, job ManifestJob) (StepReport, error) {
	_, res, err := RewriteManifests(ctx, job.Tbl, job.Options)
	return StepReport{Manifests: &res}, err
}

// Ping returns nil: the native engine is this process.
func (Native) Ping(context.Context) error { return nil }

// Close returns nil.
func (Native) Close() error { return nil }

var _ Engine = Native{}
