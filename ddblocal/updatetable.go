package ddblocal

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"lastro/ddblocal/internal/av"
)

func (s *Store) updateTable(ctx context.Context, body []byte) (any, error) {
	var in updateTableInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	c.enum("billingMode", in.BillingMode, "PROVISIONED", "PAY_PER_REQUEST")
	if err := c.err(); err != nil {
		return nil, err
	}
	t := s.table(*in.TableName)
	if t == nil {
		return nil, notFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	if in.AttributeDefinitions == nil && in.BillingMode == "" && in.ProvisionedThroughput == nil && in.GlobalSecondaryIndexUpdates == nil &&
		in.StreamSpecification == nil && in.SSESpecification == nil && in.TableClass == "" && in.DeletionProtectionEnabled == nil && in.OnDemandThroughput == nil {
		return nil, validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
	}
	if len(in.GlobalSecondaryIndexUpdates) > 1 {
		return nil, validation("One or more parameter values were invalid: Only 1 online index can be created or deleted simultaneously per table")
	}

	s.mu.Lock()
	old := t.def.Load()
	d := *old
	d.Indexes = append([]*indexDef(nil), old.Indexes...)
	if in.BillingMode != "" {
		d.BillingMode = in.BillingMode
	}
	if in.ProvisionedThroughput != nil {
		if d.BillingMode == "PAY_PER_REQUEST" {
			s.mu.Unlock()
			return nil, validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
		d.Throughput = *in.ProvisionedThroughput
	}
	if in.OnDemandThroughput != nil {
		d.OnDemand = in.OnDemandThroughput
	}
	if in.DeletionProtectionEnabled != nil {
		d.Protected = *in.DeletionProtectionEnabled
	}
	if in.TableClass != "" {
		d.TableClass = in.TableClass
	}
	if in.SSESpecification != nil {
		d.SSE = in.SSESpecification
	}
	if in.StreamSpecification != nil {
		if in.StreamSpecification.StreamEnabled != nil && *in.StreamSpecification.StreamEnabled && old.StreamEnabled {
			s.mu.Unlock()
			return nil, validation("Table already has an enabled stream: " + s.tableARN(d.Name) + "/stream/" + old.StreamLabel)
		}
		if in.StreamSpecification.StreamEnabled != nil && !*in.StreamSpecification.StreamEnabled && !old.StreamEnabled {
			s.mu.Unlock()
			return nil, validation("Table already has stream disabled")
		}
		if err := applyStreamSpec(&d, in.StreamSpecification, s.now()); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	var backfill *indexDef
	var dropped *indexDef
	for _, u := range in.GlobalSecondaryIndexUpdates {
		switch {
		case u.Create != nil:
			defs := map[string]av.Type{}
			for _, a := range old.AttrDefs {
				t, _ := av.ParseType(a.AttributeType)
				defs[a.AttributeName] = t
			}
			for _, a := range in.AttributeDefinitions {
				t, ok := av.ParseType(a.AttributeType)
				if !ok {
					s.mu.Unlock()
					return nil, validation("1 validation error detected: Value '%s' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]", a.AttributeType)
				}
				if prev, ok := defs[a.AttributeName]; ok && prev != t {
					s.mu.Unlock()
					return nil, validation("One or more parameter values were invalid: Attribute %s is already defined with type %s", a.AttributeName, prev)
				}
				defs[a.AttributeName] = t
			}
			ix, err := buildIndex(*u.Create, defs, false, "globalSecondaryIndexUpdates.1.member.create")
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			if d.index(ix.Name) != nil {
				s.mu.Unlock()
				return nil, validation("One or more parameter values were invalid: Index with name: %s already exists", ix.Name)
			}
			if err := checkThroughput(d.BillingMode, u.Create.ProvisionedThroughput, ix.Name, nil); err != nil {
				s.mu.Unlock()
				return nil, err
			}
			var gsis int
			for _, x := range d.Indexes {
				if !x.Local {
					gsis++
				}
			}
			if gsis >= 20 {
				s.mu.Unlock()
				return nil, &apiError{Type: "LimitExceededException", Status: 400, Message: "Subscriber limit exceeded: The number of global secondary indexes exceeds the per-table limit of 20"}
			}
			d.NextIndexID++
			ix.ID = d.NextIndexID
			if int(ix.ID) >= maxIndexes {
				s.mu.Unlock()
				return nil, &apiError{Type: "LimitExceededException", Status: 400, Message: "Too many index changes on this table"}
			}
			ix.Backfilling = true
			d.Indexes = append(d.Indexes, ix)
			// Merge the new attribute definitions.
			have := map[string]bool{}
			for _, a := range d.AttrDefs {
				have[a.AttributeName] = true
			}
			d.AttrDefs = append([]attributeDefinition(nil), d.AttrDefs...)
			for _, a := range in.AttributeDefinitions {
				if !have[a.AttributeName] {
					d.AttrDefs = append(d.AttrDefs, a)
				}
			}
			backfill = ix
		case u.Delete != nil:
			ix := d.index(u.Delete.IndexName)
			if ix == nil || ix.Local {
				s.mu.Unlock()
				return nil, notFound("Requested resource not found: Global Secondary Index: " + u.Delete.IndexName + " not found")
			}
			var keep []*indexDef
			for _, x := range d.Indexes {
				if x != ix {
					keep = append(keep, x)
				}
			}
			d.Indexes = keep
			dropped = ix
		case u.Update != nil:
			ix := d.index(u.Update.IndexName)
			if ix == nil || ix.Local {
				s.mu.Unlock()
				return nil, notFound("Requested resource not found: Global Secondary Index: " + u.Update.IndexName + " not found")
			}
			cp := *ix
			cp.Throughput = u.Update.ProvisionedThroughput
			if u.Update.OnDemandThroughput != nil {
				cp.OnDemand = u.Update.OnDemandThroughput
			}
			for i, x := range d.Indexes {
				if x == ix {
					d.Indexes[i] = &cp
				}
			}
		}
	}
	if err := s.persistDef(&d); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	t.def.Store(&d)
	s.mu.Unlock()

	if dropped != nil {
		lo := spaceKey(d.ID, dropped.ID)
		hi := spaceKey(d.ID, dropped.ID+1)
		if err := s.db.DeleteRange(lo, hi, s.writeOpts()); err != nil {
			return nil, err
		}
		t.idxItems[dropped.ID].Store(0)
		t.idxBytes[dropped.ID].Store(0)
	}
	desc := s.describe(t)
	if backfill != nil {
		if err := s.backfill(t, backfill.Name); err != nil {
			return nil, err
		}
	}
	return map[string]any{"TableDescription": desc}, nil
}

// backfill writes the entries of a new index for every existing item and
// then marks the index active. Writers running meanwhile already maintain
// the index (they read the table definition after locking their item), and
// each item is re-read under its lock, so no entry is lost or stale.
func (s *Store) backfill(t *table, name string) error {
	d := t.def.Load()
	lo := spaceKey(d.ID, 0)
	hi := spaceKey(d.ID, 1)
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	var keys [][]byte
	for iter.First(); iter.Valid(); iter.Next() {
		keys = append(keys, append([]byte(nil), iter.Key()...))
	}
	iter.Close()
	for _, k := range keys {
		if err := s.backfillOne(t, name, k); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := t.def.Load()
	nd := *cur
	nd.Indexes = append([]*indexDef(nil), cur.Indexes...)
	for i, x := range nd.Indexes {
		if x.Name == name {
			cp := *x
			cp.Backfilling = false
			nd.Indexes[i] = &cp
		}
	}
	if err := s.persistDef(&nd); err != nil {
		return err
	}
	t.def.Store(&nd)
	return nil
}

func (s *Store) backfillOne(t *table, name string, key []byte) error {
	s.locks.acquire(string(key), false)
	defer s.locks.release(string(key))
	d := t.def.Load()
	ix := d.index(name)
	if ix == nil {
		return fmt.Errorf("ddblocal: index %s vanished during backfill", name)
	}
	it, err := s.get(key)
	if err != nil || it == nil || !ix.inIndex(it) {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	proj := d.project(ix, it)
	b.Set(d.entryKey(ix, it), av.AppendItemBinary(nil, proj), nil)
	if err := b.Commit(s.writeOpts()); err != nil {
		return err
	}
	t.idxItems[ix.ID].Add(1)
	t.idxBytes[ix.ID].Add(int64(av.ItemSize(proj)))
	return nil
}
