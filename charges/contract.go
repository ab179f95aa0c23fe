package charges

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
)

// Header is the contract header as payments see it: the debtor package's
// item plus what payments add to it.
type Header struct {
	debtor.ContractHeader
	// CreditCents is money received beyond everything the contract owed.
	CreditCents   int64  `dynamodbav:"creditCents,omitempty"`
	LastPaymentAt string `dynamodbav:"lastPaymentAt,omitempty"`
}

// Installment is an instalment item plus what payments record on it
// beyond SPEC section 3's fields: what was paid of the late charges and
// the date late interest was last assessed to (ADR 0009).
type Installment struct {
	debtor.Installment
	FinePaidCents         int64  `dynamodbav:"finePaidCents,omitempty"`
	LateInterestPaidCents int64  `dynamodbav:"lateInterestPaidCents,omitempty"`
	ChargedThrough        string `dynamodbav:"chargedThrough,omitempty"`
}

// State is the instalment as the arithmetic sees it.
func (in Installment) State() (State, error) {
	due, err := calendar.Parse(in.DueDate)
	if err != nil {
		return State{}, fmt.Errorf("instalment %d: due date: %w", in.Seq, err)
	}
	s := State{Seq: in.Seq, DueDate: due, PrincipalCents: in.PrincipalCents, InterestCents: in.InterestCents, PaidCents: in.PaidCents,
		FineCents: in.FineCents, LateInterestCents: in.LateInterestCents, FinePaidCents: in.FinePaidCents, LateInterestPaidCents: in.LateInterestPaidCents}
	if in.ChargedThrough != "" {
		if s.ChargedThrough, err = calendar.Parse(in.ChargedThrough); err != nil {
			return State{}, fmt.Errorf("instalment %d: chargedThrough: %w", in.Seq, err)
		}
	}
	return s, nil
}

// Contract is a contract header with its instalments, by sequence.
type Contract struct {
	Header       Header
	Installments []Installment
	Pages        int // Query pages it took (1 unless the contract's history is over 1 MB)
}

// The item types a contract read keeps (as the debtor package writes them).
const (
	headerType      = "CONTRACT"
	installmentType = "INSTALLMENT"
)

// Installment returns the instalment seq, or nil.
func (c *Contract) Installment(seq int) *Installment {
	i := sort.Search(len(c.Installments), func(i int) bool { return c.Installments[i].Seq >= seq })
	if i < len(c.Installments) && c.Installments[i].Seq == seq {
		return &c.Installments[i]
	}
	return nil
}

// LoadContract reads a contract — header and instalments — with one
// strongly consistent Query on the key range from the header to the last
// instalment (keys.ContractRange). The items that sort in between
// (agreements, charges, events) are dropped by a filter on their type:
// they still cost read units, which grow with the contract's history, but
// are not sent, decoded or unmarshalled (ADR 0010). Pages are followed only
// if the range outgrows 1 MB. Nil when the contract has no header.
func LoadContract(ctx context.Context, db *kit.Tenant, tenantID, dk, contractID string) (*Contract, error) {
	lo, hi := keys.ContractRange(contractID)
	headerSK := keys.Contract(contractID)
	instPrefix := keys.InstallmentsPrefix(contractID)
	c := &Contract{}
	found := false
	cursor := ""
	only := expression.Name("type").In(expression.Value(headerType), expression.Value(installmentType))
	for {
		page, err := db.QueryPage(ctx, kit.Query{Partition: keys.Debtor(tenantID, dk), Sort: kit.Between(lo, hi), Consistent: true, Filter: &only}, cursor)
		if err != nil {
			return nil, fmt.Errorf("read contract: %w", err)
		}
		c.Pages++
		for _, it := range page.Items {
			sk := stringAttr(it, "SK")
			switch {
			case sk == headerSK:
				if err := attributevalue.UnmarshalMap(it, &c.Header); err != nil {
					return nil, fmt.Errorf("decode contract header: %w", err)
				}
				found = true
			case strings.HasPrefix(sk, instPrefix):
				var in Installment
				if err := attributevalue.UnmarshalMap(it, &in); err != nil {
					return nil, fmt.Errorf("decode instalment: %w", err)
				}
				c.Installments = append(c.Installments, in)
			}
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if !found {
		return nil, nil
	}
	sort.Slice(c.Installments, func(i, j int) bool { return c.Installments[i].Seq < c.Installments[j].Seq })
	return c, nil
}

func stringAttr(it kit.Item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// PolicyVersion reads the version number out of a policy name frozen on
// a contract header ("CP#v0003" → 3), through the key registry.
func PolicyVersion(name string) (int, error) {
	p, err := keys.Parse(keys.SK, name)
	if err != nil || len(p.Parts) != 1 {
		return 0, fmt.Errorf("policy name %q: %w", name, err)
	}
	v, err := strconv.Atoi(strings.TrimPrefix(p.Parts[0].Fields["version"], "v"))
	if err != nil {
		return 0, fmt.Errorf("policy name %q: %w", name, err)
	}
	return v, nil
}
