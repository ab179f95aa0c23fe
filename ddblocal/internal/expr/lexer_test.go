package expr

import (
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []tokKind
	}{
		{"a.b[10]", []tokKind{tID, tDot, tID, tLBrack, tIndex, tRBrack}},
		{"#n = :v", []tokKind{tName, tEQ, tValue}},
		{"<> <= < >= > =", []tokKind{tNE, tLE, tLT, tGE, tGT, tEQ}},
		{"in IN iN INDEX between Between not AND or set Add delete REMOVE", []tokKind{tIn, tIn, tIn, tID, tBetween, tBetween, tNot, tAnd, tOr, tSet, tAdd, tDelete, tRemove}},
		{"007", []tokKind{tIndex, tIndex, tIndex}},
		{"123a", []tokKind{tIndex, tID}},
		{"_a", []tokKind{tUnknown, tID}},
		{"# :", []tokKind{tUnknown, tUnknown}},
		{"#1_x :_", []tokKind{tName, tValue}},
		{"a\t\r\n+-", []tokKind{tID, tPlus, tMinus}},
		{"ü€", []tokKind{tUnknown, tUnknown}},
		{"a\vb", []tokKind{tID, tUnknown, tID}},
	}
	for _, tt := range tests {
		toks := tokenize(tt.in, nil)
		var got []tokKind
		for _, tk := range toks[:len(toks)-1] {
			got = append(got, tk.kind)
		}
		if toks[len(toks)-1].kind != tEOF {
			t.Errorf("%q: no EOF", tt.in)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%q: got %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: got %v, want %v", tt.in, got, tt.want)
				break
			}
		}
	}
}

func TestJavaLen(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "abc": 3, "ü": 1, "€": 1, "𝄞": 2, "\xff": 1} {
		if got := javaLen(s); got != want {
			t.Errorf("javaLen(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestReservedWords(t *testing.T) {
	t.Parallel()
	if n := len(reserved); n != 573 {
		t.Errorf("%d reserved words, want DynamoDB's 573", n)
	}
	for _, w := range []string{"abort", "ABORT", "Status", "name", "SIZE", "zone", "ttl"} {
		if !isReserved(w) {
			t.Errorf("%q is not reserved", w)
		}
	}
	for _, w := range []string{"a", "abortx", "names_", "pk", strings.Repeat("a", 40)} {
		if isReserved(w) {
			t.Errorf("%q is reserved", w)
		}
	}
}

func TestPathString(t *testing.T) {
	t.Parallel()
	p := NewPath(PathElement{Name: "a"}, PathElement{Index: 3, IsIndex: true}, PathElement{Name: "b.c"})
	if got, want := p.String(), "[a, [3], b.c]"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	if p.Top() != "a" || p.Len() != 3 || !p.Nested() || (Path{}).Top() != "" {
		t.Errorf("accessors of %v", p)
	}
}

// TestJavaHashOrder pins the emulation of java.util.HashMap's iteration
// order that decides the "path two" of overlap messages.
func TestJavaHashOrder(t *testing.T) {
	t.Parallel()
	if got := javaStringHash("hello"); got != 99162322 {
		t.Errorf("javaStringHash(hello) = %d", got)
	}
	tree := &ptree{}
	for _, n := range []string{"a", "b"} {
		tree.insert(NewPath(PathElement{Name: n}))
	}
	if got := tree.first().elem.Name; got != "b" {
		t.Errorf("first of {a, b} = %q, want b", got)
	}
	// Past 12 children the table grows to 32 buckets.
	tree = &ptree{}
	for i := range 20 {
		tree.insert(NewPath(PathElement{Name: string(rune('a' + i))}))
	}
	if tree.first() == nil {
		t.Error("no first child")
	}
}
