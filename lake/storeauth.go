package lake

import (
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// ErrStoreRefused is wrapped by the error of an object-store request the
// store answered by refusing its credentials (see [StoreRefusal]); test
// with errors.Is.
var ErrStoreRefused = errors.New("object store refused the credentials")

// refusedCodes are the S3 error codes of credentials refused as such: expired
// or revoked session credentials, unknown keys, or no permission.
var refusedCodes = map[string]bool{
	"ExpiredToken":          true,
	"ExpiredTokenException": true,
	"TokenRefreshRequired":  true,
	"InvalidToken":          true,
	"InvalidAccessKeyId":    true,
	"AccessDenied":          true,
	"Forbidden":             true, // a 403 with no body (HEAD)
}

// StoreRefusal returns err, explained as a [*StoreRefusedError], when its
// cause is an object store (S3) refusing the request's credentials — an
// expired or revoked session token (400 ExpiredToken), an unknown key, or a
// 403 — and nil otherwise. A 400 to a HEAD request, which has no body to
// say why, counts: S3 answers a HEAD signed with an expired token so.
func StoreRefusal(catalog string, err error) *StoreRefusedError {
	var re *awshttp.ResponseError
	if err == nil || !errors.As(err, &re) {
		return nil
	}
	out := &StoreRefusedError{Store: "(unknown)", Catalog: catalog, Op: "request", Status: re.HTTPStatusCode(), Err: err}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		out.Code = ae.ErrorCode()
	}
	var req *http.Request
	if re.Response != nil && re.Response.Response != nil {
		req = re.Response.Request
	}
	head := req != nil && req.Method == http.MethodHead
	if !refusedCodes[out.Code] && out.Status != http.StatusForbidden && (out.Status != http.StatusBadRequest || !head) {
		return nil
	}
	if req != nil {
		out.Store = req.URL.Host
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		out.Op = oe.Operation()
	}
	return out
}

// StoreRefusedError is an object-store request refused for its
// credentials. It matches [ErrStoreRefused] and its cause.
type StoreRefusedError struct {
	// Store is the endpoint's host (on AWS, the bucket's).
	Store string
	// Catalog is the catalog whose table the request was for.
	Catalog string
	// Op is the store's operation (PutObject, HeadObject, …).
	Op string
	// Status and Code are the store's answer (Code "" when it gave none).
	Status int
	Code   string
	// Hint, when set, says what to do about it.
	Hint string
	// Err is the request's error.
	Err error
}

func (e *StoreRefusedError) Error() string {
	msg := fmt.Sprintf("object store %s of catalog %s refused the credentials of %s (%d %s)", e.Store, e.Catalog, e.Op, e.Status, e.Code)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap is [ErrStoreRefused] and the request's error.
func (e *StoreRefusedError) Unwrap() []error { return []error{ErrStoreRefused, e.Err} }
