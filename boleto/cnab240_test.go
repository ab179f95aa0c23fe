package boleto_test

import (
	"errors"
	"strings"
	"testing"

	"lastro/boleto"
	"lastro/boleto/cnabtest"
)

func sample() cnabtest.Lines {
	return cnabtest.Return("001",
		cnabtest.Title{Movement: "06", NossoNumero: "12345670000000001", DueDate: "24092026", FaceCents: 102467, PaidCents: 102467,
			PaidOn: "24092026", CreditOn: "25092026"},
		cnabtest.Title{Movement: "02", NossoNumero: "12345670000000002", DueDate: "30092026", FaceCents: 5000, PaidOn: "00000000",
			CreditOn: "00000000"},
		cnabtest.Title{Movement: "17", NossoNumero: "12345670000000003", DueDate: "10092026", FaceCents: 7000, PaidCents: 7150,
			PaidOn: "00000000", CreditOn: "28092026"},
	)
}

func TestParseReturn(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{"CRLF": sample().CRLF(), "LF": sample().LF(), "no final line end": strings.Join(sample(), "\n")} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := boleto.ParseReturn(strings.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if r.Bank != "001" || r.GeneratedOn.String() != "2026-12-01" || r.Sequence != 1 || len(r.Titles) != 3 {
				t.Fatalf("return %+v", r)
			}
			first, second, third := r.Titles[0], r.Titles[1], r.Titles[2]
			if first.Line != 3 || first.Lot != 1 || first.NossoNumero != "12345670000000001" || first.PaidCents != 102467 ||
				first.PaidOn.String() != "2026-09-24" || first.CreditOn.String() != "2026-09-25" || first.DueDate.String() != "2026-09-24" ||
				first.FaceCents != 102467 || !first.Liquidation() {
				t.Fatalf("first title %+v", first)
			}
			if second.Line != 5 || second.Liquidation() || !second.PaidOn.IsZero() {
				t.Fatalf("second title %+v", second)
			}
			if third.Movement != "17" || !third.Liquidation() || third.PaidCents != 7150 || !third.PaidOn.IsZero() || third.CreditOn.String() != "2026-09-28" {
				t.Fatalf("third title %+v", third)
			}
		})
	}
}

// TestParseReturnRefusesMalformedFiles: each defect is refused with the
// line it is on, and no title is answered.
func TestParseReturnRefusesMalformedFiles(t *testing.T) {
	t.Parallel()
	edit := func(line, pos int, v string) func(cnabtest.Lines) string {
		return func(l cnabtest.Lines) string {
			s := []byte(l[line-1])
			copy(s[pos-1:], v)
			l[line-1] = string(s)
			return l.CRLF()
		}
	}
	tests := []struct {
		name string
		file func(cnabtest.Lines) string
		line int
		want string
	}{
		{"empty", func(cnabtest.Lines) string { return "" }, 1, "empty"},
		{"truncated: no trailers", func(l cnabtest.Lines) string { return l[:7].CRLF() }, 8, "truncated"},
		{"truncated mid-line", func(l cnabtest.Lines) string { return l[:4].CRLF() + l[4][:100] }, 6, "truncated"},
		{"cut inside a segment U", func(l cnabtest.Lines) string { return l[:3].CRLF() + l[3][:100] }, 4, "net amount"},
		{"long line", func(l cnabtest.Lines) string { l[3] += "    "; return l.CRLF() }, 4, "more than 240"},
		{"241 characters", func(l cnabtest.Lines) string { l[3] += " "; return l.LF() }, 4, "characters"},
		{"a tab", edit(4, 200, "\t"), 4, "printable"},
		{"not a return", edit(1, 143, "1"), 1, "not a return file"},
		{"header not first", func(l cnabtest.Lines) string { return l[1:].CRLF() }, 1, "open with its header"},
		{"another bank", edit(5, 1, "237"), 5, "bank code differs"},
		{"unknown record type", edit(4, 8, "4"), 4, "unknown record type"},
		{"detail out of sequence", edit(5, 9, "00009"), 5, "out of sequence"},
		{"U without T", edit(3, 14, "U"), 3, "without its segment T"},
		{"T after T", edit(4, 14, "T"), 4, "segment U of line 3"},
		{"movement differs", edit(4, 16, "09"), 4, "movement code differs"},
		{"amount not digits", edit(4, 80, "1x"), 4, "amount paid"},
		{"bad payment date", edit(4, 138, "31022026"), 4, "payment date"},
		{"liquidation without nosso número", edit(3, 38, "                    "), 3, "nosso número"},
		{"liquidation of zero", edit(4, 78, "000000000000000"), 4, "must be positive"},
		{"lot count wrong", edit(9, 18, "000007"), 9, "lot trailer counts 7"},
		{"file count wrong", edit(10, 24, "000011"), 10, "counts 11 records"},
		{"lots count wrong", edit(10, 18, "000002"), 10, "counts 2 lots"},
		{"line after the trailer", func(l cnabtest.Lines) string { return append(l, l[0]).CRLF() }, 11, "nothing may follow"},
		{"blank line at the end", func(l cnabtest.Lines) string { return l.CRLF() + "\r\n" }, 11, "nothing may follow"},
		{"lot header apart from its details", edit(2, 4, "0002"), 3, "outside its lot"},
		{"lot 0000", func(l cnabtest.Lines) string { return renumber(l, "0000") }, 2, "numbered 0001-9998"},
		{"retorno lot operation", edit(2, 9, "R"), 2, "not a return lot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := boleto.ParseReturn(strings.NewReader(tt.file(sample())))
			var re *boleto.ReturnError
			if r != nil || !errors.As(err, &re) || !errors.Is(err, boleto.ErrInvalid) {
				t.Fatalf("ParseReturn = %v, %v; want a ReturnError", r, err)
			}
			if re.Line != tt.line || !strings.Contains(re.Msg, tt.want) {
				t.Fatalf("line %d %q, want line %d holding %q", re.Line, re.Msg, tt.line, tt.want)
			}
		})
	}
}

