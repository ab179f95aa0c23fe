package boleto

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"lastro/collections/calendar"
)

// A CNAB 240 shipping file (remessa) tells the bank which boletos the
// beneficiary issued (movement 01, entrada de títulos) and which it
// withdraws (02, pedido de baixa): a file header, one cobrança lot (its
// header, segments P, Q and R per title, its trailer) and the file
// trailer, every record 240 characters, lines ended by CR LF. The
// positions are FEBRABAN's "Layout Padrão CNAB 240" (v10), with the
// bank's own where its row of the bank table says so.

// Remessa movement codes (código de movimento remessa).
const (
	RemessaEntry  = "01" // entrada de títulos
	RemessaCancel = "02" // pedido de baixa
)

// MaxRemessaTitles bounds one shipping file: three records a title in one
// lot, which numbers its records in five digits, and a file the API hands
// out whole. More pending titles go in the next file.
const MaxRemessaTitles = 2000

// RemessaLayout is what differs by bank in a shipping file.
type RemessaLayout struct {
	NossoNumero Span   // where segment P puts the nosso número (left-aligned)
	Version     string // the file header's layout version (164-166)
	LotVersion  string // the lot header's (14-16)
}

// Beneficiary is the lender the boletos are issued for, as its bank
// knows it.
type Beneficiary struct {
	Document  string // CNPJ (14) or CPF (11), digits (letters allowed for the alphanumeric CNPJ)
	Name      string
	Convenio  string
	Carteira  string
	Agencia   string // digits, without its check digit
	AgenciaDV string
	Conta     string // digits, without its check digit
	ContaDV   string
}

// Payer is the debtor as segment Q writes it. It is personal data: it is
// read from the sealed profile just before the file is written and never
// kept, logged or put in an error.
type Payer struct {
	Document string // CPF (11) or CNPJ (14)
	Name     string
	Address  string
	District string
	ZIP      string // 8 digits
	City     string
	UF       string
}

// ShippedTitle is one boleto of a shipping file.
type ShippedTitle struct {
	Movement    string // RemessaEntry or RemessaCancel
	NossoNumero string
	DocNumber   string // seu número: the beneficiary's reference (at most 15)
	DueDate     calendar.Date
	AmountCents int64
	IssuedOn    calendar.Date
	// FineHundredths and InterestHundredths are the late fine (percent,
	// once) and the monthly late interest (percent a month) in hundredths
	// of a percent: 2.00 % is 200. Zero: none.
	FineHundredths     int64
	InterestHundredths int64
	Payer              Payer
	// Reference is the beneficiary's own use field (P 196-220): the
	// charge id, so the bank's answers can be traced back.
	Reference string
}

// Shipment is a whole shipping file.
type Shipment struct {
	Bank        string
	Beneficiary Beneficiary
	Sequence    int       // NSA, 1-999999: the file's number for the bank
	GeneratedAt time.Time // in the beneficiary's zone: date and time of the header
	Titles      []ShippedTitle
}

// rec is a 240-character record being filled.
type rec []byte

func newRec(bank, lot string, kind byte) rec {
	r := rec(strings.Repeat(" ", RecordLen))
	r.put(1, bank)
	r.put(4, lot)
	r[7] = kind
	return r
}

// put writes v from 1-based position at, cut at the record's end.
func (r rec) put(at int, v string) { copy(r[at-1:], v) }

// alpha writes v in a field of width characters, upper case, accents
// removed and anything unprintable a space, cut or padded with spaces.
func (r rec) alpha(at, width int, v string) { r.put(at, fit(ascii(v), width)) }

// num writes v right-aligned in width digits.
func (r rec) num(at, width int, v int64) { r.put(at, fmt.Sprintf("%0*d", width, v)) }

// digitsIn writes a digit string right-aligned in width, zero-filled.
func (r rec) digitsIn(at, width int, v string) {
	if len(v) > width {
		v = v[len(v)-width:]
	}
	r.put(at, strings.Repeat("0", width-len(v))+v)
}

func (r rec) date(at int, d calendar.Date) {
	if d.IsZero() {
		r.put(at, "00000000")
		return
	}
	r.put(at, fmt.Sprintf("%02d%02d%04d", d.Day(), int(d.Month()), d.Year()))
}

func fit(s string, width int) string {
	if len(s) > width {
		return s[:width]
	}
	return s + strings.Repeat(" ", width-len(s))
}

