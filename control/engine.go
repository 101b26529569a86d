package control

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-project/floe/control/config"
	"github.com/floe-project/floe/control/policy"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// EngineOpener opens the engine name of floe.yaml's engines:.
type EngineOpener func(ctx context.Context, name string, ec config.EngineConfig) (rewriter.Engine, error)

// Engines are the engines a configuration names: the native engine, always
// there, and the distributed ones under engines:, each opened on first use
// (a Spark Connect session or a Trino client is not set up for a command
// that does not need it) and kept until Close.
type Engines struct {
	cfg  map[string]config.EngineConfig
	open EngineOpener

	mu     sync.Mutex
	opened map[string]rewriter.Engine
}

// NewEngines returns the engines of cfg, opened with open (nil:
// [OpenEngine]).
func NewEngines(cfg *config.Config, open EngineOpener) *Engines {
	if open == nil {
		open = OpenEngine
	}
	var ecs map[string]config.EngineConfig
	if cfg != nil {
		ecs = cfg.Engines
	}
	return &Engines{cfg: ecs, open: open, opened: map[string]rewriter.Engine{}}
}

// Names lists the engines: native first, then the configured ones, sorted.
func (e *Engines) Names() []string {
	names := []string{rewriter.NativeName}
	for n := range e.cfg {
		names = append(names, n)
	}
	slices.Sort(names[1:])
	return names
}

// Config returns the configuration of engine name (false for native or an
// unknown name).
func (e *Engines) Config(name string) (config.EngineConfig, bool) {
	ec, ok := e.cfg[name]
	return ec, ok
}

// Get returns engine name, opening it the first time. An unknown name is
// an [ErrInvalid] error listing the engines there are.
func (e *Engines) Get(ctx context.Context, name string) (rewriter.Engine, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == rewriter.NativeName {
		return rewriter.Native{}, nil
	}
	ec, ok := e.cfg[name]
	if !ok {
		return nil, fmt.Errorf("%w: no engine %q (engines: %s)", config.ErrInvalid, name, strings.Join(e.Names(), ", "))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if eng, ok := e.opened[name]; ok {
		return eng, nil
	}
	eng, err := e.open(ctx, name, ec)
	if err != nil {
		return nil, fmt.Errorf("open engine %s (%s): %w", name, ec.Type, err)
	}
	e.opened[name] = eng
	return eng, nil
}

// Close closes every engine opened.
func (e *Engines) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for name, eng := range e.opened {
		if err := eng.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close engine %s: %w", name, err))
		}
	}
	clear(e.opened)
	return errors.Join(errs...)
}

// EngineTable is table id as engine name knows it: floe's catalog mapped
// through engines.<name>.catalogs.
func (e *Engines) EngineTable(name string, id lake.Ident) rewriter.EngineTable {
	cat := id.Catalog
	if ec, ok := e.cfg[name]; ok {
		cat = ec.EngineCatalog(id.Catalog)
	}
	return rewriter.EngineTable{Catalog: cat, Namespace: slices.Clone(id.Namespace), Name: id.Name}
}

// EngineChoice is the engine a step runs on, and why.
type EngineChoice struct {
	Name   string `json:"engine"`
	Reason string `json:"reason"`
}

// ChooseEngine picks the engine of a step that reads inputBytes: the
// override (--engine) if set, else the policy's engine key; engine: auto
// runs natively below auto_engine_bytes and on distributed_engine from
// there. An auto policy without a distributed_engine stays native and
// says so.
func ChooseEngine(p policy.Policy, inputBytes int64, override string) EngineChoice {
	if o := strings.ToLower(strings.TrimSpace(override)); o != "" {
		return EngineChoice{Name: o, Reason: "--engine " + o}
	}
	switch e := p.Engine; e {
	case "", policy.EngineNative:
		return EngineChoice{Name: rewriter.NativeName, Reason: "policy engine: native"}
	case policy.EngineAuto:
		limit := config.FormatSize(p.AutoEngineBytes)
		if inputBytes < p.AutoEngineBytes {
			return EngineChoice{Name: rewriter.NativeName, Reason: fmt.Sprintf("engine: auto: %s of input, below auto_engine_bytes %s", config.FormatSize(inputBytes), limit)}
		}
		if p.DistributedEngine == "" {
			return EngineChoice{Name: rewriter.NativeName, Reason: fmt.Sprintf("engine: auto: %s of input reaches auto_engine_bytes %s, but the policy names no distributed_engine", config.FormatSize(inputBytes), limit)}
		}
		return EngineChoice{Name: p.DistributedEngine, Reason: fmt.Sprintf("engine: auto: %s of input reaches auto_engine_bytes %s", config.FormatSize(inputBytes), limit)}
	default:
		return EngineChoice{Name: e, Reason: "policy engine: " + e}
	}
}

