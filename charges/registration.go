package charges

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"lastro/boleto"
	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/pii"
	"lastro/policy"
	"lastro/tenant"
)

// A boleto is registered with its bank through shipping files (remessas,
// docs/adr/0072): issuing one, or cancelling one the bank may already
// know, writes a pending registration under the tenant's partition for
// that bank (T#<t>#REM#<bank>, SK PEND#<ts>#<chargeId>#<movement>) in the
// same transaction as the charge; GenerateRemessa writes the next numbered
// file of every pending one, oldest first; the bank's return file then
// confirms (02) or rejects (03) each entry (RecordRegistration).

// Registration statuses of a boleto charge.
const (
	RegistrationPending   = "PENDING"   // waiting for the next shipping file
	RegistrationSent      = "SENT"      // in shipping file File
	RegistrationConfirmed = "CONFIRMED" // the bank confirmed the entry (movement 02)
	RegistrationRejected  = "REJECTED"  // the bank rejected the entry (movement 03), Reasons say why
)

// Registration is a boleto charge's standing with its bank.
type Registration struct {
	Status string `json:"status" dynamodbav:"status"`
	Bank   string `json:"bank" dynamodbav:"bank"`
	// File is the shipping file that carried the entry; CancelFile the one
	// that carried its withdrawal (pedido de baixa).
	File       int `json:"file,omitempty" dynamodbav:"file,omitempty"`
	CancelFile int `json:"cancelFile,omitempty" dynamodbav:"cancelFile,omitempty"`
	// Reasons are the bank's codes for a rejection (T 214-223).
	Reasons   []string `json:"reasons,omitempty" dynamodbav:"reasons,omitempty"`
	UpdatedAt string   `json:"updatedAt" dynamodbav:"updatedAt"`
	// pending is the SK of the entry still waiting for a file ("" once
	// shipped), so a cancel before shipping withdraws it instead.
	Pending string `json:"-" dynamodbav:"pending,omitempty"`
}

// Item types of the registration records.
const (
	TypeRemessaPending = "REMESSA_PENDING"
	TypeRemessaFile    = "REMESSA_FILE"
)

// RemessaBatch is the most titles one shipping file takes here: a file's
// sealed bytes and its list stay well within an item's 400 KB. The rest
// wait for the next file.
const RemessaBatch = 500

// pendingItem is one registration waiting for a file. No personal data:
// the payer is read from the sealed profile when the file is written.
type pendingItem struct {
	PK                 string `dynamodbav:"PK"`
	SK                 string `dynamodbav:"SK"`
	Type               string `dynamodbav:"type"`
	ChargeID           string `dynamodbav:"chargeId"`
	Movement           string `dynamodbav:"movement"` // boleto.RemessaEntry | boleto.RemessaCancel
	DebtorKey          string `dynamodbav:"debtorKey"`
	ContractID         string `dynamodbav:"contractId"`
	Seq                int    `dynamodbav:"seq"`
	AmountCents        int64  `dynamodbav:"amountCents"`
	DueDate            string `dynamodbav:"dueDate"`
	IssuedOn           string `dynamodbav:"issuedOn"`
	FineHundredths     int64  `dynamodbav:"fineHundredths"`
	InterestHundredths int64  `dynamodbav:"interestHundredths"`
	CreatedAt          string `dynamodbav:"createdAt"`
}

// fileTitle is one title of a written file, for clearing its pending
// entry and marking its charge.
type fileTitle struct {
	ChargeID   string `dynamodbav:"chargeId"`
	Movement   string `dynamodbav:"movement"`
	DebtorKey  string `dynamodbav:"debtorKey"`
	ContractID string `dynamodbav:"contractId"`
	Pending    string `dynamodbav:"pending"`
}

// fileItem is shipping file Number, SK FILE#<number6>. Its bytes hold the
// payers' names and documents, so they are kept gzipped and sealed with
// the tenant's personal-data key, bound to this partition.
type fileItem struct {
	PK        string      `dynamodbav:"PK"`
	SK        string      `dynamodbav:"SK"`
	Type      string      `dynamodbav:"type"`
	Number    int         `dynamodbav:"number"`
	Bank      string      `dynamodbav:"bank"`
	CreatedAt string      `dynamodbav:"createdAt"`
	Entries   int         `dynamodbav:"entries"`
	Cancels   int         `dynamodbav:"cancels"`
	Titles    []fileTitle `dynamodbav:"titles"`
	SHA256    string      `dynamodbav:"sha256"`
	Size      int         `dynamodbav:"size"`
	Sealed    []byte      `dynamodbav:"sealed"`
	// Cleared is set once every title's pending entry is deleted and its
	// charge marked; a file left uncleared (a crash) is cleared by the
	// next GenerateRemessa before it reads what is pending.
	Cleared bool `dynamodbav:"cleared"`
	Version int  `dynamodbav:"version"`
}

