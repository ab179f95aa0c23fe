package settlement

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"time"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

// Payload is a settlement notification as the payment provider sends it.
type Payload struct {
	SettlementID string    `json:"settlementId"`
	ChargeID     string    `json:"chargeId"`
	AmountCents  int64     `json:"amountCents"`
	PaidAt       time.Time `json:"paidAt"`
	// Bank is set by a boleto return-file import only (never decoded from
	// a webhook): the bank's fee and the other amounts, kept on the STL
	// item beside the payment.
	Bank *BankReport `json:"-"`
}

// MaxAmountCents bounds one settlement: R$ 100 billion, far above any
// payment and far below where sums of them could overflow.
const MaxAmountCents = 10_000_000_000_000

// MaxBodyBytes bounds a webhook body: four short fields.
const MaxBodyBytes = 4096

var centsToken = regexp.MustCompile(`^[1-9][0-9]{0,15}$`)

func invalid(code, msg string) error { return errs.E(errs.Invalid, code, "%s", msg) }

// Decode parses a webhook body strictly: one JSON object with exactly the
// four fields, each once, nothing else and nothing after it; identifiers
// as keys accept them (1-64 of A-Z a-z 0-9 - _ .); amountCents a positive
// integer written as digits (no sign, fraction, exponent or quotes);
// paidAt an RFC 3339 instant with its offset. Money is never guessed
// from a loosely typed value. Errors never echo the input.
func Decode(body []byte) (Payload, error) {
	var p Payload
	if len(body) > MaxBodyBytes {
		return p, invalid("body_too_large", "webhook body too large")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return p, invalid("invalid_json", "webhook body must be a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return p, invalid("invalid_json", "malformed JSON body")
		}
		name, _ := tok.(string)
		if seen[name] {
			return p, invalid("invalid_json", "a field appears twice")
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return p, invalid("invalid_json", "malformed JSON body")
		}
		switch name {
		case "settlementId":
			if p.SettlementID, err = identifier(raw); err != nil {
				return p, invalid("invalid_settlement_id", "settlementId must be a string of 1-64 of A-Z a-z 0-9 - _ .")
			}
		case "chargeId":
			if p.ChargeID, err = identifier(raw); err != nil {
				return p, invalid("invalid_charge_id", "chargeId must be a string of 1-64 of A-Z a-z 0-9 - _ .")
			}
		case "amountCents":
			if !centsToken.Match(raw) {
				return p, invalid("invalid_amount", "amountCents must be a positive integer number of cents")
			}
			v, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil || v <= 0 || v > MaxAmountCents {
				return p, invalid("invalid_amount", "amountCents must be a positive integer number of cents")
			}
			p.AmountCents = v
		case "paidAt":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return p, invalid("invalid_paid_at", "paidAt must be an RFC 3339 instant such as 2026-09-24T10:15:00-03:00")
			}
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil || t.Year() < 2000 || t.Year() > 2199 {
				return p, invalid("invalid_paid_at", "paidAt must be an RFC 3339 instant such as 2026-09-24T10:15:00-03:00")
			}
			p.PaidAt = t
		default:
			return p, invalid("unknown_field", "unknown field in webhook body")
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return p, invalid("invalid_json", "malformed JSON body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return p, invalid("invalid_json", "trailing data after the JSON object")
	}
	for _, f := range []string{"settlementId", "chargeId", "amountCents", "paidAt"} {
		if !seen[f] {
			return p, invalid("missing_field", "settlementId, chargeId, amountCents and paidAt are required")
		}
	}
	return p, nil
}

func identifier(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	if !keys.ValidIdentifier(s) {
		return "", errors.New("invalid identifier")
	}
	return s, nil
}