// checkEngineLayout refuses a layout the engine cannot write, naming the
// engines that can.
func (e *Engines) checkEngineLayout(ctx context.Context, eng rewriter.Engine, co rewriter.CompactOptions) error {
	s := co.Layout.Strategy
	if s == "" || eng.CanWrite(s) {
		return nil
	}
	can := []string{}
	for _, n := range e.Names() {
		other, err := e.Get(ctx, n)
		if err == nil && other.CanWrite(s) {
			can = append(can, n)
		}
	}
	return fmt.Errorf("%w: engine %s (%s) cannot write %s layouts; engines that can: %s", rewriter.ErrLayoutUnsupported, eng.Name(), eng.Kind(), s, strings.Join(can, ", "))
}

// summaryInt reads an integer of a snapshot summary (0 when absent).
func summaryInt(s lake.Snapshot, key string) int64 {
	n, _ := strconv.ParseInt(s.Summary[key], 10, 64)
	return n
}

// EngineSelect says which engine each step of a run goes to: Override
// (--engine) when set, else Policy's engine key (see [ChooseEngine]). With
// no Engines every step runs natively.
type EngineSelect struct {
	Engines  *Engines
	Policy   policy.Policy
	Override string
	// VerifyBytes bounds the replaced input floe reads back after a
	// distributed engine's compaction to check its rows (see
	// [ContentVerification]). Default: [DefaultVerifyBytes].
	VerifyBytes int64
}

// mayDistribute reports whether a step could go to a distributed engine:
// --engine names one, or the policy's engine key is not native.
func (s EngineSelect) mayDistribute() bool {
	if o := strings.ToLower(strings.TrimSpace(s.Override)); o != "" {
		return o != rewriter.NativeName
	}
	return s.Engines != nil && s.Policy.Engine != "" && s.Policy.Engine != policy.EngineNative
}

// StepState is what a step on tbl needs to know of it: its whole state
// (every manifest read) when a distributed engine may run the step — the
// table's size chooses the engine, and floe's check afterwards compares
// against it — else the table alone, so that a native expiry or orphan
// removal reads no manifests it did not read before engines existed.
func (s EngineSelect) StepState(ctx context.Context, id lake.Ident, tbl *table.Table) (*lake.State, error) {
	if !s.mayDistribute() {
		return &lake.State{Ident: id, Table: tbl, Metadata: tbl.Metadata(), Current: tbl.CurrentSnapshot()}, nil
	}
	return lake.LoadState(ctx, id, tbl, lake.LoadOptions{SkipBounds: true})
}

// choose is the engine of a step that reads inputBytes.
func (s EngineSelect) choose(inputBytes int64) EngineChoice {
	if s.Engines == nil && s.Override == "" {
		return EngineChoice{Name: rewriter.NativeName, Reason: "native"}
	}
	return ChooseEngine(s.Policy, inputBytes, s.Override)
}

// distributed runs one step on a distributed engine and checks what it
// committed: before is the table as the step planned it; call sends the
// step; the table is then reloaded and verified ([verifyStep]; after an
// orphan removal every file of the current snapshot must still be there).
func (s EngineSelect) distributed(ctx context.Context, choice EngineChoice, cat catalog.Catalog, id lake.Ident, before *lake.State, kind verifyKind, checkFiles bool,
	call func(ctx context.Context, eng rewriter.Engine, t rewriter.EngineTable) (rewriter.StepReport, error)) (StepReport, error) {
	engs := s.Engines
	if engs == nil {
		engs = NewEngines(nil, nil)
	}
	eng, err := engs.Get(ctx, choice.Name)
	if err != nil {
		return StepReport{}, err
	}
	out := &DistributedReport{Choice: choice}
	res, err := call(ctx, eng, engs.EngineTable(choice.Name, id))
	out.EngineReport = res.Engine
	if res.Engine == nil && err == nil {
		return engineReport(out), fmt.Errorf("engine %s returned no engine report", eng.Name())
	}
	if err != nil {
		return engineReport(out), fmt.Errorf("engine %s: %w", eng.Name(), err)
	}
	after, err := loadState(ctx, cat, id)
	if err != nil {
		return engineReport(out), fmt.Errorf("reload %s after engine %s: %w", id, eng.Name(), err)
	}
	out.Verified, err = verifyStep(before, after, kind)
	if err == nil && checkFiles {
		err = verifyFiles(ctx, after, &out.Verified)
	}
	if err == nil && kind == verifyCompact {
		err = verifyContent(ctx, before, after, &out.Verified, cmp.Or(s.VerifyBytes, DefaultVerifyBytes))
	}
	if err != nil {
		return engineReport(out), fmt.Errorf("verify what engine %s committed to %s: %w", eng.Name(), id, err)
	}
	return engineReport(out), nil
}

// dataBytes is the size of st's data files, what a step on the whole
// table reads at most.
func dataBytes(st *lake.State) int64 {
	var n int64
	for _, f := range st.DataFiles {
		n += f.SizeBytes
	}
	return n
}