// ascii is s as a bank's file takes it: upper case, the accents of
// Portuguese removed (Ç is C), anything else outside printable ASCII a
// space.
func ascii(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if i := strings.IndexRune(accented, r); i >= 0 {
			r = rune(plain[len([]rune(accented[:i]))])
		}
		if r >= 0x20 && r < 0x7f {
			b.WriteRune(unicode.ToUpper(r))
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// accented and plain pair the upper-case letters of Portuguese (and a few
// neighbours) with their letter without the accent.
const (
	accented = "ÁÀÂÃÄÉÈÊËÍÌÎÏÓÒÔÕÖÚÙÛÜÇÑ"
	plain    = "AAAAAEEEEIIIIOOOOOUUUUCN"
)

func inscriptionType(doc string) int64 {
	if len(doc) == 11 {
		return 1 // CPF
	}
	return 2 // CNPJ
}

// validate checks what a bank would refuse, without echoing any of it.
func (s Shipment) validate() (Bank, error) {
	b, ok := BankOf(s.Bank)
	if !ok || b.Remessa == nil {
		return Bank{}, invalidf("no shipping-file layout for bank %q", s.Bank)
	}
	if s.Sequence < 1 || s.Sequence > 999999 {
		return Bank{}, invalidf("a shipping file's sequence is 1-999999")
	}
	if len(s.Titles) == 0 || len(s.Titles) > MaxRemessaTitles {
		return Bank{}, invalidf("a shipping file holds 1-%d titles", MaxRemessaTitles)
	}
	if n := len(s.Beneficiary.Document); n != 11 && n != 14 {
		return Bank{}, invalidf("the beneficiary's document must be a CPF (11) or a CNPJ (14)")
	}
	width := b.Remessa.NossoNumero.To - b.Remessa.NossoNumero.From + 1
	for i, t := range s.Titles {
		switch {
		case t.Movement != RemessaEntry && t.Movement != RemessaCancel:
			return Bank{}, invalidf("title %d: movement must be %s or %s", i+1, RemessaEntry, RemessaCancel)
		case t.NossoNumero == "" || len(t.NossoNumero) > width || !digits(t.NossoNumero):
			return Bank{}, invalidf("title %d: the nosso número must be 1-%d digits", i+1, width)
		case t.AmountCents <= 0 || t.AmountCents > MaxAmountCents:
			return Bank{}, invalidf("title %d: the amount must be 1-%d cents", i+1, int64(MaxAmountCents))
		case t.DueDate.IsZero():
			return Bank{}, invalidf("title %d: a due date is required", i+1)
		case len(t.Payer.Document) != 11 && len(t.Payer.Document) != 14:
			return Bank{}, invalidf("title %d: the payer's document must be a CPF (11) or a CNPJ (14)", i+1)
		case t.FineHundredths < 0 || t.InterestHundredths < 0:
			return Bank{}, invalidf("title %d: the fine and the interest cannot be negative", i+1)
		}
	}
	return b, nil
}

// WriteRemessa writes a shipping file, CR LF after every record. The same
// shipment always writes the same bytes: the file is a function of its
// content, so a file number asked for again can be answered again.
func WriteRemessa(s Shipment) ([]byte, error) {
	b, err := s.validate()
	if err != nil {
		return nil, err
	}
	ben := s.Beneficiary
	var out []string
	fh := newRec(s.Bank, "0000", '0')
	fh.num(18, 1, inscriptionType(ben.Document))
	fh.digitsIn(19, 14, ben.Document)
	fh.alpha(33, 20, ben.Convenio)
	fh.digitsIn(53, 5, ben.Agencia)
	fh.alpha(58, 1, ben.AgenciaDV)
	fh.digitsIn(59, 12, ben.Conta)
	fh.alpha(71, 1, ben.ContaDV)
	fh.alpha(73, 30, ben.Name)
	fh.alpha(103, 30, b.Name)
	fh.put(143, "1") // remessa
	fh.put(144, s.GeneratedAt.Format("02012006150405"))
	fh.num(158, 6, int64(s.Sequence))
	fh.put(164, b.Remessa.Version)
	fh.put(167, "00000")
	out = append(out, string(fh))

	lh := newRec(s.Bank, "0001", '1')
	lh.put(9, "R")   // remessa
	lh.put(10, "01") // cobrança
	lh.put(14, b.Remessa.LotVersion)
	lh.num(18, 1, inscriptionType(ben.Document))
	lh.digitsIn(19, 15, ben.Document)
	lh.alpha(34, 20, ben.Convenio)
	lh.digitsIn(54, 5, ben.Agencia)
	lh.alpha(59, 1, ben.AgenciaDV)
	lh.digitsIn(60, 12, ben.Conta)
	lh.alpha(72, 1, ben.ContaDV)
	lh.alpha(74, 30, ben.Name)
	lh.num(184, 8, int64(s.Sequence))
	lh.put(192, s.GeneratedAt.Format("02012006"))
	lh.put(200, "00000000")
	out = append(out, string(lh))

	seq := 0
	detail := func(segment byte, movement string) rec {
		seq++
		r := newRec(s.Bank, "0001", '3')
		r.num(9, 5, int64(seq))
		r[13] = segment
		r.put(16, movement)
		return r
	}
	for _, t := range s.Titles {
		p := detail('P', t.Movement)
		p.digitsIn(18, 5, ben.Agencia)
		p.alpha(23, 1, ben.AgenciaDV)
		p.digitsIn(24, 12, ben.Conta)
		p.alpha(36, 1, ben.ContaDV)
		p.alpha(b.Remessa.NossoNumero.From, b.Remessa.NossoNumero.To-b.Remessa.NossoNumero.From+1, t.NossoNumero)
		p.alpha(58, 1, lastDigit(ben.Carteira)) // código da carteira
		p.put(59, "1")                          // com cadastramento (registered)
		p.put(60, "1")                          // tradicional
		p.put(61, "2")                          // the beneficiary prints the slip
		p.put(62, "2")                          // and hands it out
		p.alpha(63, 15, t.DocNumber)
		p.date(78, t.DueDate)
		p.num(86, 15, t.AmountCents)
		p.num(101, 5, 0) // agência encarregada: the bank's choice
		p.put(106, "0")
		p.put(107, "99") // espécie: outros (a loan instalment)
		p.put(109, "N")  // not accepted by the payer
		p.date(110, t.IssuedOn)
		after := t.DueDate.AddDays(1)
		if t.InterestHundredths > 0 {
			p.put(118, "2") // taxa mensal
			p.date(119, after)
			p.num(127, 15, t.InterestHundredths)
		} else {
			p.put(118, "3") // isento
			p.date(119, calendar.Date{})
			p.num(127, 15, 0)
		}
		p.put(142, "0") // no discount
		p.date(143, calendar.Date{})
		p.num(151, 15, 0)
		p.num(166, 15, 0) // IOF
		p.num(181, 15, 0) // abatimento
		p.alpha(196, 25, t.Reference)
		p.put(221, "3") // não protestar
		p.put(222, "00")
		p.put(224, "1") // baixar / devolver
		p.put(225, "060")
		p.put(228, "09") // real
		p.num(230, 10, 0)
		out = append(out, string(p))

		q := detail('Q', t.Movement)
		q.num(18, 1, inscriptionType(t.Payer.Document))
		q.digitsIn(19, 15, t.Payer.Document)
		q.alpha(34, 40, t.Payer.Name)
		q.alpha(74, 40, t.Payer.Address)
		q.alpha(114, 15, t.Payer.District)
		q.digitsIn(129, 8, t.Payer.ZIP)
		q.alpha(137, 15, t.Payer.City)
		q.alpha(152, 2, t.Payer.UF)
		q.put(154, "0") // no guarantor
		q.num(155, 15, 0)
		q.put(210, "000")
		out = append(out, string(q))

		r := detail('R', t.Movement)
		r.put(18, "0")
		r.date(19, calendar.Date{})
		r.num(27, 15, 0)
		r.put(42, "0")
		r.date(43, calendar.Date{})
		r.num(51, 15, 0)
		if t.FineHundredths > 0 {
			r.put(66, "2") // percentual
			r.date(67, after)
			r.num(75, 15, t.FineHundredths)
		} else {
			r.put(66, "0")
			r.date(67, calendar.Date{})
			r.num(75, 15, 0)
		}
		out = append(out, string(r))
	}
	lt := newRec(s.Bank, "0001", '5')
	lt.num(18, 6, int64(seq+2))
	out = append(out, string(lt))
	ft := newRec(s.Bank, "9999", '9')
	ft.num(18, 6, 1)
	ft.num(24, 6, int64(len(out)+1))
	ft.num(30, 6, 0)
	out = append(out, string(ft))
	return []byte(strings.Join(out, "\r\n") + "\r\n"), nil
}

func lastDigit(s string) string {
	if s == "" {
		return "0"
	}
	return s[len(s)-1:]
}
