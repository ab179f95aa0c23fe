package contract_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/web"
	"lastro/contract"
	"lastro/contract/regua"
	"lastro/engine/enginetest"
	"lastro/policy"
	"lastro/tenant"
)

func TestContractCreationCurrentAndDelinquent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	cur, err := f.Contracts.Create(t.Context(), f.t, dk, contract.Input{ContractID: "C-CUR", ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly("2026-10-10", 12, 41230, 7560)}, actor)
	if err != nil || cur.Status != contract.StatusActive || cur.Bucket != nil || *cur.NextAction != policy.DueCheck || *cur.NextActionDate != "2026-10-14" ||
		cur.OutstandingCents != 12*(41230+7560) || cur.ChargesPolicy != "CP#v0000" || cur.DunningPolicy != "DP#v0000" || cur.Transactions != 1 {
		t.Fatalf("current contract: %v %+v", err, cur)
	}
	// Policies change after the first contract: it keeps the old versions.
	if _, _, err := f.Policies.PutCharges(t.Context(), f.t, policy.ChargesInput{FinePercent: "1.00", LateInterestMonthlyPercent: "1.00"}); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
	del, err := f.Contracts.Create(t.Context(), f.t, dk, contract.Input{ContractID: "C-OLD", ProductCode: "CDC_24X", Installments: enginetest.Monthly("2026-08-10", 12, 10000, 500)}, actor)
	if err != nil || del.Status != contract.StatusInCollection || *del.OldestOverdueDueDate != "2026-08-10" || del.DaysPastDue != 45 ||
		*del.Bucket != regua.BucketD031_060 || *del.NextAction != "SMS_D45" || *del.NextActionDate != "2026-09-24" || del.ChargesPolicy != "CP#v0001" {
		t.Fatalf("delinquent contract: %v %+v", err, del)
	}
	tn := f.Kit.Tenant(f.t.ID, f.t.CursorKey())
	s := func(it kit.Item, name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	h, _ := tn.Get(t.Context(), kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Contract("C-OLD")}, true)
	shard := contract.Shard("C-OLD", f.t.Shards)
	if s(h, "GSI1PK") != keys.Agenda(f.t.ID, "2026-09-24", shard) || s(h, "GSI1SK") != "SMS_D45#C-OLD" || s(h, "GSI2PK") != keys.Bucket(f.t.ID, regua.BucketD031_060) ||
		s(h, "tenantId") != f.t.ID || s(h, "nextActionDate") != "2026-09-24" || s(h, "chargesPolicy") != "CP#v0001" || s(h, "type") != "CONTRACT" {
		t.Fatalf("header keys: %v", h)
	}
	c, _ := tn.Get(t.Context(), kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Contract("C-CUR")}, true)
	if s(c, "GSI2PK") != "" || s(c, "bucket") != "" || s(c, "chargesPolicy") != "CP#v0000" {
		t.Fatalf("a current contract is not in the portfolio and kept its policy: %v", c)
	}
	in, _ := tn.Get(t.Context(), kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Installment("C-OLD", 2)}, true)
	// Lateness is derived from today on every read, never stored.
	if s(in, "status") != contract.InstOpen || s(in, "originalDueDate") != "2026-09-10" || s(in, "dueDate") != "2026-09-10" {
		t.Fatalf("instalment 2: %v", in)
	}
	in, _ = tn.Get(t.Context(), kit.Key{PK: keys.Debtor(f.t.ID, dk), SK: keys.Installment("C-OLD", 3)}, true)
	if s(in, "status") != contract.InstOpen {
		t.Fatalf("instalment 3 (due 2026-10-10) is open: %v", in)
	}
}

func TestContractRejectsBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	ok := func() contract.Input {
		return contract.Input{ContractID: "C-1", ProductCode: "CREDIARIO_12X", Installments: enginetest.Monthly("2026-10-10", 3, 1000, 100)}
	}
	if _, err := f.Contracts.Create(t.Context(), f.t, dk, ok(), actor); err != nil {
		t.Fatal(err)
	}
	before := len(f.items(t, dk))
	tests := []struct {
		name string
		dk   string
		mod  func(*contract.Input)
		code string
	}{
		{"duplicate contract id", dk, func(*contract.Input) {}, "contract_exists"},
		{"unknown debtor", "00000000000000ff", func(c *contract.Input) { c.ContractID = "C-2" }, "debtor_not_found"},
		{"malformed debtor key", "T#x", func(c *contract.Input) { c.ContractID = "C-2" }, "invalid_debtor_key"},
		{"hash in contract id", dk, func(c *contract.Input) { c.ContractID = "C#2" }, "invalid_contract_id"},
		{"empty contract id", dk, func(c *contract.Input) { c.ContractID = "" }, "invalid_contract_id"},
		{"65-char contract id", dk, func(c *contract.Input) { c.ContractID = fmt.Sprintf("%065d", 1) }, "invalid_contract_id"},
		{"bad product", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.ProductCode = "crediário" }, "invalid_product_code"},
		{"no instalments", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments = nil }, "invalid_installments"},
		{"1000 instalments", dk, func(c *contract.Input) {
			c.ContractID = "C-2"
			c.Installments = enginetest.Monthly("2026-10-10", 1000, 1, 0)
		}, "too_many_installments"},
		{"negative cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].PrincipalCents = "-100" }, "invalid_amount"},
		{"fractional cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "12.5" }, "invalid_amount"},
		{"exponent cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "1e3" }, "invalid_amount"},
		{"string cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = `"100"` }, "invalid_amount"},
		{"missing cents", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].InterestCents = "" }, "invalid_amount"},
		{"zero instalment", dk, func(c *contract.Input) {
			c.ContractID = "C-2"
			c.Installments[1].PrincipalCents, c.Installments[1].InterestCents = "0", "0"
		}, "invalid_amount"},
		{"impossible date", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].DueDate = "2026-02-30" }, "invalid_date"},
		{"instant as date", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].DueDate = "2026-10-10T00:00:00Z" }, "invalid_date"},
		{"seq zero", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].Seq = 0 }, "invalid_seq"},
		{"seq 1000", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[0].Seq = 1000 }, "invalid_seq"},
		{"seq twice", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].Seq = 1 }, "duplicate_seq"},
		{"seq from 2", dk, func(c *contract.Input) {
			c.ContractID = "C-2"
			for i := range c.Installments {
				c.Installments[i].Seq = i + 2
			}
		}, "invalid_seq"},
		{"seq gap", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[2].Seq = 4 }, "invalid_seq"},
		{"due dates backwards", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[1].DueDate = "2026-10-01" }, "invalid_due_dates"},
		{"due date repeats", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Installments[2].DueDate = c.Installments[1].DueDate }, "invalid_due_dates"},
		{"other currency", dk, func(c *contract.Input) { c.ContractID = "C-2"; c.Currency = "USD" }, "invalid_currency"},
	}
	for _, tt := range tests {
		in := ok()
		tt.mod(&in)
		if _, err := f.Contracts.Create(t.Context(), f.t, tt.dk, in, actor); code(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	if after := len(f.items(t, dk)); after != before {
		t.Fatalf("%d items before, %d after rejected creations", before, after)
	}
	if n := len(f.items(t, "00000000000000ff")); n != 0 {
		t.Fatalf("%d items written for an unknown debtor", n)
	}
}

func TestLargeContractInChunksHeaderLast(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	in := contract.Input{ContractID: "C-BIG", ProductCode: "CONSIGNADO", Installments: enginetest.Monthly("2026-10-05", 999, 100, 1)}
	out, err := f.Contracts.Create(t.Context(), f.t, dk, in, actor)
	if err != nil || out.Installments != 999 || out.Transactions != 11 {
		t.Fatalf("999 instalments: %v %+v", err, out)
	}
	// PROFILE + registration event + header + creation event + 999 instalments.
	if n := len(f.items(t, dk)); n != 4+999 {
		t.Fatalf("%d items", n)
	}
	page, err := f.Contracts.Installments(t.Context(), f.t, dk, "C-BIG", "all", web.MaxLimit, "")
	if err != nil || len(page.Items) != 999 || page.Items[998].Seq != 999 {
		t.Fatalf("AP02 over 999: %v %d", err, len(page.Items))
	}
	// Simulate a creation that died before its last transaction: drop the
	// header and its lookup entry, written together. A retry of the same
	// request resumes; another body for the same id is refused while the
	// orphans are there.
	tn := f.Kit.Tenant(f.t.ID, f.t.CursorKey())
	pk := keys.Debtor(f.t.ID, dk)
	for _, k := range []kit.Key{{PK: pk, SK: keys.Contract("C-BIG")}, contract.LookupKey(f.t.ID, "C-BIG", dk)} {
		if err := tn.Delete(t.Context(), k, nil); err != nil {
			t.Fatal(err)
		}
	}
	other := in
	other.Installments = enginetest.Monthly("2026-10-05", 150, 200, 1)
	if _, err := f.Contracts.Create(t.Context(), f.t, dk, other, actor); code(err) != "contract_creation_pending" {
		t.Fatalf("other body over orphans: %v", err)
	}
	small := contract.Input{ContractID: "C-BIG", ProductCode: "CONSIGNADO", Installments: enginetest.Monthly("2026-10-05", 3, 200, 1)}
	if _, err := f.Contracts.Create(t.Context(), f.t, dk, small, actor); code(err) != "contract_creation_pending" {
		t.Fatalf("small body over orphans: %v", err)
	}
	if out, err := f.Contracts.Create(t.Context(), f.t, dk, in, actor); err != nil || out.Transactions != 11 {
		t.Fatalf("resume: %v %+v", err, out)
	}
	if _, err := f.Contracts.Create(t.Context(), f.t, dk, in, actor); code(err) != "contract_exists" {
		t.Fatalf("after completion: %v", err)
	}
}

func TestTenantExtraHolidaysMoveTheAgenda(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	in := func(id string) contract.Input {
		return contract.Input{ContractID: id, ProductCode: "P", Installments: []contract.InstallmentInput{{Seq: 1, DueDate: "2026-10-09", PrincipalCents: contract.Cents(100), InterestCents: contract.Cents(0)}}}
	}
	// Friday Oct 9 is payable that day; Monday Oct 12 is a national holiday.
	out, err := f.Contracts.Create(t.Context(), f.t, dk, in("C-1"), actor)
	if err != nil || *out.NextActionDate != "2026-10-13" {
		t.Fatalf("national calendar: %v %+v", err, out)
	}
	if _, err := f.Tenants.SetHolidays(t.Context(), f.t, tenant.HolidaysInput{Dates: []string{"2026-10-09", "2026-10-09", "2027-01-25"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tenants.SetHolidays(t.Context(), f.t, tenant.HolidaysInput{Dates: []string{"2026-02-30"}}); code(err) != "invalid_date" {
		t.Fatalf("bad date: %v", err)
	}
	if _, err := f.Tenants.SetHolidays(t.Context(), f.t, tenant.HolidaysInput{}); code(err) != "tenant_changed" {
		t.Fatalf("stale tenant version: %v", err)
	}
	f.reload(t)
	if len(f.t.Holidays) != 2 || !f.t.Calendar().IsHoliday(calendar.MustParse("2026-10-09")) {
		t.Fatalf("holidays: %v", f.t.Holidays)
	}
	// With the tenant's holiday on Friday, it is payable on Tuesday 13.
	out, err = f.Contracts.Create(t.Context(), f.t, dk, in("C-2"), actor)
	if err != nil || *out.NextActionDate != "2026-10-14" {
		t.Fatalf("tenant calendar: %v %+v", err, out)
	}
}

// TestHTTPRejectsBadSequencesAndDueDates posts contracts whose sequences
// do not run 1, 2, 3, ... or whose due dates do not strictly increase:
// each is a 400 in the error shape, and nothing is written.
func TestHTTPRejectsBadSequencesAndDueDates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dk := f.register(t)
	before := len(f.items(t, dk))
	body := func(id string, seqs []int, dates []string) string {
		var insts []string
		for i, seq := range seqs {
			insts = append(insts, fmt.Sprintf(`{"seq":%d,"dueDate":%q,"principalCents":1000,"interestCents":100}`, seq, dates[i]))
		}
		return fmt.Sprintf(`{"contractId":%q,"productCode":"CREDIARIO_12X","installments":[%s]}`, id, strings.Join(insts, ","))
	}
	increasing := []string{"2026-10-10", "2026-11-10", "2026-12-10"}
	path := "/v1/debtors/" + dk + "/contracts"
	for _, tt := range []struct {
		name  string
		seqs  []int
		dates []string
		code  string
	}{
		{"sequences start at 2", []int{2, 3, 4}, increasing, "invalid_seq"},
		{"a gap in the sequences", []int{1, 2, 4}, increasing, "invalid_seq"},
		{"only seq 3", []int{3}, increasing[:1], "invalid_seq"},
		{"due dates go backwards", []int{1, 2, 3}, []string{"2026-10-10", "2026-09-10", "2026-12-10"}, "invalid_due_dates"},
		{"a due date repeats", []int{1, 2, 3}, []string{"2026-10-10", "2026-11-10", "2026-11-10"}, "invalid_due_dates"},
		{"listed out of order, dates backwards by seq", []int{2, 1, 3}, increasing, "invalid_due_dates"},
	} {
		status, out := f.Do(t, http.MethodPost, path, f.keys["operator"], body("C-BAD", tt.seqs, tt.dates))
		if status != http.StatusBadRequest || enginetest.ErrorCode(out) != tt.code {
			t.Errorf("%s: %d %v, want 400 %s", tt.name, status, out, tt.code)
		}
	}
	if after := len(f.items(t, dk)); after != before {
		t.Fatalf("%d items before, %d after refused contracts", before, after)
	}
	// Listed out of order but consistent by seq is a contract.
	if status, out := f.Do(t, http.MethodPost, path, f.keys["operator"], body("C-OK", []int{2, 1, 3}, []string{"2026-11-10", "2026-10-10", "2026-12-10"})); status != http.StatusCreated {
		t.Fatalf("a good contract: %d %v", status, out)
	}
}