// Remessa describes a shipping file (its bytes: RemessaFile).
type Remessa struct {
	Number    int    `json:"number"`
	Bank      string `json:"bank"`
	CreatedAt string `json:"createdAt"`
	Titles    int    `json:"titles"`
	Entries   int    `json:"entries"` // movement 01
	Cancels   int    `json:"cancels"` // movement 02
	Size      int    `json:"size"`    // bytes
	SHA256    string `json:"sha256"`  // of the bytes, hex
	FileName  string `json:"fileName"`
}

func (f *fileItem) remessa() *Remessa {
	return &Remessa{Number: f.Number, Bank: f.Bank, CreatedAt: f.CreatedAt, Titles: len(f.Titles), Entries: f.Entries, Cancels: f.Cancels,
		Size: f.Size, SHA256: f.SHA256, FileName: fmt.Sprintf("CB%s%06d.REM", f.Bank, f.Number)}
}

var (
	errNoPending       = errs.E(errs.Rule, "no_pending_registrations", "no boleto was issued or cancelled since the last shipping file")
	errRemessaNotFound = errs.E(errs.NotFound, "remessa_not_found", "no shipping file of that number")
	errRemessaRace     = errs.E(errs.Conflict, "remessa_conflict", "another shipping file was written at the same time; list the files or retry")
	errNoRemessaLayout = errs.E(errs.Rule, "remessa_not_supported", "the engine writes no shipping file for the tenant's bank yet")
)

func hundredths(d decimal.Decimal) int64 { return d.Shift(2).Round(0).IntPart() }

// registrationFor is the registration a new boleto starts with and the
// pending entry that asks for it, written with the charge.
func registrationFor(t *tenant.Tenant, out *Issued, dk string, p *policy.Charges, now time.Time) (*Registration, kit.Item, error) {
	bank := t.Boleto().Bank
	sk := keys.RemessaPending(now, out.ChargeID, boleto.RemessaEntry)
	pend := pendingItem{PK: keys.Remessas(t.ID, bank), SK: sk, Type: TypeRemessaPending, ChargeID: out.ChargeID, Movement: boleto.RemessaEntry,
		DebtorKey: dk, ContractID: out.ContractID, Seq: out.Seq, AmountCents: out.AmountCents, DueDate: out.ComputedFor,
		IssuedOn: calendar.Today(now, t.Location).String(), FineHundredths: hundredths(p.FinePercent),
		InterestHundredths: hundredths(p.LateInterestMonthlyPercent), CreatedAt: keys.Timestamp(now)}
	item, err := attributevalue.MarshalMap(pend)
	if err != nil {
		return nil, nil, err
	}
	return &Registration{Status: RegistrationPending, Bank: bank, Pending: sk, UpdatedAt: keys.Timestamp(now)}, item, nil
}

