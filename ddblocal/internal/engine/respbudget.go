package engine

import (
	"encoding/json"
	"sync/atomic"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/wire"
)

// DefaultResponseBudget is the item bytes that BatchGetItem answers and
// Query and Scan pages may hold at once across the store unless Options.ResponseBudgetBytes says
// otherwise (issue 25, finding 4; docs/performance.md).
const DefaultResponseBudget = 128 << 20

// respBudget bounds the item bytes of responses being built or written,
// store-wide. A BatchGetItem of large items holds its items decoded and
// then encoded until the client has read them (16 MB each, several
// copies): 64 such requests at once took 4 GB. A request takes its items'
// bytes as it reads them and gives them back once its answer is written;
// past the budget the request stops early (UnprocessedKeys) or, having
// read nothing, is throttled, as DynamoDB answers a batch it cannot serve.
type respBudget struct {
	Limit int64
	Used  atomic.Int64
}

// take reserves n bytes, or reports that they do not fit.
func (b *respBudget) take(n int64) bool {
	for {
		u := b.Used.Load()
		if u+n > b.Limit {
			return false
		}
		if b.Used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Grant is what one request holds of the budget.
type Grant struct {
	B *respBudget
	n atomic.Int64
}

func (g *Grant) Take(n int64) bool {
	if !g.B.take(n) {
		return false
	}
	g.n.Add(n)
	return true
}

// Release gives back everything the request held; it may be called more
// than once.
func (g *Grant) Release() { g.B.Used.Add(-g.n.Swap(0)) }

// Releaser is a response holding budget: the front end releases it once
// the response is written (or failed).
type Releaser interface{ Release() }

// BatchGetOutput is BatchGetItem's answer. It encodes itself into one
// buffer sized from its items, instead of json.Marshal's growing buffer
// and the copy it makes of every item's own encoding.
type BatchGetOutput struct {
	Tables      []string // in request order
	Responses   map[string][]av.Item
	Unprocessed map[string]*wire.KeysAndAttributes
	Caps        []*wire.ConsumedCapacity
	Grant       *Grant
}

func (o *BatchGetOutput) Release() { o.Grant.Release() }

// MarshalJSON implements json.Marshaler.
func (o *BatchGetOutput) MarshalJSON() ([]byte, error) {
	rest, err := json.Marshal(o.Unprocessed)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, o.Grant.n.Load()+int64(len(rest))+4096)
	buf = append(buf, `{"Responses":{`...)
	for i, name := range o.Tables {
		if i > 0 {
			buf = append(buf, ',')
		}
		n, _ := json.Marshal(name)
		buf = append(append(buf, n...), ":["...)
		for j, it := range o.Responses[name] {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = av.AppendItemJSON(buf, it)
		}
		buf = append(buf, ']')
	}
	buf = append(append(buf, `},"UnprocessedKeys":`...), rest...)
	if o.Caps != nil {
		c, err := json.Marshal(o.Caps)
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, `,"ConsumedCapacity":`...), c...)
	}
	return append(buf, '}'), nil
}
