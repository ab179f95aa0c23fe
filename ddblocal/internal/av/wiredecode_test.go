package av

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// refWire is Wire without its UnmarshalJSON: encoding/json's own decoding,
// the reference the one-pass reader must match.
type refWire struct {
	S    *string              `json:"S,omitempty"`
	N    *string              `json:"N,omitempty"`
	B    *[]byte              `json:"B,omitempty"`
	SS   *[]string            `json:"SS,omitempty"`
	NS   *[]string            `json:"NS,omitempty"`
	BS   *[][]byte            `json:"BS,omitempty"`
	M    *map[string]*refWire `json:"M,omitempty"`
	L    *[]*refWire          `json:"L,omitempty"`
	NULL *bool                `json:"NULL,omitempty"`
	BOOL *bool                `json:"BOOL,omitempty"`
}

// fromRef converts the reference's result for comparison.
func fromRef(r *refWire) *Wire {
	if r == nil {
		return nil
	}
	w := &Wire{S: r.S, N: r.N, B: r.B, SS: r.SS, NS: r.NS, BS: r.BS, NULL: r.NULL, BOOL: r.BOOL}
	if r.M != nil {
		m := map[string]*Wire{}
		if *r.M == nil {
			m = nil
		}
		for k, v := range *r.M {
			m[k] = fromRef(v)
		}
		w.M = &m
	}
	if r.L != nil {
		l := []*Wire{}
		if *r.L == nil {
			l = nil
		}
		for _, v := range *r.L {
			l = append(l, fromRef(v))
		}
		w.L = &l
	}
	return w
}

// randomValue writes a random attribute value's JSON: mostly the common
// shapes, sometimes one the reader must leave to encoding/json.
func randomValue(r *rand.Rand, depth int) string {
	strs := []string{`""`, `"a"`, `"T#t1#D#9f2c"`, `"ação"`, `"tab\tescape"`, `"quote\"d"`, `"\u00e7"`, "\"\xff\"", `"12.50"`, `"-0"`}
	pick := func() string { return strs[r.IntN(len(strs))] }
	sp := func() string { return []string{"", " ", "\n\t "}[r.IntN(3)] }
	switch k := r.IntN(16); {
	case k < 4:
		return `{` + sp() + `"S"` + sp() + `:` + sp() + pick() + sp() + `}`
	case k < 6:
		return `{"N":` + pick() + `}`
	case k < 7:
		return `{"BOOL":` + []string{"true", "false", "null", `"true"`}[r.IntN(4)] + `}`
	case k < 8:
		return `{"NULL":true}`
	case k < 10 && depth < 3:
		n := r.IntN(4)
		var b strings.Builder
		b.WriteString(`{"M":{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s%s:%s", sp(), []string{`"a"`, `"b"`, `"c"`, `"a"`, `"k\"ey"`}[r.IntN(5)], randomValue(r, depth+1))
		}
		b.WriteString(`}}`)
		return b.String()
	case k < 12 && depth < 3:
		n := r.IntN(4)
		var parts []string
		for range n {
			parts = append(parts, randomValue(r, depth+1))
		}
		return `{"L":[` + strings.Join(parts, ","+sp()) + `]}`
	}
	return []string{`{"SS":["a","b"]}`, `{"B":"AAEC"}`, `{"S":"a","N":"1"}`, `{"s":"lower"}`, `{}`, `null`, `{"S":1}`, `{"M":null}`,
		`{"L":{}}`, `{"NS":["1"]}`, `{"BS":["AA=="]}`, `{"X":"unknown"}`, `{"S":"a",}`}[r.IntN(13)]
}

// TestWireDecodingMatchesEncodingJSON: for common and uncommon values,
// items and malformed input, Wire and WireItem decode exactly as
// encoding/json decodes the same fields, errors (the member path DynamoDB's
// message names) included.
func TestWireDecodingMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(26, 87))
	var inputs []string
	for range 3000 {
		n := r.IntN(5)
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`"k%d":%s`, i%3, randomValue(r, 0)))
		}
		inputs = append(inputs, `{"Item":{`+strings.Join(parts, ",")+`},"V":`+randomValue(r, 0)+`}`)
	}
	inputs = append(inputs, `{"Item":null}`, `{"Item":{"a":null}}`, `{"Item":[]}`, `{"Item":{"a":{"S":"x"}} }`, `{"V":{"S":"x"}}`,
		`{"Item":{"a":{"S":"x"},"a":{"N":"1"}}}`, `{"Item":{"a":{"M":{"b":{"L":[{"S":"x"},{"N":1}]}}}}}`)
	type fast struct {
		Item WireItem `json:"Item"`
		V    *Wire    `json:"V"`
	}
	type ref struct {
		Item map[string]*refWire `json:"Item"`
		V    *refWire            `json:"V"`
	}
	for _, in := range inputs {
		var f fast
		var g ref
		errF := json.Unmarshal([]byte(in), &f)
		errG := json.Unmarshal([]byte(in), &g)
		if (errF == nil) != (errG == nil) {
			t.Fatalf("%s: error %v, encoding/json %v", in, errF, errG)
		}
		if errF != nil {
			var tf, tg *json.UnmarshalTypeError
			if errors.As(errF, &tf) != errors.As(errG, &tg) || (tf != nil && tf.Field != tg.Field) {
				t.Fatalf("%s: error %v, encoding/json %v", in, errF, errG)
			}
			continue
		}
		var item WireItem
		if g.Item != nil {
			item = WireItem{}
			for k, v := range g.Item {
				item[k] = fromRef(v)
			}
		}
		if !reflect.DeepEqual(f.Item, item) || !reflect.DeepEqual(f.V, fromRef(g.V)) {
			t.Fatalf("%s: decoded differently from encoding/json", in)
		}
	}
}
