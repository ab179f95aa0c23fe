package stream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/arrangement"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/settlement"
)

// Domain event types (docs/events/<Type>.v<SchemaVersion>.json).
const (
	InstallmentOverdue  = "InstallmentOverdue"
	BucketChanged       = "BucketChanged"
	PromiseKept         = "PromiseKept"
	PromiseBroken       = "PromiseBroken"
	AgreementSigned     = "AgreementSigned"
	AgreementBroken     = "AgreementBroken"
	SettlementApplied   = "SettlementApplied"
	SettlementUnmatched = "SettlementUnmatched"
	ContactBlocked      = "ContactBlocked"
	ContractCured       = "ContractCured"
	WrittenOff          = "WrittenOff"
	BureauReported      = "BureauReported"
)

// EventTypes lists every event type Translate emits (a fresh slice).
func EventTypes() []string {
	return []string{
		InstallmentOverdue, BucketChanged, PromiseKept, PromiseBroken, AgreementSigned, AgreementBroken,
		SettlementApplied, SettlementUnmatched, ContactBlocked, ContractCured, WrittenOff, BureauReported,
	}
}

// SchemaVersion is the version of every event's schema; a breaking change
// to one event's data bumps that event's version (a new schema file).
const SchemaVersion = 1

// Kinds of a BureauReported event, as the bureau file names them
// (agenda.Record).
const (
	BureauInclusion = "INCLUSION"
	BureauRemoval   = "REMOVAL"
)

// ErrUndecodable marks a record of a translated item type whose image does
// not decode (a poison record): the consumer sends it to the dead letter
// and goes on, instead of retrying it forever.
var ErrUndecodable = errors.New("stream: record cannot be translated")

// translator returns the translation of an item type, nil for the types
// no event comes from (profiles, instalments, audit events, API keys,
// idempotency records, counters...): they are skipped before anything but
// their type is decoded. Instalments produce none: an instalment's
// "overdue" is derived, never stored, and the header records the
// delinquency derived from them (ADR 0044).
func translator(typ string) func(Record) ([]Event, error) {
	switch typ {
	case contract.TypeHeader:
		return translateHeader
	case arrangement.TypePromise:
		return translatePromise
	case arrangement.TypeAgreement:
		return translateAgreement
	case settlement.TypeSettlement:
		return translateSettlement
	case contactlimit.TypeContact:
		return translateContact
	}
	return nil
}

// Translate turns one item change into domain events: none for an item
// type no event comes from, or for a change that is no transition. Event
// ids are the record's sequence number and the event's index, so a
// redelivered record yields the same events. A record of a translated
// type that does not decode returns an error wrapping ErrUndecodable.
func Translate(r Record) ([]Event, error) {
	typ := itemType(r.New)
	if typ == "" {
		typ = itemType(r.Old)
	}
	tr := translator(typ)
	if tr == nil || r.New == nil { // removals end an item's life, not a business fact
		return nil, nil
	}
	if r.Name == Modify && r.Old == nil {
		// Read as an insert it would emit every transition from zero again.
		return nil, fmt.Errorf("%w: %s MODIFY without an old image: the stream must carry NEW_AND_OLD_IMAGES", ErrUndecodable, typ)
	}
	o, err := ownerOf(r.New)
	if err != nil {
		return nil, fmt.Errorf("%w: %s item: %w", ErrUndecodable, typ, err)
	}
	evs, err := tr(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %s item: %w", ErrUndecodable, typ, err)
	}
	for i := range evs {
		e := &evs[i]
		e.ID = r.Sequence + "-" + strconv.Itoa(i)
		e.SchemaVersion = SchemaVersion
		e.Tenant = o.tenant
		if e.DebtorKey == "" {
			e.DebtorKey = o.debtorKey
		}
		e.At = r.At.UTC()
		e.Sequence = r.Sequence
	}
	return evs, nil
}

