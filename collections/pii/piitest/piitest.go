// Package piitest holds the personal-data scan the tests share: synthetic
// test subjects (a CPF, a CNPJ, a name, a phone, an e-mail) unique enough
// that finding one anywhere it should not be is a leak, and the detector
// that looks for them in every formatting.
package piitest

import "strings"

// The test subjects: synthetic, and unique enough that a hit is a leak.
const (
	CPFDigits  = "52998224725"
	CNPJDigits = "11222333000181"
	Name       = "Zuleica Quaresma Sintética"
	Phone      = "+55 (11) 98765-4321"
	Email      = "zuleica.quaresma@example.test"
)

// needles are the subjects in every formatting a leak could take.
var needles = []string{
	CPFDigits, "529.982.247-25", "529982247-25", "529.982.24725", "529 982 247 25",
	CNPJDigits, "11.222.333/0001-81", "11222333/0001-81", "11.222.333000181", "112223330001-81",
	Name, "Zuleica", "Quaresma", "98765-4321", "987654321", "5511987654321", Email, "zuleica.quaresma",
}

// Leaks returns the subjects' data found in s, case-insensitively; nil
// when there is none.
func Leaks(s string) []string {
	var hits []string
	lower := strings.ToLower(s)
	for _, n := range needles {
		if strings.Contains(s, n) || strings.Contains(lower, strings.ToLower(n)) {
			hits = append(hits, n)
		}
	}
	return hits
}
