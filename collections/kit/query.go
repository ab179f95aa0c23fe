package kit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/table"
)

// Query is a keyed query: one partition of the table or of an index,
// optionally narrowed on the sort key.
type Query struct {
	Index      string // "" for the table, else table.Agenda, table.Portfolio, ...
	Partition  string // value of the partition key
	Sort       *Sort  // optional sort key condition (string sort keys)
	Descending bool   // largest sort key first
	Limit      int32  // page size; 0 lets DynamoDB fill 1 MB
	Consistent bool   // strongly consistent (table only)
	// Filter, when set, drops items after they are read: they still cost
	// read units, but are not sent. For skipping a few kinds of items
	// inside a key range, never instead of a key condition.
	Filter *expression.ConditionBuilder
	// Tag is mixed into the cursor's binding: a query with a Filter names
	// the filter's parameters here, so a cursor issued for one filter is
	// refused for another (the filter itself is not comparable).
	Tag string
}

// Sort is a condition on a string sort key.
type Sort struct {
	Op     string // "begins_with", "=", "<", "<=", ">", ">=", "between"
	Values []string
}

// BeginsWith selects sort keys starting with prefix.
func BeginsWith(prefix string) *Sort { return &Sort{Op: "begins_with", Values: []string{prefix}} }

// Between selects sort keys in [lo, hi].
func Between(lo, hi string) *Sort { return &Sort{Op: "between", Values: []string{lo, hi}} }

// Page is one page of a query; Next is empty on the last page.
type Page struct {
	Items []Item
	Next  string
}

// ErrBadCursor: a cursor was tampered with, expired or belongs to another
// query or tenant.
var ErrBadCursor = errs.E(errs.Invalid, "invalid_cursor", "invalid cursor")

func (q Query) keyCondition() (expression.KeyConditionBuilder, error) {
	pa, err := partitionAttr(q.Index)
	if err != nil {
		return expression.KeyConditionBuilder{}, err
	}
	kc := expression.Key(pa).Equal(expression.Value(q.Partition))
	if q.Sort == nil {
		return kc, nil
	}
	sa := table.SortAttr[q.Index]
	if sa == "" {
		return kc, fmt.Errorf("kit: index %q has no sort key", q.Index)
	}
	k := expression.Key(sa)
	v := func(i int) expression.ValueBuilder { return expression.Value(q.Sort.Values[i]) }
	want := 1
	var sc expression.KeyConditionBuilder
	switch q.Sort.Op {
	case "begins_with":
		sc = k.BeginsWith(q.Sort.Values[0])
	case "=":
		sc = k.Equal(v(0))
	case "<":
		sc = k.LessThan(v(0))
	case "<=":
		sc = k.LessThanEqual(v(0))
	case ">":
		sc = k.GreaterThan(v(0))
	case ">=":
		sc = k.GreaterThanEqual(v(0))
	case "between":
		want = 2
		if len(q.Sort.Values) == 2 {
			sc = k.Between(v(0), v(1))
		}
	default:
		return kc, fmt.Errorf("kit: unknown sort operator %q", q.Sort.Op)
	}
	if len(q.Sort.Values) != want {
		return kc, fmt.Errorf("kit: sort operator %q wants %d values", q.Sort.Op, want)
	}
	return kc.And(sc), nil
}

