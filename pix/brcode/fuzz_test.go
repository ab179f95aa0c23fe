package brcode_test

import (
	"fmt"
	"testing"

	"lastro/pix/brcode"
)

// FuzzParse: Parse never panics on any body (its CRC made valid, so the
// fields themselves are exercised), and what Build writes from a parsed
// code is a fixed point: parsed and built again, it is the same string.
func FuzzParse(f *testing.F) {
	f.Add(manualExample[:len(manualExample)-8])
	f.Add("00020101021226760014br.gov.bcb.pix2554127.0.0.1:44425/qr/v2/f16ccda60e0aeb3b4274f3607020c76d52040000530398654071024.675802BR5914LASTRO SANDBOX6009SAO PAULO62070503***")
	f.Add("000201")
	f.Fuzz(func(t *testing.T, body string) {
		body += "6304"
		c, err := brcode.Parse(body + fmt.Sprintf("%04X", brcode.CRC16(body)))
		if err != nil {
			return
		}
		built, err := brcode.Build(*c)
		if err != nil {
			return // Parse is lenient (a static code with a URL too); Build is strict
		}
		c2, err := brcode.Parse(built)
		if err != nil {
			t.Fatalf("Build wrote %q, which Parse refuses: %v", built, err)
		}
		again, err := brcode.Build(*c2)
		if err != nil || again != built {
			t.Fatalf("not a fixed point: %q then %q (%v)", built, again, err)
		}
	})
}
