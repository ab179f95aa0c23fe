package boleto_test

import (
	"fmt"

	"lastro/boleto"
	"lastro/collections/calendar"
)

// ExampleNew: a Banco do Brasil boleto (convênio 1234567) of R$ 1.024,67
// due on 2026-09-24; its 47-digit line is what the debtor types, and it
// parses back to the same boleto, due date included.
func ExampleNew() {
	layout := boleto.BBConvenio{Convenio: "1234567", Carteira: "17"}
	free, err := layout.FreeField("12345670000000001")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := boleto.New(boleto.BankBB, calendar.MustParse("2026-09-24"), 102467, free)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, err := boleto.Parse(b.Line())
	due, _, _ := back.DueDate(calendar.MustParse("2026-09-01"))
	fmt.Println(err, back == b, back.AmountCents, due)
	fmt.Println(len(b.Barcode()), len(b.LineDigits()))
	// Output:
	// <nil> true 102467 2026-09-24
	// 44 47
}
