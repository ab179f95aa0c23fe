package contract

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// MaxInstallments is the most instalments a contract may have: sequence
// numbers are three digits in keys.
const MaxInstallments = 999

// Transaction sizing (ADR 0007). A single transaction carries the PROFILE
// check, the header, the contract-id lookup entry (ADR 0084), the
// instalments and the event: up to 96 instalments. Larger contracts go in
// chunks of up to 98 instalments, each with the PROFILE check and a check
// that the header does not exist yet, and the header last with its lookup
// entry, the event and the remaining instalments.
const (
	maxActions      = 100
	singleTxInsts   = maxActions - 4
	chunkInsts      = maxActions - 2
	maxCentsPerPart = 10_000_000_000_000 // 10^13 cents per component: sums of 999 never overflow
)

// Amount is a money field as it arrived: the raw JSON token, validated as
// a non-negative integer of cents by validate (so 12.5, -1, "100" and 1e3
// are all 400 invalid_amount rather than a decoding error).
type Amount string

// UnmarshalJSON keeps the raw token.
func (a *Amount) UnmarshalJSON(b []byte) error { *a = Amount(b); return nil }

var centsPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,15})$`)

func (a Amount) cents(field string) (int64, error) {
	bad := errs.E(errs.Invalid, "invalid_amount", "%s must be a non-negative integer number of cents", field)
	if !centsPattern.MatchString(string(a)) {
		return 0, bad
	}
	v, err := strconv.ParseInt(string(a), 10, 64)
	if err != nil || v > maxCentsPerPart {
		return 0, bad
	}
	return v, nil
}

// InstallmentInput is one instalment of a new contract.
type InstallmentInput struct {
	Seq            int    `json:"seq"`
	DueDate        string `json:"dueDate"`
	PrincipalCents Amount `json:"principalCents"`
	InterestCents  Amount `json:"interestCents"`
}

// Input is the body of POST /v1/debtors/{dk}/contracts.
type Input struct {
	ContractID   string             `json:"contractId"`
	ProductCode  string             `json:"productCode"`
	Currency     string             `json:"currency,omitempty"`
	Installments []InstallmentInput `json:"installments"`
}

// contractDoc documents Input for OpenAPI (amounts as integers).
type contractDoc struct {
	ContractID   string `json:"contractId"`
	ProductCode  string `json:"productCode"`
	Currency     string `json:"currency,omitempty"`
	Installments []struct {
		Seq            int    `json:"seq"`
		DueDate        string `json:"dueDate"`
		PrincipalCents int64  `json:"principalCents"`
		InterestCents  int64  `json:"interestCents"`
	} `json:"installments"`
}

var productPattern = regexp.MustCompile(`^[A-Z0-9_-]{1,32}$`)

// installment is a validated instalment.
type installment struct {
	seq                 int
	due                 calendar.Date
	principal, interest int64
}

// validContract is a validated contract input.
type validContract struct {
	id, product, currency string
	insts                 []installment // by seq
}

func (in Input) validate() (*validContract, error) {
	if !keys.ValidIdentifier(in.ContractID) {
		return nil, errs.E(errs.Invalid, "invalid_contract_id", "contractId must be 1-64 of A-Z a-z 0-9 - _ .")
	}
	if !productPattern.MatchString(in.ProductCode) {
		return nil, errs.E(errs.Invalid, "invalid_product_code", "productCode must be 1-32 of A-Z 0-9 _ -")
	}
	cur := in.Currency
	if cur == "" {
		cur = "BRL"
	}
	if cur != "BRL" {
		return nil, errs.E(errs.Invalid, "invalid_currency", "currency must be BRL")
	}
	switch n := len(in.Installments); {
	case n == 0:
		return nil, errs.E(errs.Invalid, "invalid_installments", "a contract needs at least one instalment")
	case n > MaxInstallments:
		return nil, errs.E(errs.Invalid, "too_many_installments", "a contract may have at most %d instalments", MaxInstallments)
	}
	v := &validContract{id: in.ContractID, product: in.ProductCode, currency: cur}
	seen := map[int]bool{}
	for i, it := range in.Installments {
		if it.Seq < 1 || it.Seq > MaxInstallments {
			return nil, errs.E(errs.Invalid, "invalid_seq", "installments[%d].seq must be 1-%d", i, MaxInstallments)
		}
		if seen[it.Seq] {
			return nil, errs.E(errs.Invalid, "duplicate_seq", "installments[%d].seq %d appears twice", i, it.Seq)
		}
		seen[it.Seq] = true
		d, err := calendar.Parse(it.DueDate)
		if err != nil {
			return nil, errs.E(errs.Invalid, "invalid_date", "installments[%d].dueDate must be a real date YYYY-MM-DD (1900-2199)", i)
		}
		p, err := it.PrincipalCents.cents(fmt.Sprintf("installments[%d].principalCents", i))
		if err != nil {
			return nil, err
		}
		r, err := it.InterestCents.cents(fmt.Sprintf("installments[%d].interestCents", i))
		if err != nil {
			return nil, err
		}
		if p+r == 0 {
			return nil, errs.E(errs.Invalid, "invalid_amount", "installments[%d] must be worth more than zero", i)
		}
		v.insts = append(v.insts, installment{seq: it.Seq, due: d, principal: p, interest: r})
	}
	sort.Slice(v.insts, func(i, j int) bool { return v.insts[i].seq < v.insts[j].seq })
	for i, it := range v.insts {
		if it.seq != i+1 {
			return nil, errs.E(errs.Invalid, "invalid_seq", "instalment sequences must be 1, 2, 3, ... without gaps (seq %d is missing)", i+1)
		}
		if i > 0 && !it.due.After(v.insts[i-1].due) {
			return nil, errs.E(errs.Invalid, "invalid_due_dates", "due dates must strictly increase with the sequence (seq %d is due %s, not after seq %d's %s)",
				it.seq, it.due, i, v.insts[i-1].due)
		}
	}
	return v, nil
}

// hash identifies the contract's content: chunked creations mark their
// instalments with it so a retry of the same request can resume.
func (v *validContract) hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", v.id, v.product, v.currency)
	for _, in := range v.insts {
		fmt.Fprintf(h, "\x00%d/%s/%d/%d", in.seq, in.due, in.principal, in.interest)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Shard is the agenda shard of a contract: fnv32a(contractId) mod shards.
func Shard(contractID string, shards int) int {
	if shards < 1 {
		shards = 1
	}
	h := fnv.New32a()
	h.Write([]byte(contractID))
	return int(h.Sum32() % uint32(shards))
}

// Created is the answer of a contract creation.
type Created struct {
	ContractID           string  `json:"contractId"`
	Status               string  `json:"status"`
	StatusReason         string  `json:"statusReason"`
	OldestOverdueDueDate *string `json:"oldestOverdueDueDate"`
	DaysPastDue          int     `json:"daysPastDue"`
	Bucket               *string `json:"bucket"`
	OutstandingCents     int64   `json:"outstandingCents"`
	NextAction           *string `json:"nextAction"`
	NextActionDate       *string `json:"nextActionDate"`
	Shard                int     `json:"shard"`
	ChargesPolicy        string  `json:"chargesPolicy"`
	DunningPolicy        string  `json:"dunningPolicy"`
	Installments         int     `json:"installments"`
	Transactions         int     `json:"transactions"`
}

func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

var (
	errContractExists = errs.E(errs.Conflict, "contract_exists", "a contract with this contractId already exists for this debtor")
	errCreationHeld   = errs.E(errs.Conflict, "contract_creation_pending",
		"an unfinished creation of this contract with different content holds its instalments; retry that request")
)

// Create signs a contract for a debtor: the header, its contract-id
// lookup entry (ADR 0084), every instalment and a ContractCreated event,
// all or nothing (ADR 0007 for contracts over 96 instalments). The charges and dunning policy versions are the
// tenant's current ones, frozen on the header. Instalments already past
// due make the contract start delinquent, with the régua step it is owed.
func (s *Service) Create(ctx context.Context, t *tenant.Tenant, dk string, in Input, actor Actor) (*Created, error) {
	if !keys.ValidDebtorKey(dk) {
		return nil, errInvalidDebtorKey
	}
	v, err := in.validate()
	if err != nil {
		return nil, err
	}
	ctx = kit.Within(ctx, "contract.create")
	dunning, err := s.policies.Dunning(ctx, t, t.DunningPolicy)
	if err != nil {
		return nil, err
	}
	uf := ""
	if s.debtorUF != nil {
		if uf, err = s.debtorUF(ctx, t, dk); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	cal := t.CalendarIn(uf)
	today := calendar.Today(now, t.Location)
	pk := keys.Debtor(t.ID, dk)
	ts := keys.Timestamp(now)
	chunked := len(v.insts) > singleTxInsts
	creation := ""
	if chunked {
		creation = v.hash()
	}
	c := &Contract{Header: Header{PK: pk, SK: keys.Contract(v.id), Type: TypeHeader, TenantID: t.ID, DebtorKey: dk, ContractID: v.id,
		ProductCode: v.product, Currency: v.currency, ChargesPolicy: keys.ChargesPolicy(t.ChargesPolicy),
		DunningPolicy: keys.DunningPolicy(t.DunningPolicy), UF: uf, Shard: Shard(v.id, t.Shards), InstallmentCount: len(v.insts),
		CreationHash: creation, Version: 1, CreatedAt: ts, UpdatedAt: ts}}
	for _, in := range v.insts {
		c.Installments = append(c.Installments, Installment{PK: pk, SK: keys.Installment(v.id, in.seq), Type: TypeInstallment, Seq: in.seq,
			OriginalDueDate: in.due.String(), DueDate: in.due.String(), PrincipalCents: in.principal, InterestCents: in.interest,
			Status: InstOpen, CreationHash: creation, Version: 1})
	}
	plan := c.Refresh(today, cal, dunning)
	h := &c.Header
	h.index()
	header, err := marshal(h)
	if err != nil {
		return nil, err
	}
	seq0 := 0
	id := NewEventID()
	overdue := 0
	for i := range c.Installments {
		if cal.IsOverdue(c.Installments[i].Due(), today) {
			overdue++
		}
	}
	ev, err := marshal(Event{PK: pk, SK: keys.Event(v.id, 0, now, id), Type: TypeEvent, Version: 1, EventID: id, EventType: EvContractCreated,
		ContractID: v.id, Seq: &seq0, At: ts, ActorRole: actor.Role, RequestID: actor.RequestID,
		Details: map[string]any{"productCode": v.product, "installments": len(v.insts), "outstandingCents": h.OutstandingCents,
			"status": h.Status, "statusReason": h.StatusReason, "bucket": h.Bucket, "oldestOverdueDueDate": h.OldestOverdueDueDate,
			"daysPastDue": plan.DaysPastDue, "chargesPolicy": h.ChargesPolicy, "dunningPolicy": h.DunningPolicy, "nextAction": h.NextAction,
			"nextActionDate": h.NextActionDate, "nextActionWhy": plan.Why, "overdueInstallments": overdue}})
	if err != nil {
		return nil, err
	}
	insts := make([]kit.Item, len(c.Installments))
	for i := range c.Installments {
		if insts[i], err = marshal(c.Installments[i]); err != nil {
			return nil, err
		}
	}
	lookup, err := LookupPut(t.ID, v.id, dk, ts)
	if err != nil {
		return nil, err
	}
	txs, err := s.write(ctx, t, pk, v.id, uf, header, lookup, ev, insts, creation)
	if errors.Is(err, errDebtorNotFound) && s.debtorUF != nil {
		// The PROFILE check also holds the state read above: a state that
		// changed meanwhile is a conflict to retry, not a missing debtor.
		if now, rerr := s.debtorUF(ctx, t, dk); rerr == nil && now != uf {
			err = errDebtorChanged
		}
	}
	if err != nil {
		return nil, err
	}
	return &Created{ContractID: v.id, Status: h.Status, StatusReason: h.StatusReason,
		OldestOverdueDueDate: ptr(h.OldestOverdueDueDate), DaysPastDue: plan.DaysPastDue, Bucket: ptr(h.Bucket),
		OutstandingCents: h.OutstandingCents, NextAction: ptr(h.NextAction), NextActionDate: ptr(h.NextActionDate),
		Shard: h.Shard, ChargesPolicy: h.ChargesPolicy, DunningPolicy: h.DunningPolicy, Installments: len(v.insts), Transactions: txs}, nil
}

// write writes the items in one transaction, or in chunks with the
// header last (ADR 0007), the header's lookup entry beside it. It returns
// how many transactions it used.
func (s *Service) write(ctx context.Context, t *tenant.Tenant, pk, contractID, uf string, header kit.Item, lookup kit.Action, ev kit.Item, insts []kit.Item, creation string) (int, error) {
	profileKey := kit.Key{PK: pk, SK: keys.ProfileSK}
	headerKey := kit.Key{PK: pk, SK: keys.Contract(contractID)}
	profileExists := expression.AttributeExists(expression.Name("PK"))
	if s.debtorUF != nil {
		// The state read is still the profile's: a change of state that
		// commits in between fails this check (and its Relocate did not
		// see this contract), so the creation is refused, never filed
		// under the old state's calendar.
		if uf == "" {
			profileExists = profileExists.And(expression.AttributeNotExists(expression.Name("uf")))
		} else {
			profileExists = profileExists.And(expression.Name("uf").Equal(expression.Value(uf)))
		}
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	instCond := notExists
	if creation != "" {
		// A retry of the same request may overwrite its own earlier chunks.
		instCond = notExists.Or(expression.Name("creationHash").Equal(expression.Value(creation)))
	}
	// fail maps a canceled transaction onto the caller's error: actions 0
	// and 1 are the PROFILE and header checks, the rest instalments (and,
	// in the header's transaction, the lookup entry, which exists exactly
	// when the header does).
	fail := func(err error) error {
		var tc *kit.TxCanceled
		if !errors.As(err, &tc) {
			return fmt.Errorf("create contract: %w", err)
		}
		switch {
		case tc.Failed(0):
			return errDebtorNotFound
		case tc.Failed(1):
			return errContractExists
		case errors.Is(tc, kit.ErrConditionFailed):
			return errCreationHeld
		}
		return fmt.Errorf("create contract: %w", err)
	}
	rest := insts
	txs := 0
	for len(rest) > singleTxInsts {
		n := min(chunkInsts, len(rest))
		actions := []kit.Action{kit.CheckAction(profileKey, profileExists), kit.CheckAction(headerKey, notExists)}
		for _, it := range rest[:n] {
			actions = append(actions, kit.PutAction(it, &instCond))
		}
		if err := s.db(t).Transact(ctx, actions...); err != nil {
			return txs, fail(err)
		}
		txs++
		rest = rest[n:]
	}
	actions := []kit.Action{kit.CheckAction(profileKey, profileExists), kit.PutAction(header, &notExists), lookup}
	for _, it := range rest {
		actions = append(actions, kit.PutAction(it, &instCond))
	}
	actions = append(actions, kit.PutAction(ev, &notExists))
	if err := s.db(t).Transact(ctx, actions...); err != nil {
		var tc *kit.TxCanceled
		if errors.As(err, &tc) && !tc.Failed(0) && tc.Failed(2) {
			// The lookup entry names this debtor and contract id: the
			// contract exists under it.
			return txs, errContractExists
		}
		return txs, fail(err)
	}
	return txs + 1, nil
}

// Cents is an Amount of v cents, for callers building an Input in
// code (the demo seed, tests).
func Cents(v int64) Amount { return Amount(strconv.FormatInt(v, 10)) }
