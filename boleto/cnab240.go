package boleto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"lastro/collections/calendar"
)

// A CNAB 240 return file (FEBRABAN "Layout Padrão de Arquivos CNAB 240",
// cobrança) is a sequence of 240-character records, one per line (CRLF or
// LF). Every record opens with the bank (1-3), the lot (4-7: 0000 for the
// file header, 9999 for the file trailer) and the record type (8):
//
//	0 file header   1 lot header   3 detail (segments T, U, ...)
//	5 lot trailer   9 file trailer
//
// A cobrança return lot holds, per title, a segment T (the title: nosso
// número, due date, face value, the bank's fee) followed by its segment U
// (the payment: interest, discount, rebate, IOF, amount paid, net credit,
// payment and credit dates), both with the movement code. Where each
// field sits is the bank's: its row of the bank table (banks.go).

// RecordLen is the length of every CNAB 240 record.
const RecordLen = 240

// MaxReturnLines bounds a return file before anything else is done with
// it: about 2000 titles, a large beneficiary's day, whose 242-byte lines
// (CRLF) fit the API's 1 MiB body limit (MaxReturnBytes).
const MaxReturnLines = 4096

// MaxReturnBytes is the most a file of MaxReturnLines CRLF lines takes.
const MaxReturnBytes = MaxReturnLines * (RecordLen + 2)

// Movement codes (código de movimento retorno).
const (
	MovementEntryConfirmed        = "02" // entrada confirmada: the bank registered the title
	MovementEntryRejected         = "03" // entrada rejeitada: the reasons say why
	MovementLiquidation           = "06" // liquidação
	MovementLiquidationAfterBaixa = "17" // liquidação após baixa ou de título não registrado
)

// Return is a parsed, validated return file.
type Return struct {
	Bank        string
	GeneratedOn calendar.Date // file header 144-151; zero when it is not a date
	Sequence    int           // file header 158-163 (NSA); 0 when not digits
	Titles      []Title       // every T+U pair, in file order
	// Notes are the file's departures from FEBRABAN's layout that lose
	// nothing and were read through (a lot numbered out of sequence, a
	// file header whose fields moved), each with its line, so an operator
	// sees them; a defect that could lose a payment is refused instead.
	Notes []string
}

// Title is one T+U pair of a return file.
type Title struct {
	Line        int           // the line of segment T (1-based)
	Lot         int           // the lot number
	Movement    string        // código de movimento retorno, 2 digits
	NossoNumero string        // T 38-57, spaces trimmed
	Carteira    string        // T 58
	DocNumber   string        // T 59-73 (seu número), spaces trimmed
	DueDate     calendar.Date // T 74-81; zero when zeros
	FaceCents   int64         // T 82-96
	// Reasons are the motivos da ocorrência (T 214-223): the codes of an
	// entry's rejection (movement 03), of a fee, of a liquidation's channel.
	Reasons []string
	Amounts
	PaidOn   calendar.Date // U 138-145, data da ocorrência; zero when zeros
	CreditOn calendar.Date // U 146-153, data da efetivação do crédito; zero when zeros
}

// Amounts are the money of a title as its bank reports it, in cents; the
// positions named are FEBRABAN's, a bank's row may move them.
type Amounts struct {
	PaidCents          int64 `json:"paidCents" dynamodbav:"paidCents"`                   // U 78-92, valor pago pelo pagador
	NetCents           int64 `json:"netCents" dynamodbav:"netCents"`                     // U 93-107, valor líquido a ser creditado
	FeeCents           int64 `json:"feeCents" dynamodbav:"feeCents"`                     // T 199-213, tarifa / custas
	InterestCents      int64 `json:"interestCents" dynamodbav:"interestCents"`           // U 18-32, juros / multa / encargos
	DiscountCents      int64 `json:"discountCents" dynamodbav:"discountCents"`           // U 33-47, desconto concedido
	RebateCents        int64 `json:"rebateCents" dynamodbav:"rebateCents"`               // U 48-62, abatimento concedido
	IOFCents           int64 `json:"iofCents" dynamodbav:"iofCents"`                     // U 63-77, IOF recolhido
	OtherExpensesCents int64 `json:"otherExpensesCents" dynamodbav:"otherExpensesCents"` // U 108-122, outras despesas
	OtherCreditsCents  int64 `json:"otherCreditsCents" dynamodbav:"otherCreditsCents"`   // U 123-137, outros créditos
}

