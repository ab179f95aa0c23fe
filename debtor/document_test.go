package debtor

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, digits, masked string
		typ                DocType
	}{
		{"529.982.247-25", "52998224725", "***.982.247-**", CPF},
		{"52998224725", "52998224725", "***.982.247-**", CPF},
		{" 529 982 247 25 ", "52998224725", "***.982.247-**", CPF},
		{"111.444.777-35", "11144477735", "***.444.777-**", CPF},
		{"11.222.333/0001-81", "11222333000181", "**.222.333/****-**", CNPJ},
		{"11222333000181", "11222333000181", "**.222.333/****-**", CNPJ},
		{"12.ABC.345/01DE-35", "12ABC34501DE35", "**.ABC.345/****-**", CNPJ}, // alphanumeric CNPJ (RFB example)
		{"12abc34501de35", "12ABC34501DE35", "**.ABC.345/****-**", CNPJ},
	}
	for _, tt := range tests {
		d, err := ParseDocument(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if d.Digits() != tt.digits || d.Masked() != tt.masked || d.Type != tt.typ {
			t.Errorf("%q: %s %s %s", tt.in, d.Digits(), d.Masked(), d.Type)
		}
		if strings.Contains(d.String(), tt.digits) {
			t.Errorf("%q: String leaks the number", tt.in)
		}
	}
	for _, bad := range []string{"", "529.982.247-24", "52998224715", "111.111.111-11", "00000000000", "1234567890",
		"123456789012", "11.222.333/0001-82", "11111111111111", "5299822472a", "529,982,247-25", "12.ABC.345/01DE-3X",
		strings.Repeat("1", 40), "52998224725\x00"} {
		if _, err := ParseDocument(bad); err != ErrInvalidDocument {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
}

func TestFormattedAndGenerated(t *testing.T) {
	t.Parallel()
	d, _ := ParseDocument("52998224725")
	if d.Formatted() != "529.982.247-25" {
		t.Errorf("CPF formatted %s", d.Formatted())
	}
	c, _ := ParseDocument("11222333000181")
	if c.Formatted() != "11.222.333/0001-81" {
		t.Errorf("CNPJ formatted %s", c.Formatted())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		for _, g := range []Document{GenerateCPF(rng), GenerateCNPJ(rng)} {
			p, err := ParseDocument(g.Formatted())
			if err != nil || p != g {
				t.Fatalf("generated %s does not parse back: %v", g.Type, err)
			}
		}
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	a, b := []byte("secret-of-tenant-a-32-bytes-long"), []byte("secret-of-tenant-b-32-bytes-long")
	ka, kb := Key(a, "52998224725"), Key(b, "52998224725")
	if len(ka) != 16 || ka == kb || ValidKey(ka) != nil {
		t.Fatalf("keys %s %s", ka, kb)
	}
	if Key(a, "52998224725") != ka {
		t.Fatal("not deterministic")
	}
	for _, bad := range []string{"", "ABCDEF0123456789", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg", "T#x#D#0123456789"} {
		if ValidKey(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
