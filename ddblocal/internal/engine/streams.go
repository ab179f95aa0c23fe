package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
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
	IteratorLifetime = 15 * time.Minute
	// historyRetention is how long the records of a table with
	// point-in-time recovery are kept for exports: DynamoDB's longest
	// recovery window.
	historyRetention = MaxRecoveryDays * 24 * time.Hour
)

// Sequence numbers are rendered as 21 decimal digits, as on AWS.
func SeqString(n uint64) string { return "1" + fmt.Sprintf("%020d", n) }

func ParseSeq(s string) (uint64, bool) {
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

	Mu      sync.Mutex
	Metas   []*StreamMeta     // every stream still readable or covering an export window
	horizon map[uint32]uint64 // per table ID: lower sequence numbers were trimmed
	// floor is, per table ID, the Unix ms before which records may have
	// been deleted: history is whole only from it on (0: nothing deleted).
	floor map[uint32]int64
}

// StreamMeta describes one stream; it is persisted as JSON.
type StreamMeta struct {
	TableName string                  `json:"tableName"`
	TableID   uint32                  `json:"tableId"`
	Label     string                  `json:"label"`
	ViewType  string                  `json:"viewType"`
	KeySchema []wire.KeySchemaElement `json:"keySchema"`
	Created   time.Time               `json:"created"`
	// Start is reserved when the stream is enabled: its records follow it.
	Start uint64 `json:"start"`
	// End is reserved when the stream is disabled (0 while enabled).
	End    uint64    `json:"end,omitempty"`
	Closed time.Time `json:"closed,omitzero"`

	ARN string `json:"-"`
}

func (m *StreamMeta) Open() bool { return m.End == 0 }

// ShardID names the stream's single shard, stably, in AWS's format.
func (m *StreamMeta) ShardID() string {
	return fmt.Sprintf("shardId-%020d-%08x", m.Created.UnixMilli(), crc32.ChecksumIEEE([]byte(m.ARN)))
}

// holds reports whether the record with sequence number seq belongs to
// the stream.
func (m *StreamMeta) holds(seq uint64) bool { return seq > m.Start && (m.End == 0 || seq < m.End) }

func (s *Store) streamARN(table, label string) string { return s.TableARN(table) + "/stream/" + label }

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
	n := s.Streams.last.Load() + 1
	if n > s.Streams.ceiling {
		if err := s.reserveSeq(n - 1 + seqBlock); err != nil {
			// Pebble fails a synced write only when the disk does; the
			// batch being staged cannot be committed either.
			panic(fmt.Sprintf("ddblocal: reserve stream sequence numbers: %v", err))
		}
	}
	s.Streams.last.Store(n)
	return n
}

// reserveSeq durably records that sequence numbers up to ceiling may be
// in use. Callers hold s.commit (or run in Open).
func (s *Store) reserveSeq(ceiling uint64) error {
	if err := s.DB.Set(storage.SeqKey, binary.BigEndian.AppendUint64(nil, ceiling)); err != nil {
		return err
	}
	s.Streams.ceiling = ceiling
	return nil
}

// DurableSeq is the last sequence number readers may see: the last one
// in the durable view.
func (s *Store) DurableSeq() uint64 {
	v := s.DB.Acquire()
	defer v.Release()
	return v.Mark()
}

// appendStreamRecords adds the stream records of committed changes to the
// batch. Called with s.commit held.
func (s *Store) appendStreamRecords(b *storage.Batch, changes []*Change) {
	var now time.Time
	wrote := false
	for _, c := range changes {
		d := c.Def
		if !d.StreamEnabled || (c.Old == nil && c.New == nil) || (c.Old != nil && c.New != nil && sameItem(c.Old, c.New)) {
			continue
		}
		if !wrote {
			now = s.Now()
			wrote = true
		}
		seq := s.nextSeq()
		b.Set(storage.RecordKey(d.ID, seq), s.encodeRecord(d, c, seq, now))
	}
}