// Liquidation reports whether the title's movement is money received.
func (t Title) Liquidation() bool {
	return t.Movement == MovementLiquidation || t.Movement == MovementLiquidationAfterBaixa
}

// ReturnError is a malformed return file: the line (1-based) and what is
// wrong with it. The message never echoes the line's content.
type ReturnError struct {
	Line int
	Msg  string
}

func (e *ReturnError) Error() string { return fmt.Sprintf("CNAB 240 line %d: %s", e.Line, e.Msg) }

// Unwrap makes every ReturnError an ErrInvalid.
func (e *ReturnError) Unwrap() error { return ErrInvalid }

func lineErr(n int, format string, args ...any) error {
	return &ReturnError{Line: n, Msg: fmt.Sprintf(format, args...)}
}

// record is one line with 1-based, inclusive field access.
type record struct {
	n int
	s string
	// blankZero reads an all-blank amount as zero: a bank leaves the
	// fees of a title it charged none for blank, and a line that lost its
	// trailing spaces in transit was padded back with spaces.
	blankZero bool
}

func (r record) span(s Span, name string) (int64, error) { return r.num(s.From, s.To, name) }

func (r record) f(from, to int) string { return r.s[from-1 : to] }

func (r record) num(from, to int, name string) (int64, error) {
	v := r.f(from, to)
	if strings.TrimSpace(v) == "" && r.blankZero {
		return 0, nil
	}
	if !digits(v) {
		return 0, lineErr(r.n, "%s (positions %d-%d) must be digits", name, from, to)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, lineErr(r.n, "%s (positions %d-%d) is out of range", name, from, to)
	}
	return n, nil
}

// date reads DDMMAAAA; all zeros is the zero Date.
func (r record) date(from int, name string) (calendar.Date, error) {
	v := r.f(from, from+7)
	if v == "00000000" || v == "        " {
		return calendar.Date{}, nil
	}
	t, err := time.Parse("02012006", v)
	if err != nil || !digits(v) {
		return calendar.Date{}, lineErr(r.n, "%s (positions %d-%d) must be a date DDMMAAAA", name, from, from+7)
	}
	d, err := calendar.Parse(t.Format(calendar.Layout))
	if err != nil {
		return calendar.Date{}, lineErr(r.n, "%s (positions %d-%d) is out of range", name, from, from+7)
	}
	return d, nil
}

// ParseReturn reads a whole CNAB 240 cobrança return file and validates
// it before answering anything: every line at most 240 characters (a
// shorter one is padded with spaces: files lose their trailing spaces in
// transit), printable (ASCII or ISO-8859-1), one bank throughout and one
// the bank table reads, a file header, lots each with a header, numbered
// details (segment T then U of the same title) and a trailer whose count
// matches, then the file trailer with the file's lot and record counts,
// and nothing after it. Each title is read at its bank's positions
// (BankOf). The first problem is answered as a *ReturnError with its line
// number; no title of a malformed file is returned.
func ParseReturn(r io.Reader) (*Return, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, lineErr(1, "the file is empty")
	}
	p := &returnParser{out: &Return{}}
	for i, s := range lines {
		if err := p.record(record{n: i + 1, s: s}); err != nil {
			return nil, err
		}
	}
	if !p.done {
		return nil, lineErr(len(lines)+1, "the file ends without its trailer (record type 9): truncated?")
	}
	return p.out, nil
}

// printable reports whether b is a printable character of a bank's file:
// ASCII, or ISO-8859-1's letters and signs (0xA0-0xFF). Banks write these
// files one byte per character, and some keep the accents of a payer's
// name in segment T ("JOSÉ" with É as 0xC9); refusing those would refuse
// a whole day's liquidations for a name nobody here reads. Control
// characters (and C1, 0x80-0x9F) are still refused, and the numeric
// fields are checked digit by digit where they are read.
func printable(b byte) bool { return b >= 0x20 && b <= 0x7e || b >= 0xa0 }

