// Package errs is Lastro's single error vocabulary: an append-only list of
// kinds that every layer classifies its failures into, mapped once to HTTP
// statuses at the edge (after upspin's errors package).
package errs

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies an error. Append only.
type Kind uint8

const (
	Other      Kind = iota // unclassified: a bug or an unexpected failure (500)
	Invalid                // the request is malformed or breaks a validation rule (400)
	Unauth                 // no or bad credentials (401)
	Permission             // authenticated but not allowed (403)
	NotFound               // the thing does not exist (404)
	Conflict               // the state changed or already exists (409)
	Rule                   // well-formed but refused by a business rule (422)
	Limit                  // a quota or rate limit was hit (429)
	Transient              // the store or a dependency is temporarily unavailable (503)
	Method                 // the path exists but not with this method (405)
	TooLarge               // the request body is over the limit (413)
)

var kindNames = [...]string{"internal", "invalid", "unauthenticated", "forbidden", "not_found", "conflict", "rule", "limit", "unavailable", "method_not_allowed", "body_too_large"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "internal"
}

// Status is the HTTP status of a kind.
func (k Kind) Status() int {
	switch k {
	case Invalid:
		return http.StatusBadRequest
	case Unauth:
		return http.StatusUnauthorized
	case Permission:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Conflict:
		return http.StatusConflict
	case Rule:
		return http.StatusUnprocessableEntity
	case Limit:
		return http.StatusTooManyRequests
	case Transient:
		return http.StatusServiceUnavailable
	case Method:
		return http.StatusMethodNotAllowed
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// Error is a classified error. Code is a stable machine-readable code for
// clients (e.g. "invalid_document"); Msg is safe to show (never personal
// data); Err is the underlying cause, kept for logs and errors.Is.
type Error struct {
	Kind Kind
	Code string
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		return e.Msg + ": " + e.Err.Error()
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Kind.String()
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an error of a kind with a message (formatted when args follow).
func E(k Kind, code, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Kind: k, Code: code, Msg: msg}
}

// Wrap classifies err under a kind with a safe message.
func Wrap(k Kind, code string, err error, msg string) *Error {
	return &Error{Kind: k, Code: code, Msg: msg, Err: err}
}

// KindOf returns the kind of the outermost classified error in err's
// chain, or Other.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Other
}

// Is reports whether err is classified as kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Public returns the code and message a client may see for err: the
// classified error's own, or a generic one for unclassified failures.
func Public(err error) (status int, code, msg string) {
	var e *Error
	if errors.As(err, &e) && e.Kind != Other {
		code = e.Code
		if code == "" {
			code = e.Kind.String()
		}
		msg = e.Msg
		if msg == "" {
			msg = e.Kind.String()
		}
		return e.Kind.Status(), code, msg
	}
	return http.StatusInternalServerError, "internal", "internal error"
}
