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
// número, due date, face value) followed by its segment U (the payment:
// amount paid, payment and credit dates), both with the movement code.

// RecordLen is the length of every CNAB 240 record.
const RecordLen = 240

// MaxReturnLines bounds a return file before anything else is done with
// it: about 2000 titles, a large beneficiary's day, whose 242-byte lines
// (CRLF) fit the API's 1 MiB body limit (MaxReturnBytes).
const MaxReturnLines = 4096

// MaxReturnBytes is the most a file of MaxReturnLines CRLF lines takes.
const MaxReturnBytes = MaxReturnLines * (RecordLen + 2)

// Movement codes (código de movimento retorno) of a liquidation.
const (
	MovementLiquidation           = "06" // liquidação
	MovementLiquidationAfterBaixa = "17" // liquidação após baixa ou de título não registrado
)

// Return is a parsed, validated return file.
type Return struct {
	Bank        string
	GeneratedOn calendar.Date // file header 144-151
	Sequence    int           // file header 158-163 (NSA)
	Titles      []Title       // every T+U pair, in file order
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
	PaidCents   int64         // U 78-92, valor pago pelo pagador
	NetCents    int64         // U 93-107, valor líquido a ser creditado
	PaidOn      calendar.Date // U 138-145, data da ocorrência; zero when zeros
	CreditOn    calendar.Date // U 146-153, data da efetivação do crédito; zero when zeros
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
}

func (r record) f(from, to int) string { return r.s[from-1 : to] }

func (r record) num(from, to int, name string) (int64, error) {
	v := r.f(from, to)
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
	if v == "00000000" {
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
// it before answering anything: every line 240 characters, printable
// (ASCII or ISO-8859-1), one bank throughout, a file header, lots each with a header,
// numbered details (segment T then U of the same title) and a trailer
// whose count matches, then the file trailer with the file's lot and
// record counts, and nothing after it. The first problem is answered as
// a *ReturnError with its line number; no title of a malformed file is
// returned.
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
		if len(s) != RecordLen {
			return nil, lineErr(n, "a record has %d characters, not %d", len(s), RecordLen)
		}
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
	started  bool // the file header was read
	done     bool // the file trailer was read
	lot      int  // the open lot (0: none)
	lots     int  // lots closed
	records  int  // records read, headers and trailers included
	inLot    int  // records of the open lot, its header included
	detail   int  // the last detail's sequence number in the lot
	pendingT *Title
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
	if r.f(143, 143) != "2" {
		return lineErr(r.n, "not a return file: position 143 (remessa/retorno) must be 2")
	}
	d, err := r.date(144, "the generation date")
	if err != nil {
		return err
	}
	seq, err := r.num(158, 163, "the file sequence")
	if err != nil {
		return err
	}
	p.started = true
	p.out.Bank, p.out.GeneratedOn, p.out.Sequence = bank, d, int(seq)
	return nil
}

func (p *returnParser) lotHeader(r record, lot int64) error {
	if p.lot != 0 {
		return lineErr(r.n, "a lot header inside lot %d (its trailer is missing)", p.lot)
	}
	if lot != int64(p.lots+1) {
		return lineErr(r.n, "lot %d out of sequence: want %d", lot, p.lots+1)
	}
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
		t, err := segmentT(r, p.lot, movement)
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
		if err := segmentU(r, t); err != nil {
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

func segmentT(r record, lot int, movement string) (*Title, error) {
	t := &Title{Line: r.n, Lot: lot, Movement: movement}
	t.NossoNumero = strings.TrimSpace(r.f(38, 57))
	t.Carteira = r.f(58, 58)
	t.DocNumber = strings.TrimSpace(r.f(59, 73))
	var err error
	if t.DueDate, err = r.date(74, "the due date"); err != nil {
		return nil, err
	}
	if t.FaceCents, err = r.num(82, 96, "the face value"); err != nil {
		return nil, err
	}
	if (movement == MovementLiquidation || movement == MovementLiquidationAfterBaixa) &&
		(t.NossoNumero == "" || !digits(t.NossoNumero)) {
		return nil, lineErr(r.n, "the nosso número (positions 38-57) of a liquidation must be digits")
	}
	return t, nil
}

func segmentU(r record, t *Title) error {
	var err error
	if t.PaidCents, err = r.num(78, 92, "the amount paid"); err != nil {
		return err
	}
	if t.NetCents, err = r.num(93, 107, "the net amount"); err != nil {
		return err
	}
	if t.PaidOn, err = r.date(138, "the payment date"); err != nil {
		return err
	}
	if t.CreditOn, err = r.date(146, "the credit date"); err != nil {
		return err
	}
	if t.Liquidation() {
		if t.PaidCents <= 0 {
			return lineErr(r.n, "a liquidation's amount paid (positions 78-92) must be positive")
		}
		if t.PaidOn.IsZero() && t.CreditOn.IsZero() {
			return lineErr(r.n, "a liquidation needs its payment date (138-145) or credit date (146-153)")
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
		return lineErr(r.n, "the lot trailer counts %d records, the lot has %d", n, want)
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
		return lineErr(r.n, "the file trailer's lot (positions 4-7) must be 9999")
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
