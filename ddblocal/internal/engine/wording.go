package engine

import (
	"errors"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/wire"
)

// Older reports whether the store words errors as the older layer.
func (s *Store) Older() bool { return s.Opts.ValidationLayer == wire.ValidationOlder }

// NoExpression is what the older layer adds to "ExpressionAttributeValues
// can only be specified when using expressions: " (e.g. "ConditionExpression
// is null"); the current layer adds nothing.
func (s *Store) NoExpression(missing string) string {
	if s.Older() {
		return missing
	}
	return ""
}

// Envelope applies the validation envelope, once, to the answer of a
// PutItem, UpdateItem or DeleteItem: the current validation layer wraps
// its request-validation errors, the older one reports them bare.
func (s *Store) Envelope(err error) error {
	var ae *wire.APIError
	if s.Older() || !errors.As(err, &ae) || ae.Family != wire.FamRequest {
		return err
	}
	return wire.ConstraintViolation("%s", ae.Message)
}

// ValueWording words an attribute value error of PutItem, UpdateItem or
// DeleteItem the way the store's validation layer does: the current one
// rewrites it (currentWording), the older one keeps the av package's.
func (s *Store) ValueWording(err error, wires ...map[string]*av.Wire) error {
	if s.Older() {
		return err
	}
	return wire.CurrentWording(err, wires...)
}
