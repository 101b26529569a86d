package trino

import (
	"errors"
	"fmt"

	trinodriver "github.com/trinodb/trino-go-client/trino"
)

// QueryError is a statement Trino did not finish: it failed on the
// coordinator (Name, Type and Message are Trino's own errorName, errorType
// and message, such as a retention below the catalog's minimum), it was
// cancelled because ctx ended (Err wraps ctx's error), or it never reached
// Trino. QueryID is the coordinator's query id when the statement got one.
// Test with errors.As; errors.Is(err, context.Canceled) holds for a
// cancelled statement.
type QueryError struct {
	// Engine is the engine's name in floe.yaml.
	Engine string
	// SQL is the statement.
	SQL string
	// QueryID is Trino's query id; empty when the statement never reached
	// the coordinator.
	QueryID string
	// Name, Type and Code are Trino's errorName (say
	// INVALID_PROCEDURE_ARGUMENT), errorType (USER_ERROR, …) and
	// errorCode; empty when Trino reported no failure.
	Name string
	Type string
	Code int
	// Message is Trino's message, or the client's error text.
	Message string
	// Err is the cause: ctx's error for a cancelled statement, else the
	// client's error.
	Err error
}

// Error names the engine, the query id, Trino's error and the statement.
func (e *QueryError) Error() string {
	id := e.QueryID
	if id == "" {
		id = "(no query id)"
	}
	what := e.Message
	if e.Name != "" {
		what = e.Name + ": " + e.Message
	}
	return fmt.Sprintf("trino engine %s: query %s: %s (statement: %s)", e.Engine, id, what, e.SQL)
}

// Unwrap returns the cause.
func (e *QueryError) Unwrap() error { return e.Err }

// queryError builds the error of a statement that failed with err.
func queryError(engine, stmt, queryID string, err, ctxErr error) *QueryError {
	qe := &QueryError{Engine: engine, SQL: stmt, QueryID: queryID, Err: err, Message: err.Error()}
	var te *trinodriver.ErrTrino
	if errors.As(err, &te) {
		qe.Name, qe.Type, qe.Code, qe.Message = te.ErrorName, te.ErrorType, te.ErrorCode, te.Message
	}
	if ctxErr != nil {
		qe.Err = fmt.Errorf("%w (%w)", ctxErr, err)
		qe.Message = "cancelled: " + ctxErr.Error()
		if errors.Is(err, ctxErr) {
			qe.Err = ctxErr
		}
	}
	return qe
}
