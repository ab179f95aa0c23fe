package expr

import (
	"strings"
	"testing"
)

func TestProjectionApply(t *testing.T) {
	t.Parallel()
	const it = `{
		"a": {"S": "x"}, "b": {"M": {"a": {"S": "a"}, "b": {"S": "b"}, "c": {"S": "c"}}},
		"c": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]}, "g": {"N": "23"},
		"d": {"L": [{"M": {"x": {"N": "1"}, "y": {"N": "2"}}}, {"L": [{"N": "0"}, {"N": "1"}]}]}
	}`
	tests := []struct{ expr, want string }{
		{"a", `{"a": {"S": "x"}}`},
		{"a, g, zz", `{"a": {"S": "x"}, "g": {"N": "23"}}`},
		{"#b, #g", `{"b": {"M": {"a": {"S": "a"}, "b": {"S": "b"}, "c": {"S": "c"}}}, "g": {"N": "23"}}`},
		{"b.c, c[2], b.b, c[1], c[0].a", `{"b": {"M": {"b": {"S": "b"}, "c": {"S": "c"}}}, "c": {"L": [{"S": "b"}, {"S": "c"}]}}`},
		{"#b.#c, #c[2], #b.#b, #c[1], #c[0][1]", `{"b": {"M": {"b": {"S": "b"}, "c": {"S": "c"}}}, "c": {"L": [{"S": "b"}, {"S": "c"}]}}`},
		{"c[5]", `{}`},
		{"a.b", `{}`},
		{"a[0]", `{}`},
		{"b.zz", `{}`},
		{"d[0].y, d[1][1]", `{"d": {"L": [{"M": {"y": {"N": "2"}}}, {"L": [{"N": "1"}]}]}}`},
		{"d[1].x", `{}`},
		{"#e", `{}`},
	}
	names := map[string]string{"#b": "b", "#c": "c", "#g": "g", "#e": "a.b"}
	for _, tt := range tests {
		p, err := ParseProjection(tt.expr, attrs(t, names, ""))
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if g, w := canon(t, p.Apply(item(t, it))), canonJSON(t, tt.want); g != w {
			t.Errorf("%q:\n got %s\nwant %s", tt.expr, g, w)
		}
	}
}

func TestProjectionNames(t *testing.T) {
	t.Parallel()
	p, err := ParseProjection("a.b, #x, c[1], a.c", attrs(t, map[string]string{"#x": "dotted.name"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(p.TopNames(), ","), "a,dotted.name,c"; got != want {
		t.Errorf("TopNames: got %q, want %q", got, want)
	}
	var paths []string
	for _, q := range p.Paths() {
		paths = append(paths, q.String())
	}
	if got, want := strings.Join(paths, " "), "[a, b] [dotted.name] [c, [1]] [a, c]"; got != want {
		t.Errorf("Paths: got %q, want %q", got, want)
	}
}

func TestProjectPathsOverlapping(t *testing.T) {
	t.Parallel()
	it := item(t, `{"a": {"M": {"b": {"N": "1"}, "c": {"N": "2"}}}, "d": {"N": "3"}}`)
	got := ProjectPaths(it, []Path{
		NewPath(PathElement{Name: "a"}, PathElement{Name: "b"}),
		NewPath(PathElement{Name: "a"}),
		NewPath(PathElement{Name: "a"}, PathElement{Name: "c"}),
	})
	if g, w := canon(t, got), canonJSON(t, `{"a": {"M": {"b": {"N": "1"}, "c": {"N": "2"}}}}`); g != w {
		t.Errorf("got %s, want %s", g, w)
	}
	if got := ProjectPaths(nil, []Path{NewPath(PathElement{Name: "a"})}); len(got) != 0 {
		t.Errorf("projection of a missing item: %v", got)
	}
}
