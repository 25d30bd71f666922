package hitl

import (
	"errors"
	"fmt"
)

// Application error codes. The HTTP layer maps each to one status in one table.
const (
	EINVALID      = "invalid"       // malformed or incomplete request (400)
	EUNAUTHORIZED = "unauthorized"  // no or bad credentials (401)
	EFORBIDDEN    = "forbidden"     // caller may not do this (403)
	ENOTFOUND     = "not_found"     // no such interaction (404)
	ECONFLICT     = "conflict"      // already answered, or idempotency key reused (409)
	EEXPIRED      = "expired"       // the deadline passed (410)
	ECANCELLED    = "cancelled"     // the agent cancelled it (410)
	ETOOLARGE     = "too_large"     // request body over the limit (413)
	EVALUE        = "invalid_value" // answer or schema not valid for the type (422)
	ERATELIMITED  = "rate_limited"  // too many requests from one client (429)
	EUNAVAILABLE  = "unavailable"   // not ready or shutting down (503)
	EINTERNAL     = "internal"      // anything else; never shown in detail
)

// Error is an application error: a code from the list above and a message
// safe to show to the caller.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("hitl error: code=%s message=%s", e.Code, e.Message)
}

// Is lets errors.Is match on the code alone: errors.Is(err, hitl.ErrExpired).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Errorf returns an application error with the given code and message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinels for errors.Is; they match any *Error with the same code.
var (
	ErrInvalid      = &Error{Code: EINVALID}
	ErrUnauthorized = &Error{Code: EUNAUTHORIZED}
	ErrForbidden    = &Error{Code: EFORBIDDEN}
	ErrNotFound     = &Error{Code: ENOTFOUND}
	ErrConflict     = &Error{Code: ECONFLICT}
	ErrExpired      = &Error{Code: EEXPIRED}
	ErrCancelled    = &Error{Code: ECANCELLED}
	ErrValue        = &Error{Code: EVALUE}
)

// ErrUnreachable matches, with errors.Is, a request to a hitl server that
// got no complete response: the server is down, restarting, or the
// connection broke. The HTTP client's transport errors match it; a caller
// may retry, or fail closed.
var ErrUnreachable = errors.New("hitl server unreachable")

// ErrorCode returns the code of an application error, or EINTERNAL for any
// other error (and "" for nil).
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of an application error, or
// "internal error" for any other error, so internals never leak.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
