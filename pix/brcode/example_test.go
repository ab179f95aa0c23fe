package brcode_test

import (
	"fmt"

	"lastro/pix/brcode"
)

// ExampleBuild: a dynamic BR Code (copia e cola) for a charge served at
// its PSP's location; the amount is fixed in field 54 and the CRC16 ends
// the payload.
func ExampleBuild() {
	code, err := brcode.Build(brcode.Code{Dynamic: true, URL: "pix.psp.example/qr/v2/9d36b84f", AmountCents: 102467,
		Name: "LASTRO DEMO", City: "SAO PAULO"})
	if err != nil {
		fmt.Println(err)
		return
	}
	parsed, err := brcode.Parse(code)
	fmt.Println(err, parsed.Dynamic, parsed.URL, parsed.AmountCents, parsed.TxID)
	// Output: <nil> true pix.psp.example/qr/v2/9d36b84f 102467 ***
}

// ExampleParse: a static code from the Central Bank's manual.
func ExampleParse() {
	c, err := brcode.Parse(manualExample)
	fmt.Println(err, c.Dynamic, c.Key, c.Name, c.City)
	// Output: <nil> false 123e4567-e12b-12d1-a456-426655440000 Fulano de Tal BRASILIA
}
