package ui

import (
	"errors"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"time"

	"lastro/collections/calendar"
)

// The pages speak Portuguese first and English second (ADR 0086). A
// page text is written once, in Portuguese, where it is used: in a
// template as {{t "Texto"}}, in Go as l.T("Texto") or msg("Texto"), or
// as a value of a code's table (words.go). The Portuguese text is the
// message id; englishTexts (words_en.go) translates it. The catalogue
// test fails on a Portuguese text without its English line.

// lang is a language of the pages: its value is the <html lang> tag and
// the language cookie's value.
type lang string

const (
	portuguese lang = "pt-BR"
	english    lang = "en"
)

// langs are the languages the pages speak, the first the default.
var langs = []lang{portuguese, english}

// LangCookie names the cookie that keeps the language a user chose with
// the switch on every page.
const LangCookie = "lastro_lang"

// parseLang reads a language tag as the switch and the cookie write it.
func parseLang(s string) (lang, bool) {
	for _, l := range langs {
		if string(l) == s {
			return l, true
		}
	}
	return portuguese, false
}

// T is msgid, a Portuguese text, in l. A text missing from the English
// table shows in Portuguese (TestCatalogueIsComplete forbids it).
func (l lang) T(msgid string) string {
	if l == english {
		if s, ok := englishTexts[msgid]; ok {
			return s
		}
	}
	return msgid
}

// Tf is T's text as a format with args written in.
func (l lang) Tf(msgid string, args ...any) string {
	return fmt.Sprintf(l.T(msgid), args...)
}

// msg marks a Portuguese text kept in a value and translated where it is
// shown ({{t .Name}}): the catalogue test collects the texts it marks.
func msg(s string) string { return s }

// tmplT is the templates' t: a text, or a format when args follow.
func (l lang) tmplT(msgid string, args ...any) string {
	if len(args) == 0 {
		return l.T(msgid)
	}
	return l.Tf(msgid, args...)
}

// money formats cents as reais in l: R$ 1.234,56 in Portuguese, R$
// 1,234.56 in English (the currency stays the real); a negative amount
// has a leading minus.
func (l lang) money(cents int64) string {
	group, point := ".", ","
	if l == english {
		group, point = ",", "."
	}
	neg := cents < 0
	if neg {
		cents = -cents
	}
	units := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, r := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteRune(r)
	}
	frac := cents % 100
	s := "R$ " + b.String() + point + string(rune('0'+frac/10)) + string(rune('0'+frac%10))
	if neg {
		return "-" + s
	}
	return s
}

// dateLayout is how l writes a civil date: 29/09/2026, or ISO 2026-09-29
// in English (no month-first or day-first reading to guess).
func (l lang) dateLayout() string {
	if l == english {
		return "2006-01-02"
	}
	return "02/01/2006"
}

// date writes an ISO civil date (string or *string) in l; as is when it
// is not one.
func (l lang) date(v any) string {
	s := deref(v)
	d, err := calendar.Parse(s)
	if err != nil {
		return s
	}
	return d.Midnight(time.UTC).Format(l.dateLayout())
}

// instant writes an RFC 3339 instant in loc (the tenant's zone) in l:
// 29/09/2026 14:05, or 2026-09-29 14:05.
func (l lang) instant(loc *time.Location, v any) string {
	s := deref(v)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(l.dateLayout() + " 15:04")
}

// ppm writes parts per million as a percentage with one decimal: 12,5 %
// or 12.5%.
func (l lang) ppm(ppm int64) string {
	s := fmt.Sprintf("%.1f", float64(ppm)/10_000)
	if l == english {
		return s + "%"
	}
	return strings.Replace(s, ".", ",", 1) + " %"
}

// label is a code's word in l, or the code itself when it has none.
func (l lang) label(code string) string {
	if w, ok := labels[code]; ok {
		return l.T(w)
	}
	return code
}

// bucket is a bucket code in words in l ("" for none).
func (l lang) bucket(code any) string {
	s := deref(code)
	if n, ok := bucketNames[s]; ok {
		return l.T(n)
	}
	return s
}

// event is an audit event's type in words in l.
func (l lang) event(code string) string {
	if n, ok := eventNames[code]; ok {
		return l.T(n)
	}
	return code
}

var (
	errAmount   = errors.New("amount must be reais with up to two decimals, such as 150,00 or 150.00")
	enThousands = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$`)
)

// parseCents reads an amount typed in a form into cents. In Portuguese
// "150", "150,5", "1.234,56" or "1234.56": a comma is the decimal
// separator when present, and then dots group thousands. In English
// "150.5", "1,234.56": a comma only groups thousands, so "150,50" is
// refused rather than read as 15,050 reais.
func (l lang) parseCents(s string) (int64, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "R$"))
	switch {
	case l == english && strings.Contains(s, ","):
		if !enThousands.MatchString(s) {
			return 0, errAmount
		}
		s = strings.ReplaceAll(s, ",", "")
	case strings.Contains(s, ","):
		s = strings.ReplaceAll(s, ".", "")
		s = strings.Replace(s, ",", ".", 1)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || len(frac) > 2 {
		return 0, errAmount
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, errAmount
		}
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// funcs are the templates' functions in l.
func (l lang) funcs() template.FuncMap {
	return template.FuncMap{"t": l.tmplT, "money": l.money, "cents": anyCents, "label": l.label, "bucket": l.bucket,
		"date": l.date, "event": l.event, "details": l.details, "ppm": l.ppm, "bar": barWidth,
		"add": func(a, b int) int { return a + b }, "mul": func(a, b int) int { return a * b }}
}
