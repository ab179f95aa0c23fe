// Package cnabtest writes CNAB 240 cobrança return files for tests: a
// file header, one lot of T+U pairs and the trailers, with every count
// right, so a test breaks exactly the part it means to.
package cnabtest

import (
	"fmt"
	"strings"
)

// Title is one T+U pair to write.
type Title struct {
	Movement    string // e.g. "06"
	NossoNumero string // left-aligned in T 38-57
	DueDate     string // DDMMAAAA
	FaceCents   int64
	PaidCents   int64
	PaidOn      string // DDMMAAAA, U 138-145
	CreditOn    string // DDMMAAAA, U 146-153
	FeeCents    int64  // T 199-213, the bank's fee; U 93-107 is paid less it
	Reasons     string // T 214-223, the movement's reason codes (e.g. "0809" for a rejection)
}

// rec is a 240-character record being filled.
type rec []byte

func newRec(bank, lot string, kind byte) rec {
	r := rec(strings.Repeat(" ", 240))
	r.put(1, bank)
	r.put(4, lot)
	r[7] = kind
	return r
}

// put writes v from 1-based position at.
func (r rec) put(at int, v string) { copy(r[at-1:], v) }

func (r rec) num(at, width int, v int64) { r.put(at, fmt.Sprintf("%0*d", width, v)) }

// Lines are a return file's records, without line ends.
type Lines []string

// Return writes a return file of bank with one cobrança lot holding the
// titles.
func Return(bank string, titles ...Title) Lines {
	var out Lines
	h := newRec(bank, "0000", '0')
	h.put(143, "2")
	h.put(144, "01122026")
	h.num(158, 6, 1)
	out = append(out, string(h))
	lh := newRec(bank, "0001", '1')
	lh.put(9, "T")
	lh.put(10, "01")
	out = append(out, string(lh))
	for i, t := range titles {
		tr := newRec(bank, "0001", '3')
		tr.num(9, 5, int64(2*i+1))
		tr.put(14, "T")
		tr.put(16, t.Movement)
		tr.put(38, t.NossoNumero)
		tr.put(58, "7")
		tr.put(74, t.DueDate)
		tr.num(82, 15, t.FaceCents)
		tr.num(199, 15, t.FeeCents)
		tr.put(214, t.Reasons)
		out = append(out, string(tr))
		u := newRec(bank, "0001", '3')
		u.num(9, 5, int64(2*i+2))
		u.put(14, "U")
		u.put(16, t.Movement)
		for _, at := range []int{18, 33, 48, 63, 108, 123} {
			u.num(at, 15, 0)
		}
		u.num(78, 15, t.PaidCents)
		u.num(93, 15, t.PaidCents-t.FeeCents)
		u.put(138, t.PaidOn)
		u.put(146, t.CreditOn)
		out = append(out, string(u))
	}
	lt := newRec(bank, "0001", '5')
	lt.num(18, 6, int64(2*len(titles)+2))
	out = append(out, string(lt))
	ft := newRec(bank, "9999", '9')
	ft.num(18, 6, 1)
	ft.num(24, 6, int64(len(out)+1))
	out = append(out, string(ft))
	return out
}

// CRLF is the file with CR LF line ends.
func (l Lines) CRLF() string { return strings.Join(l, "\r\n") + "\r\n" }

// LF is the file with LF line ends.
func (l Lines) LF() string { return strings.Join(l, "\n") + "\n" }
