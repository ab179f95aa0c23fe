package psptest

import "testing"

// TestPatternsAreReadAsMeant: the document's JavaScript-literal CPF
// pattern is its inside, and every pattern is anchored at both ends.
func TestPatternsAreReadAsMeant(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern, in string
		want        bool
	}{
		{`/^\d{11}$/`, "52998224725", true},
		{`/^\d{11}$/`, "123", false},
		{`/^\d{11}$/`, "/52998224725/", false},
		{`\d{1,10}\.\d{2}`, "1024.67", true},
		{`\d{1,10}\.\d{2}`, "1.234", false},
		{`\d{1,10}\.\d{2}`, "x1.23", false},
		{`^[0-9A-Z]{14}$`, "11222333000181", true},
		{`[a-zA-Z0-9]{26,35}`, "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF", true},
		{`[a-zA-Z0-9]{26,35}`, "short", false},
	} {
		re, err := compilePattern(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if got := re.MatchString(tt.in); got != tt.want {
			t.Errorf("%s on %q = %v, want %v", tt.pattern, tt.in, got, tt.want)
		}
	}
}
