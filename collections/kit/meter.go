package kit

import (
	"context"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Usage is the capacity one business operation consumed, as DynamoDB
// reported it (ReturnConsumedCapacity INDEXES), and the calls it made.
type Usage struct {
	mu      sync.Mutex
	name    string
	read    float64
	write   float64
	indexes map[string]float64
	calls   map[string]int
}

// Name is the business operation's name.
func (u *Usage) Name() string { return u.name }

// RRU is the read request units consumed (table and indexes).
func (u *Usage) RRU() float64 { u.mu.Lock(); defer u.mu.Unlock(); return u.read }

// WRU is the write request units consumed (table and indexes).
func (u *Usage) WRU() float64 { u.mu.Lock(); defer u.mu.Unlock(); return u.write }

// Index returns the units consumed on one index.
func (u *Usage) Index(name string) float64 { u.mu.Lock(); defer u.mu.Unlock(); return u.indexes[name] }

// Calls returns how many calls of a DynamoDB operation ("Query",
// "GetItem", ...) were made; "" counts all.
func (u *Usage) Calls(op string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if op != "" {
		return u.calls[op]
	}
	n := 0
	for _, c := range u.calls {
		n += c
	}
	return n
}

func (u *Usage) add(op string, write bool, cc []types.ConsumedCapacity) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.calls == nil {
		u.calls = map[string]int{}
		u.indexes = map[string]float64{}
	}
	u.calls[op]++
	for _, c := range cc {
		units := 0.0
		if c.CapacityUnits != nil {
			units = *c.CapacityUnits
		}
		if write {
			u.write += units
		} else {
			u.read += units
		}
		for name, ic := range c.GlobalSecondaryIndexes {
			if ic.CapacityUnits != nil {
				u.indexes[name] += *ic.CapacityUnits
			}
		}
		for name, ic := range c.LocalSecondaryIndexes {
			if ic.CapacityUnits != nil {
				u.indexes[name] += *ic.CapacityUnits
			}
		}
	}
}

type usageKey struct{}

// Operation starts measuring a business operation: every kit call made
// with the returned context adds what it consumed to the returned Usage
// (and to the kit's Meter under name).
func Operation(ctx context.Context, name string) (context.Context, *Usage) {
	u := &Usage{name: name}
	return context.WithValue(ctx, usageKey{}, u), u
}

// Current returns the business operation ctx is measuring, or nil. A
// service that names its operation only when none is running lets a caller
// (a test, a composite operation) measure the whole of it.
func Current(ctx context.Context) *Usage { return usageFrom(ctx) }

// Within starts operation name unless ctx already measures one.
func Within(ctx context.Context, name string) context.Context {
	if usageFrom(ctx) != nil {
		return ctx
	}
	ctx, _ = Operation(ctx, name)
	return ctx
}

func usageFrom(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}

func isWrite(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

// record adds one response's consumed capacity to the operation in ctx
// and to the meter.
func (k *Kit) record(ctx context.Context, op string, cc ...*types.ConsumedCapacity) {
	var list []types.ConsumedCapacity
	for _, c := range cc {
		if c != nil {
			list = append(list, *c)
		}
	}
	k.recordList(ctx, op, list)
}

func (k *Kit) recordList(ctx context.Context, op string, list []types.ConsumedCapacity) {
	name := "unnamed"
	if u := usageFrom(ctx); u != nil {
		u.add(op, isWrite(op), list)
		name = u.name
	}
	k.meter.add(name, op, isWrite(op), list)
}

// Meter totals capacity per business operation over the process's life.
type Meter struct {
	mu  sync.Mutex
	ops map[string]*Usage
}

// NewMeter returns an empty meter.
func NewMeter() *Meter { return &Meter{ops: map[string]*Usage{}} }

func (m *Meter) add(name, op string, write bool, cc []types.ConsumedCapacity) {
	m.mu.Lock()
	u := m.ops[name]
	if u == nil {
		u = &Usage{name: name}
		m.ops[name] = u
	}
	m.mu.Unlock()
	u.add(op, write, cc)
}

// Snapshot returns the totals per business operation, sorted by name.
func (m *Meter) Snapshot() []OpTotal {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]OpTotal, 0, len(m.ops))
	for name, u := range m.ops {
		out = append(out, OpTotal{Name: name, RRU: u.RRU(), WRU: u.WRU(), Calls: u.Calls("")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// OpTotal is one line of a meter snapshot.
type OpTotal struct {
	Name     string
	RRU, WRU float64
	Calls    int
}
