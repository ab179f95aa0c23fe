package ddblocal

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"lastro/ddblocal/internal/storage"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lastro/ddblocal/internal/av"
)

// DynamoDB Streams.
//
// Every committed change to an item of a table whose stream is enabled
// appends one stream record to the same Pebble batch as the change, under
// the commit lock: records are exactly as durable as the data, appear in
// commit order, and a write that fails or changes nothing leaves none.
// Sequence numbers come from one store-wide counter, so they increase
// across all tables; a stream is the range of its table's records between
// the sequence number reserved when the stream was enabled and the one
// reserved when it was disabled.
//
// Each stream has a single shard (DynamoDB splits shards by partition and
// over time; one shard keeps every record of a table in one ordered
// sequence, which is the strongest ordering a consumer can see on AWS).
// Records older than 24 hours are trimmed from the Streams API, like
// streams closed more than 24 hours ago; an iterator pointing below the
// trimmed range gets TrimmedDataAccessException. On a table with
// point-in-time recovery the trimmed records stay in storage for the
// recovery window (35 days), below the table's horizon where no Streams
// operation reads, because exports rebuild the past from them (ADR 0042).

const (
	streamRetention  = 24 * time.Hour
	iteratorLifetime = 15 * time.Minute
	// historyRetention is how long the records of a table with
	// point-in-time recovery are kept for exports: DynamoDB's longest
	// recovery window.
	historyRetention = maxRecoveryDays * 24 * time.Hour
)

// Sequence numbers are rendered as 21 decimal digits, as on AWS.
func seqString(n uint64) string { return "1" + fmt.Sprintf("%020d", n) }

func parseSeq(s string) (uint64, bool) {
	if len(s) != 21 || s[0] != '1' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 64)
	return n, err == nil
}

// streamState is the in-memory view of the store's streams.
type streamState struct {
	// last is the last sequence number handed out. It only changes under
	// Store.commit; readers load it without the lock.
	last atomic.Uint64
	// ceiling is the durable reservation (nextSeq); guarded by
	// Store.commit.
	ceiling uint64

	mu      sync.Mutex
	metas   []*streamMeta     // every stream still readable or covering an export window
	horizon map[uint32]uint64 // per table ID: lower sequence numbers were trimmed
	// floor is, per table ID, the Unix ms before which records may have
	// been deleted: history is whole only from it on (0: nothing deleted).
	floor map[uint32]int64
}

// streamMeta describes one stream; it is persisted as JSON.
type streamMeta struct {
	TableName string             `json:"tableName"`
	TableID   uint32             `json:"tableId"`
	Label     string             `json:"label"`
	ViewType  string             `json:"viewType"`
	KeySchema []keySchemaElement `json:"keySchema"`
	Created   time.Time          `json:"created"`
	// Start is reserved when the stream is enabled: its records follow it.
	Start uint64 `json:"start"`
	// End is reserved when the stream is disabled (0 while enabled).
	End    uint64    `json:"end,omitempty"`
	Closed time.Time `json:"closed,omitzero"`

	arn string
}

func (m *streamMeta) open() bool { return m.End == 0 }

// shardID names the stream's single shard, stably, in AWS's format.
func (m *streamMeta) shardID() string {
	return fmt.Sprintf("shardId-%020d-%08x", m.Created.UnixMilli(), crc32.ChecksumIEEE([]byte(m.arn)))
}

// holds reports whether the record with sequence number seq belongs to
// the stream.
func (m *streamMeta) holds(seq uint64) bool { return seq > m.Start && (m.End == 0 || seq < m.End) }

func (s *Store) streamARN(table, label string) string { return s.tableARN(table) + "/stream/" + label }

// seqBlock is how many sequence numbers one durable reservation covers.
const seqBlock = 1 << 16

