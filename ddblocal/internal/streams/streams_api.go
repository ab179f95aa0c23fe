package streams

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// The DynamoDB Streams API (DynamoDBStreams_20120810.*), served on the
// same endpoint as DynamoDB so that the SDK's dynamodbstreams client works
// unchanged against it.

// StreamOperations serves the DynamoDB Streams API.
func (s *Store) StreamOperations() map[string]wire.HandlerFunc {
	return map[string]wire.HandlerFunc{
		"ListStreams":      s.listStreams,
		"DescribeStream":   s.describeStream,
		"GetShardIterator": s.getShardIterator,
		"GetRecords":       s.getRecords,
	}
}

var streamARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[a-zA-Z0-9_.-]{3,255}/stream/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}$`)

func streamNotFound(arn string) *wire.APIError {
	return wire.NotFound("Requested resource not found: Stream: " + arn + " not found")
}

func trimmedData() *wire.APIError {
	return &wire.APIError{Type: "TrimmedDataAccessException", Status: 400,
		Message: "The operation attempted to read past the oldest stream record in a shard."}
}

// lookupStream finds a readable stream by a validated ARN member.
func (s *Store) lookupStream(arn string) (*engine.StreamMeta, error) {
	if !streamARNPattern.MatchString(arn) {
		return nil, wire.Validation("Invalid StreamArn")
	}
	m := s.StreamByARN(arn)
	if m == nil {
		return nil, streamNotFound(arn)
	}
	return m, nil
}

type listStreamsInput struct {
	TableName               *string `json:"TableName"`
	Limit                   *int64  `json:"Limit"`
	ExclusiveStartStreamArn *string `json:"ExclusiveStartStreamArn"`
}

type streamSummary struct {
	StreamArn   string `json:"StreamArn"`
	TableName   string `json:"TableName"`
	StreamLabel string `json:"StreamLabel"`
}

func (s *Store) listStreams(ctx context.Context, body []byte) (any, error) {
	var in listStreamsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	if in.TableName != nil {
		c.Name("tableName", *in.TableName, 3)
	}
	c.Min("limit", in.Limit, 1)
	c.Max("limit", in.Limit, 100)
	c.Length("exclusiveStartStreamArn", in.ExclusiveStartStreamArn, 37, 1024)
	if err := c.Err(); err != nil {
		return nil, err
	}
	if in.ExclusiveStartStreamArn != nil && !streamARNPattern.MatchString(*in.ExclusiveStartStreamArn) {
		return nil, wire.Validation("Invalid ExclusiveStartStreamArn")
	}
	if in.TableName != nil && s.Table(*in.TableName) == nil {
		return nil, wire.NotFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	s.Streams.Mu.Lock()
	var list []streamSummary
	for _, m := range s.Streams.Metas {
		if !s.Readable(m) || (in.TableName != nil && m.TableName != *in.TableName) {
			continue
		}
		if in.ExclusiveStartStreamArn != nil && m.ARN <= *in.ExclusiveStartStreamArn {
			continue
		}
		list = append(list, streamSummary{StreamArn: m.ARN, TableName: m.TableName, StreamLabel: m.Label})
	}
	s.Streams.Mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].StreamArn < list[j].StreamArn })
	limit := 100
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	out := map[string]any{}
	if len(list) > limit {
		list = list[:limit]
		out["LastEvaluatedStreamArn"] = list[limit-1].StreamArn
	}
	if list == nil {
		list = []streamSummary{}
	}
	out["Streams"] = list
	return out, nil
}

type describeStreamInput struct {
	StreamArn             *string `json:"StreamArn"`
	Limit                 *int64  `json:"Limit"`
	ExclusiveStartShardId *string `json:"ExclusiveStartShardId"`
}

func (s *Store) describeStream(ctx context.Context, body []byte) (any, error) {
	var in describeStreamInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NotNull("streamArn", in.StreamArn == nil)
	c.Length("streamArn", in.StreamArn, 37, 1024)
	c.Min("limit", in.Limit, 1)
	c.Max("limit", in.Limit, 100)
	c.Length("exclusiveStartShardId", in.ExclusiveStartShardId, 28, 65)
	if err := c.Err(); err != nil {
		return nil, err
	}
	m, err := s.lookupStream(*in.StreamArn)
	if err != nil {
		return nil, err
	}
	status := "ENABLED"
	rng := map[string]string{"StartingSequenceNumber": engine.SeqString(m.Start)}
	if !m.Open() {
		status = "DISABLED"
		rng["EndingSequenceNumber"] = engine.SeqString(m.End)
	}
	desc := map[string]any{
		"StreamArn":               m.ARN,
		"StreamLabel":             m.Label,
		"StreamStatus":            status,
		"StreamViewType":          m.ViewType,
		"CreationRequestDateTime": float64(m.Created.UnixMilli()) / 1000,
		"TableName":               m.TableName,
		"KeySchema":               m.KeySchema,
	}
	shards := []map[string]any{}
	if in.ExclusiveStartShardId == nil || *in.ExclusiveStartShardId < m.ShardID() {
		shards = append(shards, map[string]any{"ShardId": m.ShardID(), "SequenceNumberRange": rng})
	}
	desc["Shards"] = shards
	return map[string]any{"StreamDescription": desc}, nil
}

type getShardIteratorInput struct {
	StreamArn         *string `json:"StreamArn"`
	ShardId           *string `json:"ShardId"`
	ShardIteratorType *string `json:"ShardIteratorType"`
	SequenceNumber    *string `json:"SequenceNumber"`
}

func (s *Store) getShardIterator(ctx context.Context, body []byte) (any, error) {
	var in getShardIteratorInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NotNull("streamArn", in.StreamArn == nil)
	c.Length("streamArn", in.StreamArn, 37, 1024)
	c.NotNull("shardId", in.ShardId == nil)
	c.Length("shardId", in.ShardId, 28, 65)
	c.NotNull("shardIteratorType", in.ShardIteratorType == nil)
	if in.ShardIteratorType != nil {
		c.Enum("shardIteratorType", *in.ShardIteratorType, "TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER")
	}
	c.Length("sequenceNumber", in.SequenceNumber, 21, 40)
	if err := c.Err(); err != nil {
		return nil, err
	}
	m, err := s.lookupStream(*in.StreamArn)
	if err != nil {
		return nil, err
	}
	if *in.ShardId != m.ShardID() {
		return nil, wire.NotFound("Requested resource not found: Shard does not exist")
	}
	kind := *in.ShardIteratorType
	bySeq := kind == "AT_SEQUENCE_NUMBER" || kind == "AFTER_SEQUENCE_NUMBER"
	switch {
	case bySeq && in.SequenceNumber == nil:
		return nil, wire.Validation("Must provide SequenceNumber for ShardIteratorType %s", kind)
	case !bySeq && in.SequenceNumber != nil:
		return nil, wire.Validation("SequenceNumber may not be provided for ShardIteratorType %s", kind)
	}
	if err := s.TrimTable(m.TableID); err != nil {
		return nil, err
	}
	horizon := s.HorizonOf(m.TableID)
	last := s.DurableSeq() // a reader never sees a record not yet durable
	var pos uint64
	switch kind {
	case "TRIM_HORIZON":
		pos = max(m.Start+1, horizon)
	case "LATEST":
		pos = last + 1
		if !m.Open() {
			pos = m.End
		}
	default:
		seq, ok := engine.ParseSeq(*in.SequenceNumber)
		if !ok || seq < m.Start || (!m.Open() && seq > m.End) || seq > last {
			return nil, wire.Validation("Invalid SequenceNumber %s for shard %s", *in.SequenceNumber, m.ShardID())
		}
		if seq < horizon {
			return nil, trimmedData()
		}
		pos = seq
		if kind == "AFTER_SEQUENCE_NUMBER" {
			pos++
		}
	}
	return map[string]any{"ShardIterator": s.encodeIterator(m, pos)}, nil
}

// A shard iterator is the stream ARN, a version and an opaque payload: the
// next sequence number to read, when the iterator was issued, and the
// shard's starting sequence number (naming the shard).
func (s *Store) encodeIterator(m *engine.StreamMeta, pos uint64) string {
	var p [24]byte
	binary.BigEndian.PutUint64(p[0:], pos)
	binary.BigEndian.PutUint64(p[8:], uint64(s.Now().UnixMilli()))
	binary.BigEndian.PutUint64(p[16:], m.Start)
	return m.ARN + "|1|" + base64.StdEncoding.EncodeToString(p[:])
}

type shardIterator struct {
	arn    string
	pos    uint64
	issued time.Time
	start  uint64
}

func decodeIterator(it string) (shardIterator, bool) {
	i := strings.LastIndex(it, "|1|")
	if i < 0 {
		return shardIterator{}, false
	}
	p, err := base64.StdEncoding.DecodeString(it[i+3:])
	if err != nil || len(p) != 24 || !streamARNPattern.MatchString(it[:i]) {
		return shardIterator{}, false
	}
	return shardIterator{
		arn:    it[:i],
		pos:    binary.BigEndian.Uint64(p[0:]),
		issued: time.UnixMilli(int64(binary.BigEndian.Uint64(p[8:]))),
		start:  binary.BigEndian.Uint64(p[16:]),
	}, true
}

type getRecordsInput struct {
	ShardIterator *string `json:"ShardIterator"`
	Limit         *int64  `json:"Limit"`
}

type getRecordsOutput struct {
	Records           []json.RawMessage `json:"Records"`
	NextShardIterator string            `json:"NextShardIterator,omitempty"`
}

// javaDate formats a time as Java's Date.toString does, as DynamoDB's
// ExpiredIteratorException message shows it.
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

func (s *Store) getRecords(ctx context.Context, body []byte) (any, error) {
	var in getRecordsInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.NotNull("shardIterator", in.ShardIterator == nil)
	c.Length("shardIterator", in.ShardIterator, 1, 2048)
	c.Min("limit", in.Limit, 1)
	c.Max("limit", in.Limit, 1000)
	if err := c.Err(); err != nil {
		return nil, err
	}
	it, ok := decodeIterator(*in.ShardIterator)
	if !ok {
		return nil, wire.Validation("Invalid ShardIterator")
	}
	m := s.StreamByARN(it.arn)
	if m == nil {
		return nil, streamNotFound(it.arn)
	}
	if it.start != m.Start {
		return nil, wire.NotFound("Invalid ShardId in ShardIterator")
	}
	now := s.Now()
	if now.Sub(it.issued) > engine.IteratorLifetime {
		return nil, &wire.APIError{Type: "ExpiredIteratorException", Status: 400,
			Message: fmt.Sprintf("Iterator expired. The iterator was created at time %s while right now it is %s which is further in the future than the tolerated delay of %d milliseconds.",
				it.issued.UTC().Format(javaDate), now.UTC().Format(javaDate), engine.IteratorLifetime.Milliseconds())}
	}
	if err := s.TrimTable(m.TableID); err != nil {
		return nil, err
	}
	if it.pos < s.HorizonOf(m.TableID) {
		return nil, trimmedData()
	}
	limit := 1000
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	recs, next, more, err := s.ReadRecords(m, it.pos, limit)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: read stream records: %w", err)
	}
	out := &getRecordsOutput{Records: recs}
	if out.Records == nil {
		out.Records = []json.RawMessage{}
	}
	// A closed shard read to its end has no next iterator.
	if m.Open() || more {
		out.NextShardIterator = s.encodeIterator(m, next)
	}
	return out, nil
}
