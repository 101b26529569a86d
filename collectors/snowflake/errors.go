package snowflake

import (
	"errors"
	"fmt"
)

// ErrAuth is returned (wrapped in an [*APIError]) by [Poll] and
// [Client.Query] when Snowflake rejects the credentials: an invalid or
// expired key-pair JWT, or an invalid or expired OAuth token. Retrying
// does not help; a person must fix the key, the user or the token. Test
// with errors.Is.
var ErrAuth = errors.New("snowflake rejected the credentials")

// ErrUnavailable is returned (wrapped) when Snowflake could not be reached
// or kept answering 429 or 5xx after every retry. The next poll
// may succeed. Test with errors.Is.
var ErrUnavailable = errors.New("snowflake unavailable")

// ErrStatement is returned (wrapped in an [*APIError]) when Snowflake
// refused or failed the statement itself (HTTP 400, 404 or 422): a view
// the role cannot read, say. Test with errors.Is.
var ErrStatement = errors.New("snowflake statement failed")

// APIError is an error answer of Snowflake's SQL API: the HTTP status and
// the body's code and message, with the account it came from.
type APIError struct {
	// Account is the account identifier the request was for.
	Account string
	// Status is the HTTP status code.
	Status int
	// Code is Snowflake's error code ("390144" for an invalid JWT,
	// "390198" for an expired one, "390318" for an expired OAuth token).
	Code string
	// Message is Snowflake's message.
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if e.Code != "" {
		msg = e.Code + " " + msg
	}
	return fmt.Sprintf("snowflake account %s: HTTP %d: %s", e.Account, e.Status, msg)
}

// Unwrap classifies the error: [ErrAuth] for 401 and 403, [ErrStatement]
// for 400, 404 and 422, [ErrUnavailable] for 429 and 5xx.
func (e *APIError) Unwrap() error {
	switch {
	case e.Status == 401 || e.Status == 403:
		return ErrAuth
	case e.Status == 429 || e.Status >= 500:
		return ErrUnavailable
	case e.Status == 400 || e.Status == 404 || e.Status == 422:
		return ErrStatement
	}
	return nil
}
