package contactlimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/tenant"
)

// OutcomeJoined is the outcome of a claim that joined the debtor's
// contact of the day on the same channel: nothing more is sent or
// spent; JoinedTo names the attempt that is (ADR 0066).
const OutcomeJoined = "JOINED"

// channelAttr is the LIMIT counter's attribute holding the attempt of the
// day's contact on ch.
func channelAttr(ch Channel) string { return "ch" + string(ch) }

// spendOrJoin is spend for a claim that joins (Claim.Join): one
// conditional update both counts the contact and marks the day's channel
// with the attempt, so of the debtor's contracts claiming the same channel
// the same day exactly one spends a contact — the others, refused by the
// mark, read it (strongly consistent) and join that attempt. A refusal
// without a mark is the limit, as in spend.
func (g *Gateway) spendOrJoin(ctx context.Context, t *tenant.Tenant, dk string, date calendar.Date, loc *time.Location, max int, ch Channel, attemptID string) (n int, joined string, ok bool, err error) {
	ctx, _ = kit.Operation(ctx, "contact.claim")
	key := kit.Key{PK: keys.Debtor(t.ID, dk), SK: keys.Limit(date.String())}
	upd, cond := limitUpdate(date, loc, max, ch, attemptID)
	out, err := g.db(t).Update(ctx, key, upd, &cond, types.ReturnValueUpdatedNew)
	if errors.Is(err, kit.ErrConditionFailed) {
		joined, err := g.marked(ctx, t, key, ch)
		if err != nil {
			return 0, "", false, fmt.Errorf("claim contact: %w", err)
		}
		return 0, joined, joined != "", nil // no mark: the day's contacts are used up
	}
	if err != nil {
		return 0, "", false, fmt.Errorf("claim contact: %w", err)
	}
	var got struct {
		Attempts int `dynamodbav:"attempts"`
	}
	if err := attributevalue.UnmarshalMap(out, &got); err != nil {
		return 0, "", false, fmt.Errorf("decode counter: %w", err)
	}
	return got.Attempts, "", true, nil
}

// marked reads the LIMIT counter at key, strongly consistent, for the
// attempt that marked channel ch today ("" when none did): a claim whose
// marked update failed joins that attempt, or, without a mark, was
// refused by the limit.
func (g *Gateway) marked(ctx context.Context, t *tenant.Tenant, key kit.Key, ch Channel) (string, error) {
	it, err := g.db(t).Get(ctx, key, true)
	if err != nil {
		return "", err
	}
	if v, ok := it[channelAttr(ch)].(*types.AttributeValueMemberS); ok && v.Value != "" {
		return v.Value, nil
	}
	return "", nil
}
