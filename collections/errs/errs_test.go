package errs

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestKindsMapToStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err       error
		status    int
		code, msg string
	}{
		{E(Invalid, "invalid_document", "document is not a valid CPF or CNPJ"), http.StatusBadRequest, "invalid_document", "document is not a valid CPF or CNPJ"},
		{fmt.Errorf("create debtor: %w", E(Conflict, "", "debtor key collision")), http.StatusConflict, "conflict", "debtor key collision"},
		{E(NotFound, "debtor_not_found", "debtor %s not found", "abc"), http.StatusNotFound, "debtor_not_found", "debtor abc not found"},
		{E(Rule, "fine_above_cap", "fine above the 2.00 cap"), http.StatusUnprocessableEntity, "fine_above_cap", "fine above the 2.00 cap"},
		{E(Limit, "contact_limit", "daily contact limit reached"), http.StatusTooManyRequests, "contact_limit", "daily contact limit reached"},
		{Wrap(Transient, "", errors.New("throttled"), "store unavailable"), http.StatusServiceUnavailable, "unavailable", "store unavailable"},
		{E(Method, "", "method not allowed on this route"), http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed on this route"},
		{E(TooLarge, "", ""), http.StatusRequestEntityTooLarge, "body_too_large", "body_too_large"},
		{errors.New("boom: secret detail"), http.StatusInternalServerError, "internal", "internal error"},
	}
	for _, tt := range tests {
		status, code, msg := Public(tt.err)
		if status != tt.status || code != tt.code || msg != tt.msg {
			t.Errorf("Public(%v) = %d %q %q, want %d %q %q", tt.err, status, code, msg, tt.status, tt.code, tt.msg)
		}
	}
}

func TestWrapKeepsCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	err := fmt.Errorf("outer: %w", Wrap(Conflict, "", cause, "version changed"))
	if !errors.Is(err, cause) || !Is(err, Conflict) || Is(err, NotFound) {
		t.Fatalf("classification lost: %v", err)
	}
}