// StreamRecord is a record as GetRecords returns it.
type StreamRecord struct {
	EventID      string          `json:"eventID"`
	EventName    string          `json:"eventName"`
	EventVersion string          `json:"eventVersion"`
	EventSource  string          `json:"eventSource"`
	AwsRegion    string          `json:"awsRegion"`
	Dynamodb     StreamData      `json:"dynamodb"`
	UserIdentity *StreamIdentity `json:"userIdentity,omitempty"`
}

type StreamData struct {
	ApproximateCreationDateTime int64   `json:"ApproximateCreationDateTime"`
	Keys                        av.Item `json:"Keys"`
	NewImage                    av.Item `json:"NewImage,omitempty"`
	OldImage                    av.Item `json:"OldImage,omitempty"`
	SequenceNumber              string  `json:"SequenceNumber"`
	SizeBytes                   int     `json:"SizeBytes"`
	StreamViewType              string  `json:"StreamViewType"`
}

type StreamIdentity struct {
	PrincipalID string `json:"PrincipalId"`
	Type        string `json:"Type"`
}

// AppendJSON appends the record's JSON, members in the order of the
// struct's fields, the images as they are (ADR 0053).
func (r *StreamRecord) AppendJSON(b []byte) []byte {
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
func (s *Store) encodeRecord(d *TableDef, c *Change, seq uint64, now time.Time) []byte {
	r := StreamRecord{EventVersion: "1.1", EventSource: "aws:dynamodb", AwsRegion: s.Opts.Region, EventID: eventID()}
	image := c.New
	switch {
	case c.Old == nil:
		r.EventName = "INSERT"
	case c.New == nil:
		r.EventName, image = "REMOVE", c.Old
	default:
		r.EventName = "MODIFY"
	}
	data := StreamData{
		ApproximateCreationDateTime: now.Unix(),
		Keys:                        KeyOf(d, image),
		SequenceNumber:              SeqString(seq),
		StreamViewType:              d.StreamViewType,
	}
	data.SizeBytes = av.ItemSize(data.Keys)
	if c.New != nil && (d.StreamViewType == "NEW_IMAGE" || d.StreamViewType == "NEW_AND_OLD_IMAGES") {
		data.NewImage = c.New
		data.SizeBytes += av.ItemSize(c.New)
	}
	if c.Old != nil && (d.StreamViewType == "OLD_IMAGE" || d.StreamViewType == "NEW_AND_OLD_IMAGES") {
		data.OldImage = c.Old
		data.SizeBytes += av.ItemSize(c.Old)
	}
	r.Dynamodb = data
	if c.ttl {
		r.UserIdentity = &StreamIdentity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}
	}
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 512), uint64(now.UnixMilli()))
	return r.AppendJSON(out)
}

