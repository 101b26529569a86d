package store

import (
	"errors"
	"fmt"
	"time"
)

// ErrSchemaTooNew is returned by [Open] when the database was migrated by
// a newer floe than this binary: its schema version is above the last
// migration this binary knows. Nothing is changed. Test with errors.Is.
var ErrSchemaTooNew = errors.New("state store schema is newer than this floe")

// ErrNotFound is returned (wrapped) by the plan and run accessors when no
// row has the requested id. Test with errors.Is.
var ErrNotFound = errors.New("not found")

// ErrStateConflict is returned (wrapped) by [Store.TransitionPlan] when the
// plan is not in the state the caller expected: someone else decided or
// ran it first. Test with errors.Is.
var ErrStateConflict = errors.New("state changed concurrently")

// ErrLeaseLost is returned by [Store.RenewLease] when the holder no longer
// holds the table's lease: it lapsed and another process claimed the
// table, or it was released. The holder must stop working on the table.
// Test with errors.Is; the error is a [*LeaseLostError].
var ErrLeaseLost = errors.New("table lease lost")

// LeaseLostError says whose lease of which table was lost, and to whom.
type LeaseLostError struct {
	Table, Holder string
	// CurrentHolder holds the lease now; "" when no one does.
	CurrentHolder string
	// CurrentExpiresAt is when CurrentHolder's lease lapses.
	CurrentExpiresAt time.Time
}

func (e *LeaseLostError) Error() string {
	now := "no one holds it"
	if e.CurrentHolder != "" {
		now = fmt.Sprintf("it is held by %s until %s", e.CurrentHolder, e.CurrentExpiresAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("lease of table %s lost by %s: %s", e.Table, e.Holder, now)
}

// Is reports whether target is [ErrLeaseLost].
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// NotFoundError names the plan or run that does not exist. It reads as one
// sentence ("plan 3fa9c2d1e0b4 does not exist") and matches [ErrNotFound]
// under errors.Is; the accessors return it, wrapped by their callers.
type NotFoundError struct {
	// Kind is "plan", "run" or "alert".
	Kind string
	// ID is the id asked for.
	ID string
}

func (e *NotFoundError) Error() string { return e.Kind + " " + e.ID + " does not exist" }

// Is reports whether target is [ErrNotFound].
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }
