package settlement

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"

	"lastro/collections/keys"
	"lastro/collections/strictjson"
	"lastro/psp"
)

// The Central Bank's Pix API webhook (POST {webhookUrl}/pix): a body
// {"pix": [...]} with one entry per payment received, each possibly with
// its refunds (devolucoes). This file only decodes; http.go serves it and
// pixapply.go applies it (ADR 0040).

// MaxPixBodyBytes bounds a Pix webhook body before it is parsed: about a
// thousand payments with their refunds, far more than a PSP batches.
const MaxPixBodyBytes = 256 << 10

// MaxPixPayments bounds the payments of one call, so one request's work
// (a transaction per payment) stays well within the write timeout.
const MaxPixPayments = 500

// MaxPixRefunds bounds the refunds of one payment.
const MaxPixRefunds = 50

// Refund statuses of the Pix API. Only a DEVOLVIDO refund moved money
// back to the payer.
const (
	RefundInProcess = "EM_PROCESSAMENTO"
	RefundReturned  = "DEVOLVIDO"
	RefundNotDone   = "NAO_REALIZADO"
)

// PixPayment is one entry of a Pix webhook: a payment received.
type PixPayment struct {
	EndToEndID string      // the SPI's id of the payment: the settlement id
	TxID       string      // the charge's txid ("" for a Pix with no charge)
	ValorCents int64       // valor, exactly, in cents
	Horario    time.Time   // the payment instant
	Refunds    []PixRefund // devolucoes, in the order sent
}

// PixRefund is a refund (devolução) of a payment.
type PixRefund struct {
	ID          string    // the refund's id, chosen by whoever asked for it, unique per payment
	RtrID       string    // the SPI's id of the refund transaction (32 characters, D...)
	ValorCents  int64     // valor, exactly, in cents
	RequestedAt time.Time // horario.solicitacao
	SettledAt   time.Time // horario.liquidacao (zero until it is DEVOLVIDO)
	Status      string    // EM_PROCESSAMENTO | DEVOLVIDO | NAO_REALIZADO
}

// Payload is the settlement the payment is applied as.
func (p PixPayment) Payload() Payload {
	return Payload{SettlementID: p.EndToEndID, ChargeID: p.TxID, AmountCents: p.ValorCents, PaidAt: p.Horario}
}

// ParseValor parses a Pix API amount exactly into cents by the Pix
// API's rules (psp.ParseValor, ADR 0040), refusing in the error shape.
func ParseValor(s string) (int64, error) {
	v, err := psp.ParseValor(s)
	if err != nil {
		return 0, errValor
	}
	return v, nil
}

var errValor = invalid("invalid_valor", `valor must be a positive amount of reais with a point and one or two decimals, such as "1025.00" (at most 10 integer digits; no sign or exponent)`)

// ValidEndToEndID reports whether s is a Pix end-to-end id as the SPI
// builds them: 32 letters and digits, the first E (a payment) or D (a
// refund). The date and sequence inside are the sender's business; only
// the shape is checked, so every PSP's ids pass.
func ValidEndToEndID(s string) bool {
	if len(s) != 32 || (s[0] != 'E' && s[0] != 'D') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !alnum(s[i]) {
			return false
		}
	}
	return true
}

func alnum(b byte) bool { return b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }

// validRefundID is the Pix API's refund id: 1-35 letters and digits.
func validRefundID(s string) bool {
	if len(s) < 1 || len(s) > 35 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) {
			return false
		}
	}
	return true
}

// PixError is a refusal of one payment of a Pix webhook: which entry
// (0-based) and, within it, which refund (-1: the payment itself). The
// wrapped error is in the engine's error shape
// (docs/design.md#errors-and-bad-input); nothing of the input is in it.
type PixError struct {
	Index  int
	Refund int
	Err    error
}

func (e *PixError) Error() string { return e.Err.Error() }
func (e *PixError) Unwrap() error { return e.Err }

