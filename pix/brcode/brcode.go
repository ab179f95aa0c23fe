// Package brcode builds and parses the Pix BR Code: the EMV
// merchant-presented QR payload of the Central Bank's "Manual de Padrões
// para Iniciação do Pix", which a debtor pastes into a banking app as
// "Pix copia e cola". A dynamic code carries no amount the app must trust:
// it points at the provider's location URL (ID 26, sub-ID 25), where the
// app fetches the charge; a static one carries the Pix key (sub-ID 01).
// The payload ends with a CRC16-CCITT-FALSE over everything before it,
// "6304" included.
package brcode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The IDs of the payload's top-level fields.
const (
	idFormat      = "00"
	idInitiation  = "01"
	idAccount     = "26"
	idCategory    = "52"
	idCurrency    = "53"
	idAmount      = "54"
	idCountry     = "58"
	idName        = "59"
	idCity        = "60"
	idAdditional  = "62"
	idCRC         = "63"
	subGUI        = "00"
	subKey        = "01"
	subInfo       = "02"
	subURL        = "25"
	subTxID       = "05"
	initDynamic   = "12"
	formatVersion = "01"
)

// GUI is the globally unique identifier of the Pix arrangement, sub-ID 00
// of field 26.
const GUI = "br.gov.bcb.pix"

// CurrencyBRL is field 53: ISO 4217 numeric code of the real.
const CurrencyBRL = "986"

// DynamicTxID is field 62-05 of a dynamic code: the txid is at the
// location, not in the payload.
const DynamicTxID = "***"

// Code is what a BR Code says.
type Code struct {
	// Dynamic reports a point of initiation 12 (a single-use charge
	// fetched from URL); a static code has none or 11.
	Dynamic bool
	// URL is the charge's location, without scheme (dynamic codes).
	URL string
	// Key is the receiver's Pix key (static codes).
	Key string
	// Info is the static code's free text for the payer (sub-ID 02).
	Info string
	// Category is the merchant category code, "0000" when not informed.
	Category string
	// AmountCents is the amount in cents; 0 when absent (the app asks,
	// or a dynamic charge's location says).
	AmountCents int64
	// Name and City are the receiver's, as the app shows them.
	Name string
	City string
	// TxID is the additional data field's 05: "***" for a dynamic code
	// (the txid lives at the location), or a static code's identifier.
	TxID string
	// CRC is the four hex digits the payload ends with.
	CRC string
}

// Errors Parse returns, to be compared with errors.Is.
var (
	ErrMalformed = errors.New("brcode: malformed payload")
	ErrCRC       = errors.New("brcode: CRC16 does not match")
)

