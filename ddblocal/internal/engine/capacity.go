package engine

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"sync"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/wire"
)

// Capacity accounting with DynamoDB's published rules, refined by what
// DynamoDB actually reports:
//
//   - reads cost one unit per 4 KB, rounded up per item for GetItem,
//     BatchGetItem and TransactGetItems, and once over the summed size of
//     every item a Query or Scan read (before its filter and projection);
//     eventually consistent reads cost half, transactional reads double;
//   - writes cost one unit per 1 KB of the larger of the old and the new
//     item (a delete is sized on the item it removed, a write of a missing
//     item costs one unit); a failed conditional write still costs the
//     units of the item it found;
//   - every secondary index a write changes is charged on the index entry
//     (the projected item): one write when an entry appears, disappears or
//     changes in place (the larger of its two images), two when its key
//     moves (a delete plus a put, each rounded on its own), nothing when
//     the entry is untouched;
//   - inside TransactWriteItems the table arm doubles but the index arms
//     do not, and a ConditionCheck is charged as a write of the item it
//     read.
//
// The shape of the reported ConsumedCapacity follows DynamoDB too: single
// item and batch operations report CapacityUnits alone, transactions also
// report ReadCapacityUnits or WriteCapacityUnits at every level.

const (
	readUnitBytes  = 4096
	writeUnitBytes = 1024
)

// Usage accumulates the capacity one request consumes on one table.
type Usage struct {
	Table   string
	Read    bool
	Tx      bool // transactional: report Read/WriteCapacityUnits as well
	Base    float64
	Indexes map[string]float64
	Local   map[string]bool
}

func NewUsage(table string, read bool) *Usage {
	return &Usage{Table: table, Read: read}
}

// NewTxUsage starts the usage of one table inside a transaction.
func NewTxUsage(table string, read bool) *Usage {
	return &Usage{Table: table, Read: read, Tx: true}
}

func (u *Usage) total() float64 {
	t := u.Base
	for _, units := range u.Indexes {
		t += units
	}
	return t
}

func (u *Usage) AddTable(units float64) { u.Base += units }

func (u *Usage) AddIndex(name string, local bool, units float64) {
	if u.Indexes == nil {
		u.Indexes = map[string]float64{}
		u.Local = map[string]bool{}
	}
	u.Indexes[name] += units
	u.Local[name] = local
}

// ReadUnits is the cost of reading size bytes in one request.
func ReadUnits(size int, consistent bool) float64 {
	units := max(math.Ceil(float64(size)/readUnitBytes), 1)
	if !consistent {
		units /= 2
	}
	return units
}

// writeUnits is the cost of one write of an item of the given size.
func writeUnits(size int) float64 {
	return max(math.Ceil(float64(size)/writeUnitBytes), 1)
}

// AddWrite accounts one item write (old → new; either may be nil) with
// its index writes. factor is 2 inside transactions and applies to the
// table arm only: DynamoDB reports index arms of a transactional write
// at their plain cost.
func (u *Usage) AddWrite(d *TableDef, old, new av.Item, factor float64) {
	u.AddTable(writeUnits(max(SizeOf(old), SizeOf(new))) * factor)
	for _, ix := range d.Indexes {
		if units := indexWriteUnits(d, ix, old, new); units > 0 {
			u.AddIndex(ix.Name, ix.Local, units)
		}
	}
}

// indexWriteUnits is what one write costs one index: see the rules at the
// top of this file.
func indexWriteUnits(d *TableDef, ix *IndexDef, old, new av.Item) float64 {
	inOld, inNew := ix.InIndex(old), ix.InIndex(new)
	switch {
	case inOld && inNew:
		op, np := d.Project(ix, old), d.Project(ix, new)
		if !bytes.Equal(d.EntryKey(ix, old), d.EntryKey(ix, new)) {
			return writeUnits(av.ItemSize(op)) + writeUnits(av.ItemSize(np))
		}
		if sameItem(op, np) {
			return 0
		}
		return writeUnits(max(av.ItemSize(op), av.ItemSize(np)))
	case inOld:
		return writeUnits(av.ItemSize(d.Project(ix, old)))
	case inNew:
		return writeUnits(av.ItemSize(d.Project(ix, new)))
	}
	return 0
}

// addFailedWrite accounts a write whose condition failed: it costs the
// units of the item it found (one when there was none) and touches no
// index.
func (u *Usage) addFailedWrite(old av.Item) {
	u.AddTable(writeUnits(SizeOf(old)))
}

// AddCheck accounts a ConditionCheck of a transaction: DynamoDB charges it
// as a transactional write of the item it read.
func (u *Usage) AddCheck(old av.Item) {
	u.AddTable(writeUnits(SizeOf(old)) * 2)
}

func sameItem(a, b av.Item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !av.Equal(v, w) {
			return false
		}
	}
	return true
}

// Response renders the ConsumedCapacity member for the requested mode
// (nil for NONE). INDEXES always reports the table arm, even when only an
// index was read.
func (u *Usage) Response(mode string) *wire.ConsumedCapacity {
	if u == nil || (mode != "TOTAL" && mode != "INDEXES") {
		return nil
	}
	total := u.total()
	cc := &wire.ConsumedCapacity{TableName: u.Table, CapacityUnits: total}
	if u.Tx {
		if u.Read {
			cc.ReadCapacityUnits = ptr(total)
		} else {
			cc.WriteCapacityUnits = ptr(total)
		}
	}
	if mode != "INDEXES" {
		return cc
	}
	cc.Table = u.capacity(u.Base)
	for name, units := range u.Indexes {
		m := &cc.GlobalSecondaryIndexes
		if u.Local[name] {
			m = &cc.LocalSecondaryIndexes
		}
		if *m == nil {
			*m = map[string]*wire.Capacity{}
		}
		(*m)[name] = u.capacity(units)
	}
	return cc
}

func (u *Usage) capacity(units float64) *wire.Capacity {
	c := &wire.Capacity{CapacityUnits: units}
	if u.Tx {
		if u.Read {
			c.ReadCapacityUnits = ptr(units)
		} else {
			c.WriteCapacityUnits = ptr(units)
		}
	}
	return c
}

// Report records the usage in the store's meter and renders it for mode.
func (s *Store) Report(u *Usage, mode string) *wire.ConsumedCapacity {
	s.Meter.Add(u)
	return u.Response(mode)
}

// FailedWrite charges a single-item write that failed its condition (the
// units are consumed although DynamoDB returns no ConsumedCapacity with
// the error) and returns err unchanged.
func (s *Store) FailedWrite(err error, d *TableDef, old av.Item) error {
	var ae *wire.APIError
	if d != nil && errors.As(err, &ae) && ae.Type == "ConditionalCheckFailedException" {
		u := NewUsage(d.Name, false)
		u.addFailedWrite(old)
		s.Meter.Add(u)
	}
	return err
}

func ptr[T any](v T) *T { return &v }

// Consumed is the capacity a table has consumed since the store opened,
// as CloudWatch's ConsumedReadCapacityUnits and ConsumedWriteCapacityUnits
// report it on AWS: local secondary indexes consume the table's capacity,
// global secondary indexes their own. Unlike ReturnConsumedCapacity it
// includes what failed conditional writes consumed.
type Consumed struct {
	ReadCapacityUnits      float64             `json:"ReadCapacityUnits"`
	WriteCapacityUnits     float64             `json:"WriteCapacityUnits"`
	GlobalSecondaryIndexes map[string]Consumed `json:"GlobalSecondaryIndexes,omitempty"`
}

// meter sums consumed capacity per table.
type meter struct {
	mu     sync.Mutex
	tables map[string]*Consumed
}

func (m *meter) Add(u *Usage) {
	if u == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tables == nil {
		m.tables = map[string]*Consumed{}
	}
	c := m.tables[u.Table]
	if c == nil {
		c = &Consumed{}
		m.tables[u.Table] = c
	}
	bump := func(c *Consumed, units float64) {
		if u.Read {
			c.ReadCapacityUnits += units
		} else {
			c.WriteCapacityUnits += units
		}
	}
	bump(c, u.Base)
	for name, units := range u.Indexes {
		if u.Local[name] {
			bump(c, units)
			continue
		}
		if c.GlobalSecondaryIndexes == nil {
			c.GlobalSecondaryIndexes = map[string]Consumed{}
		}
		g := c.GlobalSecondaryIndexes[name]
		bump(&g, units)
		c.GlobalSecondaryIndexes[name] = g
	}
}

// ConsumedCapacity returns what the named table has consumed since the
// store opened (zero for a table never used).
func (s *Store) ConsumedCapacity(table string) Consumed {
	s.Meter.mu.Lock()
	defer s.Meter.mu.Unlock()
	c := s.Meter.tables[table]
	if c == nil {
		return Consumed{}
	}
	out := *c
	if c.GlobalSecondaryIndexes != nil {
		out.GlobalSecondaryIndexes = make(map[string]Consumed, len(c.GlobalSecondaryIndexes))
		for k, v := range c.GlobalSecondaryIndexes {
			out.GlobalSecondaryIndexes[k] = v
		}
	}
	return out
}

// ResetConsumedCapacity zeroes the meter of every table.
func (s *Store) ResetConsumedCapacity() {
	s.Meter.mu.Lock()
	defer s.Meter.mu.Unlock()
	s.Meter.tables = nil
}

// consumedTables lists the metered tables, sorted.
func (s *Store) consumedTables() []string {
	s.Meter.mu.Lock()
	defer s.Meter.mu.Unlock()
	names := make([]string, 0, len(s.Meter.tables))
	for n := range s.Meter.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Merge adds the capacity a read reported (in INDEXES form) to u.
func (u *Usage) Merge(cc *wire.ConsumedCapacity) {
	if cc == nil {
		return
	}
	if cc.Table != nil {
		u.AddTable(cc.Table.CapacityUnits)
	}
	for name, c := range cc.GlobalSecondaryIndexes {
		u.AddIndex(name, false, c.CapacityUnits)
	}
	for name, c := range cc.LocalSecondaryIndexes {
		u.AddIndex(name, true, c.CapacityUnits)
	}
}

func SizeOf(it av.Item) int {
	if it == nil {
		return 0
	}
	return av.ItemSize(it)
}
