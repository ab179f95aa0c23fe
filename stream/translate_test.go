package stream_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/arrangement"
	"lastro/collections/keys"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/settlement"
	"lastro/stream"
)

const (
	tenantID = "t-stream"
	dk       = "0123456789abcdef"
	cid      = "C-1"
)

var at = time.Date(2026, 9, 21, 13, 2, 0, 0, time.UTC)

// image marshals an owning package's item struct, so a change of its
// shape changes what the translator sees.
func image(t *testing.T, v any) map[string]types.AttributeValue {
	t.Helper()
	if v == nil {
		return nil
	}
	m, err := attributevalue.MarshalMap(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func header(mod func(h *contract.Header)) contract.Header {
	h := contract.Header{PK: keys.Debtor(tenantID, dk), SK: keys.Contract(cid), Type: contract.TypeHeader, TenantID: tenantID,
		DebtorKey: dk, ContractID: cid, ProductCode: "CREDIARIO_12X", Currency: "BRL", ChargesPolicy: "v0001", DunningPolicy: "v0001",
		Status: contract.StatusActive, StatusReason: contract.ReasonSigned, OutstandingCents: 120000, Shard: 3, InstallmentCount: 12,
		NextAction: "DUE_CHECK", NextActionDate: "2026-09-10", Version: 4, CreatedAt: "2026-01-05T10:00:00.000Z", UpdatedAt: "2026-09-01T10:00:00.000Z"}
	if mod != nil {
		mod(&h)
	}
	return h
}

func late(bucket, oldest string) func(h *contract.Header) {
	return func(h *contract.Header) {
		h.Status, h.StatusReason, h.Bucket, h.OldestOverdueDueDate = contract.StatusInCollection, contract.ReasonOldestOverdue, bucket, oldest
	}
}

func chain(fs ...func(h *contract.Header)) func(h *contract.Header) {
	return func(h *contract.Header) {
		for _, f := range fs {
			f(h)
		}
	}
}

func promise(status, by string) arrangement.Promise {
	return arrangement.Promise{PK: keys.Debtor(tenantID, dk), SK: keys.Promise(cid, "P-1"), Type: arrangement.TypePromise, PromiseID: "P-1",
		ContractID: cid, PromisedDate: "2026-09-26", AmountCents: 41230, ReceivedCents: 41230, Status: status,
		CreatedAt: "2026-09-20T12:00:00Z", ResolvedBy: by, Version: 2}
}

func agreement(status string) arrangement.Agreement {
	return arrangement.Agreement{PK: keys.Debtor(tenantID, dk), SK: keys.Agreement(cid, "A-1"), Type: arrangement.TypeAgreement,
		AgreementID: "A-1", ContractID: cid, Status: status, AgreedOn: "2026-09-21", ChargesPolicy: "v0001", DownPaymentCents: 10000,
		DownPaymentSeq: 13, Installments: 4, FirstDueDate: "2026-10-21", TotalCents: 90000,
		Renegotiated: []arrangement.Renegotiated{{Seq: 7, DueDate: "2026-07-10", BaseCents: 41230, TotalCents: 45000}, {Seq: 8, DueDate: "2026-08-10", BaseCents: 41230, TotalCents: 43000}},
		Schedule:     []arrangement.ScheduleLine{{Seq: 13, DueDate: "2026-09-23", AmountCents: 10000, DownPayment: true}},
		CreatedAt:    "2026-09-21T13:00:00Z", Version: 1}
}

func stl(outcome, reason string) settlement.Record {
	s := settlement.Record{PK: keys.Settlement(tenantID, "S-1"), SK: keys.SettlementSK, Type: settlement.TypeSettlement, SettlementID: "S-1",
		ChargeID: "CHG-1", AmountCents: 41230, PaidAt: "2026-09-21T12:59:00Z", ReceivedAt: "2026-09-21T13:00:00.000Z", Outcome: outcome,
		Reason: reason, Version: 1}
	if outcome == settlement.OutcomeApplied {
		s.DebtorKey, s.ContractID, s.Seq, s.AppliedCents, s.ContractStatus = dk, cid, 9, 41230, contract.StatusActive
		s.AppliedTo = []settlement.Applied{{Seq: 9, Cents: 41230, Settled: true}}
	}
	return s
}

func contact(outcome string, allowed bool, reason contactlimit.Reason) contactlimit.Evidence {
	return contactlimit.Evidence{PK: keys.Debtor(tenantID, dk), SK: keys.Contact("2026-09-20", at, "AT-1"), Type: contactlimit.TypeContact,
		Attempt: contactlimit.Attempt{AttemptID: "AT-1", DebtorKey: dk, ContractID: cid, Channel: contactlimit.SMS, Template: "SMS_D5",
			Action: "SMS_D5", At: "2026-09-20T13:02:00.000Z", LocalDate: "2026-09-20", LocalTime: "10:02:00", Allowed: allowed, Reason: reason,
			Window: "08:00-20:00", UF: "SP", PolicyVersion: "v0001", Outcome: outcome}}
}

type want struct {
	typ, contract, debtor, reason string
	data                          map[string]any // a subset of the event's data
}

// translateCase is one change of a realistic item and the events it
// must yield.
type translateCase struct {
	name     string
	kind     string
	old, new any
	want     []want
}

// translateCases are changes of every item type the translator reads,
// and some it skips: the table of TestTranslate, and the fixture whose
// events the schema and personal-data tests check.
func translateCases() []translateCase {
	return []translateCase{
		{"new current contract: nothing", stream.Insert, nil, header(nil), nil},
		{"first instalment overdue", stream.Modify, header(nil), header(late("D001_030", "2026-09-10")), []want{
			{stream.InstallmentOverdue, cid, dk, contract.ReasonOldestOverdue, map[string]any{"dueDate": "2026-09-10", "bucket": "D001_030"}},
			{stream.BucketChanged, cid, dk, contract.ReasonOldestOverdue, map[string]any{"fromBucket": "", "toBucket": "D001_030", "outstandingCents": int64(120000)}},
		}},
		{"bucket move", stream.Modify, header(late("D001_030", "2026-08-10")), header(late("D031_060", "2026-08-10")), []want{
			{stream.BucketChanged, cid, dk, contract.ReasonOldestOverdue, map[string]any{"fromBucket": "D001_030", "toBucket": "D031_060"}},
		}},
		{"payment within the bucket: nothing", stream.Modify, header(late("D031_060", "2026-08-10")),
			header(chain(late("D031_060", "2026-08-10"), func(h *contract.Header) { h.OutstandingCents = 80000 })), nil},
		{"cured", stream.Modify, header(late("D001_030", "2026-09-10")),
			header(func(h *contract.Header) { h.StatusReason, h.OutstandingCents = contract.ReasonCured, 78770 }), []want{
				{stream.ContractCured, cid, dk, contract.ReasonCured, map[string]any{"statusBefore": contract.StatusInCollection, "bucketBefore": "D001_030", "status": contract.StatusActive}},
				{stream.BucketChanged, cid, dk, contract.ReasonCured, map[string]any{"fromBucket": "D001_030", "toBucket": "", "outstandingCentsBefore": int64(120000), "outstandingCents": int64(78770)}},
			}},
		{"paid in full from late", stream.Modify, header(late("D001_030", "2026-09-10")),
			header(func(h *contract.Header) {
				h.Status, h.StatusReason, h.OutstandingCents, h.NextAction, h.NextActionDate = contract.StatusSettled, contract.ReasonPaidInFull, 0, "", ""
			}), []want{
				{stream.ContractCured, cid, dk, contract.ReasonPaidInFull, map[string]any{"status": contract.StatusSettled}},
				{stream.BucketChanged, cid, dk, contract.ReasonPaidInFull, map[string]any{"toBucket": ""}},
			}},
		{"agreement takes over: no cure", stream.Modify, header(late("D061_090", "2026-07-10")),
			header(func(h *contract.Header) {
				h.Status, h.StatusReason = contract.StatusInAgreement, arrangement.ReasonAgreementSigned
			}), []want{
				{stream.BucketChanged, cid, dk, arrangement.ReasonAgreementSigned, map[string]any{"fromBucket": "D061_090", "toBucket": ""}},
			}},
		{"written off", stream.Modify, header(late("D091_PLUS", "2026-05-10")),
			header(func(h *contract.Header) { h.Status, h.StatusReason = contract.StatusWrittenOff, "UNCOLLECTIBLE" }), []want{
				{stream.WrittenOff, cid, dk, "UNCOLLECTIBLE", map[string]any{"statusBefore": contract.StatusInCollection, "bucketBefore": "D091_PLUS", "oldestOverdueDueDateBefore": "2026-05-10"}},
				{stream.BucketChanged, cid, dk, "UNCOLLECTIBLE", map[string]any{"fromBucket": "D091_PLUS", "toBucket": ""}},
			}},
		{"reported to the bureau", stream.Modify, header(late("D031_060", "2026-08-10")),
			header(chain(late("D031_060", "2026-08-10"), func(h *contract.Header) { h.ReportedAt, h.NoticeAt = "2026-09-21", "2026-09-05" })), []want{
				{stream.BureauReported, cid, dk, contract.ReasonOldestOverdue, map[string]any{"kind": stream.BureauInclusion, "reportedAt": "2026-09-21", "amountCents": int64(120000), "noticeAt": "2026-09-05"}},
			}},
		{"bureau record removed after settling", stream.Modify,
			header(func(h *contract.Header) {
				h.Status, h.StatusReason, h.ReportedAt = contract.StatusSettled, contract.ReasonPaidInFull, "2026-09-21"
			}),
			header(func(h *contract.Header) { h.Status, h.StatusReason = contract.StatusSettled, contract.ReasonPaidInFull }), []want{
				{stream.BureauReported, cid, dk, contract.ReasonPaidInFull, map[string]any{"kind": stream.BureauRemoval, "reportedAt": "2026-09-21", "reason": "SETTLED"}},
			}},
		{"promise kept", stream.Modify, promise(arrangement.PromiseOpen, ""), promise(arrangement.PromiseKept, "settlement"), []want{
			{stream.PromiseKept, cid, dk, "SETTLEMENT", map[string]any{"promiseId": "P-1", "promisedDate": "2026-09-26", "amountCents": int64(41230)}},
		}},
		{"promise broken", stream.Modify, promise(arrangement.PromiseOpen, ""), promise(arrangement.PromiseBroken, "check"), []want{
			{stream.PromiseBroken, cid, dk, "CHECK", map[string]any{"resolvedBy": "check"}},
		}},
		{"promise made: nothing", stream.Insert, nil, promise(arrangement.PromiseOpen, ""), nil},
		{"promise cancelled: nothing", stream.Modify, promise(arrangement.PromiseOpen, ""), promise(arrangement.PromiseCancelled, "write-off"), nil},
		{"agreement signed", stream.Insert, nil, agreement(arrangement.AgreementSigned), []want{
			{stream.AgreementSigned, cid, dk, arrangement.ReasonAgreementSigned, map[string]any{"agreementId": "A-1", "totalCents": int64(90000), "renegotiatedSeqs": []int{7, 8}}},
		}},
		{"agreement effective: nothing", stream.Modify, agreement(arrangement.AgreementSigned), agreement(arrangement.AgreementEffective), nil},
		{"agreement broken", stream.Modify, agreement(arrangement.AgreementEffective), agreement(arrangement.AgreementBroken), []want{
			{stream.AgreementBroken, cid, dk, arrangement.AgreementBroken, map[string]any{"statusBefore": arrangement.AgreementEffective}},
		}},
		{"agreement lapsed", stream.Modify, agreement(arrangement.AgreementSigned), agreement(arrangement.AgreementLapsed), []want{
			{stream.AgreementBroken, cid, dk, arrangement.AgreementLapsed, map[string]any{"status": arrangement.AgreementLapsed}},
		}},
		{"settlement applied", stream.Insert, nil, stl(settlement.OutcomeApplied, ""), []want{
			{stream.SettlementApplied, cid, dk, settlement.OutcomeApplied, map[string]any{"settlementId": "S-1", "appliedCents": int64(41230), "resolved": false,
				"appliedTo": []map[string]any{{"seq": 9, "cents": int64(41230), "settled": true}}}},
		}},
		{"settlement unmatched", stream.Insert, nil, stl(settlement.OutcomeUnmatched, settlement.ReasonChargeNotFound), []want{
			{stream.SettlementUnmatched, "", "", settlement.ReasonChargeNotFound, map[string]any{"chargeId": "CHG-1", "reason": settlement.ReasonChargeNotFound}},
		}},
		{"suspended settlement resolved", stream.Modify, stl(settlement.OutcomeUnmatched, settlement.ReasonChargeNotFound), stl(settlement.OutcomeApplied, ""), []want{
			{stream.SettlementApplied, cid, dk, settlement.OutcomeApplied, map[string]any{"resolved": true}},
		}},
		{"contact blocked", stream.Insert, nil, contact(contactlimit.OutcomeBlocked, false, contactlimit.ReasonLimit), []want{
			{stream.ContactBlocked, cid, dk, string(contactlimit.ReasonLimit), map[string]any{"channel": "SMS", "localDate": "2026-09-20", "attemptId": "AT-1"}},
		}},
		{"contact allowed: nothing", stream.Insert, nil, contact(contactlimit.OutcomePending, true, ""), nil},
		{"contact sent: nothing", stream.Modify, contact(contactlimit.OutcomePending, true, ""), contact(contactlimit.OutcomeSent, true, ""), nil},
		{"instalment paid: nothing", stream.Modify,
			contract.Installment{PK: keys.Debtor(tenantID, dk), SK: keys.Installment(cid, 9), Type: contract.TypeInstallment, Seq: 9, DueDate: "2026-09-10", Status: contract.InstOpen},
			contract.Installment{PK: keys.Debtor(tenantID, dk), SK: keys.Installment(cid, 9), Type: contract.TypeInstallment, Seq: 9, DueDate: "2026-09-10", Status: contract.InstPaid}, nil},
		{"header removed: nothing", stream.Remove, header(nil), nil, nil},
	}
}

func (c translateCase) record(t *testing.T) stream.Record {
	return stream.Record{EventID: "e1", Sequence: "000042", Name: c.kind, Old: image(t, c.old), New: image(t, c.new), At: at}
}

func TestTranslate(t *testing.T) {
	t.Parallel()
	for _, tt := range translateCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := stream.Translate(tt.record(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				e := got[i]
				if e.Type != w.typ || e.ContractID != w.contract || e.DebtorKey != w.debtor || e.StatusReason != w.reason {
					t.Errorf("event %d = %s contract %q debtor %q reason %q, want %+v", i, e.Type, e.ContractID, e.DebtorKey, e.StatusReason, w)
				}
				if e.Tenant != tenantID || e.SchemaVersion != 1 || !e.At.Equal(at) || e.Sequence != "000042" || e.ID != "000042-"+string(rune('0'+i)) {
					t.Errorf("event %d envelope %+v", i, e)
				}
				for k, v := range w.data {
					if !reflect.DeepEqual(e.Data[k], v) {
						t.Errorf("event %d %s data[%s] = %#v, want %#v", i, e.Type, k, e.Data[k], v)
					}
				}
			}
		})
	}
}

