package spark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"github.com/apache/spark-connect-go/spark/sql"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/floe-project/floe/layout"
	"github.com/floe-project/floe/rewriter"
)

// interruptTimeout bounds the Interrupt call sent after ctx ended.
const interruptTimeout = 10 * time.Second

// Engine runs floe's maintenance steps as Iceberg's Spark procedures over
// one Spark Connect session. It is safe for concurrent use: each step is
// its own Spark Connect operation.
type Engine struct {
	name    string
	remote  string // redacted
	timeout time.Duration
	now     func() time.Time
	ch      *channel
	session sql.SparkSession
}

var _ rewriter.Engine = (*Engine)(nil)

// Open checks cfg and builds the engine's session. It sends nothing: the
// connection is made by the first statement ([Engine.Ping] for a check).
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := parseRemote(cfg.Remote)
	if err != nil {
		return nil, err // Validate parsed it already
	}
	if cfg.Token != "" {
		r.token = cfg.Token
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &Engine{
		name:    cfg.Name,
		remote:  redactRemote(cfg.Remote),
		timeout: cfg.Timeout,
		now:     cfg.Now,
		ch:      &channel{remote: r, tls: cfg.TLS},
	}
	// The builder quotes the connection string in its errors: hand it the
	// redacted one, since the channel has the real parameters.
	e.session, err = sql.NewSessionBuilder().WithChannelBuilder(e.ch).Remote(e.remote).Build(ctx)
	if err != nil {
		return nil, fmt.Errorf("spark engine %q: open session at %s: %w", cfg.Name, e.remote, err)
	}
	return e, nil
}

// Name returns the engine's name in floe.yaml.
func (e *Engine) Name() string { return e.name }

// Kind returns [rewriter.KindSpark].
func (e *Engine) Kind() string { return rewriter.KindSpark }

// CanWrite reports whether Iceberg's rewrite_data_files writes layouts of
// strategy s: binpack, sort and zorder yes; hilbert no (the procedure has
// no Hilbert curve; [Engine.Compact] returns an error wrapping
// [rewriter.ErrLayoutUnsupported]).
func (e *Engine) CanWrite(s layout.Strategy) bool {
	switch s {
	case "", layout.StrategyBinpack, layout.StrategySort, layout.StrategyZOrder:
		return true
	default:
		return false
	}
}

