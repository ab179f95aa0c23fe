package contract

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// Contract is a contract header with its instalments, by sequence, as
// read by Load; Save writes back what changed, conditioned on what was read.
type Contract struct {
	Header       Header
	Installments []Installment
	Pages        int // Query pages it took (1 unless the contract's history is over 1 MB)

	readHeader int           // header version read (0: a new contract)
	read       []Installment // instalments as read, by sequence
}

// Installment returns the instalment seq, or nil.
func (c *Contract) Installment(seq int) *Installment {
	i := sort.Search(len(c.Installments), func(i int) bool { return c.Installments[i].Seq >= seq })
	if i < len(c.Installments) && c.Installments[i].Seq == seq {
		return &c.Installments[i]
	}
	return nil
}

// Load reads a contract — header and instalments — with one strongly
// consistent Query on the key range from the header to the last
// instalment (keys.ContractRange). The items that sort in between
// (agreements, charges, events) are dropped by a filter on their type:
// they still cost read units, which grow with the contract's history, but
// are not sent, decoded or unmarshalled (ADR 0010). Pages are followed only
// if the range outgrows 1 MB. Nil when the contract has no header.
func Load(ctx context.Context, db *kit.Tenant, tenantID, dk, contractID string) (*Contract, error) {
	lo, hi := keys.ContractRange(contractID)
	headerSK := keys.Contract(contractID)
	instPrefix := keys.InstallmentsPrefix(contractID)
	c := &Contract{}
	found := false
	cursor := ""
	only := expression.Name("type").In(expression.Value(TypeHeader), expression.Value(TypeInstallment))
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
	// The header's count is the commit point of instalments added after
	// signing: the chunks of a large agreement write its instalments
	// before the header that counts them (ADR 0027), so one past the
	// count belongs to an agreement that never committed.
	if n := c.Header.InstallmentCount; n > 0 {
		for len(c.Installments) > 0 && c.Installments[len(c.Installments)-1].Seq > n {
			c.Installments = c.Installments[:len(c.Installments)-1]
		}
	}
	c.readHeader = c.Header.Version
	c.read = append([]Installment(nil), c.Installments...)
	return c, nil
}

func stringAttr(it kit.Item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// Save returns the transaction actions that write what changed since
// Load: each changed instalment and the header, always (its version is
// the contract's optimistic lock), each as the next version conditioned on
// the version read — a concurrent writer makes the transaction fail
// instead of being overwritten. The index attributes are derived here.
// The header's action comes last.
func (c *Contract) Save(now time.Time) ([]kit.Action, error) {
	var actions []kit.Action
	// Instalments added since Load (an agreement's) come first, version
	// 1, unconditioned: only the header's count, written in the same
	// commit under its version condition, makes them part of the
	// contract (Load ignores any past the count).
	for i := len(c.read); i < len(c.Installments); i++ {
		in := &c.Installments[i]
		in.Version = 1
		it, err := marshal(in)
		if err != nil {
			return nil, err
		}
		actions = append(actions, kit.PutAction(it, nil))
	}
	c.Header.InstallmentCount = max(c.Header.InstallmentCount, len(c.Installments))
	for i := range c.read {
		in := &c.Installments[i]
		if c.read[i] == *in {
			continue
		}
		in.Version = c.read[i].Version + 1
		it, err := marshal(in)
		if err != nil {
			return nil, err
		}
		cond := expression.Name("version").Equal(expression.Value(c.read[i].Version))
		actions = append(actions, kit.PutAction(it, &cond))
	}
	h := c.Header
	h.Version = c.readHeader + 1
	h.UpdatedAt = keys.Timestamp(now)
	h.index()
	it, err := marshal(h)
	if err != nil {
		return nil, err
	}
	cond := expression.Name("version").Equal(expression.Value(c.readHeader))
	return append(actions, kit.PutAction(it, &cond)), nil
}

// Added is how many instalments were appended since Load: the first
// Added actions of Save are their Puts.
func (c *Contract) Added() int { return len(c.Installments) - len(c.read) }

// Changed lists the sequences of the instalments changed since Load.
func (c *Contract) Changed() []int {
	var seqs []int
	for i := range c.Installments {
		if i < len(c.read) && c.read[i] != c.Installments[i] {
			seqs = append(seqs, c.Installments[i].Seq)
		}
	}
	return seqs
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

// MovedAttr is the PROFILE attribute a debtor-key rotation sets on the
// old PROFILE it leaves behind: the debtor's new key (debtor.AttrMovedTo,
// docs/adr/0075).
const MovedAttr = "movedTo"

// MovedTo reads, strongly consistent, whether the debtor dk moved to a new
// key in a debtor-key rotation and returns that key ("" when it did not).
// A writer that found no contract under a key it read from a lookup item
// asks it before it gives up: the lookup may have been read just before
// the rotation rewrote it.
func MovedTo(ctx context.Context, db *kit.Tenant, tenantID, dk string) (string, error) {
	it, err := db.Get(ctx, kit.Key{PK: keys.Debtor(tenantID, dk), SK: keys.ProfileSK}, true)
	if err != nil {
		return "", fmt.Errorf("read profile: %w", err)
	}
	if v, ok := it[MovedAttr].(*types.AttributeValueMemberS); ok {
		return v.Value, nil
	}
	return "", nil
}
