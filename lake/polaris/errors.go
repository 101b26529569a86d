package polaris

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrAuth is matched by the [*HTTPError] of a 401 or 403 answer and by a
// refused token exchange: the credentials are wrong, expired or lack the
// privilege to read policies. Retrying does not help; fix the catalog's
// token, credential or scope. Test with errors.Is.
var ErrAuth = errors.New("polaris authentication or authorization failed")

// ErrNotFound is matched by the [*HTTPError] of a 404 answer: the
// warehouse, namespace or table is not in the Polaris catalog. Test with
// errors.Is.
var ErrNotFound = errors.New("polaris: not found")

// ErrBadContent is returned (wrapped) by [ParseContent] and [Settings] when a
// policy's content is not what its type's schema allows or floe needs; the
// error names the policy. Fix the policy in Polaris. Test with errors.Is.
var ErrBadContent = errors.New("bad polaris policy content")

// HTTPError is a non-2xx answer from Polaris. Its text names the request
// (method and redacted URL), the status, and the error type and message of
// Polaris's body (Iceberg REST {"error": {"message", "type", "code"}}, or
// OAuth2 {"error", "error_description"} from the token endpoint). It never
// holds a secret.
type HTTPError struct {
	// Method and URL are the request's; URL has no user info.
	Method, URL string
	// Status is the HTTP status code.
	Status int
	// Type is the error type Polaris named (e.g. NotAuthorizedException,
	// invalid_client); empty when the body had none.
	Type string
	// Message is Polaris's message, or the start of a body that was not
	// the error shape.
	Message string
}

// Error reads "GET <url>: 401 Unauthorized: NotAuthorizedException: <message>".
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Is matches [ErrAuth] for 401 and 403 and [ErrNotFound] for 404.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}