// CRC16 is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF,
// no reflection, no final XOR), as the manual prescribes for ID 63.
func CRC16(data string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(data); i++ {
		crc ^= uint16(data[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// field is one ID-length-value; the length counts characters and is two
// decimal digits, so a value is at most 99 characters.
func field(id, value string) (string, error) {
	n := utf8.RuneCountInString(value)
	if n > 99 {
		return "", fmt.Errorf("%w: field %s is %d characters, at most 99", ErrMalformed, id, n)
	}
	return fmt.Sprintf("%s%02d%s", id, n, value), nil
}

// FormatAmount writes cents as the manual's ID 54: a dot, two decimals,
// no thousands separator ("1024.67").
func FormatAmount(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

// Build writes c as a BR Code: the fields in the manual's order, the
// amount only when positive, and the CRC computed over the result.
// Name is cut to 25 and City to 15 characters, the manual's limits.
func Build(c Code) (string, error) {
	if c.Dynamic == (c.URL == "") || (c.URL == "") == (c.Key == "") {
		return "", fmt.Errorf("%w: a dynamic code needs a URL, a static one a key", ErrMalformed)
	}
	if c.AmountCents < 0 {
		return "", fmt.Errorf("%w: negative amount", ErrMalformed)
	}
	if strings.Contains(c.URL, "://") {
		return "", fmt.Errorf("%w: the location URL goes without its scheme", ErrMalformed)
	}
	acct := []string{subGUI, GUI}
	if c.Dynamic {
		acct = append(acct, subURL, c.URL)
	} else {
		acct = append(acct, subKey, c.Key)
		if c.Info != "" {
			acct = append(acct, subInfo, c.Info)
		}
	}
	account, err := join(acct...)
	if err != nil {
		return "", err
	}
	txid := c.TxID
	if c.Dynamic || txid == "" {
		txid = DynamicTxID
	}
	additional, err := join(subTxID, txid)
	if err != nil {
		return "", err
	}
	category := c.Category
	if category == "" {
		category = "0000"
	}
	parts := []string{idFormat, formatVersion}
	if c.Dynamic {
		parts = append(parts, idInitiation, initDynamic)
	}
	parts = append(parts, idAccount, account, idCategory, category, idCurrency, CurrencyBRL)
	if c.AmountCents > 0 {
		parts = append(parts, idAmount, FormatAmount(c.AmountCents))
	}
	parts = append(parts, idCountry, "BR", idName, cut(c.Name, 25), idCity, cut(c.City, 15), idAdditional, additional)
	body, err := join(parts...)
	if err != nil {
		return "", err
	}
	body += idCRC + "04"
	return body + fmt.Sprintf("%04X", CRC16(body)), nil
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// join writes id, value pairs as consecutive fields.
func join(pairs ...string) (string, error) {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		f, err := field(pairs[i], pairs[i+1])
		if err != nil {
			return "", err
		}
		b.WriteString(f)
	}
	return b.String(), nil
}

// split reads consecutive ID-length-value fields (lengths in characters).
func split(s string) ([][2]string, error) {
	var out [][2]string
	r := []rune(s)
	for i := 0; i < len(r); {
		if i+4 > len(r) {
			return nil, fmt.Errorf("%w: truncated field at character %d", ErrMalformed, i)
		}
		id := string(r[i : i+2])
		n, err := strconv.Atoi(string(r[i+2 : i+4]))
		if err != nil || n < 0 || strings.ContainsAny(string(r[i+2:i+4]), "+-") {
			return nil, fmt.Errorf("%w: field %s has no two-digit length", ErrMalformed, id)
		}
		if i+4+n > len(r) {
			return nil, fmt.Errorf("%w: field %s runs past the end", ErrMalformed, id)
		}
		out = append(out, [2]string{id, string(r[i+4 : i+4+n])})
		i += 4 + n
	}
	return out, nil
}

// maxPayload bounds what Parse reads: a BR Code fits a QR code, well
// under 512 characters.
const maxPayload = 1024

// Parse verifies the payload's CRC (ErrCRC) and decodes its fields
// (ErrMalformed when a mandatory one is missing or ill-formed).
func Parse(payload string) (*Code, error) {
	if len(payload) > maxPayload || !utf8.ValidString(payload) {
		return nil, fmt.Errorf("%w: not a BR Code", ErrMalformed)
	}
	if len(payload) < 8 || payload[len(payload)-8:len(payload)-4] != idCRC+"04" {
		return nil, fmt.Errorf("%w: the payload does not end with field 63 (CRC)", ErrMalformed)
	}
	body, sum := payload[:len(payload)-4], payload[len(payload)-4:]
	want, err := strconv.ParseUint(sum, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: CRC %q is not four hex digits", ErrMalformed, sum)
	}
	if uint16(want) != CRC16(body) {
		return nil, fmt.Errorf("%w: payload says %s, content gives %04X", ErrCRC, strings.ToUpper(sum), CRC16(body))
	}
	fields, err := split(payload)
	if err != nil {
		return nil, err
	}
	c := &Code{CRC: strings.ToUpper(sum)}
	seen := map[string]bool{}
	for i, f := range fields {
		id, v := f[0], f[1]
		seen[id] = true
		switch {
		case i == 0 && (id != idFormat || v != formatVersion):
			return nil, fmt.Errorf("%w: the payload must start with 000201", ErrMalformed)
		case id == idInitiation:
			c.Dynamic = v == initDynamic
		case id == idAccount:
			if err := c.account(v); err != nil {
				return nil, err
			}
		case id == idCategory:
			c.Category = v
		case id == idCurrency && v != CurrencyBRL:
			return nil, fmt.Errorf("%w: currency %s is not 986 (BRL)", ErrMalformed, v)
		case id == idAmount:
			if c.AmountCents, err = parseAmount(v); err != nil {
				return nil, err
			}
		case id == idCountry && v != "BR":
			return nil, fmt.Errorf("%w: country %s is not BR", ErrMalformed, v)
		case id == idName:
			c.Name = v
		case id == idCity:
			c.City = v
		case id == idAdditional:
			sub, err := split(v)
			if err != nil {
				return nil, err
			}
			for _, s := range sub {
				if s[0] == subTxID {
					c.TxID = s[1]
				}
			}
		}
	}
	for _, id := range []string{idAccount, idCategory, idCurrency, idCountry, idName, idCity, idAdditional} {
		if !seen[id] {
			return nil, fmt.Errorf("%w: field %s is missing", ErrMalformed, id)
		}
	}
	if c.Dynamic && c.URL == "" {
		return nil, fmt.Errorf("%w: a dynamic code without a location URL", ErrMalformed)
	}
	return c, nil
}

func (c *Code) account(v string) error {
	sub, err := split(v)
	if err != nil {
		return err
	}
	if len(sub) == 0 || sub[0][0] != subGUI || !strings.EqualFold(sub[0][1], GUI) {
		return fmt.Errorf("%w: field 26 does not start with the GUI %s", ErrMalformed, GUI)
	}
	for _, s := range sub[1:] {
		switch s[0] {
		case subKey:
			c.Key = s[1]
		case subInfo:
			c.Info = s[1]
		case subURL:
			c.URL = s[1]
		}
	}
	if c.Key == "" && c.URL == "" {
		return fmt.Errorf("%w: field 26 has neither a key (01) nor a URL (25)", ErrMalformed)
	}
	return nil
}

// parseAmount reads ID 54 exactly into cents: digits, optionally a dot
// and one or two decimals. No floating point decides a cent.
func parseAmount(v string) (int64, error) {
	whole, frac, dot := strings.Cut(v, ".")
	if whole == "" || len(whole) > 11 || len(frac) > 2 || (dot && frac == "") || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%w: amount %q is not like 1024.67", ErrMalformed, v)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return w*100 + f, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
