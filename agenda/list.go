package agenda

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/tenant"
)

// ListQuery selects agenda entries: one date, one shard (-1: every shard,
// in order) and optionally one action.
type ListQuery struct {
	Date   calendar.Date
	Shard  int
	Action string // "" : every action
	Limit  int32
}

// Entry is one contract on the agenda, as the agenda index projects it.
// Days past due is not projected (it is derived from the contract's oldest
// overdue due date, which the index does not carry), so it is not here.
type Entry struct {
	ContractID       string `json:"contractId" dynamodbav:"contractId"`
	DebtorKey        string `json:"debtorKey" dynamodbav:"debtorKey"`
	NextAction       string `json:"nextAction" dynamodbav:"nextAction"`
	NextActionDate   string `json:"nextActionDate" dynamodbav:"nextActionDate"`
	Bucket           string `json:"bucket,omitempty" dynamodbav:"bucket"`
	OutstandingCents int64  `json:"outstandingCents" dynamodbav:"outstandingCents"`
	Shard            int    `json:"shard" dynamodbav:"-"`
}

// List is a page of agenda entries.
type List struct {
	Items      []Entry `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// listCursor is where a page stopped: the shard and the kit's cursor in
// it ("" : the shard's start). The kit's cursor is signed and bound to the
// shard's partition already; the whole is signed again, bound to the
// list's date, action and shard selection, so the shard cannot be swapped.
type listCursor struct {
	Shard int    `json:"s"`
	Kit   string `json:"c,omitempty"`
}

func listBinding(q ListQuery) string {
	return fmt.Sprintf("agenda-list\x00%s\x00%d\x00%s", q.Date, q.Shard, q.Action)
}

func signList(t *tenant.Tenant, q ListQuery, raw []byte) []byte {
	m := hmac.New(sha256.New, t.CursorKey())
	m.Write([]byte(listBinding(q)))
	m.Write([]byte{0})
	m.Write(raw)
	return m.Sum(nil)
}

func encodeListCursor(t *tenant.Tenant, q ListQuery, c listCursor) (string, error) {
	raw, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(signList(t, q, raw)), nil
}

func decodeListCursor(t *tenant.Tenant, q ListQuery, s string) (listCursor, error) {
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(s, ".")
	if !ok {
		return listCursor{}, kit.ErrBadCursor
	}
	raw, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, signList(t, q, raw)) {
		return listCursor{}, kit.ErrBadCursor
	}
	var c listCursor
	if err := json.Unmarshal(raw, &c); err != nil || c.Shard < 0 || c.Shard >= t.Shards || (q.Shard >= 0 && c.Shard != q.Shard) {
		return listCursor{}, kit.ErrBadCursor
	}
	return c, nil
}

// List answers AP03/AP04/AP10: the agenda entries of a date, each shard's
// partition read with one GSI1 Query (narrowed with begins_with
// "<action>#" when an action is given). Without a shard the shards are
// read in order until the page is full, so a page may take one Query per
// shard; the cursor says which shard to continue in. The entries are the
// index's projection, eventually consistent: a contract paid a moment ago
// may still be listed (the run skips it).
func (r *Runner) List(ctx context.Context, t *tenant.Tenant, q ListQuery, cursor string) (*List, error) {
	ctx = kit.Within(ctx, "agenda.list")
	if q.Limit <= 0 {
		q.Limit = pageSize
	}
	pos := listCursor{Shard: max(q.Shard, 0)}
	if cursor != "" {
		var err error
		if pos, err = decodeListCursor(t, q, cursor); err != nil {
			return nil, err
		}
	}
	last := t.Shards - 1
	if q.Shard >= 0 {
		last = q.Shard
	}
	out := &List{Items: []Entry{}}
	db := r.db(t)
	for shard, kc := pos.Shard, pos.Kit; shard <= last; shard, kc = shard+1, "" {
		kq := kit.Query{Index: table.Agenda, Partition: keys.Agenda(t.ID, q.Date.String(), shard), Limit: q.Limit - int32(len(out.Items))}
		if q.Action != "" {
			kq.Sort = kit.BeginsWith(keys.AgendaEntry(q.Action, ""))
		}
		page, err := db.QueryPage(ctx, kq, kc)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			var e Entry
			if err := attributevalue.UnmarshalMap(it, &e); err != nil {
				return nil, fmt.Errorf("agenda: decode entry: %w", err)
			}
			e.Shard = shard
			out.Items = append(out.Items, e)
		}
		next := listCursor{Shard: shard, Kit: page.Next}
		if page.Next == "" {
			next = listCursor{Shard: shard + 1}
		}
		if int32(len(out.Items)) >= q.Limit || page.Next != "" {
			if next.Shard > last {
				break
			}
			c, err := encodeListCursor(t, q, next)
			if err != nil {
				return nil, err
			}
			out.NextCursor = &c
			break
		}
	}
	return out, nil
}