// GenerateRemessa writes the tenant's next shipping file for its bank: the
// pending registrations, oldest first (at most RemessaBatch), each payer
// decrypted from its profile in process. The file is numbered one past the
// last with a conditioned put, so two at once cannot share a number (409
// remessa_conflict); it is kept sealed, so asking for that number again
// answers the same bytes. Then each entry's charge is marked SENT and the
// pending entries are deleted.
func (s *Service) GenerateRemessa(ctx context.Context, t *tenant.Tenant) (*Remessa, error) {
	ctx = kit.Within(ctx, "boleto.remessa")
	set := t.Boleto()
	if b, ok := boleto.BankOf(set.Bank); !ok || b.Remessa == nil {
		return nil, errNoRemessaLayout
	}
	ben, err := set.Beneficiary()
	if err != nil {
		return nil, err
	}
	if s.debtors == nil || s.sealer == nil {
		return nil, errs.E(errs.Rule, "remessa_not_configured", "this engine was built without the payer reader")
	}
	db := s.db(t)
	pk := keys.Remessas(t.ID, set.Bank)
	last, err := s.lastRemessa(ctx, t, pk)
	if err != nil {
		return nil, err
	}
	next := 1
	if last != nil {
		next = last.Number + 1
		if !last.Cleared {
			if err := s.clearRemessa(ctx, t, last); err != nil {
				return nil, err
			}
		}
	}
	page, err := db.QueryPage(ctx, kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.RemessaPendingPrefix), Consistent: true, Limit: RemessaBatch}, "")
	if err != nil {
		return nil, fmt.Errorf("charges: read pending registrations: %w", err)
	}
	if len(page.Items) == 0 {
		return nil, errNoPending
	}
	now := s.clock.Now()
	ship := boleto.Shipment{Bank: set.Bank, Beneficiary: ben, Sequence: next, GeneratedAt: now.In(t.Location)}
	f := &fileItem{PK: pk, SK: keys.RemessaFile(next), Type: TypeRemessaFile, Number: next, Bank: set.Bank, CreatedAt: keys.Timestamp(now), Version: 1}
	for _, it := range page.Items {
		var p pendingItem
		if err := attributevalue.UnmarshalMap(it, &p); err != nil {
			return nil, fmt.Errorf("charges: decode pending registration: %w", err)
		}
		payer, err := s.debtors.BoletoPayer(ctx, t, p.DebtorKey)
		if err != nil {
			return nil, fmt.Errorf("charges: the payer of a pending registration: %w", err)
		}
		due, err := calendar.Parse(p.DueDate)
		if err != nil {
			return nil, fmt.Errorf("charges: pending registration due date: %w", err)
		}
		issued, _ := calendar.Parse(p.IssuedOn)
		ship.Titles = append(ship.Titles, boleto.ShippedTitle{Movement: p.Movement, NossoNumero: p.ChargeID,
			DocNumber: fmt.Sprintf("%.11s/%03d", p.ContractID, p.Seq), DueDate: due, AmountCents: p.AmountCents, IssuedOn: issued,
			FineHundredths: p.FineHundredths, InterestHundredths: p.InterestHundredths, Reference: p.ChargeID,
			Payer: boleto.Payer{Document: normalDocument(payer.Document), Name: payer.Name, UF: payer.UF}})
		f.Titles = append(f.Titles, fileTitle{ChargeID: p.ChargeID, Movement: p.Movement, DebtorKey: p.DebtorKey, ContractID: p.ContractID, Pending: p.SK})
		if p.Movement == boleto.RemessaCancel {
			f.Cancels++
		} else {
			f.Entries++
		}
	}
	raw, err := boleto.WriteRemessa(ship)
	if err != nil {
		return nil, errs.Wrap(errs.Rule, "remessa_invalid", err, "the shipping file cannot be written: "+strings.TrimPrefix(err.Error(), boleto.ErrInvalid.Error()+": "))
	}
	sum := sha256.Sum256(raw)
	f.SHA256, f.Size = hex.EncodeToString(sum[:]), len(raw)
	if f.Sealed, err = s.sealFile(ctx, t, pk, raw); err != nil {
		return nil, err
	}
	av, err := attributevalue.MarshalMap(f)
	if err != nil {
		return nil, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	if err := db.Put(ctx, av, &notExists); errors.Is(err, kit.ErrConditionFailed) {
		return nil, errRemessaRace
	} else if err != nil {
		return nil, fmt.Errorf("charges: write shipping file: %w", err)
	}
	// The file is the fact; clearing is bookkeeping a later call redoes.
	if err := s.clearRemessa(ctx, t, f); err != nil {
		return nil, err
	}
	return f.remessa(), nil
}

// normalDocument keeps a document's digits and upper-case letters (the
// alphanumeric CNPJ), as the bank's file takes it.
func normalDocument(doc string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(doc) {
		if r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *Service) sealFile(ctx context.Context, t *tenant.Tenant, pk string, raw []byte) ([]byte, error) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	sealed, err := s.sealer.Seal(ctx, z.Bytes(), pii.Owner{Tenant: t.ID, Partition: pk})
	if err != nil {
		return nil, fmt.Errorf("charges: seal shipping file: %w", err)
	}
	return sealed, nil
}