// DecodePix parses a Pix API webhook body strictly, and all of it before
// anything is applied: one JSON object {"pix": [...]} and nothing after
// it; no field twice in any object, at any depth; at most MaxPixPayments
// entries, each with endToEndId (ValidEndToEndID), valor (ParseValor)
// and horario (RFC 3339) required, txid optional (a Pix received on a
// key with no charge goes to suspense), and each endToEndId once per
// call. Inside a payment and a refund, fields this engine does not read —
// chave, infoPagador, componentesValor, a PSP's own extensions — are
// tolerated and ignored, never stored or logged: the Pix API grows
// fields there and PSPs add theirs. The top level takes only "pix".
// Errors never echo the input.
func DecodePix(body []byte) ([]PixPayment, error) {
	if len(body) > MaxPixBodyBytes {
		return nil, invalid("body_too_large", "webhook body too large")
	}
	if err := strictjson.NoDuplicateFields(body); err != nil {
		return nil, err
	}
	var out []PixPayment
	seenPix := false
	err := eachField(body, func(name string, raw json.RawMessage) error {
		if name != "pix" {
			return invalid("unknown_field", `the body takes only "pix", the list of payments`)
		}
		seenPix = true
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || items == nil {
			return invalid("invalid_pix", `"pix" must be a list of payments`)
		}
		if len(items) == 0 || len(items) > MaxPixPayments {
			return invalid("invalid_pix", `"pix" must hold 1 to 500 payments`)
		}
		ids := map[string]bool{}
		for i, it := range items {
			p, err := decodePixPayment(it)
			if err != nil {
				var pe *PixError
				if errors.As(err, &pe) {
					pe.Index = i
					return pe
				}
				return &PixError{Index: i, Refund: -1, Err: err}
			}
			if ids[p.EndToEndID] {
				return &PixError{Index: i, Refund: -1, Err: invalid("duplicate_end_to_end_id", "an endToEndId appears twice in one call")}
			}
			ids[p.EndToEndID] = true
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seenPix {
		return nil, invalid("missing_field", `"pix" is required`)
	}
	return out, nil
}

func decodePixPayment(raw json.RawMessage) (PixPayment, error) {
	var p PixPayment
	seen := map[string]bool{}
	err := eachField(raw, func(name string, v json.RawMessage) error {
		seen[name] = true
		var err error
		switch name {
		case "endToEndId":
			s, ok := jsonString(v)
			if !ok || !ValidEndToEndID(s) {
				return invalid("invalid_end_to_end_id", "endToEndId must be 32 letters and digits starting with E or D")
			}
			p.EndToEndID = s
		case "txid":
			if isNull(v) {
				return nil
			}
			s, ok := jsonString(v)
			if !ok || (s != "" && !keys.ValidIdentifier(s)) {
				return invalid("invalid_txid", "txid must be 1-64 of A-Z a-z 0-9 - _ .")
			}
			p.TxID = s
		case "valor":
			s, ok := jsonString(v)
			if !ok {
				return errValor
			}
			if p.ValorCents, err = ParseValor(s); err != nil {
				return err
			}
		case "horario":
			if p.Horario, err = instantField(v, "invalid_horario", "horario"); err != nil {
				return err
			}
		case "devolucoes":
			if isNull(v) {
				return nil
			}
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return invalid("invalid_devolucoes", "devolucoes must be a list of refunds")
			}
			if len(items) > MaxPixRefunds {
				return invalid("invalid_devolucoes", "a payment takes at most 50 refunds")
			}
			ids, rtr := map[string]bool{}, map[string]bool{}
			for j, it := range items {
				r, err := decodePixRefund(it)
				if err == nil && (ids[r.ID] || rtr[r.RtrID]) {
					err = invalid("duplicate_refund", "a refund id or rtrId appears twice in one payment")
				}
				if err != nil {
					return &PixError{Refund: j, Err: err}
				}
				ids[r.ID], rtr[r.RtrID] = true, true
				p.Refunds = append(p.Refunds, r)
			}
		}
		// Anything else (chave, infoPagador, componentesValor, a PSP's
		// extension) is not read: strictjson.NoDuplicateFields already checked
		// it is well-formed.
		return nil
	})
	if err != nil {
		return p, err
	}
	for _, f := range []string{"endToEndId", "valor", "horario"} {
		if !seen[f] {
			return p, invalid("missing_field", "a payment needs endToEndId, valor and horario")
		}
	}
	return p, nil
}

func decodePixRefund(raw json.RawMessage) (PixRefund, error) {
	var r PixRefund
	seen := map[string]bool{}
	err := eachField(raw, func(name string, v json.RawMessage) error {
		seen[name] = true
		var err error
		switch name {
		case "id":
			s, ok := jsonString(v)
			if !ok || !validRefundID(s) {
				return invalid("invalid_refund_id", "a refund's id must be 1-35 letters and digits")
			}
			r.ID = s
		case "rtrId":
			s, ok := jsonString(v)
			if !ok || !ValidEndToEndID(s) || s[0] != 'D' {
				return invalid("invalid_rtr_id", "a refund's rtrId must be 32 letters and digits starting with D")
			}
			r.RtrID = s
		case "valor":
			s, ok := jsonString(v)
			if !ok {
				return errValor
			}
			if r.ValorCents, err = ParseValor(s); err != nil {
				return err
			}
		case "status":
			s, _ := jsonString(v)
			switch s {
			case RefundInProcess, RefundReturned, RefundNotDone:
				r.Status = s
			default:
				return invalid("invalid_refund_status", "a refund's status must be EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO")
			}
		case "horario":
			if isNull(v) {
				return nil
			}
			return eachField(v, func(name string, v json.RawMessage) error {
				var err error
				switch name {
				case "solicitacao":
					r.RequestedAt, err = instantField(v, "invalid_horario", "horario.solicitacao")
				case "liquidacao":
					if !isNull(v) {
						r.SettledAt, err = instantField(v, "invalid_horario", "horario.liquidacao")
					}
				}
				return err
			})
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	for _, f := range []string{"id", "rtrId", "valor", "status"} {
		if !seen[f] {
			return r, invalid("missing_field", "a refund needs id, rtrId, valor and status")
		}
	}
	return r, nil
}

// eachField walks one JSON object, calling f with each field's name and
// raw value in order; anything but one object and nothing after it is
// invalid_json. Duplicates are checked by strictjson.NoDuplicateFields beforehand.
func eachField(raw []byte, f func(name string, v json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return invalid("invalid_json", "expected a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return invalid("invalid_json", "malformed JSON body")
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return invalid("invalid_json", "malformed JSON body")
		}
		if err := f(name, v); err != nil {
			return err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return invalid("invalid_json", "malformed JSON body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("invalid_json", "trailing data after the JSON object")
	}
	return nil
}

func jsonString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

func instantField(v json.RawMessage, code, field string) (time.Time, error) {
	s, ok := jsonString(v)
	t, err := time.Parse(time.RFC3339Nano, s)
	if !ok || err != nil || t.Year() < 2000 || t.Year() > 2199 {
		return time.Time{}, invalid(code, field+" must be an RFC 3339 instant such as 2026-09-24T13:15:00.000Z")
	}
	return t, nil
}
