package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/floe-project/floe/control/store"
	"github.com/floe-project/floe/lake"
	"github.com/floe-project/floe/rewriter"
)

// Hold is a table floe stopped changing: a run of it failed a check that
// must never fail — rewritten content that does not match what was read,
// an output file gone before its commit, a run lease that lapsed, a
// distributed engine's commit that fails floe's read-back: the errors that
// wrap rewriter.ErrInvariant. Retrying cannot help and could make things
// worse, so no run of the table starts — from the scheduler, the API or a
// verb — until a person inspects the table and resumes it
// ([Service.Resume]). The hold is kept in the state store, so a restart
// keeps it, and resumed holds stay as the record of who resumed what.
type Hold struct {
	// Table is catalog.namespace.name.
	Table string `json:"table"`
	// RunID is the run that failed ("" when it failed before its run was
	// recorded).
	RunID string `json:"run_id"`
	// Reason is the run's error.
	Reason string    `json:"reason"`
	HeldAt time.Time `json:"held_at"`
	// ResumedBy and ResumedAt say who resumed the table and when; absent
	// while the hold is active.
	ResumedBy string    `json:"resumed_by,omitempty"`
	ResumedAt time.Time `json:"resumed_at,omitzero"`
	// Note is what the person who resumed it said.
	Note string `json:"note,omitempty"`
	// ID numbers the holds in the order they were placed: the last
	// tie-break of their order, for a caller that pages through them. Not
	// printed.
	ID int64 `json:"-"`
}

func holdFromRecord(r store.HoldRecord) Hold {
	return Hold{ID: r.ID, Table: r.Table, RunID: r.RunID, Reason: r.Reason, HeldAt: r.HeldAt, ResumedBy: r.ResumedBy, ResumedAt: r.ResumedAt, Note: r.Note}
}

// IsInvariantFailure reports whether err is a failure that halts its table
// (see [Hold]) rather than one to retry with backoff.
func IsInvariantFailure(err error) bool { return errors.Is(err, rewriter.ErrInvariant) }

// Halted returns table id's active hold, and false when it has none (or
// the service has no store).
func (s *Service) Halted(ctx context.Context, id lake.Ident) (Hold, bool, error) {
	if s.store == nil {
		return Hold{}, false, nil
	}
	r, err := s.store.TableHold(ctx, id.String())
	if errors.Is(err, store.ErrNotFound) {
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, err
	}
	return holdFromRecord(r), true, nil
}

// checkHold refuses a halted table with a [*HaltedError].
func (s *Service) checkHold(ctx context.Context, id lake.Ident) error {
	h, held, err := s.Halted(ctx, id)
	if err != nil {
		return err
	}
	if held {
		return &HaltedError{Hold: h}
	}
	return nil
}

// Holds lists the tables on hold; with all, the resumed holds too, newest
// first per table.
func (s *Service) Holds(ctx context.Context, all bool) ([]Hold, error) {
	if err := s.needStore("list holds"); err != nil {
		return nil, err
	}
	recs, err := s.store.TableHolds(ctx, all)
	if err != nil {
		return nil, err
	}
	out := make([]Hold, 0, len(recs))
	for _, r := range recs {
		out = append(out, holdFromRecord(r))
	}
	return out, nil
}

// Resume lifts table id's hold, recording by (who resumed it) and note,
// so that its runs start again: the scheduler's at its next pass. A table
// that is not halted is refused with an error wrapping [ErrNotHalted].
func (s *Service) Resume(ctx context.Context, id lake.Ident, by, note string) (Hold, error) {
	if err := s.needStore("resume " + id.String()); err != nil {
		return Hold{}, err
	}
	if by == "" {
		by = "unknown"
	}
	r, err := s.store.ResumeTable(ctx, id.String(), by, note, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Hold{}, fmt.Errorf("resume %s: %w: its runs are not stopped, there is nothing to resume", id, ErrNotHalted)
	}
	if err != nil {
		return Hold{}, fmt.Errorf("resume %s: %w", id, err)
	}
	h := holdFromRecord(r)
	s.log.Info("table resumed: its runs start again", "table", h.Table, "by", by, "note", note, "run_id", h.RunID, "held_at", h.HeldAt)
	return h, nil
}

// halt puts table id on hold after run's invariant failure cause; the
// first failure of a halted table stays its reason.
func (s *Service) halt(ctx context.Context, id lake.Ident, run Run, cause error) error {
	_, placed, err := s.store.HoldTable(ctx, store.HoldRecord{Table: id.String(), RunID: run.ID, Reason: cause.Error(), HeldAt: s.now()})
	if err != nil {
		return fmt.Errorf("halt %s: %w", id, err)
	}
	if placed {
		s.log.Error("table halted: a run failed a check that must never fail; no run of it starts until a person resumes it",
			"table", id.String(), "run_id", run.ID, "err", cause, "resume", "floe resume "+ShellArg(id.String()))
	}
	return nil
}