// nextSeq hands out a sequence number. Callers hold s.commit.
//
// Numbers are reserved durably ahead of use: storage.SeqKey holds a ceiling
// that no number handed out exceeds, synced before the first number past
// the previous ceiling is used, and Open resumes above it. A crash that
// loses the batches holding the last records therefore never hands their
// numbers out again (they may have been read by nobody, but a position
// past them, a LATEST iterator or a checkpoint, must keep meaning "after
// them"). One synced write per 65,536 records.
func (s *Store) nextSeq() uint64 {
	n := s.streams.last.Load() + 1
	if n > s.streams.ceiling {
		if err := s.reserveSeq(n - 1 + seqBlock); err != nil {
			// Pebble fails a synced write only when the disk does; the
			// batch being staged cannot be committed either.
			panic(fmt.Sprintf("ddblocal: reserve stream sequence numbers: %v", err))
		}
	}
	s.streams.last.Store(n)
	return n
}

// reserveSeq durably records that sequence numbers up to ceiling may be
// in use. Callers hold s.commit (or run in Open).
func (s *Store) reserveSeq(ceiling uint64) error {
	if err := s.db.Set(storage.SeqKey, binary.BigEndian.AppendUint64(nil, ceiling)); err != nil {
		return err
	}
	s.streams.ceiling = ceiling
	return nil
}

// durableSeq is the last sequence number readers may see: the last one
// in the durable view.
func (s *Store) durableSeq() uint64 {
	v := s.db.Acquire()
	defer v.Release()
	return v.Mark()
}

// appendStreamRecords adds the stream records of committed changes to the
// batch. Called with s.commit held.
func (s *Store) appendStreamRecords(b *storage.Batch, changes []*change) {
	var now time.Time
	wrote := false
	for _, c := range changes {
		d := c.def
		if !d.StreamEnabled || (c.old == nil && c.new == nil) || (c.old != nil && c.new != nil && sameItem(c.old, c.new)) {
			continue
		}
		if !wrote {
			now = s.now()
			wrote = true
		}
		seq := s.nextSeq()
		b.Set(storage.RecordKey(d.ID, seq), s.encodeRecord(d, c, seq, now))
	}
}

// streamRecord is a record as GetRecords returns it.
type streamRecord struct {
	EventID      string          `json:"eventID"`
	EventName    string          `json:"eventName"`
	EventVersion string          `json:"eventVersion"`
	EventSource  string          `json:"eventSource"`
	AwsRegion    string          `json:"awsRegion"`
	Dynamodb     streamData      `json:"dynamodb"`
	UserIdentity *streamIdentity `json:"userIdentity,omitempty"`
}

type streamData struct {
	ApproximateCreationDateTime int64   `json:"ApproximateCreationDateTime"`
	Keys                        av.Item `json:"Keys"`
	NewImage                    av.Item `json:"NewImage,omitempty"`
	OldImage                    av.Item `json:"OldImage,omitempty"`
	SequenceNumber              string  `json:"SequenceNumber"`
	SizeBytes                   int     `json:"SizeBytes"`
	StreamViewType              string  `json:"StreamViewType"`
}

type streamIdentity struct {
	PrincipalID string `json:"PrincipalId"`
	Type        string `json:"Type"`
}

