package tenant

import (
	"context"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/errs"
)

// The kinds of call outcome: what the desk does with a code of the
// tenant's list (OutcomeCode). A PROMISE-kind code opens the promise form,
// a DISPUTE-kind one the dispute, a CALLBACK-kind one needs its time; the
// others close the task (docs/adr/0080).
const (
	KindReached     = "REACHED"
	KindNoAnswer    = "NO_ANSWER"
	KindWrongNumber = "WRONG_NUMBER"
	KindRefused     = "REFUSED"
	KindPromise     = "PROMISE"
	KindDispute     = "DISPUTE"
	KindCallback    = "CALLBACK"
)

// OutcomeKinds are the kinds a code may have, in the desk's order.
func OutcomeKinds() []string {
	return []string{KindReached, KindNoAnswer, KindWrongNumber, KindRefused, KindPromise, KindDispute, KindCallback}
}

// OutcomeCode is one result a collector may record of a call: the
// tenant's code, its kind among OutcomeKinds and its label in Portuguese
// (English optional: the Portuguese one shows where it is missing).
type OutcomeCode struct {
	Code    string `json:"code" dynamodbav:"code"`
	Kind    string `json:"kind" dynamodbav:"kind"`
	LabelPT string `json:"labelPt" dynamodbav:"labelPt"`
	LabelEN string `json:"labelEn,omitempty" dynamodbav:"labelEn,omitempty"`
}

// OutcomeCodesInput is the body of PUT /v1/tenant/outcome-codes.
type OutcomeCodesInput struct {
	Codes []OutcomeCode `json:"codes"`
}

// OutcomeCodesView is the tenant's list of codes; Default while it set
// none and DefaultOutcomeCodes apply.
type OutcomeCodesView struct {
	Codes   []OutcomeCode `json:"codes"`
	Default bool          `json:"default"`
}

// DefaultOutcomeCodes are the codes of a tenant that set none: one per
// kind, the code being the kind.
func DefaultOutcomeCodes() []OutcomeCode {
	return []OutcomeCode{
		{KindReached, KindReached, "Falou com o devedor", "Spoke with the debtor"},
		{KindNoAnswer, KindNoAnswer, "Não atendeu", "No answer"},
		{KindWrongNumber, KindWrongNumber, "Número errado", "Wrong number"},
		{KindRefused, KindRefused, "Recusou-se a falar", "Refused to talk"},
		{KindPromise, KindPromise, "Promessa de pagamento", "Promise to pay"},
		{KindDispute, KindDispute, "Contesta a dívida", "Disputes the debt"},
		{KindCallback, KindCallback, "Pediu retorno", "Asked for a callback"},
	}
}

// OutcomeCodes is the tenant's list of call outcome codes,
// DefaultOutcomeCodes when it set none.
func (t *Tenant) OutcomeCodes() []OutcomeCode {
	if len(t.outcomeCodes) == 0 {
		return DefaultOutcomeCodes()
	}
	return slices.Clone(t.outcomeCodes)
}

// OutcomeCode is the tenant's code named code, false when its list has
// none such.
func (t *Tenant) OutcomeCode(code string) (OutcomeCode, bool) {
	for _, c := range t.OutcomeCodes() {
		if c.Code == code {
			return c, true
		}
	}
	return OutcomeCode{}, false
}

// maxOutcomeCodes bounds a tenant's list (the desk's select).
const maxOutcomeCodes = 30

var outcomeCodeShape = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,31}$`)

// validOutcomeCodes checks a list at the edge: 1-30 codes, each unique,
// upper-case (A-Z, 0-9, _; at most 32), of a known kind, with a Portuguese
// label of 1-60 characters and an English one of at most 60.
func validOutcomeCodes(codes []OutcomeCode) error {
	bad := func(msg string) error { return errs.E(errs.Invalid, "invalid_outcome_codes", "%s", msg) }
	if len(codes) == 0 || len(codes) > maxOutcomeCodes {
		return bad("codes must list 1 to 30 outcome codes")
	}
	seen := map[string]bool{}
	for _, c := range codes {
		switch {
		case !outcomeCodeShape.MatchString(c.Code):
			return bad("each code is 1-32 characters A-Z, 0-9 or _, starting with a letter")
		case seen[c.Code]:
			return bad("codes must be unique")
		case !slices.Contains(OutcomeKinds(), c.Kind):
			return bad("kind must be one of REACHED, NO_ANSWER, WRONG_NUMBER, REFUSED, PROMISE, DISPUTE, CALLBACK")
		case c.LabelPT == "" || utf8.RuneCountInString(c.LabelPT) > 60 || utf8.RuneCountInString(c.LabelEN) > 60:
			return bad("labelPt has 1-60 characters, labelEn at most 60")
		case !utf8.ValidString(c.LabelPT) || !utf8.ValidString(c.LabelEN):
			return bad("labels must be UTF-8 text")
		}
		seen[c.Code] = true
	}
	return nil
}

// SetOutcomeCodes replaces the tenant's call outcome codes. Tasks already
// recorded keep the code they were recorded with. Conditioned on the
// tenant's version.
func (s *Service) SetOutcomeCodes(ctx context.Context, t *Tenant, in OutcomeCodesInput) (*OutcomeCodesView, error) {
	if err := validOutcomeCodes(in.Codes); err != nil {
		return nil, err
	}
	if err := s.setVersioned(ctx, t, "outcomeCodes", expression.Set(expression.Name("outcomeCodes"), expression.Value(in.Codes))); err != nil {
		return nil, err
	}
	return &OutcomeCodesView{Codes: in.Codes}, nil
}