func itemType(img map[string]types.AttributeValue) string {
	if s, ok := img["type"].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// owner is who an item belongs to, read from its partition key.
type owner struct{ tenant, debtorKey string }

func ownerOf(img map[string]types.AttributeValue) (owner, error) {
	pk, ok := img["PK"].(*types.AttributeValueMemberS)
	if !ok {
		return owner{}, errors.New("no string PK")
	}
	p, err := keys.Parse(keys.PK, pk.Value)
	if err != nil {
		return owner{}, err
	}
	var o owner
	for _, part := range p.Parts {
		switch part.Prefix {
		case "T":
			o.tenant = part.Fields["tenantId"]
		case "D":
			o.debtorKey = part.Fields["debtorKey"]
		}
	}
	if o.tenant == "" {
		return owner{}, fmt.Errorf("key %q is outside every tenant", pk.Value)
	}
	return o, nil
}

// decode decodes both images into T; a nil old image is the zero T (an
// insert).
func decode[T any](r Record) (prev, cur T, err error) {
	if err = attributevalue.UnmarshalMap(r.New, &cur); err != nil {
		return prev, cur, fmt.Errorf("new image: %w", err)
	}
	if r.Old != nil {
		if err = attributevalue.UnmarshalMap(r.Old, &prev); err != nil {
			return prev, cur, fmt.Errorf("old image: %w", err)
		}
	}
	return prev, cur, nil
}

// date checks a stored civil date ("" stays ""), so an event never
// carries an instant, or garbage, where a date belongs.
func date(field, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	d, err := calendar.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return d.String(), nil
}

// dates checks several stored dates at once, in place.
func dates(fields map[string]*string) error {
	for name, p := range fields {
		v, err := date(name, *p)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}

// translateHeader derives the contract's events from its header, which
// holds the delinquency the engine derived (oldest overdue due date,
// bucket), the status with its reason, and the bureau report. One change
// may carry several: a payment that cures moves the bucket too.
func translateHeader(r Record) ([]Event, error) {
	before, h, err := decode[contract.Header](r)
	if err != nil {
		return nil, err
	}
	if err := dates(map[string]*string{"oldestOverdueDueDate": &h.OldestOverdueDueDate, "old oldestOverdueDueDate": &before.OldestOverdueDueDate,
		"reportedAt": &h.ReportedAt, "old reportedAt": &before.ReportedAt}); err != nil {
		return nil, err
	}
	ev := func(typ string, data map[string]any) Event {
		return Event{Type: typ, DebtorKey: h.DebtorKey, ContractID: h.ContractID, StatusReason: h.StatusReason, Data: data}
	}
	var out []Event
	if h.Status == contract.StatusWrittenOff && before.Status != contract.StatusWrittenOff {
		out = append(out, ev(WrittenOff, map[string]any{
			"statusBefore": before.Status, "bucketBefore": before.Bucket, "outstandingCents": h.OutstandingCents,
			"oldestOverdueDueDateBefore": before.OldestOverdueDueDate,
		}))
	}
	// A cure is the end of a delinquency by the instalments (paid, or
	// credit applied), not by an agreement or a write-off taking over.
	if before.OldestOverdueDueDate != "" && h.OldestOverdueDueDate == "" &&
		(h.Status == contract.StatusActive || h.Status == contract.StatusSettled) {
		out = append(out, ev(ContractCured, map[string]any{
			"status": h.Status, "statusBefore": before.Status, "bucketBefore": before.Bucket,
			"oldestOverdueDueDateBefore": before.OldestOverdueDueDate, "outstandingCents": h.OutstandingCents,
		}))
	}
	if before.OldestOverdueDueDate == "" && h.OldestOverdueDueDate != "" {
		out = append(out, ev(InstallmentOverdue, map[string]any{
			"dueDate": h.OldestOverdueDueDate, "bucket": h.Bucket, "status": h.Status, "outstandingCents": h.OutstandingCents,
		}))
	}
	if before.Bucket != h.Bucket {
		out = append(out, ev(BucketChanged, map[string]any{
			"fromBucket": before.Bucket, "toBucket": h.Bucket, "status": h.Status,
			"outstandingCentsBefore": before.OutstandingCents, "outstandingCents": h.OutstandingCents,
			"oldestOverdueDueDate": h.OldestOverdueDueDate,
		}))
	}
	switch {
	case before.ReportedAt == "" && h.ReportedAt != "":
		out = append(out, ev(BureauReported, map[string]any{
			"kind": BureauInclusion, "reportedAt": h.ReportedAt, "amountCents": h.OutstandingCents,
			"oldestOverdueDueDate": h.OldestOverdueDueDate, "noticeAt": h.NoticeAt,
		}))
	case before.ReportedAt != "" && h.ReportedAt == "":
		reason := "CURED"
		if h.Status == contract.StatusSettled {
			reason = "SETTLED"
		}
		out = append(out, ev(BureauReported, map[string]any{
			"kind": BureauRemoval, "reportedAt": before.ReportedAt, "reason": reason, "amountCents": h.OutstandingCents,
		}))
	}
	return out, nil
}

// translatePromise emits a promise's resolution, kept or broken; a
// cancelled promise (a write-off) is neither.
func translatePromise(r Record) ([]Event, error) {
	before, p, err := decode[arrangement.Promise](r)
	if err != nil {
		return nil, err
	}
	if p.Status == before.Status {
		return nil, nil
	}
	typ := map[string]string{arrangement.PromiseKept: PromiseKept, arrangement.PromiseBroken: PromiseBroken}[p.Status]
	if typ == "" {
		return nil, nil
	}
	if p.PromisedDate, err = date("promisedDate", p.PromisedDate); err != nil {
		return nil, err
	}
	return []Event{{Type: typ, ContractID: p.ContractID, StatusReason: reasonCode(p.ResolvedBy), Data: map[string]any{
		"promiseId": p.PromiseID, "promisedDate": p.PromisedDate, "amountCents": p.AmountCents,
		"receivedCents": p.ReceivedCents, "resolvedBy": p.ResolvedBy,
	}}}, nil
}

// reasonCode makes a resolver's name ("settlement", "check", "write-off")
// a statusReason code (SETTLEMENT, CHECK, WRITE_OFF).
func reasonCode(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// translateAgreement emits an agreement's signature and its end without
// being honoured: BROKEN (an instalment overdue past the policy's limit)
// or LAPSED (the down payment not paid), which the statusReason tells
// apart.
func translateAgreement(r Record) ([]Event, error) {
	before, a, err := decode[arrangement.Agreement](r)
	if err != nil {
		return nil, err
	}
	if a.Status == before.Status {
		return nil, nil
	}
	if err := dates(map[string]*string{"agreedOn": &a.AgreedOn, "firstDueDate": &a.FirstDueDate}); err != nil {
		return nil, err
	}
	switch a.Status {
	case arrangement.AgreementSigned:
		seqs := make([]int, 0, len(a.Renegotiated))
		for _, rn := range a.Renegotiated {
			seqs = append(seqs, rn.Seq)
		}
		return []Event{{Type: AgreementSigned, ContractID: a.ContractID, StatusReason: arrangement.ReasonAgreementSigned, Data: map[string]any{
			"agreementId": a.AgreementID, "agreedOn": a.AgreedOn, "totalCents": a.TotalCents, "downPaymentCents": a.DownPaymentCents,
			"downPaymentSeq": a.DownPaymentSeq, "installments": a.Installments, "firstDueDate": a.FirstDueDate,
			"renegotiatedSeqs": seqs, "chargesPolicy": a.ChargesPolicy,
		}}}, nil
	case arrangement.AgreementBroken, arrangement.AgreementLapsed:
		return []Event{{Type: AgreementBroken, ContractID: a.ContractID, StatusReason: a.Status, Data: map[string]any{
			"agreementId": a.AgreementID, "status": a.Status, "statusBefore": before.Status, "resolvedBy": a.ResolvedBy,
			"totalCents": a.TotalCents,
		}}}, nil
	}
	return nil, nil
}

// translateSettlement emits a settlement's outcome when it is recorded:
// applied on arrival or when a suspended one is resolved, unmatched when
// it goes to suspense. The STL record is the one source, so the suspense
// entry written with it adds nothing.
func translateSettlement(r Record) ([]Event, error) {
	before, s, err := decode[settlement.Record](r)
	if err != nil {
		return nil, err
	}
	if s.Outcome == before.Outcome {
		return nil, nil
	}
	data := map[string]any{
		"settlementId": s.SettlementID, "chargeId": s.ChargeID, "amountCents": s.AmountCents,
		"paidAt": s.PaidAt, "receivedAt": s.ReceivedAt,
	}
	switch s.Outcome {
	case settlement.OutcomeApplied:
		applied := make([]map[string]any, 0, len(s.AppliedTo))
		for _, a := range s.AppliedTo {
			applied = append(applied, map[string]any{"seq": a.Seq, "cents": a.Cents, "settled": a.Settled})
		}
		data["appliedCents"], data["creditCents"], data["appliedTo"] = s.AppliedCents, s.CreditCents, applied
		data["contractStatus"], data["quoteHonoured"], data["resolved"] = s.ContractStatus, s.QuoteHonoured, r.Old != nil
		return []Event{{Type: SettlementApplied, DebtorKey: s.DebtorKey, ContractID: s.ContractID, StatusReason: settlement.OutcomeApplied, Data: data}}, nil
	case settlement.OutcomeUnmatched:
		data["reason"] = s.Reason
		return []Event{{Type: SettlementUnmatched, StatusReason: s.Reason, Data: data}}, nil
	}
	return nil, nil
}

// translateContact emits a contact the gateway refused, with the rule
// that refused it. The debtor's state (uf) stays out: it is part of an
// address.
func translateContact(r Record) ([]Event, error) {
	before, c, err := decode[contactlimit.Evidence](r)
	if err != nil {
		return nil, err
	}
	if c.Outcome != contactlimit.OutcomeBlocked || before.Outcome == contactlimit.OutcomeBlocked {
		return nil, nil
	}
	if c.LocalDate, err = date("localDate", c.LocalDate); err != nil {
		return nil, err
	}
	return []Event{{Type: ContactBlocked, DebtorKey: c.DebtorKey, ContractID: c.ContractID, StatusReason: string(c.Reason), Data: map[string]any{
		"attemptId": c.AttemptID, "channel": string(c.Channel), "action": c.Action, "template": c.Template,
		"localDate": c.LocalDate, "localTime": wallClock(c.LocalTime), "reason": string(c.Reason), "window": c.Window,
		"dunningPolicy": c.PolicyVersion,
	}}}, nil
}

// wallClock is the HH:MM:SS of an evidence's localTime, the form the v1
// event schema pins: evidence written since ADR 0064 holds the instant in
// RFC 3339 with the debtor's offset; older evidence holds HH:MM:SS.
func wallClock(localTime string) string {
	if t, err := time.Parse(time.RFC3339, localTime); err == nil {
		return t.Format("15:04:05")
	}
	return localTime
}