// appendJSON appends the record's JSON, members in the order of the
// struct's fields, the images as they are (ADR 0053).
func (r *streamRecord) appendJSON(b []byte) []byte {
	str := func(b []byte, name, v string, first bool) []byte {
		if !first {
			b = append(b, ',')
		}
		b = av.AppendString(b, name)
		b = append(b, ':')
		return av.AppendString(b, v)
	}
	item := func(b []byte, name string, it av.Item) []byte {
		b = append(b, ',')
		b = av.AppendString(b, name)
		b = append(b, ':')
		return av.AppendItemJSON(b, it)
	}
	b = append(b, '{')
	b = str(b, "eventID", r.EventID, true)
	b = str(b, "eventName", r.EventName, false)
	b = str(b, "eventVersion", r.EventVersion, false)
	b = str(b, "eventSource", r.EventSource, false)
	b = str(b, "awsRegion", r.AwsRegion, false)
	d := &r.Dynamodb
	b = append(b, `,"dynamodb":{"ApproximateCreationDateTime":`...)
	b = strconv.AppendInt(b, d.ApproximateCreationDateTime, 10)
	b = item(b, "Keys", d.Keys)
	if len(d.NewImage) > 0 {
		b = item(b, "NewImage", d.NewImage)
	}
	if len(d.OldImage) > 0 {
		b = item(b, "OldImage", d.OldImage)
	}
	b = str(b, "SequenceNumber", d.SequenceNumber, false)
	b = append(b, `,"SizeBytes":`...)
	b = strconv.AppendInt(b, int64(d.SizeBytes), 10)
	b = str(b, "StreamViewType", d.StreamViewType, false)
	b = append(b, '}')
	if u := r.UserIdentity; u != nil {
		b = append(b, `,"userIdentity":{`...)
		b = str(b, "PrincipalId", u.PrincipalID, true)
		b = str(b, "Type", u.Type, false)
		b = append(b, '}')
	}
	return append(b, '}')
}

// encodeRecord renders a change as a stored record: the creation time in
// Unix milliseconds (for trimming) followed by the record's JSON.
func (s *Store) encodeRecord(d *tableDef, c *change, seq uint64, now time.Time) []byte {
	r := streamRecord{EventVersion: "1.1", EventSource: "aws:dynamodb", AwsRegion: s.opts.Region, EventID: eventID()}
	image := c.new
	switch {
	case c.old == nil:
		r.EventName = "INSERT"
	case c.new == nil:
		r.EventName, image = "REMOVE", c.old
	default:
		r.EventName = "MODIFY"
	}
	data := streamData{
		ApproximateCreationDateTime: now.Unix(),
		Keys:                        keyOf(d, image),
		SequenceNumber:              seqString(seq),
		StreamViewType:              d.StreamViewType,
	}
	data.SizeBytes = av.ItemSize(data.Keys)
	if c.new != nil && (d.StreamViewType == "NEW_IMAGE" || d.StreamViewType == "NEW_AND_OLD_IMAGES") {
		data.NewImage = c.new
		data.SizeBytes += av.ItemSize(c.new)
	}
	if c.old != nil && (d.StreamViewType == "OLD_IMAGE" || d.StreamViewType == "NEW_AND_OLD_IMAGES") {
		data.OldImage = c.old
		data.SizeBytes += av.ItemSize(c.old)
	}
	r.Dynamodb = data
	if c.ttl {
		r.UserIdentity = &streamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}
	}
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 512), uint64(now.UnixMilli()))
	return r.appendJSON(out)
}

func eventID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// streamTransition records that a table's stream was enabled, disabled or
// replaced by a definition change (old or new is nil when the table is
// being created or deleted). Enabling reserves the stream's starting
// sequence number; new.StreamLabel is made unique among the table's
// streams. Call it before the new definition becomes visible to writers.
func (s *Store) streamTransition(old, new *tableDef) error {
	opening := new != nil && new.StreamEnabled && (old == nil || !old.StreamEnabled || old.StreamLabel != new.StreamLabel)
	closing := old != nil && old.StreamEnabled && (new == nil || !new.StreamEnabled || new.StreamLabel != old.StreamLabel)
	if !opening && !closing {
		return nil
	}
	s.db.Lock()
	defer s.db.Unlock()
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if closing {
		if m := s.findStream(old.ID, old.StreamLabel); m != nil && m.open() {
			m.End = s.nextSeq()
			m.Closed = s.now()
			if err := s.stageMeta(b, m); err != nil {
				return err
			}
		}
	}
	if opening {
		for s.findStream(new.ID, new.StreamLabel) != nil {
			// Two streams of one table enabled within a millisecond (or
			// under a frozen test clock): keep their ARNs distinct.
			t, err := time.Parse(streamLabelLayout, new.StreamLabel)
			if err != nil {
				return fmt.Errorf("ddblocal: stream label %q: %w", new.StreamLabel, err)
			}
			new.StreamLabel = t.Add(time.Millisecond).Format(streamLabelLayout)
		}
		m := &streamMeta{TableName: new.Name, TableID: new.ID, Label: new.StreamLabel, ViewType: new.StreamViewType,
			KeySchema: keySchemaOf(new.Hash, new.Range), Created: s.now(), Start: s.nextSeq()}
		m.arn = s.streamARN(m.TableName, m.Label)
		s.streams.metas = append(s.streams.metas, m)
		if err := s.stageMeta(b, m); err != nil {
			return err
		}
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("ddblocal: persist stream state: %w", err)
	}
	return nil
}