// Compact runs rewrite_data_files for job's layout, limited to job.Scope
// when it is set. A plan with no groups, or an empty scope, sends
// nothing. A layout Spark cannot write (hilbert, rank z-order) is refused
// before any statement, with an error wrapping
// [rewriter.ErrLayoutUnsupported].
func (e *Engine) Compact(ctx context.Context, job rewriter.CompactJob) (rewriter.StepReport, error) {
	rep, err := e.compact(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) compact(ctx context.Context, job rewriter.CompactJob) (*rewriter.EngineReport, error) {
	stmt, err := compactSQL(job)
	if err != nil {
		return nil, err
	}
	if len(job.Plan.Groups) == 0 || (job.Scope != nil && len(job.Scope) == 0) {
		return e.report("compact"), nil
	}
	return e.single(ctx, "compact", "rewrite_data_files", job.Table, stmt)
}

// Expire runs expire_snapshots with the job's cutoff and retain_last.
func (e *Engine) Expire(ctx context.Context, job rewriter.ExpireJob) (rewriter.StepReport, error) {
	rep, err := e.expire(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) expire(ctx context.Context, job rewriter.ExpireJob) (*rewriter.EngineReport, error) {
	stmt, err := expireSQL(job)
	if err != nil {
		return nil, err
	}
	return e.single(ctx, "expire", "expire_snapshots", job.Table, stmt)
}

// single runs one procedure call as step and reports it, with the
// metrics of its result rows.
func (e *Engine) single(ctx context.Context, step, proc string, t rewriter.EngineTable, stmt string) (*rewriter.EngineReport, error) {
	start := e.now()
	rep := e.report(step)
	res, err := e.run(ctx, proc, t, stmt)
	rep.Statements = append(rep.Statements, res.stmt)
	if err != nil {
		return nil, err
	}
	addMetrics(rep.Metrics, res.table)
	rep.Duration = e.now().Sub(start)
	return rep, nil
}

// RemoveOrphans runs remove_orphan_files twice: first as a dry run, whose
// listing goes into the report (at most [rewriter.MaxReportedFiles]
// paths, all counted), then for real. If the dry run lists a file under
// one of the job's ExcludePrefixes, which the procedure has no argument
// for, nothing is deleted and the error wraps [rewriter.ErrInvalidOptions].
func (e *Engine) RemoveOrphans(ctx context.Context, job rewriter.OrphanJob) (rewriter.StepReport, error) {
	rep, err := e.removeOrphans(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) removeOrphans(ctx context.Context, job rewriter.OrphanJob) (*rewriter.EngineReport, error) {
	start := e.now()
	rep := e.report("orphans")
	dry, err := orphanSQL(job, true)
	if err != nil {
		return nil, err
	}
	del, err := orphanSQL(job, false)
	if err != nil {
		return nil, err
	}
	res, err := e.run(ctx, "remove_orphan_files", job.Table, dry)
	rep.Statements = append(rep.Statements, res.stmt)
	if err != nil {
		return nil, err
	}
	listed := stringColumn(res.table, "orphan_file_location")
	rep.DryRunCount = len(listed)
	rep.DryRunFiles = listed[:min(len(listed), rewriter.MaxReportedFiles)]
	rep.Metrics["dry_run_orphan_files_count"] = int64(len(listed))
	for _, f := range listed {
		for _, p := range job.Options.ExcludePrefixes {
			if p != "" && strings.HasPrefix(f, p) {
				return nil, rewriter.MarkInvalidOptions(fmt.Errorf(
					"spark engine %q: remove_orphan_files on %s: dry run lists %s under excluded prefix %s, which the procedure cannot skip; nothing deleted",
					e.name, job.Table, f, p))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("spark engine %q: remove_orphan_files on %s: stopped after the dry run: %w", e.name, job.Table, err)
	}
	res, err = e.run(ctx, "remove_orphan_files", job.Table, del)
	rep.Statements = append(rep.Statements, res.stmt)
	if err != nil {
		return nil, err
	}
	rep.Metrics["removed_orphan_files_count"] = int64(len(stringColumn(res.table, "orphan_file_location")))
	rep.Duration = e.now().Sub(start)
	return rep, nil
}

// RewriteManifests runs rewrite_manifests.
func (e *Engine) RewriteManifests(ctx context.Context, job rewriter.ManifestJob) (rewriter.StepReport, error) {
	rep, err := e.rewriteManifests(ctx, job)
	return rewriter.StepReport{Engine: rep}, err
}

func (e *Engine) rewriteManifests(ctx context.Context, job rewriter.ManifestJob) (*rewriter.EngineReport, error) {
	stmt, err := manifestsSQL(job)
	if err != nil {
		return nil, err
	}
	return e.single(ctx, "manifests", "rewrite_manifests", job.Table, stmt)
}

// Ping runs SELECT 1.
func (e *Engine) Ping(ctx context.Context) error {
	_, err := e.run(ctx, "ping", rewriter.EngineTable{}, "SELECT 1")
	return err
}

// Close releases the server-side session (if a statement opened one) and
// closes the connection.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), interruptTimeout)
	defer cancel()
	var errs []error
	if err := e.ch.release(ctx, e.ch.remote.headers); err != nil {
		errs = append(errs, fmt.Errorf("spark engine %q: release session: %w", e.name, err))
	}
	if err := e.ch.close(); err != nil {
		errs = append(errs, fmt.Errorf("spark engine %q: close: %w", e.name, err))
	}
	return errors.Join(errs...)
}

func (e *Engine) report(step string) *rewriter.EngineReport {
	return &rewriter.EngineReport{Engine: e.name, Kind: rewriter.KindSpark, Step: step, Metrics: map[string]int64{}}
}

type result struct {
	stmt  rewriter.EngineStatement
	table arrow.Table
}

// run sends one statement and reads its result rows. When ctx ends (or
// the statement's Timeout passes) it interrupts the operation and returns
// an error wrapping ctx's that names the operation.
func (e *Engine) run(ctx context.Context, step string, t rewriter.EngineTable, stmt string) (result, error) {
	res := result{stmt: rewriter.EngineStatement{SQL: stmt}}
	if strings.IndexByte(stmt, 0) >= 0 {
		return res, rewriter.MarkInvalidOptions(fmt.Errorf("spark engine %q: %s: statement contains a NUL byte", e.name, label(step, t)))
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("spark engine %q: %s: not started: %w", e.name, label(step, t), err)
	}
	tr := &tracker{tag: "floe-" + uuid.NewString()}
	sctx := context.WithValue(ctx, trackerKey{}, tr)
	if e.timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, e.timeout)
		defer cancel()
	}
	var tbl *arrow.Table
	df, err := e.session.Sql(sctx, stmt)
	if err == nil {
		tbl, err = df.ToArrow(sctx)
	}
	ops := tr.operations()
	if len(ops) > 0 {
		res.stmt.QueryID = ops[0]
	}
	if err != nil {
		if cerr := ctxErr(sctx, err); cerr != nil {
			return res, e.interrupted(ctx, step, t, tr, cerr)
		}
		return res, e.statementError(step, t, res.stmt.QueryID, err)
	}
	if tbl != nil && *tbl != nil {
		res.table = *tbl
		res.stmt.Rows = int(res.table.NumRows())
	}
	return res, nil
}

// ctxErr is ctx's error if ctx ended the call that returned err. gRPC
// sends the deadline to the server, which may cancel the stream a moment
// before ctx's own timer fires: a DeadlineExceeded status with the
// deadline (nearly) reached waits for ctx to end.
//
// spark-connect-go turns the gRPC status into a *sparkerrors.SparkError
// that has no GRPCStatus method, so status.Code(err) alone reads Unknown
// there; grpcCode looks through both.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	dl, ok := ctx.Deadline()
	if !ok || grpcCode(err) != codes.DeadlineExceeded {
		return nil
	}
	timer := time.NewTimer(time.Until(dl) + 100*time.Millisecond)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return ctx.Err()
}

// grpcCode is the gRPC status code that err carries, directly or as a
// spark-connect-go SparkError.
func grpcCode(err error) codes.Code {
	var spe *sparkerrors.SparkError
	if errors.As(err, &spe) {
		return spe.Code
	}
	return status.Code(err)
}

// interrupted sends Interrupt for the statement's running operation (the
// last one it started) and returns an error wrapping cause.
func (e *Engine) interrupted(ctx context.Context, step string, t rewriter.EngineTable, tr *tracker, cause error) error {
	ops := tr.operations()
	if len(ops) == 0 {
		return fmt.Errorf("spark engine %q: %s: stopped before it was sent: %w", e.name, label(step, t), cause)
	}
	op := ops[len(ops)-1]
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptTimeout)
	defer cancel()
	err := fmt.Errorf("spark engine %q: %s: operation %s interrupted: %w", e.name, label(step, t), op, cause)
	if ierr := e.ch.interrupt(ictx, e.ch.remote.headers, op, tr.tag); ierr != nil {
		err = errors.Join(err, fmt.Errorf("spark engine %q: interrupt operation %s: %w", e.name, op, ierr))
	}
	return err
}

