package settlement

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/errs"
	"lastro/collections/keys"
)

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	good := `{"settlementId":"stl-1","chargeId":"E12345678901234567890123456","amountCents":102500,"paidAt":"2026-09-24T10:15:00-03:00"}`
	p, err := Decode([]byte(good))
	if err != nil || p.SettlementID != "stl-1" || p.AmountCents != 102500 || !p.PaidAt.Equal(time.Date(2026, 9, 24, 13, 15, 0, 0, time.UTC)) {
		t.Fatalf("good body: %+v %v", p, err)
	}
	bad := []struct{ body, code string }{
		{``, "invalid_json"},
		{`[]`, "invalid_json"},
		{`{`, "invalid_json"},
		{`null`, "invalid_json"},
		{good + `{}`, "invalid_json"},
		{good + ` x`, "invalid_json"},
		{strings.Replace(good, `102500`, `-1`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `0`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `1025.00`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `1e5`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `"102500"`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `0102500`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `99999999999999999999`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `10000000000001`, 1), "invalid_amount"},
		{strings.Replace(good, `102500`, `null`, 1), "invalid_amount"},
		{strings.Replace(good, `"stl-1"`, `"stl#1"`, 1), "invalid_settlement_id"},
		{strings.Replace(good, `"stl-1"`, `""`, 1), "invalid_settlement_id"},
		{strings.Replace(good, `"stl-1"`, `1`, 1), "invalid_settlement_id"},
		{strings.Replace(good, `"E12345678901234567890123456"`, `"T#x#STL#y"`, 1), "invalid_charge_id"},
		{strings.Replace(good, `"2026-09-24T10:15:00-03:00"`, `"2026-09-24"`, 1), "invalid_paid_at"},
		{strings.Replace(good, `"2026-09-24T10:15:00-03:00"`, `"2026-09-24T10:15:00"`, 1), "invalid_paid_at"},
		{strings.Replace(good, `"2026-09-24T10:15:00-03:00"`, `1790000000`, 1), "invalid_paid_at"},
		{strings.Replace(good, `"2026-09-24T10:15:00-03:00"`, `"1800-01-01T00:00:00Z"`, 1), "invalid_paid_at"},
		{strings.Replace(good, `"amountCents"`, `"amount"`, 1), "unknown_field"},
		{strings.Replace(good, `}`, `,"cpf":"529.982.247-25"}`, 1), "unknown_field"},
		{strings.Replace(good, `"chargeId":"E12345678901234567890123456",`, ``, 1), "missing_field"},
		{strings.Replace(good, `}`, `,"amountCents":1}`, 1), "invalid_json"}, // a field twice
	}
	for _, tt := range bad {
		_, err := Decode([]byte(tt.body))
		if err == nil {
			t.Errorf("%s: accepted", tt.body)
			continue
		}
		status, code, msg := errs.Public(err)
		if status != 400 || code != tt.code {
			t.Errorf("%s: %d %s (%s), want 400 %s", tt.body, status, code, msg, tt.code)
		}
		if strings.Contains(msg, "529") || strings.Contains(msg, "stl#1") {
			t.Errorf("%s: the error echoes the input: %s", tt.body, msg)
		}
	}
	if _, err := Decode([]byte(`{"settlementId":"` + strings.Repeat("x", MaxBodyBytes) + `"}`)); err == nil {
		t.Error("an oversized body was accepted")
	}
}

// FuzzWebhookDecode feeds arbitrary bodies to the webhook decoder: it
// never panics, refuses with a 400 only, and whatever it accepts is a
// settlement the engine can key and apply — identifiers valid for keys, a
// positive bounded amount, a real instant — and survives a round trip.
func FuzzWebhookDecode(f *testing.F) {
	f.Add([]byte(`{"settlementId":"stl-1","chargeId":"E12345678901234567890123456","amountCents":102500,"paidAt":"2026-09-24T10:15:00-03:00"}`))
	f.Add([]byte(`{"settlementId":"a","chargeId":"b","amountCents":1,"paidAt":"2026-09-24T10:15:00.123456789Z"}`))
	f.Add([]byte(`{"settlementId":"a","chargeId":"b","amountCents":1e3,"paidAt":"2026-09-24T10:15:00Z"}`))
	f.Add([]byte(`{"settlementId":"a","settlementId":"b"}`))
	f.Add([]byte(`{"amountCents":-5}`))
	f.Add([]byte(`[{"a":1}]`))
	f.Add([]byte(`{"chargeId":"\u0000"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := Decode(body)
		if err != nil {
			if status, _, _ := errs.Public(err); status != 400 {
				t.Fatalf("refused with %d: %v", status, err)
			}
			return
		}
		if !keys.ValidIdentifier(p.SettlementID) || !keys.ValidIdentifier(p.ChargeID) {
			t.Fatalf("accepted identifiers unfit for keys: %q %q", p.SettlementID, p.ChargeID)
		}
		if p.AmountCents <= 0 || p.AmountCents > MaxAmountCents {
			t.Fatalf("accepted amount %d", p.AmountCents)
		}
		if p.PaidAt.IsZero() || p.PaidAt.Year() < 2000 || p.PaidAt.Year() > 2199 {
			t.Fatalf("accepted paidAt %v", p.PaidAt)
		}
		again, err := json.Marshal(map[string]any{"settlementId": p.SettlementID, "chargeId": p.ChargeID,
			"amountCents": json.Number(strconv.FormatInt(p.AmountCents, 10)), "paidAt": p.PaidAt.Format(time.RFC3339Nano)})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Decode(again)
		if err != nil || q.SettlementID != p.SettlementID || q.ChargeID != p.ChargeID || q.AmountCents != p.AmountCents || !q.PaidAt.Equal(p.PaidAt) {
			t.Fatalf("round trip of %q: %+v %v, want %+v", again, q, err, p)
		}
	})
}
