package expr

import (
	"encoding/json"
	"testing"

	"lastro/ddblocal/internal/av"
)

// item builds an item from its wire JSON.
func item(t testing.TB, js string) av.Item {
	t.Helper()
	if js == "" {
		return nil
	}
	var w av.WireItem
	if err := json.Unmarshal([]byte(js), &w); err != nil {
		t.Fatalf("bad item JSON %s: %v", js, err)
	}
	it, err := av.ItemFromWire(w)
	if err != nil {
		t.Fatalf("bad item %s: %v", js, err)
	}
	return it
}

// canon renders an item as JSON with sorted keys, for comparisons.
func canon(t testing.TB, it av.Item) string {
	t.Helper()
	if it == nil {
		return ""
	}
	var v any
	if err := json.Unmarshal(av.AppendItemJSON(nil, it), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// canonJSON normalises a JSON document the same way.
func canonJSON(t testing.TB, js string) string {
	t.Helper()
	return canon(t, item(t, js))
}

// attrs builds Attrs from JSON maps of names and values ("" for none).
func attrs(t testing.TB, names map[string]string, values string) *Attrs {
	t.Helper()
	var vals map[string]*av.Value
	if values != "" {
		vals = item(t, values)
	}
	return NewAttrs(names, vals)
}

// errMsg returns the message of an *Error, failing on other errors.
func errMsg(t testing.TB, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v is a %T, not *Error", err, err)
	}
	return e.Msg
}

// commonValues are expression attribute values of every type, for the
// tables of tests.
const commonValues = `{
	":s": {"S": "a"}, ":s2": {"S": "b"}, ":n": {"N": "1"}, ":n5": {"N": "5"}, ":n4": {"N": "4"},
	":b": {"B": "YQ=="}, ":bz": {"B": "eg=="}, ":bool": {"BOOL": true}, ":null": {"NULL": true},
	":ss": {"SS": ["a"]}, ":ns": {"NS": ["1"]}, ":bs": {"BS": ["YQ=="]}, ":m": {"M": {}}, ":l": {"L": []},
	":typeS": {"S": "S"}, ":typeBad": {"S": "STRING"}
}`

var commonNames = map[string]string{"#a": "a", "#b": "b", "#c": "c", "#d": "[3]", "#e": "a.b"}