// streamLabelLayout is the format of stream labels (a UTC timestamp).
const streamLabelLayout = "2006-01-02T15:04:05.000"

func (s *Store) stageMeta(b *storage.Batch, m *streamMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b.Set(storage.StreamKey(m.TableID, m.Label), raw)
	return nil
}

// findStream returns a stream by table ID and label. Callers hold
// s.streams.mu.
func (s *Store) findStream(tableID uint32, label string) *streamMeta {
	for _, m := range s.streams.metas {
		if m.TableID == tableID && m.Label == label {
			return m
		}
	}
	return nil
}

// streamByARN returns a copy of a stream still readable, or nil.
func (s *Store) streamByARN(arn string) *streamMeta {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	for _, m := range s.streams.metas {
		if m.arn == arn && s.readable(m) {
			cp := *m
			return &cp
		}
	}
	return nil
}

// readable reports whether a stream can still be listed and read: open,
// or closed less than 24 hours ago.
func (s *Store) readable(m *streamMeta) bool {
	return m.open() || s.now().Sub(m.Closed) < streamRetention
}

// loadStreams reads the stream state at Open and reconciles it with the
// catalog (a crash may separate a definition change from its stream
// descriptor).
func (s *Store) loadStreams() error {
	// Numbers up to the stored ceiling may have been handed out before a
	// crash (older stores kept the last number used there): resume above
	// it.
	v, err := s.db.Get(storage.SeqKey)
	switch {
	case err == nil:
		s.streams.last.Store(binary.BigEndian.Uint64(v))
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	if err := s.reserveSeq(s.streams.last.Load() + seqBlock); err != nil {
		return err
	}
	s.streams.horizon = map[uint32]uint64{}
	s.streams.floor = map[uint32]int64{}
	iter, err := s.db.NewIter(storage.HorizonSpan())
	if err != nil {
		return err
	}
	var legacy []uint32
	for iter.First(); iter.Valid(); iter.Next() {
		id, v := storage.HorizonTable(iter.Key()), iter.Value()
		s.streams.horizon[id] = binary.BigEndian.Uint64(v)
		if len(v) >= 16 {
			s.streams.floor[id] = int64(binary.BigEndian.Uint64(v[8:]))
		} else {
			legacy = append(legacy, id)
		}
	}
	if err := iter.Close(); err != nil {
		return err
	}
	for _, id := range legacy {
		if s.streams.floor[id], err = s.legacyFloor(id); err != nil {
			return err
		}
	}
	iter, err = s.db.NewIter(storage.StreamSpan())
	if err != nil {
		return err
	}
	for iter.First(); iter.Valid(); iter.Next() {
		m := &streamMeta{}
		if err := json.Unmarshal(iter.Value(), m); err != nil {
			iter.Close()
			return fmt.Errorf("ddblocal: stream descriptor %q: %w", iter.Key(), err)
		}
		m.arn = s.streamARN(m.TableName, m.Label)
		s.streams.metas = append(s.streams.metas, m)
	}
	if err := iter.Close(); err != nil {
		return err
	}
	// Close open streams whose table no longer has them; open the streams
	// the catalog has but the descriptors miss.
	byID := map[uint32]*tableDef{}
	for _, t := range s.tables {
		d := t.def.Load()
		byID[d.ID] = d
	}
	for _, m := range s.streams.metas {
		d := byID[m.TableID]
		if m.open() && (d == nil || !d.StreamEnabled || d.StreamLabel != m.Label) {
			gone := &tableDef{ID: m.TableID, StreamEnabled: true, StreamLabel: m.Label}
			if err := s.streamTransition(gone, nil); err != nil {
				return err
			}
		}
	}
	for _, d := range byID {
		if d.StreamEnabled && s.findStream(d.ID, d.StreamLabel) == nil {
			if err := s.streamTransition(nil, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// trimStreams trims every table's stream records (trimTable) and forgets
// streams no longer needed: closed more than 24 hours ago, or, on a table
// with point-in-time recovery, more than the recovery window ago (until
// then an export may still need to know the stream covered a window; the
// Streams API already no longer shows it).
func (s *Store) trimStreams() error {
	keepFor := s.recordRetentions()
	now := s.now()
	s.streams.mu.Lock()
	tables := map[uint32]bool{}
	var keep, drop []*streamMeta
	for _, m := range s.streams.metas {
		tables[m.TableID] = true
		if s.readable(m) || now.Sub(m.Closed) < retentionOf(keepFor, m.TableID) {
			keep = append(keep, m)
		} else {
			drop = append(drop, m)
		}
	}
	s.streams.metas = keep
	s.streams.mu.Unlock()
	if len(drop) > 0 {
		b := s.db.NewBatch()
		for _, m := range drop {
			b.Delete(storage.StreamKey(m.TableID, m.Label))
		}
		err := b.Commit()
		b.Close()
		if err != nil {
			return err
		}
	}
	ids := make([]uint32, 0, len(tables))
	for id := range tables {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := s.trimTableFor(id, retentionOf(keepFor, id)); err != nil {
			return err
		}
	}
	return nil
}

// recordRetentions returns, per table ID, how long its stream records are
// kept when that is longer than the Streams API's 24 hours: the
// point-in-time recovery window (35 days) of tables with PITR enabled,
// since exports rebuild the past from the records (ADR 0042). A table
// without PITR, or deleted, keeps its records 24 hours.
func (s *Store) recordRetentions() map[uint32]time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[uint32]time.Duration{}
	for _, t := range s.tables {
		if d := t.def.Load(); d.PITR != nil && d.PITR.Enabled {
			out[d.ID] = historyRetention
		}
	}
	return out
}

func retentionOf(keepFor map[uint32]time.Duration, tableID uint32) time.Duration {
	return max(keepFor[tableID], streamRetention)
}

// trimTable trims one table's stream records (see trimTableFor).
func (s *Store) trimTable(tableID uint32) error {
	return s.trimTableFor(tableID, retentionOf(s.recordRetentions(), tableID))
}

// trimTableFor moves the table's Streams horizon past the records older
// than 24 hours, so that no Streams operation shows them again, and
// deletes the records older than keep (24 hours, or the PITR window). The
// horizon is persisted in the same batch; every deleted record is below
// it, so what the Streams API shows is exactly what it showed when
// storage and horizon were the same thing. The history floor (the time
// from which exports can trust the records) is persisted with the horizon.
func (s *Store) trimTableFor(tableID uint32, keep time.Duration) error {
	now := s.now()
	lo, _ := storage.RecordSpan(tableID)
	horizon, trimmed, err := s.firstNewer(tableID, s.horizonOf(tableID), uint64(now.Add(-streamRetention).UnixMilli()))
	if err != nil {
		return err
	}
	// Scanned from the start, not from the horizon: records kept for a
	// PITR window go once PITR is disabled (the table's retention is then
	// 24 hours again).
	cutoff := now.Add(-keep).UnixMilli()
	deleteTo, deleting, err := s.firstNewer(tableID, 0, uint64(cutoff))
	if err != nil {
		return err
	}
	// A clock that stepped back can leave an old record above a newer
	// one: never delete what the Streams API may still show.
	deleteTo = min(deleteTo, horizon)
	deleting = deleting && deleteTo > 0
	if !trimmed && !deleting {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	// Every record deleted was written before cutoff, and none written
	// since is: history is whole from cutoff on.
	horizon = max(horizon, s.streams.horizon[tableID])
	floor := s.streams.floor[tableID]
	if deleting {
		b.DeleteRange(lo, storage.RecordKey(tableID, deleteTo))
		floor = max(floor, cutoff)
	}
	b.Set(storage.HorizonKey(tableID), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, horizon), uint64(floor)))
	if err := b.Commit(); err != nil {
		return err
	}
	s.streams.horizon[tableID], s.streams.floor[tableID] = horizon, floor
	return nil
}

// firstNewer scans the table's records from sequence number from and
// returns the first one created at or after cutoff (Unix ms), or the
// number after the last record passed over; passed reports whether any
// record was passed over.
func (s *Store) firstNewer(tableID uint32, from, cutoff uint64) (first uint64, passed bool, err error) {
	lo, hi := storage.RecordSpan(tableID)
	if from > 0 {
		lo = storage.RecordKey(tableID, from)
	}
	iter, err := s.db.NewIter(lo, hi)
	if err != nil {
		return 0, false, err
	}
	first = from
	for iter.First(); iter.Valid(); iter.Next() {
		seq := storage.RecordSeq(iter.Key())
		if binary.BigEndian.Uint64(iter.Value()[:8]) >= cutoff {
			first = seq
			break
		}
		passed = true
		first = seq + 1
	}
	return first, passed, iter.Close()
}

// legacyFloor is the history floor of a table trimmed by a store that did
// not record it (every record below the horizon was deleted then): the
// creation time of the first record left, or, with none left, now, since
// nothing proves when the last deleted one was written.
func (s *Store) legacyFloor(tableID uint32) (int64, error) {
	_, hi := storage.RecordSpan(tableID)
	iter, err := s.db.NewIter(storage.RecordKey(tableID, s.streams.horizon[tableID]), hi)
	if err != nil {
		return 0, err
	}
	floor := s.now().UnixMilli()
	if iter.First() {
		floor = int64(binary.BigEndian.Uint64(iter.Value()[:8]))
	}
	return floor, iter.Close()
}

// historyFloor returns the time before which a table's records may have
// been deleted (the zero time if none was).
func (s *Store) historyFloor(tableID uint32) time.Time {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if f := s.streams.floor[tableID]; f > 0 {
		return time.UnixMilli(f)
	}
	return time.Time{}
}

// horizonOf returns the lowest sequence number of a table that was not
// trimmed.
func (s *Store) horizonOf(tableID uint32) uint64 {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	return s.streams.horizon[tableID]
}

// readRecords returns up to limit raw records of a stream from position
// pos (a sequence number, inclusive) and the position after the last one,
// plus whether records of the stream remain after it.
func (s *Store) readRecords(m *streamMeta, pos uint64, limit int) (recs []json.RawMessage, next uint64, more bool, err error) {
	lo, hi := storage.RecordSpan(m.TableID)
	if start := storage.RecordKey(m.TableID, max(pos, m.Start+1)); bytes.Compare(start, lo) > 0 {
		lo = start
	}
	if !m.open() {
		hi = storage.RecordKey(m.TableID, m.End)
	}
	v := s.db.Acquire()
	defer v.Release()
	iter, err := v.NewIter(lo, hi)
	if err != nil {
		return nil, pos, false, err
	}
	defer iter.Close()
	next = pos
	size := 0
	for iter.First(); iter.Valid(); iter.Next() {
		seq := storage.RecordSeq(iter.Key())
		if !m.holds(seq) {
			continue
		}
		if len(recs) >= limit || size >= maxPageBytes {
			return recs, next, true, nil
		}
		raw := bytes.Clone(iter.Value()[8:])
		size += len(raw)
		recs = append(recs, raw)
		next = seq + 1
	}
	return recs, next, false, iter.Error()
}
