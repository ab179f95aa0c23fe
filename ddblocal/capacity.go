package ddblocal

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"sync"

	"lastro/ddblocal/internal/av"
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

// usage accumulates the capacity one request consumes on one table.
type usage struct {
	table   string
	read    bool
	tx      bool // transactional: report Read/WriteCapacityUnits as well
	base    float64
	indexes map[string]float64
	local   map[string]bool
}

func newUsage(table string, read bool) *usage {
	return &usage{table: table, read: read}
}

// newTxUsage starts the usage of one table inside a transaction.
func newTxUsage(table string, read bool) *usage {
	return &usage{table: table, read: read, tx: true}
}

func (u *usage) total() float64 {
	t := u.base
	for _, units := range u.indexes {
		t += units
	}
	return t
}

func (u *usage) addTable(units float64) { u.base += units }

func (u *usage) addIndex(name string, local bool, units float64) {
	if u.indexes == nil {
		u.indexes = map[string]float64{}
		u.local = map[string]bool{}
	}
	u.indexes[name] += units
	u.local[name] = local
}

// readUnits is the cost of reading size bytes in one request.
func readUnits(size int, consistent bool) float64 {
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

// addWrite accounts one item write (old → new; either may be nil) with
// its index writes. factor is 2 inside transactions and applies to the
// table arm only: DynamoDB reports index arms of a transactional write
// at their plain cost.
func (u *usage) addWrite(d *tableDef, old, new av.Item, factor float64) {
	u.addTable(writeUnits(max(sizeOf(old), sizeOf(new))) * factor)
	for _, ix := range d.Indexes {
		if units := indexWriteUnits(d, ix, old, new); units > 0 {
			u.addIndex(ix.Name, ix.Local, units)
		}
	}
}

// indexWriteUnits is what one write costs one index: see the rules at the
// top of this file.
func indexWriteUnits(d *tableDef, ix *indexDef, old, new av.Item) float64 {
	inOld, inNew := ix.inIndex(old), ix.inIndex(new)
	switch {
	case inOld && inNew:
		op, np := d.project(ix, old), d.project(ix, new)
		if !bytes.Equal(d.entryKey(ix, old), d.entryKey(ix, new)) {
			return writeUnits(av.ItemSize(op)) + writeUnits(av.ItemSize(np))
		}
		if sameItem(op, np) {
			return 0
		}
		return writeUnits(max(av.ItemSize(op), av.ItemSize(np)))
	case inOld:
		return writeUnits(av.ItemSize(d.project(ix, old)))
	case inNew:
		return writeUnits(av.ItemSize(d.project(ix, new)))
	}
	return 0
}

// addFailedWrite accounts a write whose condition failed: it costs the
// units of the item it found (one when there was none) and touches no
// index.
func (u *usage) addFailedWrite(old av.Item) {
	u.addTable(writeUnits(sizeOf(old)))
}

// addCheck accounts a ConditionCheck of a transaction: DynamoDB charges it
// as a transactional write of the item it read.
func (u *usage) addCheck(old av.Item) {
	u.addTable(writeUnits(sizeOf(old)) * 2)
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

// response renders the ConsumedCapacity member for the requested mode
// (nil for NONE). INDEXES always reports the table arm, even when only an
// index was read.
func (u *usage) response(mode string) *consumedCapacity {
	if u == nil || (mode != "TOTAL" && mode != "INDEXES") {
		return nil
	}
	total := u.total()
	cc := &consumedCapacity{TableName: u.table, CapacityUnits: total}
	if u.tx {
		if u.read {
			cc.ReadCapacityUnits = ptr(total)
		} else {
			cc.WriteCapacityUnits = ptr(total)
		}
	}
	if mode != "INDEXES" {
		return cc
	}
	cc.Table = u.capacity(u.base)
	for name, units := range u.indexes {
		m := &cc.GlobalSecondaryIndexes
		if u.local[name] {
			m = &cc.LocalSecondaryIndexes
		}
		if *m == nil {
			*m = map[string]*capacity{}
		}
		(*m)[name] = u.capacity(units)
	}
	return cc
}

func (u *usage) capacity(units float64) *capacity {
	c := &capacity{CapacityUnits: units}
	if u.tx {
		if u.read {
			c.ReadCapacityUnits = ptr(units)
		} else {
			c.WriteCapacityUnits = ptr(units)
		}
	}
	return c
}

// report records the usage in the store's meter and renders it for mode.
func (s *Store) report(u *usage, mode string) *consumedCapacity {
	s.meter.add(u)
	return u.response(mode)
}

// failedWrite charges a single-item write that failed its condition (the
// units are consumed although DynamoDB returns no ConsumedCapacity with
// the error) and returns err unchanged.
func (s *Store) failedWrite(err error, d *tableDef, old av.Item) error {
	var ae *apiError
	if d != nil && errors.As(err, &ae) && ae.Type == "ConditionalCheckFailedException" {
		u := newUsage(d.Name, false)
		u.addFailedWrite(old)
		s.meter.add(u)
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

func (m *meter) add(u *usage) {
	if u == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tables == nil {
		m.tables = map[string]*Consumed{}
	}
	c := m.tables[u.table]
	if c == nil {
		c = &Consumed{}
		m.tables[u.table] = c
	}
	bump := func(c *Consumed, units float64) {
		if u.read {
			c.ReadCapacityUnits += units
		} else {
			c.WriteCapacityUnits += units
		}
	}
	bump(c, u.base)
	for name, units := range u.indexes {
		if u.local[name] {
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
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	c := s.meter.tables[table]
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
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.tables = nil
}

// consumedTables lists the metered tables, sorted.
func (s *Store) consumedTables() []string {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	names := make([]string, 0, len(s.meter.tables))
	for n := range s.meter.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