// lastRemessa is the highest-numbered file, nil before the first.
func (s *Service) lastRemessa(ctx context.Context, t *tenant.Tenant, pk string) (*fileItem, error) {
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.RemessaFilePrefix), Descending: true, Limit: 1,
		Consistent: true}, "")
	if err != nil {
		return nil, fmt.Errorf("charges: read the last shipping file: %w", err)
	}
	if len(page.Items) == 0 {
		return nil, nil
	}
	var f fileItem
	if err := attributevalue.UnmarshalMap(page.Items[0], &f); err != nil {
		return nil, fmt.Errorf("charges: decode shipping file: %w", err)
	}
	return &f, nil
}

// clearRemessa marks each title's charge as shipped in f, deletes the
// pending entries f carries and records f cleared. Each step is safe to
// repeat.
func (s *Service) clearRemessa(ctx context.Context, t *tenant.Tenant, f *fileItem) error {
	db := s.db(t)
	now := keys.Timestamp(s.clock.Now())
	var dels []kit.Key
	for _, ti := range f.Titles {
		key := kit.Key{PK: keys.Debtor(t.ID, ti.DebtorKey), SK: keys.ContractCharge(ti.ContractID, ti.ChargeID)}
		var upd expression.UpdateBuilder
		var cond expression.ConditionBuilder
		if ti.Movement == boleto.RemessaCancel {
			upd = expression.Set(expression.Name("registration.cancelFile"), expression.Value(f.Number))
			cond = expression.AttributeExists(expression.Name("registration"))
		} else {
			// Only a registration still waiting moves to SENT: a bank's
			// answer that came first is not overwritten.
			upd = expression.Set(expression.Name("registration.status"), expression.Value(RegistrationSent)).
				Set(expression.Name("registration.file"), expression.Value(f.Number))
			cond = expression.Name("registration.status").Equal(expression.Value(RegistrationPending))
		}
		upd = upd.Set(expression.Name("registration.updatedAt"), expression.Value(now)).Remove(expression.Name("registration.pending"))
		if _, err := db.Update(ctx, key, upd, &cond, types.ReturnValueNone); err != nil && !errors.Is(err, kit.ErrConditionFailed) {
			return fmt.Errorf("charges: mark a shipped registration: %w", err)
		}
		dels = append(dels, kit.Key{PK: f.PK, SK: ti.Pending})
	}
	if err := db.BatchWrite(ctx, nil, dels); err != nil {
		return fmt.Errorf("charges: clear pending registrations: %w", err)
	}
	cond := expression.AttributeExists(expression.Name("PK"))
	if _, err := db.Update(ctx, kit.Key{PK: f.PK, SK: f.SK}, expression.Set(expression.Name("cleared"), expression.Value(true)), &cond,
		types.ReturnValueNone); err != nil {
		return fmt.Errorf("charges: mark shipping file cleared: %w", err)
	}
	f.Cleared = true
	return nil
}

// RemessaFile answers shipping file n of the tenant's bank and its bytes,
// the same bytes every time.
func (s *Service) RemessaFile(ctx context.Context, t *tenant.Tenant, n int) (*Remessa, []byte, error) {
	ctx = kit.Within(ctx, "boleto.remessa_file")
	if n < 1 || n > 999999 {
		return nil, nil, errs.E(errs.Invalid, "invalid_remessa_number", "a shipping file's number is 1-999999")
	}
	if s.sealer == nil {
		return nil, nil, errRemessaNotFound
	}
	pk := keys.Remessas(t.ID, t.Boleto().Bank)
	it, err := s.db(t).Get(ctx, kit.Key{PK: pk, SK: keys.RemessaFile(n)}, true)
	if err != nil {
		return nil, nil, fmt.Errorf("charges: read shipping file: %w", err)
	}
	if it == nil {
		return nil, nil, errRemessaNotFound
	}
	var f fileItem
	if err := attributevalue.UnmarshalMap(it, &f); err != nil {
		return nil, nil, fmt.Errorf("charges: decode shipping file: %w", err)
	}
	z, err := s.sealer.Open(ctx, f.Sealed, pii.Owner{Tenant: t.ID, Partition: pk})
	if err != nil {
		return nil, nil, fmt.Errorf("charges: open shipping file: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, nil, fmt.Errorf("charges: shipping file: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, int64(boleto.MaxRemessaTitles*3+4)*(boleto.RecordLen+2)))
	if err != nil {
		return nil, nil, fmt.Errorf("charges: shipping file: %w", err)
	}
	return f.remessa(), raw, nil
}

