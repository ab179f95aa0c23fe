package ui

import "testing"

func TestMoney(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{0: "R$ 0,00", 5: "R$ 0,05", 123456: "R$ 1.234,56", 100000000: "R$ 1.000.000,00", -2550: "-R$ 25,50"} {
		if got := money(cents); got != want {
			t.Errorf("money(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestParseCents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"150", 15000, true}, {"150,5", 15050, true}, {"1.234,56", 123456, true}, {"1234.56", 123456, true},
		{"R$ 10,00", 1000, true}, {"", 0, false}, {"1,234", 0, false}, {"-5", 0, false}, {"abc", 0, false}, {"1e3", 0, false},
	}
	for _, tt := range tests {
		got, err := parseCents(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseCents(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"/ui/suspense": "/ui/suspense", "//evil.example/ui/": "/", "https://evil.example/": "/",
		"/ui/\\evil": "/", "": "/", "/v1/tenant": "/"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