// readLines splits the file on LF (a CR before it is dropped), checking
// each line's length and characters; a last LF ends the file, nothing
// after it.
func readLines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, RecordLen+2), RecordLen+2)
	var lines []string
	for sc.Scan() {
		n := len(lines) + 1
		if n > MaxReturnLines {
			return nil, lineErr(n, "a return file has at most %d lines", MaxReturnLines)
		}
		s := strings.TrimSuffix(sc.Text(), "\r")
		if len(s) > RecordLen {
			return nil, lineErr(n, "a record has %d characters, not %d", len(s), RecordLen)
		}
		// Only spaces can have been lost: the fields after them are read
		// as blanks and refused where a value is required.
		s += strings.Repeat(" ", RecordLen-len(s))
		for i := 0; i < len(s); i++ {
			if !printable(s[i]) {
				return nil, lineErr(n, "position %d is not a printable character", i+1)
			}
		}
		lines = append(lines, s)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, lineErr(len(lines)+1, "a record has more than %d characters", RecordLen)
		}
		return nil, fmt.Errorf("boleto: read return file: %w", err)
	}
	return lines, nil
}

// returnParser is the state of the record-by-record validation.
type returnParser struct {
	out      *Return
	layout   ReturnLayout
	usedLots map[int64]bool
	started  bool // the file header was read
	done     bool // the file trailer was read
	lot      int  // the open lot (0: none)
	lots     int  // lots closed
	records  int  // records read, headers and trailers included
	inLot    int  // records of the open lot, its header included
	detail   int  // the last detail's sequence number in the lot
	pendingT *Title
}

func (p *returnParser) note(r record, format string, args ...any) {
	p.out.Notes = append(p.out.Notes, fmt.Sprintf("line %d: ", r.n)+fmt.Sprintf(format, args...))
}

func (p *returnParser) record(r record) error {
	p.records++
	if p.done {
		return lineErr(r.n, "nothing may follow the file trailer")
	}
	bank := r.f(1, 3)
	if !digits(bank) {
		return lineErr(r.n, "the bank code (positions 1-3) must be digits")
	}
	if p.started && bank != p.out.Bank {
		return lineErr(r.n, "the bank code differs from the file header's")
	}
	lot, err := r.num(4, 7, "the lot")
	if err != nil {
		return err
	}
	kind := r.f(8, 8)
	if !p.started && kind != "0" {
		return lineErr(r.n, "the file must open with its header (record type 0)")
	}
	switch kind {
	case "0":
		return p.fileHeader(r, bank, lot)
	case "1":
		return p.lotHeader(r, lot)
	case "3":
		return p.detailRecord(r, lot)
	case "5":
		return p.lotTrailer(r, lot)
	case "9":
		return p.fileTrailer(r, lot)
	}
	return lineErr(r.n, "unknown record type (position 8): want 0, 1, 3, 5 or 9")
}

func (p *returnParser) fileHeader(r record, bank string, lot int64) error {
	if p.started {
		return lineErr(r.n, "a second file header")
	}
	if lot != 0 {
		return lineErr(r.n, "the file header's lot (positions 4-7) must be 0000")
	}
	b, ok := BankOf(bank)
	if !ok {
		return lineErr(r.n, "no return layout for bank %s; the banks read are %s", bank, strings.Join(ReturnBanks(), ", "))
	}
	p.layout = b.Return
	p.started = true
	p.out.Bank = bank
	switch r.f(143, 143) {
	case "2":
	case "1":
		return lineErr(r.n, "not a return file: position 143 (remessa/retorno) is 1, a shipping file")
	default:
		// Each lot header still has to say it is a return lot (T at 9).
		p.note(r, "the file header's position 143 is not 2 (retorno): its fields are not where FEBRABAN puts them; the lots say return")
		return nil
	}
	if d, err := r.date(144, "the generation date"); err == nil {
		p.out.GeneratedOn = d
	} else {
		p.note(r, "the generation date (144-151) is not a date; read as absent")
	}
	if seq, err := r.num(158, 163, "the file sequence"); err == nil {
		p.out.Sequence = int(seq)
	} else {
		p.note(r, "the file sequence (158-163) is not digits; read as absent")
	}
	return nil
}

