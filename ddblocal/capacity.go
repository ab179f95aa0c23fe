package ddblocal

import (
	"bytes"
	"math"

	"lastro/ddblocal/internal/av"
)

// Capacity accounting with DynamoDB's published rules: reads in 4 KB units
// (eventually consistent reads cost half), writes in 1 KB units of the
// larger of the old and new item, transactional operations cost double,
// and every secondary index write is counted on the projected item.

const (
	readUnitBytes  = 4096
	writeUnitBytes = 1024
)

// usage accumulates the capacity one request consumes.
type usage struct {
	table   string
	total   float64
	base    float64
	read    bool
	indexes map[string]float64
	local   map[string]bool
}

func newUsage(table string, read bool) *usage {
	return &usage{table: table, read: read}
}

func (u *usage) addTable(units float64) {
	u.total += units
	u.base += units
}

func (u *usage) addIndex(name string, local bool, units float64) {
	if u.indexes == nil {
		u.indexes = map[string]float64{}
		u.local = map[string]bool{}
	}
	u.indexes[name] += units
	u.local[name] = local
	u.total += units
}

// readUnits is the cost of reading size bytes in one request.
func readUnits(size int, consistent bool) float64 {
	units := math.Ceil(float64(size) / readUnitBytes)
	if units == 0 {
		units = 1
	}
	if !consistent {
		units /= 2
	}
	return units
}

// writeUnits is the cost of one write of an item of the given size.
func writeUnits(size int) float64 {
	units := math.Ceil(float64(size) / writeUnitBytes)
	if units == 0 {
		units = 1
	}
	return units
}

// addWrite accounts one item write (old → new; either may be nil), its
// index writes included; factor is 2 inside transactions.
func (u *usage) addWrite(d *tableDef, old, new av.Item, factor float64) {
	size := 0
	if old != nil {
		size = av.ItemSize(old)
	}
	if new != nil {
		size = max(size, av.ItemSize(new))
	}
	u.addTable(writeUnits(size) * factor)
	for _, ix := range d.Indexes {
		inOld, inNew := ix.inIndex(old), ix.inIndex(new)
		var units float64
		switch {
		case inOld && inNew:
			op, np := d.project(ix, old), d.project(ix, new)
			if !bytes.Equal(d.entryKey(ix, old), d.entryKey(ix, new)) {
				units = writeUnits(av.ItemSize(op)) + writeUnits(av.ItemSize(np))
			} else if !sameItem(op, np) {
				units = writeUnits(max(av.ItemSize(op), av.ItemSize(np)))
			}
		case inOld:
			units = writeUnits(av.ItemSize(d.project(ix, old)))
		case inNew:
			units = writeUnits(av.ItemSize(d.project(ix, new)))
		}
		if units > 0 {
			u.addIndex(ix.Name, ix.Local, units*factor)
		}
	}
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
// (nil for NONE).
func (u *usage) response(mode string) *consumedCapacity {
	if u == nil || (mode != "TOTAL" && mode != "INDEXES") {
		return nil
	}
	cc := &consumedCapacity{TableName: u.table, CapacityUnits: u.total}
	if u.read {
		cc.ReadCapacityUnits = ptr(u.total)
	} else {
		cc.WriteCapacityUnits = ptr(u.total)
	}
	if mode == "INDEXES" {
		cc.Table = u.capacity(u.base)
		for name, units := range u.indexes {
			if u.local[name] {
				if cc.LocalSecondaryIndexes == nil {
					cc.LocalSecondaryIndexes = map[string]*capacity{}
				}
				cc.LocalSecondaryIndexes[name] = u.capacity(units)
			} else {
				if cc.GlobalSecondaryIndexes == nil {
					cc.GlobalSecondaryIndexes = map[string]*capacity{}
				}
				cc.GlobalSecondaryIndexes[name] = u.capacity(units)
			}
		}
	}
	return cc
}

func (u *usage) capacity(units float64) *capacity {
	c := &capacity{CapacityUnits: units}
	if u.read {
		c.ReadCapacityUnits = ptr(units)
	} else {
		c.WriteCapacityUnits = ptr(units)
	}
	return c
}

func ptr[T any](v T) *T { return &v }