func eventID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// StreamTransition records that a table's stream was enabled, disabled or
// replaced by a definition change (old or new is nil when the table is
// being created or deleted). Enabling reserves the stream's starting
// sequence number; new.StreamLabel is made unique among the table's
// streams. Call it before the new definition becomes visible to writers.
func (s *Store) StreamTransition(old, new *TableDef) error {
	opening := new != nil && new.StreamEnabled && (old == nil || !old.StreamEnabled || old.StreamLabel != new.StreamLabel)
	closing := old != nil && old.StreamEnabled && (new == nil || !new.StreamEnabled || new.StreamLabel != old.StreamLabel)
	if !opening && !closing {
		return nil
	}
	s.DB.Lock()
	defer s.DB.Unlock()
	s.Streams.Mu.Lock()
	defer s.Streams.Mu.Unlock()
	b := s.DB.NewBatch()
	defer b.Close()
	if closing {
		if m := s.findStream(old.ID, old.StreamLabel); m != nil && m.Open() {
			m.End = s.nextSeq()
			m.Closed = s.Now()
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
		m := &StreamMeta{TableName: new.Name, TableID: new.ID, Label: new.StreamLabel, ViewType: new.StreamViewType,
			KeySchema: KeySchemaOf(new.Hash, new.Range), Created: s.Now(), Start: s.nextSeq()}
		m.ARN = s.streamARN(m.TableName, m.Label)
		s.Streams.Metas = append(s.Streams.Metas, m)
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

func (s *Store) stageMeta(b *storage.Batch, m *StreamMeta) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b.Set(storage.StreamKey(m.TableID, m.Label), raw)
	return nil
}

// findStream returns a stream by table ID and label. Callers hold
// s.streams.mu.
func (s *Store) findStream(tableID uint32, label string) *StreamMeta {
	for _, m := range s.Streams.Metas {
		if m.TableID == tableID && m.Label == label {
			return m
		}
	}
	return nil
}

// StreamByARN returns a copy of a stream still readable, or nil.
func (s *Store) StreamByARN(arn string) *StreamMeta {
	s.Streams.Mu.Lock()
	defer s.Streams.Mu.Unlock()
	for _, m := range s.Streams.Metas {
		if m.ARN == arn && s.Readable(m) {
			cp := *m
			return &cp
		}
	}
	return nil
}

// Readable reports whether a stream can still be listed and read: open,
// or closed less than 24 hours ago.
func (s *Store) Readable(m *StreamMeta) bool {
	return m.Open() || s.Now().Sub(m.Closed) < streamRetention
}

// loadStreams reads the stream state at Open and reconciles it with the
// catalog (a crash may separate a definition change from its stream
// descriptor).
func (s *Store) loadStreams() error {
	// Numbers up to the stored ceiling may have been handed out before a
	// crash (older stores kept the last number used there): resume above
	// it.
	v, err := s.DB.Get(storage.SeqKey)
	switch {
	case err == nil:
		s.Streams.last.Store(binary.BigEndian.Uint64(v))
	case !errors.Is(err, storage.ErrNotFound):
		return err
	}
	if err := s.reserveSeq(s.Streams.last.Load() + seqBlock); err != nil {
		return err
	}
	s.Streams.horizon = map[uint32]uint64{}
	s.Streams.floor = map[uint32]int64{}
	iter, err := s.DB.NewIter(storage.HorizonSpan())
	if err != nil {
		return err
	}
	var legacy []uint32
	for iter.First(); iter.Valid(); iter.Next() {
		id, v := storage.HorizonTable(iter.Key()), iter.Value()
		s.Streams.horizon[id] = binary.BigEndian.Uint64(v)
		if len(v) >= 16 {
			s.Streams.floor[id] = int64(binary.BigEndian.Uint64(v[8:]))
		} else {
			legacy = append(legacy, id)
		}
	}
	if err := iter.Close(); err != nil {
		return err
	}
	for _, id := range legacy {
		if s.Streams.floor[id], err = s.legacyFloor(id); err != nil {
			return err
		}
	}
	iter, err = s.DB.NewIter(storage.StreamSpan())
	if err != nil {
		return err
	}
	for iter.First(); iter.Valid(); iter.Next() {
		m := &StreamMeta{}
		if err := json.Unmarshal(iter.Value(), m); err != nil {
			iter.Close()
			return fmt.Errorf("ddblocal: stream descriptor %q: %w", iter.Key(), err)
		}
		m.ARN = s.streamARN(m.TableName, m.Label)
		s.Streams.Metas = append(s.Streams.Metas, m)
	}
	if err := iter.Close(); err != nil {
		return err
	}
	// Close open streams whose table no longer has them; open the streams
	// the catalog has but the descriptors miss.
	byID := map[uint32]*TableDef{}
	for _, t := range s.Tables {
		d := t.Def.Load()
		byID[d.ID] = d
	}
	for _, m := range s.Streams.Metas {
		d := byID[m.TableID]
		if m.Open() && (d == nil || !d.StreamEnabled || d.StreamLabel != m.Label) {
			gone := &TableDef{ID: m.TableID, StreamEnabled: true, StreamLabel: m.Label}
			if err := s.StreamTransition(gone, nil); err != nil {
				return err
			}
		}
	}
	for _, d := range byID {
		if d.StreamEnabled && s.findStream(d.ID, d.StreamLabel) == nil {
			if err := s.StreamTransition(nil, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// TrimStreams trims every table's stream records (trimTable) and forgets
// streams no longer needed: closed more than 24 hours ago, or, on a table
// with point-in-time recovery, more than the recovery window ago (until
// then an export may still need to know the stream covered a window; the
// Streams API already no longer shows it).
func (s *Store) TrimStreams() error {
	keepFor := s.recordRetentions()
	now := s.Now()
	s.Streams.Mu.Lock()
	tables := map[uint32]bool{}
	var keep, drop []*StreamMeta
	for _, m := range s.Streams.Metas {
		tables[m.TableID] = true
		if s.Readable(m) || now.Sub(m.Closed) < retentionOf(keepFor, m.TableID) {
			keep = append(keep, m)
		} else {
			drop = append(drop, m)
		}
	}
	s.Streams.Metas = keep
	s.Streams.Mu.Unlock()
	if len(drop) > 0 {
		b := s.DB.NewBatch()
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
	s.Mu.RLock()
	defer s.Mu.RUnlock()
	out := map[uint32]time.Duration{}
	for _, t := range s.Tables {
		if d := t.Def.Load(); d.PITR != nil && d.PITR.Enabled {
			out[d.ID] = historyRetention
		}
	}
	return out
}

func retentionOf(keepFor map[uint32]time.Duration, tableID uint32) time.Duration {
	return max(keepFor[tableID], streamRetention)
}

// TrimTable trims one table's stream records (see trimTableFor).
func (s *Store) TrimTable(tableID uint32) error {
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
	now := s.Now()
	lo, _ := storage.RecordSpan(tableID)
	horizon, trimmed, err := s.firstNewer(tableID, s.HorizonOf(tableID), uint64(now.Add(-streamRetention).UnixMilli()))
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
	b := s.DB.NewBatch()
	defer b.Close()
	s.Streams.Mu.Lock()
	defer s.Streams.Mu.Unlock()
	// Every record deleted was written before cutoff, and none written
	// since is: history is whole from cutoff on.
	horizon = max(horizon, s.Streams.horizon[tableID])
	floor := s.Streams.floor[tableID]
	if deleting {
		b.DeleteRange(lo, storage.RecordKey(tableID, deleteTo))
		floor = max(floor, cutoff)
	}
	b.Set(storage.HorizonKey(tableID), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, horizon), uint64(floor)))
	if err := b.Commit(); err != nil {
		return err
	}
	s.Streams.horizon[tableID], s.Streams.floor[tableID] = horizon, floor
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
	iter, err := s.DB.NewIter(lo, hi)
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
	iter, err := s.DB.NewIter(storage.RecordKey(tableID, s.Streams.horizon[tableID]), hi)
	if err != nil {
		return 0, err
	}
	floor := s.Now().UnixMilli()
	if iter.First() {
		floor = int64(binary.BigEndian.Uint64(iter.Value()[:8]))
	}
	return floor, iter.Close()
}

// HistoryFloor returns the time before which a table's records may have
// been deleted (the zero time if none was).
func (s *Store) HistoryFloor(tableID uint32) time.Time {
	s.Streams.Mu.Lock()
	defer s.Streams.Mu.Unlock()
	if f := s.Streams.floor[tableID]; f > 0 {
		return time.UnixMilli(f)
	}
	return time.Time{}
}

// HorizonOf returns the lowest sequence number of a table that was not
// trimmed.
func (s *Store) HorizonOf(tableID uint32) uint64 {
	s.Streams.Mu.Lock()
	defer s.Streams.Mu.Unlock()
	return s.Streams.horizon[tableID]
}

// ReadRecords returns up to limit raw records of a stream from position
// pos (a sequence number, inclusive) and the position after the last one,
// plus whether records of the stream remain after it.
func (s *Store) ReadRecords(m *StreamMeta, pos uint64, limit int) (recs []json.RawMessage, next uint64, more bool, err error) {
	lo, hi := storage.RecordSpan(m.TableID)
	if start := storage.RecordKey(m.TableID, max(pos, m.Start+1)); bytes.Compare(start, lo) > 0 {
		lo = start
	}
	if !m.Open() {
		hi = storage.RecordKey(m.TableID, m.End)
	}
	v := s.DB.Acquire()
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
		if len(recs) >= limit || size >= MaxPageBytes {
			return recs, next, true, nil
		}
		raw := bytes.Clone(iter.Value()[8:])
		size += len(raw)
		recs = append(recs, raw)
		next = seq + 1
	}
	return recs, next, false, iter.Error()
}