// renumber gives the whole lot of l another number.
func renumber(l cnabtest.Lines, lot string) string {
	for i := 1; i < len(l)-1; i++ {
		l[i] = l[i][:3] + lot + l[i][7:]
	}
	return l.CRLF()
}

// TestParseReturnReadsThroughHarmlessDepartures: lines that lost their
// trailing spaces are padded back; a lot numbered out of sequence (all its
// records agreeing), a lot trailer counting its details only and a file
// header whose retorno code moved are read, each with a note naming its
// line.
func TestParseReturnReadsThroughHarmlessDepartures(t *testing.T) {
	t.Parallel()
	trimmed := sample()
	for i := range trimmed {
		trimmed[i] = strings.TrimRight(trimmed[i], " ")
	}
	moved := sample()
	moved[0] = moved[0][:142] + " " + moved[0][143:]
	detailsOnly := sample()
	detailsOnly[8] = detailsOnly[8][:17] + "000006" + detailsOnly[8][23:]
	tests := []struct {
		name, file, note string
	}{
		{"trailing spaces lost", trimmed.LF(), ""},
		{"lot 9692", renumber(sample(), "9692"), "line 2: lot 9692 out of sequence"},
		{"lot trailer counts details", detailsOnly.CRLF(), "line 9: the lot trailer counts its 6 details"},
		{"header code moved", moved.CRLF(), "line 1: the file header's position 143 is not 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := boleto.ParseReturn(strings.NewReader(tt.file))
			if err != nil || len(r.Titles) != 3 || r.Titles[0].PaidCents != 102467 {
				t.Fatalf("ParseReturn = %+v, %v", r, err)
			}
			if tt.note == "" && len(r.Notes) != 0 || tt.note != "" && (len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], tt.note)) {
				t.Fatalf("notes %q, want %q", r.Notes, tt.note)
			}
		})
	}
}

// TestParseReturnAcceptsLatin1Names: a payer's name kept with its accents
// in ISO-8859-1 (one byte each, as banks write these files) is no defect;
// a C1 control byte still is.
func TestParseReturnAcceptsLatin1Names(t *testing.T) {
	t.Parallel()
	l := sample()
	s := []byte(l[2]) // segment T of the first title
	copy(s[148:], "JOS\xc9 DA CONCEI\xc7\xc3O")
	l[2] = string(s)
	r, err := boleto.ParseReturn(strings.NewReader(l.CRLF()))
	if err != nil || len(r.Titles) != 3 || r.Titles[0].PaidCents != 102467 {
		t.Fatalf("accented name: %v %+v", err, r)
	}
	s[150] = 0x85
	l[2] = string(s)
	var re *boleto.ReturnError
	if _, err := boleto.ParseReturn(strings.NewReader(l.CRLF())); !errors.As(err, &re) || re.Line != 3 {
		t.Fatalf("C1 control byte: %v", err)
	}
}
