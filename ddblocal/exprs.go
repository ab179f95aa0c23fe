package ddblocal

import (
	"errors"
	"sort"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
)

// exprArgs gathers a request's expression members for validation.
type exprArgs struct {
	names  map[string]string
	values map[string]*av.Wire
	// expressions present, by member name
	present []string
	// legacy (non-expression) members present
	legacy []string
	// ifNone completes "ExpressionAttributeValues can only be specified
	// when using expressions: " when no expression is present.
	ifNone string
}

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

// attrs validates the names and values and returns the expression context.
func (e exprArgs) attrs() (*expr.Attrs, error) {
	if len(e.present) > 0 && len(e.legacy) > 0 {
		return nil, validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
			strings.Join(e.legacy, ", "), strings.Join(e.present, ", "))
	}
	if len(e.present) == 0 {
		if e.names != nil {
			return nil, validation("ExpressionAttributeNames can only be specified when using expressions")
		}
		if e.values != nil {
			return nil, validation("ExpressionAttributeValues can only be specified when using expressions: %s", e.ifNone)
		}
		return expr.NewAttrs(nil, nil), nil
	}
	if e.names != nil && len(e.names) == 0 {
		return nil, validation("ExpressionAttributeNames must not be empty")
	}
	for _, k := range sortedKeys(e.names) {
		if !isAttrNameKey(k) {
			return nil, validation(`ExpressionAttributeNames contains invalid key: Syntax error; key: "%s"`, k)
		}
	}
	if e.values != nil && len(e.values) == 0 {
		return nil, validation("ExpressionAttributeValues must not be empty")
	}
	keys := sortedKeys(e.values)
	for _, k := range keys {
		if !isAttrValueKey(k) {
			return nil, validation(`ExpressionAttributeValues contains invalid key: Syntax error; key: "%s"`, k)
		}
	}
	vals := make(map[string]*av.Value, len(e.values))
	for _, k := range keys {
		v, err := av.FromWire(e.values[k])
		if err != nil {
			return nil, validation("ExpressionAttributeValues contains invalid value: %s for key %s", err.Error(), k)
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
	return err
}

func present(list *[]string, name string, set bool) {
	if set {
		*list = append(*list, name)
	}
}
