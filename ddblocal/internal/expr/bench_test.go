package expr

import "testing"

const benchFilter = "#s = :s AND size(l) > :n AND (n BETWEEN :n AND :n5 OR contains(ss, :s)) AND NOT begins_with(m.k, :s2)"

func BenchmarkParseCondition(b *testing.B) {
	vals := item(b, commonValues)
	names := map[string]string{"#s": "s"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCondition(KindFilter, benchFilter, NewAttrs(names, vals)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseUpdate(b *testing.B) {
	vals := item(b, commonValues)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseUpdate("SET a = :s, b.c[2] = if_not_exists(b.c[2], :n) + :n5 REMOVE d ADD e :ss", NewAttrs(nil, vals)); err != nil {
			b.Fatal(err)
		}
	}
}

var benchItem = `{"s": {"S": "a"}, "l": {"L": [{"N": "1"}, {"N": "2"}]}, "n": {"N": "4.5"}, "ss": {"SS": ["a", "b"]}, "m": {"M": {"k": {"S": "zz"}}}}`

func BenchmarkEvalCondition(b *testing.B) {
	c, err := ParseCondition(KindFilter, benchFilter, attrs(b, map[string]string{"#s": "s"}, commonValues))
	if err != nil {
		b.Fatal(err)
	}
	it := item(b, benchItem)
	b.ReportAllocs()
	for b.Loop() {
		if !c.Eval(it) {
			b.Fatal("false")
		}
	}
}

func BenchmarkApplyUpdate(b *testing.B) {
	u, err := ParseUpdate("SET s = :s2, n = n + :n ADD ss :ss REMOVE m.k", attrs(b, nil, commonValues))
	if err != nil {
		b.Fatal(err)
	}
	it := item(b, benchItem)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := u.Apply(it); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEvalDoesNotAllocate(t *testing.T) {
	c, err := ParseCondition(KindFilter, benchFilter, attrs(t, map[string]string{"#s": "s"}, commonValues))
	if err != nil {
		t.Fatal(err)
	}
	it := item(t, benchItem)
	if n := testing.AllocsPerRun(100, func() { c.Eval(it) }); n != 0 {
		t.Errorf("Eval allocates %v times per run", n)
	}
}
