package engine

import (
	"errors"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/wire"
)

// ExprArgs gathers a request's expression members for validation.
//
// DynamoDB validates them in two steps: which members may be combined
// (params, checked early, before the request's attribute values), then the
// maps themselves and the expressions (attrs, then the parsers, then
// Attrs.CheckUnused).
type ExprArgs struct {
	Names  map[string]string
	Values map[string]*av.Wire
	// Present lists the expression members present, in DynamoDB's order.
	Present []string
	// Legacy lists the non-expression members present, in DynamoDB's order.
	Legacy []string
	// Older selects the wording of the older validation layer that Scan,
	// BatchWriteItem and the transactions still use: invalid values are
	// wrapped ("ExpressionAttributeValues contains invalid value: ... for key
	// :v") and a values map without expressions names the missing ones.
	Older bool
	// IfNone completes "ExpressionAttributeValues can only be specified when
	// using expressions: " in the older layer, e.g. "ConditionExpression is
	// null"; empty, the message ends there.
	IfNone string
}

// maxPlaceholderBytes bounds an ExpressionAttributeNames or
// ExpressionAttributeValues key, its # or : included.
const maxPlaceholderBytes = 255

func isAttrNameKey(k string) bool  { return len(k) > 1 && k[0] == '#' && isIdent(k[1:]) }
func isAttrValueKey(k string) bool { return len(k) > 1 && k[0] == ':' && isIdent(k[1:]) }

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// takesValues reports whether an expression that can use
// ExpressionAttributeValues is present (a ProjectionExpression cannot).
func (e ExprArgs) takesValues() bool {
	for _, p := range e.Present {
		if p != "ProjectionExpression" {
			return true
		}
	}
	return false
}

// Params checks which expression members the request combines.
func (e ExprArgs) Params() error {
	if len(e.Present) > 0 && len(e.Legacy) > 0 {
		return wire.Validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
			strings.Join(e.Legacy, ", "), strings.Join(e.Present, ", "))
	}
	if e.Names != nil && len(e.Present) == 0 {
		return wire.Validation("ExpressionAttributeNames can only be specified when using expressions")
	}
	if e.Values != nil && !e.takesValues() {
		if e.IfNone != "" {
			return wire.Validation("ExpressionAttributeValues can only be specified when using expressions: %s", e.IfNone)
		}
		return wire.Validation("ExpressionAttributeValues can only be specified when using expressions")
	}
	return nil
}

// Attrs validates the names and values maps and returns the expression
// context the parsers share.
func (e ExprArgs) Attrs() (*expr.Attrs, error) {
	if e.Names != nil && len(e.Names) == 0 {
		return nil, wire.Validation("ExpressionAttributeNames must not be empty")
	}
	for _, k := range wire.SortedKeys(e.Names) {
		// A placeholder's length is checked before its syntax.
		if len(k) > maxPlaceholderBytes {
			return nil, wire.Validation("ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: %d", len(k))
		}
		if !isAttrNameKey(k) {
			return nil, wire.Validation(`ExpressionAttributeNames contains invalid key: Syntax error; key: "%s"`, k)
		}
		if e.Names[k] == "" {
			return nil, wire.Validation("ExpressionAttributeNames contains invalid value: Empty attribute name for key %s", k)
		}
		if len(e.Names[k]) > av.MaxNameBytes {
			return nil, wire.Validation("Attribute name is too large, must be less than 65536 bytes")
		}
	}
	if e.Values != nil && len(e.Values) == 0 {
		return nil, wire.Validation("ExpressionAttributeValues must not be empty")
	}
	keys := wire.SortedKeys(e.Values)
	for _, k := range keys {
		if len(k) > maxPlaceholderBytes {
			return nil, wire.Validation("ExpressionAttributeValues contains invalid key: The expression attribute map contains a key that is too long;")
		}
		if !isAttrValueKey(k) {
			return nil, wire.Validation(`ExpressionAttributeValues contains invalid key: Syntax error; key: "%s"`, k)
		}
	}
	var vals map[string]*av.Value
	if e.Values != nil {
		vals = make(map[string]*av.Value, len(e.Values))
	}
	for _, k := range keys {
		v, err := av.FromWire(e.Values[k])
		if err != nil {
			if e.Older {
				return nil, wire.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", err.Error(), k)
			}
			return nil, wire.Validation("%s", err.Error())
		}
		vals[k] = v
	}
	return expr.NewAttrs(e.Names, vals), nil
}

// ExprError turns an expression package error into a ValidationException.
func ExprError(err error) error {
	var ee *expr.Error
	if errors.As(err, &ee) {
		return wire.Validation("%s", ee.Msg)
	}
	var ae *av.Error
	if errors.As(err, &ae) {
		return wire.Validation("%s", ae.Msg)
	}
	return err
}

// AvError turns an attribute value validation error into a
// ValidationException.
func AvError(err error) error {
	if err == nil {
		return nil
	}
	return wire.Validation("%s", err.Error())
}

func Present(list *[]string, name string, set bool) {
	if set {
		*list = append(*list, name)
	}
}