// Remessas lists the tenant's shipping files for its bank, newest first.
func (s *Service) Remessas(ctx context.Context, t *tenant.Tenant, cursor string) ([]*Remessa, string, error) {
	ctx = kit.Within(ctx, "boleto.remessas")
	pk := keys.Remessas(t.ID, t.Boleto().Bank)
	page, err := s.db(t).QueryPage(ctx, kit.Query{Partition: pk, Sort: kit.BeginsWith(keys.RemessaFilePrefix), Descending: true, Limit: 50}, cursor)
	if err != nil {
		return nil, "", err
	}
	out := []*Remessa{}
	for _, it := range page.Items {
		var f fileItem
		if err := attributevalue.UnmarshalMap(it, &f); err != nil {
			return nil, "", fmt.Errorf("charges: decode shipping file: %w", err)
		}
		out = append(out, f.remessa())
	}
	return out, page.Next, nil
}

// RecordRegistration applies a bank's answer to a boleto's entry, read
// from its return file: movement 02 confirms it, 03 rejects it with the
// bank's reason codes. A nosso número the engine never issued is
// reported as not found (errChargeNotFound); the write is conditioned on
// the charge's version.
func (s *Service) RecordRegistration(ctx context.Context, t *tenant.Tenant, chargeID, movement string, reasons []string) (*Registration, error) {
	status := RegistrationConfirmed
	switch movement {
	case boleto.MovementEntryConfirmed:
	case boleto.MovementEntryRejected:
		status = RegistrationRejected
	default:
		return nil, errs.E(errs.Invalid, "invalid_movement", "only entries confirmed (02) or rejected (03) change a registration")
	}
	if !keys.ValidIdentifier(chargeID) {
		return nil, errChargeNotFound
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Charge(t.ID, chargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return nil, fmt.Errorf("charges: read lookup: %w", err)
	}
	if it == nil {
		return nil, errChargeNotFound
	}
	var lk Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return nil, fmt.Errorf("charges: decode lookup: %w", err)
	}
	key := kit.Key{PK: keys.Debtor(t.ID, lk.DebtorKey), SK: keys.ContractCharge(lk.ContractID, chargeID)}
	for range 3 {
		item, reg, err := s.boletoItem(ctx, t, key)
		if err != nil {
			return nil, err
		}
		next := Registration{Bank: t.Boleto().Bank}
		if reg != nil {
			next = *reg
		}
		next.Status, next.Reasons, next.UpdatedAt = status, reasons, keys.Timestamp(s.clock.Now())
		if status == RegistrationConfirmed {
			next.Reasons = nil
		}
		av, err := attributevalue.Marshal(next)
		if err != nil {
			return nil, err
		}
		upd := expression.Set(expression.Name("registration"), expression.Value(av)).Set(expression.Name("version"), expression.Value(item.Version+1))
		cond := expression.Name("version").Equal(expression.Value(item.Version))
		_, err = s.db(t).Update(ctx, key, upd, &cond, types.ReturnValueNone)
		if err == nil {
			return &next, nil
		}
		if !errors.Is(err, kit.ErrConditionFailed) {
			return nil, fmt.Errorf("charges: record registration: %w", err)
		}
	}
	return nil, errCancelContended
}

// boletoItem reads a boleto charge item and its registration (nil for a
// boleto issued before registrations existed).
func (s *Service) boletoItem(ctx context.Context, t *tenant.Tenant, key kit.Key) (*chargeItem, *Registration, error) {
	it, err := s.db(t).Get(ctx, key, true)
	if err != nil {
		return nil, nil, fmt.Errorf("charges: read charge: %w", err)
	}
	if it == nil {
		return nil, nil, errChargeNotFound
	}
	var item chargeItem
	if err := attributevalue.UnmarshalMap(it, &item); err != nil {
		return nil, nil, fmt.Errorf("charges: decode charge: %w", err)
	}
	if item.Method != BOLETO {
		return nil, nil, errs.E(errs.Rule, "charge_not_boleto", "the charge is not a boleto")
	}
	var reg struct {
		Registration *Registration `dynamodbav:"registration"`
	}
	if err := attributevalue.UnmarshalMap(it, &reg); err != nil {
		return nil, nil, fmt.Errorf("charges: decode registration: %w", err)
	}
	return &item, reg.Registration, nil
}