// binding identifies a query for cursor signing: tenant, index, partition,
// sort condition and direction.
func (t *Tenant) binding(q Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%t", t.id, q.Index, q.Partition, q.Descending)
	if q.Tag != "" {
		// Only when set, so the cursors of untagged queries stay valid.
		fmt.Fprintf(&b, "\x00tag\x00%s", q.Tag)
	}
	if q.Sort != nil {
		fmt.Fprintf(&b, "\x00%s", q.Sort.Op)
		for _, v := range q.Sort.Values {
			fmt.Fprintf(&b, "\x00%s", v)
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// cursorPayload is what a cursor carries under its signature: the
// query's binding, the issue time (unix seconds, so the cursor expires)
// and the last evaluated key.
type cursorPayload struct {
	Q string                       `json:"q"`
	I int64                        `json:"i"`
	K map[string]map[string]string `json:"k"`
}

// cursorSkew is how far in the future an issue time may be (another
// instance's clock a little ahead) before the cursor is refused.
const cursorSkew = time.Minute

func (t *Tenant) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, t.cursorKey)
	m.Write(payload)
	return m.Sum(nil)
}

func (t *Tenant) encodeCursor(q Query, lek Item) (string, error) {
	p := cursorPayload{Q: t.binding(q), I: t.k.clock.Now().Unix(), K: map[string]map[string]string{}}
	for name, v := range lek {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			p.K[name] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			p.K[name] = map[string]string{"N": v.Value}
		default:
			return "", fmt.Errorf("kit: key attribute %s of unsupported type %T", name, v)
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(t.sign(raw)), nil
}

func (t *Tenant) decodeCursor(q Query, cursor string) (Item, error) {
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(cursor, ".")
	if !ok {
		return nil, ErrBadCursor
	}
	raw, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, t.sign(raw)) {
		return nil, ErrBadCursor
	}
	var p cursorPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.Q != t.binding(q) || len(p.K) == 0 {
		return nil, ErrBadCursor
	}
	// A cursor from before issue times were signed has I == 0: expired.
	age := t.k.clock.Now().Sub(time.Unix(p.I, 0))
	if age > t.k.cursorTTL || age < -cursorSkew {
		return nil, ErrBadCursor
	}
	lek := Item{}
	for name, v := range p.K {
		switch {
		case v["S"] != "":
			lek[name] = &types.AttributeValueMemberS{Value: v["S"]}
		case v["N"] != "":
			lek[name] = &types.AttributeValueMemberN{Value: v["N"]}
		default:
			return nil, ErrBadCursor
		}
	}
	return lek, nil
}

// QueryPage reads one page of a keyed query, starting after cursor (""
// for the first page). The cursor it returns is signed and bound to this
// tenant and this query: it is rejected on any other, and once older
// than the kit's cursor lifetime (DefaultCursorTTL).
func (t *Tenant) QueryPage(ctx context.Context, q Query, cursor string) (Page, error) {
	if err := t.guard("Query", q.Partition); err != nil {
		return Page{}, err
	}
	kc, err := q.keyCondition()
	if err != nil {
		return Page{}, err
	}
	b := expression.NewBuilder().WithKeyCondition(kc)
	if q.Filter != nil {
		b = b.WithFilter(*q.Filter)
	}
	e, err := b.Build()
	if err != nil {
		return Page{}, fmt.Errorf("kit: query expression: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &t.k.table, KeyConditionExpression: e.KeyCondition(), FilterExpression: e.Filter(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		ScanIndexForward: aws.Bool(!q.Descending), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
	} else {
		in.ConsistentRead = aws.Bool(q.Consistent)
	}
	if q.Limit > 0 {
		in.Limit = aws.Int32(q.Limit)
	}
	if cursor != "" {
		if in.ExclusiveStartKey, err = t.decodeCursor(q, cursor); err != nil {
			return Page{}, err
		}
	}
	out, err := t.k.api.Query(ctx, in)
	if err != nil {
		return Page{}, classify("Query", err)
	}
	t.k.record(ctx, "Query", out.ConsumedCapacity)
	page := Page{Items: out.Items}
	if len(out.LastEvaluatedKey) > 0 {
		if page.Next, err = t.encodeCursor(q, out.LastEvaluatedKey); err != nil {
			return Page{}, err
		}
	}
	return page, nil
}

// Count is the number of items q's key condition (and filter) selects,
// with Select COUNT: the items are read and paid for, never sent. It
// pages through the whole selection, so it suits small partitions (a
// day's agenda shard), never a whole table.
func (t *Tenant) Count(ctx context.Context, q Query) (int64, error) {
	if err := t.guard("Query", q.Partition); err != nil {
		return 0, err
	}
	kc, err := q.keyCondition()
	if err != nil {
		return 0, err
	}
	b := expression.NewBuilder().WithKeyCondition(kc)
	if q.Filter != nil {
		b = b.WithFilter(*q.Filter)
	}
	e, err := b.Build()
	if err != nil {
		return 0, fmt.Errorf("kit: query expression: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &t.k.table, KeyConditionExpression: e.KeyCondition(), FilterExpression: e.Filter(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		Select: types.SelectCount, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
	} else {
		in.ConsistentRead = aws.Bool(q.Consistent)
	}
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		out, err := t.k.api.Query(ctx, in)
		if err != nil {
			return n, classify("Query", err)
		}
		t.k.record(ctx, "Query", out.ConsumedCapacity)
		n += int64(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