func (p *returnParser) lotHeader(r record, lot int64) error {
	if p.lot != 0 {
		return lineErr(r.n, "a lot header inside lot %d (its trailer is missing)", p.lot)
	}
	if lot == 0 || lot == 9999 || p.usedLots[lot] {
		return lineErr(r.n, "lot %d: a lot is numbered 0001-9998, once per file", lot)
	}
	if lot != int64(p.lots+1) {
		// Santander numbers its lot 9692 in its own files; the lot's
		// records all carry it, which is what keeps a lot together.
		p.note(r, "lot %d out of sequence (want %d): read as numbered", lot, p.lots+1)
	}
	if p.usedLots == nil {
		p.usedLots = map[int64]bool{}
	}
	p.usedLots[lot] = true
	if r.f(9, 9) != "T" {
		return lineErr(r.n, "not a return lot: position 9 (operation) must be T")
	}
	if r.f(10, 11) != "01" {
		return lineErr(r.n, "not a cobrança lot: positions 10-11 (service) must be 01")
	}
	p.lot, p.inLot, p.detail = int(lot), 1, 0
	return nil
}

func (p *returnParser) detailRecord(r record, lot int64) error {
	if p.lot == 0 || lot != int64(p.lot) {
		return lineErr(r.n, "a detail record outside its lot")
	}
	seq, err := r.num(9, 13, "the record sequence")
	if err != nil {
		return err
	}
	if seq != int64(p.detail+1) {
		return lineErr(r.n, "detail %d out of sequence: want %d", seq, p.detail+1)
	}
	p.detail++
	p.inLot++
	movement := r.f(16, 17)
	if !digits(movement) {
		return lineErr(r.n, "the movement code (positions 16-17) must be digits")
	}
	switch seg := r.f(14, 14); seg {
	case "T":
		if p.pendingT != nil {
			return lineErr(r.n, "segment T where the segment U of line %d's title was due", p.pendingT.Line)
		}
		t, err := segmentT(r, p.layout, p.lot, movement)
		if err != nil {
			return err
		}
		p.pendingT = t
	case "U":
		t := p.pendingT
		if t == nil {
			return lineErr(r.n, "segment U without its segment T")
		}
		if movement != t.Movement {
			return lineErr(r.n, "the movement code differs from its segment T's (line %d)", t.Line)
		}
		if err := segmentU(r, p.layout, t); err != nil {
			return err
		}
		p.out.Titles = append(p.out.Titles, *t)
		p.pendingT = nil
	default:
		// Other segments (Y, ...) carry nothing a settlement needs; they
		// still count and must not split a T from its U.
		if p.pendingT != nil {
			return lineErr(r.n, "segment %q where the segment U of line %d's title was due", seg, p.pendingT.Line)
		}
	}
	return nil
}

func segmentT(r record, l ReturnLayout, lot int, movement string) (*Title, error) {
	r.blankZero = true
	t := &Title{Line: r.n, Lot: lot, Movement: movement}
	t.NossoNumero = strings.TrimSpace(r.f(l.NossoNumero.From, l.NossoNumero.To))
	t.Carteira = strings.TrimSpace(r.f(l.Carteira.From, l.Carteira.To))
	t.DocNumber = strings.TrimSpace(r.f(l.DocNumber.From, l.DocNumber.To))
	for i := l.Reasons.From; i+1 <= l.Reasons.To; i += 2 {
		if c := strings.TrimSpace(r.f(i, i+1)); c != "" && c != "00" {
			t.Reasons = append(t.Reasons, c)
		}
	}
	var err error
	if t.DueDate, err = r.date(l.DueDate, "the due date"); err != nil {
		return nil, err
	}
	if t.FaceCents, err = r.span(l.Face, "the face value"); err != nil {
		return nil, err
	}
	if t.FeeCents, err = r.span(l.Fee, "the bank fee"); err != nil {
		return nil, err
	}
	if t.NossoNumero == "" || !digits(t.NossoNumero) {
		if movement == MovementLiquidation || movement == MovementLiquidationAfterBaixa ||
			movement == MovementEntryConfirmed || movement == MovementEntryRejected {
			return nil, lineErr(r.n, "the nosso número (positions %d-%d) of a liquidation or an entry must be digits", l.NossoNumero.From, l.NossoNumero.To)
		}
	}
	return t, nil
}