// cancelBoleto withdraws a boleto: the charge is marked cancelled and, in
// the same transaction, its entry still waiting for a file is deleted — or,
// when the bank may know it already, a withdrawal (pedido de baixa) is
// queued for the next file. already is true when it was cancelled before.
func (s *Service) cancelBoleto(ctx context.Context, t *tenant.Tenant, key kit.Key) (*Cancelled, error) {
	for range 3 {
		item, reg, err := s.boletoItem(ctx, t, key)
		if err != nil {
			return nil, err
		}
		if item.Status == StatusCancelled {
			return cancelledOf(item, true), nil
		}
		now := s.clock.Now()
		ts := keys.Timestamp(now)
		bank := t.Boleto().Bank
		if reg != nil {
			bank = reg.Bank
		}
		upd := expression.Set(expression.Name("status"), expression.Value(StatusCancelled)).
			Set(expression.Name("cancelledAt"), expression.Value(ts)).
			Set(expression.Name("cancelReason"), expression.Value(ReasonRequested)).
			Set(expression.Name("version"), expression.Value(item.Version+1))
		cond := expression.Name("version").Equal(expression.Value(item.Version))
		pk := keys.Remessas(t.ID, bank)
		var second kit.Action
		if reg != nil && reg.Pending != "" {
			// Never shipped: withdrawing the entry is enough. Its
			// condition fails if a file took it meanwhile; then retry,
			// and the registration says SENT.
			exists := expression.AttributeExists(expression.Name("PK"))
			second = kit.DeleteAction(kit.Key{PK: pk, SK: reg.Pending}, &exists)
			upd = upd.Remove(expression.Name("registration.pending")).
				Set(expression.Name("registration.updatedAt"), expression.Value(ts))
		} else {
			p := pendingItem{PK: pk, SK: keys.RemessaPending(now, item.ChargeID, boleto.RemessaCancel), Type: TypeRemessaPending,
				ChargeID: item.ChargeID, Movement: boleto.RemessaCancel, DebtorKey: strings.TrimPrefix(key.PK, keys.Debtor(t.ID, "")),
				ContractID: item.ContractID, Seq: item.Seq, AmountCents: item.AmountCents, DueDate: item.ComputedFor,
				IssuedOn: strings.SplitN(item.CreatedAt, "T", 2)[0], CreatedAt: ts}
			av, err := attributevalue.MarshalMap(p)
			if err != nil {
				return nil, err
			}
			notExists := expression.AttributeNotExists(expression.Name("PK"))
			second = kit.PutAction(av, &notExists)
		}
		err = s.db(t).Transact(ctx, kit.UpdateAction(key, upd, &cond), second)
		if err == nil {
			item.Status, item.CancelledAt, item.CancelReason = StatusCancelled, ts, ReasonRequested
			out := cancelledOf(item, false)
			out.PSPStatus = ""
			return out, nil
		}
		if !errors.Is(err, kit.ErrConditionFailed) {
			return nil, fmt.Errorf("charges: cancel boleto: %w", err)
		}
	}
	return nil, errCancelContended
}

// boletoKey finds a boleto charge's item key through its lookup; ok is
// false for any other charge (or none: the caller's own read says so).
func (s *Service) boletoKey(ctx context.Context, t *tenant.Tenant, chargeID string) (kit.Key, bool, error) {
	if !keys.ValidIdentifier(chargeID) {
		return kit.Key{}, false, nil
	}
	it, err := s.db(t).Get(ctx, kit.Key{PK: keys.Charge(t.ID, chargeID), SK: keys.ChargeSK}, true)
	if err != nil {
		return kit.Key{}, false, fmt.Errorf("charges: read lookup: %w", err)
	}
	if it == nil {
		return kit.Key{}, false, nil
	}
	var lk Lookup
	if err := attributevalue.UnmarshalMap(it, &lk); err != nil {
		return kit.Key{}, false, fmt.Errorf("charges: decode lookup: %w", err)
	}
	if lk.Method != BOLETO {
		return kit.Key{}, false, nil
	}
	return kit.Key{PK: keys.Debtor(t.ID, lk.DebtorKey), SK: keys.ContractCharge(lk.ContractID, chargeID)}, true, nil
}
