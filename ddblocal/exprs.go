package ddblocal

import (
	"errors"
	"sort"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// exprArgs gathers a request's expression members for validation.
//
// DynamoDB validates them in two steps: which members may be combined
// (params, checked early, before the request's attribute values), then the
// maps themselves and the expressions (attrs, then the parsers, then
// Attrs.CheckUnused).
type exprArgs struct {
	names  map[string]string
	values map[string]*av.Wire
	// present lists the expression members present, in DynamoDB's order.
	present []string
	// legacy lists the non-expression members present, in DynamoDB's order.
	legacy []string
	// older selects the wording of the older validation layer that Scan,
	// BatchWriteItem and the transactions still use: invalid values are
	// wrapped ("ExpressionAttributeValues contains invalid value: ... for key
	// :v") and a values map without expressions names the missing ones.
	older bool
	// ifNone completes "ExpressionAttributeValues can only be specified when
	// using expressions: " in the older layer, e.g. "ConditionExpression is
	// null"; empty, the message ends there.
	ifNone string
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
func (e exprArgs) takesValues() bool {
	for _, p := range e.present {
		if p != "ProjectionExpression" {
			return true
		}
	}
	return false
}

// params checks which expression members the request combines.
func (e exprArgs) params() error {
	if len(e.present) > 0 && len(e.legacy) > 0 {
		return validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
			strings.Join(e.legacy, ", "), strings.Join(e.present, ", "))
	}
	if e.names != nil && len(e.present) == 0 {
		return validation("ExpressionAttributeNames can only be specified when using expressions")
	}
	if e.values != nil && !e.takesValues() {
		if e.ifNone != "" {
			return validation("ExpressionAttributeValues can only be specified when using expressions: %s", e.ifNone)
		}
		return validation("ExpressionAttributeValues can only be specified when using expressions")
	}
	return nil
}

// attrs validates the names and values maps and returns the expression
// context the parsers share.
func (e exprArgs) attrs() (*expr.Attrs, error) {
	if e.names != nil && len(e.names) == 0 {
		return nil, validation("ExpressionAttributeNames must not be empty")
	}
	for _, k := range sortedKeys(e.names) {
		// A placeholder's length is checked before its syntax.
		if len(k) > maxPlaceholderBytes {
			return nil, validation("ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: %d", len(k))
		}
		if !isAttrNameKey(k) {
			return nil, validation(`ExpressionAttributeNames contains invalid key: Syntax error; key: "%s"`, k)
		}
		if e.names[k] == "" {
			return nil, validation("ExpressionAttributeNames contains invalid value: Empty attribute name for key %s", k)
		}
		if len(e.names[k]) > av.MaxNameBytes {
			return nil, validation("Attribute name is too large, must be less than 65536 bytes")
		}
	}
	if e.values != nil && len(e.values) == 0 {
		return nil, validation("ExpressionAttributeValues must not be empty")
	}
	keys := sortedKeys(e.values)
	for _, k := range keys {
		if len(k) > maxPlaceholderBytes {
			return nil, validation("ExpressionAttributeValues contains invalid key: The expression attribute map contains a key that is too long;")
		}
		if !isAttrValueKey(k) {
			return nil, validation(`ExpressionAttributeValues contains invalid key: Syntax error; key: "%s"`, k)
		}
	}
	var vals map[string]*av.Value
	if e.values != nil {
		vals = make(map[string]*av.Value, len(e.values))
	}
	for _, k := range keys {
		v, err := av.FromWire(e.values[k])
		if err != nil {
			if e.older {
				return nil, validation("ExpressionAttributeValues contains invalid value: %s for key %s", err.Error(), k)
			}
			return nil, validation("%s", err.Error())
		}
		vals[k] = v
	}
	return expr.NewAttrs(e.names, vals), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// exprError turns an expression package error into a ValidationException.
func exprError(err error) error {
	var ee *expr.Error
	if errors.As(err, &ee) {
		return validation("%s", ee.Msg)
	}
	var ae *av.Error
	if errors.As(err, &ae) {
		return validation("%s", ae.Msg)
	}
	return err
}

// avError turns an attribute value validation error into a
// ValidationException.
func avError(err error) error {
	if err == nil {
		return nil
	}
	return validation("%s", err.Error())
}

func present(list *[]string, name string, set bool) {
	if set {
		*list = append(*list, name)
	}
}