func (e *Engine) statementError(step string, t rewriter.EngineTable, op string, err error) error {
	se := &StatementError{Engine: e.name, Step: step, OperationID: op, err: err}
	if t.Name != "" {
		se.Table = t.String()
	}
	var spe *sparkerrors.SparkError
	if errors.As(err, &spe) {
		se.Message, se.ErrorClass, se.SQLState = spe.Message, spe.ErrorClass, spe.SqlState
		if se.ErrorClass == "" && spe.Code != 0 {
			se.ErrorClass = spe.Code.String()
		}
	} else if st, ok := status.FromError(err); ok {
		se.Message, se.ErrorClass = st.Message(), st.Code().String()
	} else {
		se.Message = err.Error()
	}
	return se
}

// addMetrics adds the integer columns of the result rows to m, by column
// name (summed over rows), and ignores every other column, so that
// columns an Iceberg version adds or lacks change nothing else.
func addMetrics(m map[string]int64, t arrow.Table) {
	if t == nil {
		return
	}
	for i, f := range t.Schema().Fields() {
		name := strings.ToLower(f.Name)
		for _, chunk := range t.Column(i).Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				if chunk.IsNull(j) {
					continue
				}
				v, ok := intValue(chunk, j)
				if !ok {
					break
				}
				m[name] += v
			}
		}
	}
}

func intValue(a arrow.Array, i int) (int64, bool) {
	switch a := a.(type) {
	case *array.Int8:
		return int64(a.Value(i)), true
	case *array.Int16:
		return int64(a.Value(i)), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Int64:
		return a.Value(i), true
	case *array.Uint8:
		return int64(a.Value(i)), true
	case *array.Uint16:
		return int64(a.Value(i)), true
	case *array.Uint32:
		return int64(a.Value(i)), true
	case *array.Uint64:
		return int64(a.Value(i)), true
	default:
		return 0, false
	}
}

// stringColumn returns the non-null values of the string column name.
func stringColumn(t arrow.Table, name string) []string {
	if t == nil {
		return nil
	}
	var out []string
	for i, f := range t.Schema().Fields() {
		if !strings.EqualFold(f.Name, name) {
			continue
		}
		for _, chunk := range t.Column(i).Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				if chunk.IsNull(j) {
					continue
				}
				switch a := chunk.(type) {
				case *array.String:
					out = append(out, a.Value(j))
				case *array.LargeString:
					out = append(out, a.Value(j))
				case *array.StringView:
					out = append(out, a.Value(j))
				}
			}
		}
	}
	return out
}

// label is "step on table" for messages, or step alone for a statement
// on no table (ping).
func label(step string, t rewriter.EngineTable) string {
	if t.Name == "" {
		return step
	}
	return step + " on " + t.String()
}
