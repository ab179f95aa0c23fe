package expr

import (
	"slices"
	"strings"

	"lastro/ddblocal/internal/av"
)

// Attrs carries a request's ExpressionAttributeNames and
// ExpressionAttributeValues and records which of them the request's
// expressions used: DynamoDB rejects requests that define unused ones.
// One Attrs is shared by all expressions of a request. It is not safe for
// concurrent use.
type Attrs struct {
	Names  map[string]string
	Values map[string]*av.Value

	usedNames  map[string]struct{}
	usedValues map[string]struct{}
}

// NewAttrs returns usage-tracking attributes for one request; either map
// may be nil.
func NewAttrs(names map[string]string, values map[string]*av.Value) *Attrs {
	return &Attrs{Names: names, Values: values}
}

// name resolves a "#name" placeholder and marks it used.
func (a *Attrs) name(ref string) (string, bool) {
	if a == nil {
		return "", false
	}
	n, ok := a.Names[ref]
	if !ok {
		return "", false
	}
	if a.usedNames == nil {
		a.usedNames = make(map[string]struct{}, len(a.Names))
	}
	a.usedNames[ref] = struct{}{}
	return n, true
}

// value resolves a ":value" placeholder and marks it used.
func (a *Attrs) value(ref string) (*av.Value, bool) {
	if a == nil {
		return nil, false
	}
	v, ok := a.Values[ref]
	if !ok || v == nil {
		return nil, false
	}
	if a.usedValues == nil {
		a.usedValues = make(map[string]struct{}, len(a.Values))
	}
	a.usedValues[ref] = struct{}{}
	return v, true
}

// CheckUnused reports names, then values, that no expression of the
// request used. It is called once, after every expression of the request
// was parsed. DynamoDB lists the keys in no particular order; they are
// sorted here so the message is stable.
func (a *Attrs) CheckUnused() error {
	if a == nil {
		return nil
	}
	if keys := unused(a.Names, a.usedNames); len(keys) > 0 {
		return &Error{Msg: "Value provided in ExpressionAttributeNames unused in expressions: keys: {" + strings.Join(keys, ", ") + "}"}
	}
	if keys := unused(a.Values, a.usedValues); len(keys) > 0 {
		return &Error{Msg: "Value provided in ExpressionAttributeValues unused in expressions: keys: {" + strings.Join(keys, ", ") + "}"}
	}
	return nil
}

func unused[V any](defined map[string]V, used map[string]struct{}) []string {
	var keys []string
	for k := range defined {
		if _, ok := used[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
