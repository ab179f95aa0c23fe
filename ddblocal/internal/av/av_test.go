package av

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{"1", "1", ""},
		{"1.50", "1.5", ""},
		{"001", "1", ""},
		{"-0", "0", ""},
		{"0.000", "0", ""},
		{"1E+2", "100", ""},
		{"1e-3", "0.001", ""},
		{"-12.340", "-12.34", ""},
		{"+5", "5", ""},
		{"", "", "The parameter cannot be converted to a numeric value"},
		{"b", "", "The parameter cannot be converted to a numeric value: b"},
		{"Infinity", "", "The parameter cannot be converted to a numeric value: Infinity"},
		{"NaN", "", "The parameter cannot be converted to a numeric value: NaN"},
		{"123456789012345678901234567890123456789", "", msgPrecision},
		{"1e126", "", msgOverflow},
		{"-1e126", "", msgOverflow},
		{"1e-131", "", msgUnderflow},
		{"9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999" + strings.Repeat("0", 88), ""},
		{"1E-130", "0." + strings.Repeat("0", 129) + "1", ""},
	}
	for _, tt := range tests {
		got, err := ParseNumber(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseNumber(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseNumber(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNumberKeyOrder(t *testing.T) {
	t.Parallel()
	nums := []string{"-1e100", "-1000", "-12.5", "-12.34", "-12", "-1.55", "-1.5", "-1", "-0.5", "-0.05", "-1e-100",
		"0", "1e-100", "0.05", "0.5", "1", "1.5", "1.55", "2", "10", "12", "12.34", "100", "1e100"}
	var prev []byte
	for i, s := range nums {
		c, err := ParseNumber(s)
		if err != nil {
			t.Fatal(err)
		}
		k := AppendKey(nil, Num(c))
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			t.Errorf("key(%s) does not sort after key(%s)", s, nums[i-1])
		}
		if i > 0 {
			p, _ := ParseNumber(nums[i-1])
			if CompareNumbers(p, c) >= 0 {
				t.Errorf("CompareNumbers(%s, %s) >= 0", nums[i-1], s)
			}
		}
		prev = k
	}
}

func TestStringKeyOrderAndPrefixFree(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var vals []string
	for range 500 {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = []byte{0, 1, 'a', 0xFF}[r.IntN(4)]
		}
		vals = append(vals, string(b))
	}
	for _, a := range vals {
		for _, b := range vals[:50] {
			ka, kb := AppendKey(nil, Str(a)), AppendKey(nil, Str(b))
			if got, want := bytes.Compare(ka, kb), strings.Compare(a, b); got != want {
				t.Fatalf("order of %q vs %q: %d, want %d", a, b, got, want)
			}
			if a != b && (bytes.HasPrefix(ka, kb) || bytes.HasPrefix(kb, ka)) {
				t.Fatalf("%q and %q encode with a common prefix", a, b)
			}
		}
	}
}

func TestWireRoundTripAndBinary(t *testing.T) {
	t.Parallel()
	in := `{"s":{"S":"a\"b\u0001ç"},"n":{"N":"1.50"},"b":{"B":"AAEC"},"ss":{"SS":["x","y"]},"ns":{"NS":["1","2.0"]},
	"bs":{"BS":["AA==","AQ=="]},"m":{"M":{"k":{"L":[{"NULL":true},{"BOOL":false}]}}},"e":{"S":""}}`
	var w WireItem
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatal(err)
	}
	it, err := ItemFromWire(w)
	if err != nil {
		t.Fatal(err)
	}
	if it["n"].Str != "1.5" || !slices.Equal(it["ns"].Strs, []string{"1", "2"}) {
		t.Fatalf("numbers not canonical: %v %v", it["n"].Str, it["ns"].Strs)
	}
	out, _ := json.Marshal(it)
	var w2 WireItem
	if err := json.Unmarshal(out, &w2); err != nil {
		t.Fatalf("re-decode %s: %v", out, err)
	}
	it2, err := ItemFromWire(w2)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeItem(AppendItemBinary(nil, it2))
	if err != nil {
		t.Fatal(err)
	}
	for k := range it {
		if !Equal(it[k], dec[k]) {
			t.Errorf("%s: %v != %v", k, it[k], dec[k])
		}
	}
	if _, err := DecodeItem([]byte{5, 1}); err == nil {
		t.Error("corrupt input decoded")
	}
}

func TestWireValidation(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, err string }{
		{`{}`, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
		{`{"M":{"a":{}}}`, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
		{`{"S":"a","N":"1"}`, "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"},
		{`{"NULL":false}`, "One or more parameter values were invalid: Null attribute value types must have the value of true"},
		{`{"M":{"a":{"NULL":false}}}`, "One or more parameter values were invalid: Null attribute value types must have the value of true"},
		{`{"M":{"":{"S":"x"}}}`, "Empty attribute name"},
		{`{"L":[{"M":{"a":{"M":{"":{"NULL":true}}}}}]}`, "Empty attribute name"},
		{`{"SS":[]}`, "One or more parameter values were invalid: An string set  may not be empty"},
		{`{"NS":[]}`, "One or more parameter values were invalid: An number set  may not be empty"},
		{`{"BS":[]}`, "One or more parameter values were invalid: Binary sets should not be empty"},
		{`{"SS":["a","a"]}`, "One or more parameter values were invalid: Input collection [a, a] contains duplicates."},
		{`{"BS":["Yg==","Yg=="]}`, "One or more parameter values were invalid: Input collection [Yg==, Yg==]of type BS contains duplicates."},
		{`{"NS":["1","1.0"]}`, "Input collection contains duplicates"},
		{`{"NS":["1","b"]}`, "The parameter cannot be converted to a numeric value: b"},
	}
	for _, tt := range tests {
		var w Wire
		if err := json.Unmarshal([]byte(tt.in), &w); err != nil {
			t.Fatal(err)
		}
		_, err := FromWire(&w)
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: error %v, want %q", tt.in, err, tt.err)
		}
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    *Value
		want int
	}{
		{Str("abc"), 3},
		{Num("0"), 1},
		{Num("1"), 2},
		{Num("12345"), 4},
		{Num("1.5"), 3},
		{Num("-1"), 3},
		{Bool(true), 1},
		{&Value{T: L, List: []*Value{Str("ab"), Null()}}, 3 + 1 + 2 + 1 + 1},
		{&Value{T: M, Map: map[string]*Value{"k": Str("v")}}, 3 + 1 + 1 + 1},
	}
	for _, tt := range tests {
		if got := Size(tt.v); got != tt.want {
			t.Errorf("Size(%v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
