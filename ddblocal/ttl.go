package ddblocal

import (
	"bytes"
	"context"
	"fmt"
	"lastro/ddblocal/internal/storage"
	"strconv"
	"sync"
	"time"

	"lastro/ddblocal/internal/av"
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

func (s *Store) updateTimeToLive(ctx context.Context, body []byte) (any, error) {
	var in updateTimeToLiveInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	spec := in.TimeToLiveSpecification
	c.notNull("timeToLiveSpecification", spec == nil)
	if spec != nil {
		c.notNull("timeToLiveSpecification.attributeName", spec.AttributeName == nil)
		c.length("timeToLiveSpecification.attributeName", spec.AttributeName, 1, 255)
		c.notNull("timeToLiveSpecification.enabled", spec.Enabled == nil)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	t := s.table(*in.TableName)
	if t == nil {
		return nil, notFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	name, enable := *spec.AttributeName, *spec.Enabled
	s.mu.Lock()
	defer s.mu.Unlock()
	old := t.def.Load()
	if s.tables[old.Name] != t {
		// Deleted since the lookup: persisting old would bring it back.
		return nil, notFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	switch {
	case enable && old.TTLEnabled && old.TTLAttribute == name:
		return nil, validation("TimeToLive is already enabled")
	case old.TTLEnabled && old.TTLAttribute != name:
		return nil, validation("TimeToLive is active on a different AttributeName: current AttributeName is %s", old.TTLAttribute)
	case !enable && !old.TTLEnabled:
		return nil, validation("TimeToLive is already disabled")
	}
	d := *old
	d.TTLEnabled = enable
	d.TTLAttribute = ""
	if enable {
		d.TTLAttribute = name
	}
	if err := s.persistDef(&d); err != nil {
		return nil, err
	}
	t.def.Store(&d)
	return map[string]any{"TimeToLiveSpecification": map[string]any{"AttributeName": name, "Enabled": enable}}, nil
}

func (s *Store) describeTimeToLive(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupForDescribe(body)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
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
	s.bg.sweep.Lock()
	defer s.bg.sweep.Unlock()
	s.mu.RLock()
	tables := make([]*table, 0, len(s.tables))
	for _, t := range s.tables {
		if t.def.Load().TTLEnabled {
			tables = append(tables, t)
		}
	}
	s.mu.RUnlock()
	total := 0
	for _, t := range tables {
		n, err := s.sweepTable(ctx, t)
		total += n
		if err != nil {
			return total, err
		}
	}
	if err := s.trimStreams(); err != nil {
		return total, fmt.Errorf("ddblocal: trim streams: %w", err)
	}
	return total, nil
}

// sweepTable deletes a table's expired items.
func (s *Store) sweepTable(ctx context.Context, t *table) (int, error) {
	d := t.def.Load()
	now := s.now()
	// Attribute names are stored verbatim in the item encoding: an item
	// whose bytes do not hold the TTL attribute's name cannot have it, and
	// is passed over without being decoded (most items of a table carry no
	// time to live; decoding them all was most of a sweep's cost).
	name := []byte(d.TTLAttribute)
	keys, err := s.db.Keys(ctx, storage.SpaceKey(d.ID, 0), storage.SpaceKey(d.ID, 1), func(key, value []byte) (bool, error) {
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
func (s *Store) expire(t *table, key []byte) (bool, error) {
	s.db.Locks.Acquire(string(key), false)
	defer s.db.Locks.Release(string(key))
	d := t.def.Load()
	if !d.TTLEnabled || s.table(d.Name) != t {
		return false, nil
	}
	old, err := s.get(key)
	if err != nil || old == nil || !expired(old, d.TTLAttribute, s.now()) {
		return false, err
	}
	if err := s.write([]*change{{t: t, def: d, key: key, old: old, ttl: true}}); err != nil {
		return false, err
	}
	return true, nil
}

// background runs the TTL sweeper.
type background struct {
	sweep sync.Mutex // one sweep at a time
	stop  chan struct{}
	done  sync.WaitGroup
	once  sync.Once
}

// startServices loads the stream state and starts the sweeper. Open calls
// it once the catalog is loaded.
func (s *Store) startServices() error {
	if err := s.loadStreams(); err != nil {
		return fmt.Errorf("ddblocal: load streams: %w", err)
	}
	interval := s.opts.TTLSweepInterval
	if interval == 0 {
		interval = defaultSweepInterval
	}
	s.bg.stop = make(chan struct{})
	if interval < 0 {
		return nil
	}
	s.bg.done.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.bg.stop
		cancel()
	}()
	go func() {
		defer s.bg.done.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.bg.stop:
				return
			case <-tick.C:
				if _, err := s.sweepExpired(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("ttl sweep", "err", err)
				}
			}
		}
	}()
	return nil
}

// stopServices stops the sweeper and waits for a running pass to end.
func (s *Store) stopServices() {
	s.bg.once.Do(func() {
		if s.bg.stop != nil {
			close(s.bg.stop)
		}
		s.bg.done.Wait()
	})
}
