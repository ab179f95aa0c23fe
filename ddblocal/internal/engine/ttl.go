package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// Time to live. UpdateTimeToLive names a table's expiry attribute; a
// background sweeper deletes items whose expiry attribute is a Number of
// epoch seconds in the past, eventually (every Options.TTLSweepInterval),
// like DynamoDB: an expired item stays readable until it is swept. Values
// that are not numbers, or lie more than five years in the past, are
// ignored, as DynamoDB documents. Each deletion goes through the normal
// locked write path, re-checking expiry under the item's lock, and its
// stream record carries the service's userIdentity.

const (
	defaultSweepInterval = 30 * time.Second
	ttlIgnoreOlderThan   = 5 * 365 * 24 * time.Hour
)

type timeToLiveSpecification struct {
	AttributeName *string `json:"AttributeName"`
	Enabled       *bool   `json:"Enabled"`
}

type updateTimeToLiveInput struct {
	TableName               *string                  `json:"TableName"`
	TimeToLiveSpecification *timeToLiveSpecification `json:"TimeToLiveSpecification"`
}

// UpdateTimeToLive answers the UpdateTimeToLive operation.
func (s *Store) UpdateTimeToLive(ctx context.Context, body []byte) (any, error) {
	var in updateTimeToLiveInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.TableName("tableName", in.TableName)
	spec := in.TimeToLiveSpecification
	c.NotNull("timeToLiveSpecification", spec == nil)
	if spec != nil {
		c.NotNull("timeToLiveSpecification.attributeName", spec.AttributeName == nil)
		c.Length("timeToLiveSpecification.attributeName", spec.AttributeName, 1, 255)
		c.NotNull("timeToLiveSpecification.enabled", spec.Enabled == nil)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	t := s.Table(*in.TableName)
	if t == nil {
		return nil, wire.NotFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	name, enable := *spec.AttributeName, *spec.Enabled
	s.Mu.Lock()
	defer s.Mu.Unlock()
	old := t.Def.Load()
	if s.Tables[old.Name] != t {
		// Deleted since the lookup: persisting old would bring it back.
		return nil, wire.NotFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	switch {
	case enable && old.TTLEnabled && old.TTLAttribute == name:
		return nil, wire.Validation("TimeToLive is already enabled")
	case old.TTLEnabled && old.TTLAttribute != name:
		return nil, wire.Validation("TimeToLive is active on a different AttributeName: current AttributeName is %s", old.TTLAttribute)
	case !enable && !old.TTLEnabled:
		return nil, wire.Validation("TimeToLive is already disabled")
	}
	d := *old
	d.TTLEnabled = enable
	d.TTLAttribute = ""
	if enable {
		d.TTLAttribute = name
	}
	if err := s.PersistDef(&d); err != nil {
		return nil, err
	}
	t.Def.Store(&d)
	return map[string]any{"TimeToLiveSpecification": map[string]any{"AttributeName": name, "Enabled": enable}}, nil
}

// DescribeTimeToLive answers the DescribeTimeToLive operation.
func (s *Store) DescribeTimeToLive(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupForDescribe(body)
	if err != nil {
		return nil, err
	}
	d := t.Def.Load()
	desc := map[string]any{"TimeToLiveStatus": "DISABLED"}
	if d.TTLEnabled {
		desc = map[string]any{"TimeToLiveStatus": "ENABLED", "AttributeName": d.TTLAttribute}
	}
	return map[string]any{"TimeToLiveDescription": desc}, nil
}

// expired reports whether an item's TTL attribute says it has expired at
// now.
func expired(it av.Item, attr string, now time.Time) bool {
	v := it[attr]
	if v == nil || v.T != av.N {
		return false
	}
	nowSecs := strconv.FormatFloat(float64(now.UnixMilli())/1000, 'f', -1, 64)
	oldest := strconv.FormatInt(now.Add(-ttlIgnoreOlderThan).Unix(), 10)
	return av.CompareNumbers(v.Str, nowSecs) < 0 && av.CompareNumbers(v.Str, oldest) >= 0
}

// SweepExpired runs one pass of the TTL sweeper now (it also trims stream
// records older than 24 hours) and returns how many items it deleted.
// The background sweeper calls it every Options.TTLSweepInterval.
func (s *Store) SweepExpired() (int, error) { return s.sweepExpired(context.Background()) }

// sweepExpired is SweepExpired; the background sweeper's pass stops when
// Close cancels ctx.
func (s *Store) sweepExpired(ctx context.Context) (int, error) {
	s.Bg.sweep.Lock()
	defer s.Bg.sweep.Unlock()
	s.Mu.RLock()
	tables := make([]*Table, 0, len(s.Tables))
	for _, t := range s.Tables {
		if t.Def.Load().TTLEnabled {
			tables = append(tables, t)
		}
	}
	s.Mu.RUnlock()
	total := 0
	for _, t := range tables {
		n, err := s.sweepTable(ctx, t)
		total += n
		if err != nil {
			return total, err
		}
	}
	if err := s.TrimStreams(); err != nil {
		return total, fmt.Errorf("ddblocal: trim streams: %w", err)
	}
	return total, nil
}

// sweepTable deletes a table's expired items.
func (s *Store) sweepTable(ctx context.Context, t *Table) (int, error) {
	d := t.Def.Load()
	now := s.Now()
	// Attribute names are stored verbatim in the item encoding: an item
	// whose bytes do not hold the TTL attribute's name cannot have it, and
	// is passed over without being decoded (most items of a table carry no
	// time to live; decoding them all was most of a sweep's cost).
	name := []byte(d.TTLAttribute)
	keys, err := s.DB.Keys(ctx, storage.SpaceKey(d.ID, 0), storage.SpaceKey(d.ID, 1), func(key, value []byte) (bool, error) {
		if !bytes.Contains(value, name) {
			return false, nil
		}
		it, err := av.DecodeItem(value)
		if err != nil {
			return false, fmt.Errorf("ddblocal: decode %x: %w", key, err)
		}
		return expired(it, d.TTLAttribute, now), nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		deleted, err := s.expire(t, k)
		if err != nil {
			return n, err
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

// expire deletes one item if, under its lock, it is still expired and the
// table still has TTL enabled.
func (s *Store) expire(t *Table, key []byte) (bool, error) {
	s.DB.Locks.Acquire(string(key), false)
	defer s.DB.Locks.Release(string(key))
	d := t.Def.Load()
	if !d.TTLEnabled || s.Table(d.Name) != t {
		return false, nil
	}
	old, err := s.Get(key)
	if err != nil || old == nil || !expired(old, d.TTLAttribute, s.Now()) {
		return false, err
	}
	if err := s.Write([]*Change{{T: t, Def: d, Key: key, Old: old, ttl: true}}); err != nil {
		return false, err
	}
	return true, nil
}

// background runs the TTL sweeper.
type background struct {
	sweep sync.Mutex // one sweep at a time
	Stop  chan struct{}
	Done  sync.WaitGroup
	once  sync.Once
}

// startServices loads the stream state and starts the sweeper. Open calls
// it once the catalog is loaded.
func (s *Store) startServices() error {
	if err := s.loadStreams(); err != nil {
		return fmt.Errorf("ddblocal: load streams: %w", err)
	}
	interval := s.Opts.TTLSweepInterval
	if interval == 0 {
		interval = defaultSweepInterval
	}
	s.Bg.Stop = make(chan struct{})
	if interval < 0 {
		return nil
	}
	s.Bg.Done.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.Bg.Stop
		cancel()
	}()
	go func() {
		defer s.Bg.Done.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.Bg.Stop:
				return
			case <-tick.C:
				if _, err := s.sweepExpired(ctx); err != nil && ctx.Err() == nil {
					s.Log.Error("ttl sweep", "err", err)
				}
			}
		}
	}()
	return nil
}

// stopServices stops the sweeper and waits for a running pass to end.
func (s *Store) stopServices() {
	s.Bg.once.Do(func() {
		if s.Bg.Stop != nil {
			close(s.Bg.Stop)
		}
		s.Bg.Done.Wait()
	})
}