func segmentU(r record, l ReturnLayout, t *Title) error {
	r.blankZero = true
	for _, f := range []struct {
		to   *int64
		at   Span
		name string
	}{
		{&t.PaidCents, l.Paid, "the amount paid"}, {&t.NetCents, l.Net, "the net amount"},
		{&t.InterestCents, l.Interest, "the interest"}, {&t.DiscountCents, l.Discount, "the discount"},
		{&t.RebateCents, l.Rebate, "the rebate"}, {&t.IOFCents, l.IOF, "the IOF"},
		{&t.OtherExpensesCents, l.OtherExpenses, "the other expenses"}, {&t.OtherCreditsCents, l.OtherCredits, "the other credits"},
	} {
		v, err := r.span(f.at, f.name)
		if err != nil {
			return err
		}
		*f.to = v
	}
	var err error
	if t.PaidOn, err = r.date(l.PaidOn, "the payment date"); err != nil {
		return err
	}
	if t.CreditOn, err = r.date(l.CreditOn, "the credit date"); err != nil {
		return err
	}
	if t.Liquidation() {
		if t.PaidCents <= 0 {
			return lineErr(r.n, "a liquidation's amount paid (positions %d-%d) must be positive", l.Paid.From, l.Paid.To)
		}
		if t.PaidOn.IsZero() && t.CreditOn.IsZero() {
			return lineErr(r.n, "a liquidation needs its payment date (%d-%d) or credit date (%d-%d)", l.PaidOn, l.PaidOn+7, l.CreditOn, l.CreditOn+7)
		}
	}
	return nil
}

func (p *returnParser) lotTrailer(r record, lot int64) error {
	if p.lot == 0 || lot != int64(p.lot) {
		return lineErr(r.n, "a lot trailer outside its lot")
	}
	if p.pendingT != nil {
		return lineErr(r.n, "the lot ends where the segment U of line %d's title was due", p.pendingT.Line)
	}
	n, err := r.num(18, 23, "the lot's record count")
	if err != nil {
		return err
	}
	if want := int64(p.inLot + 1); n != want {
		// Some banks (Santander's files) count the details only; the
		// details are what a truncation would lose, so that still proves
		// the lot whole.
		if n != int64(p.detail) {
			return lineErr(r.n, "the lot trailer counts %d records, the lot has %d", n, want)
		}
		p.note(r, "the lot trailer counts its %d details, not its %d records", n, want)
	}
	p.lot = 0
	p.lots++
	return nil
}

func (p *returnParser) fileTrailer(r record, lot int64) error {
	if p.lot != 0 {
		return lineErr(r.n, "the file trailer inside lot %d (its trailer is missing)", p.lot)
	}
	if lot != 9999 {
		if !p.usedLots[lot] {
			return lineErr(r.n, "the file trailer's lot (positions 4-7) must be 9999")
		}
		p.note(r, "the file trailer carries lot %d, not 9999", lot)
	}
	lots, err := r.num(18, 23, "the file's lot count")
	if err != nil {
		return err
	}
	if lots != int64(p.lots) {
		return lineErr(r.n, "the file trailer counts %d lots, the file has %d", lots, p.lots)
	}
	records, err := r.num(24, 29, "the file's record count")
	if err != nil {
		return err
	}
	if records != int64(p.records) {
		return lineErr(r.n, "the file trailer counts %d records, the file has %d", records, p.records)
	}
	p.done = true
	return nil
}
