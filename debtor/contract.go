package debtor

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
// check, the header, the instalments and the event: up to 97 instalments.
// Larger contracts go in chunks of up to 98 instalments, each with the
// PROFILE check and a check that the header does not exist yet, and the
// header last with the event and the remaining instalments.
const (
	maxActions      = 100
	singleTxInsts   = maxActions - 3
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

// ContractInput is the body of POST /v1/debtors/{dk}/contracts.
type ContractInput struct {
	ContractID   string             `json:"contractId"`
	ProductCode  string             `json:"productCode"`
	Currency     string             `json:"currency,omitempty"`
	Installments []InstallmentInput `json:"installments"`
}

// contractDoc documents ContractInput for OpenAPI (amounts as integers).
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

func (in ContractInput) validate() (*validContract, error) {
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

// contractItem is the contract header (SPEC section 3 names).
type contractItem struct {
	PK                   string `dynamodbav:"PK"`
	SK                   string `dynamodbav:"SK"`
	Type                 string `dynamodbav:"type"`
	TenantID             string `dynamodbav:"tenantId"`
	DebtorKey            string `dynamodbav:"debtorKey"`
	ContractID           string `dynamodbav:"contractId"`
	ProductCode          string `dynamodbav:"productCode"`
	Currency             string `dynamodbav:"currency"`
	ChargesPolicy        string `dynamodbav:"chargesPolicy"`
	DunningPolicy        string `dynamodbav:"dunningPolicy"`
	Status               string `dynamodbav:"status"`
	StatusReason         string `dynamodbav:"statusReason"`
	OldestOverdueDueDate string `dynamodbav:"oldestOverdueDueDate,omitempty"`
	Bucket               string `dynamodbav:"bucket,omitempty"`
	OutstandingCents     int64  `dynamodbav:"outstandingCents"`
	NextActionDate       string `dynamodbav:"nextActionDate,omitempty"`
	NextAction           string `dynamodbav:"nextAction,omitempty"`
	Shard                int    `dynamodbav:"shard"`
	InstallmentCount     int    `dynamodbav:"installmentCount"`
	GSI1PK               string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK               string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK               string `dynamodbav:"GSI2PK,omitempty"`
	CreationHash         string `dynamodbav:"creationHash,omitempty"`
	Version              int    `dynamodbav:"version"`
	CreatedAt            string `dynamodbav:"createdAt"`
	UpdatedAt            string `dynamodbav:"updatedAt"`
}

// installmentItem is one instalment (SPEC section 3 names).
type installmentItem struct {
	PK                string `dynamodbav:"PK"`
	SK                string `dynamodbav:"SK"`
	Type              string `dynamodbav:"type"`
	Seq               int    `dynamodbav:"seq"`
	OriginalDueDate   string `dynamodbav:"originalDueDate"`
	DueDate           string `dynamodbav:"dueDate"`
	PrincipalCents    int64  `dynamodbav:"principalCents"`
	InterestCents     int64  `dynamodbav:"interestCents"`
	FineCents         int64  `dynamodbav:"fineCents"`
	LateInterestCents int64  `dynamodbav:"lateInterestCents"`
	PaidCents         int64  `dynamodbav:"paidCents"`
	Status            string `dynamodbav:"status"`
	CreationHash      string `dynamodbav:"creationHash,omitempty"`
	Version           int    `dynamodbav:"version"`
}

// ContractCreated is the answer of a contract creation.
type ContractCreated struct {
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

// CreateContract signs a contract for a debtor: the header, every
// instalment and a ContractCreated event, all or nothing (ADR 0007 for
// contracts over 97 instalments). The charges and dunning policy versions
// are the tenant's current ones, frozen on the header. Instalments already
// past due make the contract start delinquent.
func (s *Service) CreateContract(ctx context.Context, t *tenant.Tenant, dk string, in ContractInput, actor Actor) (*ContractCreated, error) {
	if err := ValidKey(dk); err != nil {
		return nil, err
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
	now := s.clock.Now()
	cal := s.calendarOf(t)
	today := calendar.Today(now, t.Location)
	dues := make([]due, len(v.insts))
	var outstanding int64
	for i, in := range v.insts {
		dues[i] = due{Date: in.due, Open: true}
		outstanding += in.principal + in.interest
	}
	st := Derive(dues, today, cal, dunning)
	pk := keys.Debtor(t.ID, dk)
	ts := keys.Timestamp(now)
	chunked := len(v.insts) > singleTxInsts
	creation := ""
	if chunked {
		creation = v.hash()
	}
	h := contractItem{PK: pk, SK: keys.Contract(v.id), Type: "CONTRACT", TenantID: t.ID, DebtorKey: dk, ContractID: v.id,
		ProductCode: v.product, Currency: v.currency, ChargesPolicy: keys.ChargesPolicy(t.ChargesPolicy),
		DunningPolicy: keys.DunningPolicy(t.DunningPolicy), Status: st.Status, StatusReason: st.StatusReason,
		OldestOverdueDueDate: st.OldestOverdue.String(), Bucket: st.Bucket, OutstandingCents: outstanding,
		Shard: Shard(v.id, t.Shards), InstallmentCount: len(v.insts), CreationHash: creation, Version: 1, CreatedAt: ts, UpdatedAt: ts}
	if st.NextAction != "" {
		h.NextAction, h.NextActionDate = st.NextAction, st.NextActionDate.String()
		h.GSI1PK, h.GSI1SK = keys.Agenda(t.ID, h.NextActionDate, h.Shard), keys.AgendaEntry(h.NextAction, v.id)
	}
	if st.Bucket != "" {
		h.GSI2PK = keys.Bucket(t.ID, st.Bucket)
	}
	header, err := marshal(h)
	if err != nil {
		return nil, err
	}
	seq0 := 0
	id := newEventID()
	ev, err := marshal(eventItem{PK: pk, SK: keys.Event(v.id, 0, now, id), Type: "EVENT", Version: 1, EventID: id, EventType: EvContractCreated,
		ContractID: v.id, Seq: &seq0, At: ts, ActorRole: actor.Role, RequestID: actor.RequestID,
		Details: map[string]any{"productCode": v.product, "installments": len(v.insts), "outstandingCents": outstanding,
			"status": st.Status, "statusReason": st.StatusReason, "bucket": st.Bucket, "oldestOverdueDueDate": st.OldestOverdue.String(),
			"chargesPolicy": h.ChargesPolicy, "dunningPolicy": h.DunningPolicy, "nextAction": st.NextAction,
			"nextActionDate": st.NextActionDate.String(), "overdueInstallments": len(st.Overdue)}})
	if err != nil {
		return nil, err
	}
	insts := make([]kit.Item, len(v.insts))
	for i, in := range v.insts {
		status := InstOpen
		if st.Overdue[in.due] {
			status = InstOverdue
		}
		if insts[i], err = marshal(installmentItem{PK: pk, SK: keys.Installment(v.id, in.seq), Type: "INSTALLMENT", Seq: in.seq,
			OriginalDueDate: in.due.String(), DueDate: in.due.String(), PrincipalCents: in.principal, InterestCents: in.interest,
			Status: status, CreationHash: creation, Version: 1}); err != nil {
			return nil, err
		}
	}
	txs, err := s.writeContract(ctx, t, pk, v.id, header, ev, insts, creation)
	if err != nil {
		return nil, err
	}
	return &ContractCreated{ContractID: v.id, Status: st.Status, StatusReason: st.StatusReason,
		OldestOverdueDueDate: ptr(st.OldestOverdue.String()), DaysPastDue: st.DaysPastDue, Bucket: ptr(st.Bucket),
		OutstandingCents: outstanding, NextAction: ptr(st.NextAction), NextActionDate: ptr(st.NextActionDate.String()),
		Shard: h.Shard, ChargesPolicy: h.ChargesPolicy, DunningPolicy: h.DunningPolicy, Installments: len(v.insts), Transactions: txs}, nil
}

// writeContract writes the items in one transaction, or in chunks with the
// header last (ADR 0007). It returns how many transactions it used.
func (s *Service) writeContract(ctx context.Context, t *tenant.Tenant, pk, contractID string, header, ev kit.Item, insts []kit.Item, creation string) (int, error) {
	profileKey := kit.Key{PK: pk, SK: keys.ProfileSK}
	headerKey := kit.Key{PK: pk, SK: keys.Contract(contractID)}
	profileExists := expression.AttributeExists(expression.Name("PK"))
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	instCond := notExists
	if creation != "" {
		// A retry of the same request may overwrite its own earlier chunks.
		instCond = notExists.Or(expression.Name("creationHash").Equal(expression.Value(creation)))
	}
	// fail maps a canceled transaction onto the caller's error: actions 0
	// and 1 are the PROFILE and header checks, the rest instalments.
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
	actions := []kit.Action{kit.CheckAction(profileKey, profileExists), kit.PutAction(header, &notExists)}
	for _, it := range rest {
		actions = append(actions, kit.PutAction(it, &instCond))
	}
	actions = append(actions, kit.PutAction(ev, &notExists))
	if err := s.db(t).Transact(ctx, actions...); err != nil {
		return txs, fail(err)
	}
	return txs + 1, nil
}

// Cents is an Amount of v cents, for callers building a ContractInput in
// code (the demo seed, tests).
func Cents(v int64) Amount { return Amount(strconv.FormatInt(v, 10)) }
