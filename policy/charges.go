// Package policy holds a tenant's versioned business rules
// (docs/design.md#charges-policy): the charges policy (fine, late interest, imputation order) and the
// dunning policy (régua steps, contact window, daily contact limit, bureau
// notice). A version, once written, never changes; a contract keeps the
// versions it was signed under. Version 0 of each is the built-in default
// below, used by tenants that never set one — and, like any version,
// frozen: changing a default would change contracts already signed.
package policy

import (
	"regexp"
	"slices"

	"github.com/shopspring/decimal"

	"lastro/collections/errs"
)

// Components a payment can be imputed to.
const (
	Fine         = "fine"
	LateInterest = "lateInterest"
	Interest     = "interest"
	Principal    = "principal"
)

// DefaultImputationOrder: charges first, then interest, then principal
// (Civil Code art. 354, unless the contract says otherwise).
var DefaultImputationOrder = []string{Fine, LateInterest, Interest, Principal}

// FineCap is the consumer-credit cap on the late-payment fine (CDC art.
// 52 §1): 2.00 %.
var FineCap = decimal.RequireFromString("2.00")

// LateInterestCap is the ceiling on late (moratory) interest: 1.00 % a
// month (ADR 0011). Compared as an exact decimal, so 1.0001 is over it.
var LateInterestCap = decimal.RequireFromString("1.00")

// Charges is one version of a tenant's charges policy.
type Charges struct {
	Version                    int             `json:"version"`
	Name                       string          `json:"name"` // CP#v0003, as contracts reference it
	FinePercent                decimal.Decimal `json:"finePercent"`
	LateInterestMonthlyPercent decimal.Decimal `json:"lateInterestMonthlyPercent"`
	ImputationOrder            []string        `json:"imputationOrder"`
	CreatedAt                  string          `json:"createdAt,omitempty"`
}

// DefaultCharges is version 0: fine 2.00 %, late interest 1.00 % a month,
// the default imputation order.
func DefaultCharges() *Charges {
	return &Charges{Version: 0, Name: chargesName(0), FinePercent: FineCap,
		LateInterestMonthlyPercent: decimal.RequireFromString("1.00"), ImputationOrder: slices.Clone(DefaultImputationOrder)}
}

// ChargesInput is the body of PUT /v1/policies/charges. Percentages are
// strings so they stay exact decimals ("2.00").
type ChargesInput struct {
	FinePercent                string   `json:"finePercent"`
	LateInterestMonthlyPercent string   `json:"lateInterestMonthlyPercent"`
	ImputationOrder            []string `json:"imputationOrder,omitempty"`
}

// maxPercentLen bounds a percent string ("100.0000" is 8): checked
// first, before even the pattern reads it, since the decimal parser's
// cost grows with the square of the digits.
const maxPercentLen = 12

// percentPattern is the only shape a client's percent may have: 1-3
// digits and at most 4 decimals. No sign, no exponent ("1e0", "2E-2"),
// no spaces: the decimal parser accepts all of those, and a policy must
// read the same to every reader of it.
var percentPattern = regexp.MustCompile(`^\d{1,3}(\.\d{1,4})?$`)

// percent parses a policy percentage: a plain decimal string matching
// percentPattern, 0 to max.
func percent(field, s string, max decimal.Decimal) (decimal.Decimal, error) {
	if len(s) > maxPercentLen || !percentPattern.MatchString(s) {
		return decimal.Decimal{}, errs.E(errs.Invalid, "invalid_percent", "%s must be a plain decimal string such as \"1.00\": 1-3 digits, at most 4 decimal places, no sign or exponent", field)
	}
	d, err := decimal.NewFromString(s)
	if err != nil { // the pattern admits only what it parses: kept for safety
		return d, errs.E(errs.Invalid, "invalid_percent", "%s must be a decimal string such as \"1.00\"", field)
	}
	if d.GreaterThan(max) {
		return d, errs.E(errs.Invalid, "invalid_percent", "%s must be between 0 and %s with at most 4 decimal places", field, max.StringFixed(2))
	}
	return d, nil
}

// validate turns the input into a policy, or says what is wrong: 400 for
// malformed values, 422 for a fine or a late interest above its legal cap.
func (in ChargesInput) validate() (*Charges, error) {
	fine, err := percent("finePercent", in.FinePercent, decimal.NewFromInt(100))
	if err != nil {
		return nil, err
	}
	if fine.GreaterThan(FineCap) {
		return nil, errs.E(errs.Rule, "fine_above_cap", "finePercent may not exceed 2.00 (consumer-credit cap)")
	}
	late, err := percent("lateInterestMonthlyPercent", in.LateInterestMonthlyPercent, decimal.NewFromInt(100))
	if err != nil {
		return nil, err
	}
	if late.GreaterThan(LateInterestCap) {
		return nil, errs.E(errs.Rule, "late_interest_above_cap", "lateInterestMonthlyPercent may not exceed 1.00 a month (moratory-interest ceiling)")
	}
	order := in.ImputationOrder
	if order == nil {
		order = slices.Clone(DefaultImputationOrder)
	}
	sorted := slices.Sorted(slices.Values(order))
	want := slices.Sorted(slices.Values(DefaultImputationOrder))
	if !slices.Equal(sorted, want) {
		return nil, errs.E(errs.Invalid, "invalid_imputation_order", "imputationOrder must list fine, lateInterest, interest and principal once each")
	}
	return &Charges{FinePercent: fine, LateInterestMonthlyPercent: late, ImputationOrder: order}, nil
}

// sameRules reports whether two versions say the same thing.
func (c *Charges) sameRules(o *Charges) bool {
	return c.FinePercent.Equal(o.FinePercent) && c.LateInterestMonthlyPercent.Equal(o.LateInterestMonthlyPercent) &&
		slices.Equal(c.ImputationOrder, o.ImputationOrder)
}