func TestTranslateIsDeterministic(t *testing.T) {
	t.Parallel()
	r := stream.Record{Sequence: "77", Name: stream.Modify, Old: image(t, header(nil)), New: image(t, header(late("D001_030", "2026-09-10"))), At: at}
	a, err := stream.Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stream.Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || len(a) != 2 || a[0].ID != "77-0" || a[1].ID != "77-1" {
		t.Fatalf("redelivery differs or ids wrong: %+v / %+v", a, b)
	}
}

func TestTranslateSkipsOtherTypesBeforeDecoding(t *testing.T) {
	t.Parallel()
	// Undecodable everywhere but in its type: a skipped type is not read.
	junk := map[string]types.AttributeValue{"type": &types.AttributeValueMemberS{Value: "PROFILE"},
		"PK": &types.AttributeValueMemberN{Value: "1"}, "status": &types.AttributeValueMemberBOOL{Value: true}}
	for _, typ := range []string{"PROFILE", "APIKEY", "IDEM", contract.TypeInstallment, contract.TypeEvent, settlement.TypeSuspense, "LIMIT", ""} {
		junk["type"] = &types.AttributeValueMemberS{Value: typ}
		evs, err := stream.Translate(stream.Record{Sequence: "1", Name: stream.Modify, Old: junk, New: junk})
		if err != nil || evs != nil {
			t.Errorf("type %q: %v %v", typ, evs, err)
		}
	}
}

func TestTranslatePoisonRecords(t *testing.T) {
	t.Parallel()
	good := image(t, header(nil))
	with := func(k string, v types.AttributeValue) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name string
		img  map[string]types.AttributeValue
	}{
		{"status is a number", with("outstandingCents", &types.AttributeValueMemberS{Value: "lots"})},
		{"no PK", with("PK", &types.AttributeValueMemberN{Value: "3"})},
		{"PK outside the tenants", with("PK", &types.AttributeValueMemberS{Value: keys.Directory})},
		{"unknown key prefix", with("PK", &types.AttributeValueMemberS{Value: "X#1"})},
		{"instant where a date belongs", with("oldestOverdueDueDate", &types.AttributeValueMemberS{Value: "2026-09-10T00:00:00Z"})},
		{"modify without an old image", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := stream.Record{Sequence: "9", Name: stream.Modify, Old: good, New: tt.img}
			if tt.img == nil {
				r.Old, r.New = nil, good
			}
			_, err := stream.Translate(r)
			if !errors.Is(err, stream.ErrUndecodable) {
				t.Fatalf("err = %v, want ErrUndecodable", err)
			}
		})
	}
}
