package spark

import (
	"fmt"
	"strings"
)

// StatementError is a statement Spark ran and failed, or could not run:
// the procedure's own error (a missing table, a conflicting commit, a
// bad argument) or a connection that failed under it. It carries Spark's
// message, and the error class, SQL state and operation id when the
// server sent them. Get it with errors.As; Unwrap gives the client's
// error.
type StatementError struct {
	// Engine is the engine's name; Step the procedure (rewrite_data_files,
	// …); Table the table, unquoted ("" for a ping).
	Engine, Step, Table string
	// OperationID is Spark Connect's id of the operation, "" when the
	// statement never reached the server.
	OperationID string
	// ErrorClass and SQLState are Spark's, when the server sent them
	// (Spark 3.5 and later send them for most errors).
	ErrorClass, SQLState string
	// Message is Spark's message.
	Message string
	err     error
}

// Error names the engine, step, table and operation, then gives Spark's
// error class, message and SQL state.
func (e *StatementError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "spark engine %q: %s", e.Engine, e.Step)
	if e.Table != "" {
		fmt.Fprintf(&b, " on %s", e.Table)
	}
	if e.OperationID != "" {
		fmt.Fprintf(&b, " (operation %s)", e.OperationID)
	}
	b.WriteString(": ")
	if e.ErrorClass != "" && !strings.HasPrefix(e.Message, "["+e.ErrorClass+"]") {
		fmt.Fprintf(&b, "[%s] ", e.ErrorClass)
	}
	b.WriteString(e.Message)
	if e.SQLState != "" {
		fmt.Fprintf(&b, " (SQLSTATE %s)", e.SQLState)
	}
	return b.String()
}

// Unwrap returns the client's error.
func (e *StatementError) Unwrap() error { return e.err }
