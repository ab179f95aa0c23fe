package kit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"lastro/collections/keys"
)

// StreamsAPI is the part of the DynamoDB Streams client the stream
// consumer uses; *dynamodbstreams.Client satisfies it.
type StreamsAPI interface {
	ListStreams(context.Context, *dynamodbstreams.ListStreamsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// NewEmbeddedStreamsClient returns the DynamoDB Streams client for the
// embedded store at endpoint, as NewEmbeddedClient does for the table.
func NewEmbeddedStreamsClient(endpoint string, hc *http.Client) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}},
		func(o *dynamodbstreams.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			if hc != nil {
				o.HTTPClient = hc
			}
			if isInProcess(hc) {
				o.APIOptions = append(o.APIOptions, withoutPayloadHash)
			}
		})
}

// NewStreamsClient returns the DynamoDB Streams client for cfg (AWS, or
// any endpoint when endpoint is set).
func NewStreamsClient(cfg aws.Config, endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}

// Streams errors callers compare with errors.Is.
var (
	// ErrNoStream: the table has no stream (or none enabled).
	ErrNoStream = errors.New("kit: the table has no stream")
	// ErrIteratorExpired: a shard iterator is older than 15 minutes; get a
	// new one from the checkpoint.
	ErrIteratorExpired = errors.New("kit: shard iterator expired")
	// ErrTrimmed: the position asked for is older than the stream's
	// retention (24 hours); those records are gone.
	ErrTrimmed = errors.New("kit: stream records trimmed")
)

// Streams reads the table's change stream. Like the rest of the kit it is
// the only place that holds the service client.
type Streams struct {
	api StreamsAPI
}

// NewStreams returns the stream reader over api.
func NewStreams(api StreamsAPI) *Streams { return &Streams{api: api} }

// Stream names one stream of a table.
type Stream struct {
	ARN, Label string
}

// Latest returns the table's newest stream: stream labels are creation
// timestamps, so the greatest is the newest.
func (s *Streams) Latest(ctx context.Context, tableName string) (Stream, error) {
	var best Stream
	in := &dynamodbstreams.ListStreamsInput{TableName: aws.String(tableName)}
	for {
		out, err := s.api.ListStreams(ctx, in)
		var nf *st.ResourceNotFoundException
		if errors.As(err, &nf) {
			return Stream{}, fmt.Errorf("%w: %s", ErrNoStream, tableName)
		}
		if err != nil {
			return Stream{}, classifyStreams("ListStreams", err)
		}
		for _, x := range out.Streams {
			if l := aws.ToString(x.StreamLabel); l > best.Label {
				best = Stream{ARN: aws.ToString(x.StreamArn), Label: l}
			}
		}
		if out.LastEvaluatedStreamArn == nil {
			break
		}
		in.ExclusiveStartStreamArn = out.LastEvaluatedStreamArn
	}
	if best.ARN == "" {
		return Stream{}, fmt.Errorf("%w: %s", ErrNoStream, tableName)
	}
	return best, nil
}

// Shard is one shard of a stream. End is its last sequence number, ""
// while the shard is open.
type Shard struct {
	ID, Parent string
	Start, End string
}

// Shards lists every shard of the stream, following DescribeStream's
// pages.
func (s *Streams) Shards(ctx context.Context, arn string) ([]Shard, error) {
	var shards []Shard
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)}
	for {
		out, err := s.api.DescribeStream(ctx, in)
		if err != nil {
			return nil, classifyStreams("DescribeStream", err)
		}
		if out.StreamDescription == nil {
			return shards, nil
		}
		for _, x := range out.StreamDescription.Shards {
			sh := Shard{ID: aws.ToString(x.ShardId), Parent: aws.ToString(x.ParentShardId)}
			if r := x.SequenceNumberRange; r != nil {
				sh.Start, sh.End = aws.ToString(r.StartingSequenceNumber), aws.ToString(r.EndingSequenceNumber)
			}
			shards = append(shards, sh)
		}
		last := out.StreamDescription.LastEvaluatedShardId
		if last == nil || aws.ToString(last) == "" {
			return shards, nil
		}
		in.ExclusiveStartShardId = last
	}
}

// Iterator returns an iterator on the shard: after the sequence number
// after, or from the oldest record kept (TRIM_HORIZON) when after is "".
func (s *Streams) Iterator(ctx context.Context, arn, shardID, after string) (string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shardID),
		ShardIteratorType: st.ShardIteratorTypeTrimHorizon}
	if after != "" {
		in.ShardIteratorType, in.SequenceNumber = st.ShardIteratorTypeAfterSequenceNumber, aws.String(after)
	}
	out, err := s.api.GetShardIterator(ctx, in)
	if err != nil {
		return "", classifyStreams("GetShardIterator", err)
	}
	return aws.ToString(out.ShardIterator), nil
}

// Change is one stream record with its images in the table's own
// attribute value types.
type Change struct {
	EventID, Sequence, Name string
	Keys, Old, New          Item
	// Service is true when DynamoDB itself made the change (a TTL
	// deletion): the record's userIdentity is the service principal.
	Service bool
	At      time.Time
}

// Records reads one page from the iterator. next is "" once the shard is
// closed and read to its end.
func (s *Streams) Records(ctx context.Context, iterator string, limit int32) (changes []Change, next string, err error) {
	in := &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(iterator)}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	out, err := s.api.GetRecords(ctx, in)
	if err != nil {
		return nil, "", classifyStreams("GetRecords", err)
	}
	changes = make([]Change, 0, len(out.Records))
	for _, r := range out.Records {
		c := Change{EventID: aws.ToString(r.EventID), Name: string(r.EventName)}
		if u := r.UserIdentity; u != nil {
			c.Service = aws.ToString(u.Type) == "Service" && aws.ToString(u.PrincipalId) == "dynamodb.amazonaws.com"
		}
		if d := r.Dynamodb; d != nil {
			c.Sequence = aws.ToString(d.SequenceNumber)
			c.Keys, c.Old, c.New = FromStreamItem(d.Keys), FromStreamItem(d.OldImage), FromStreamItem(d.NewImage)
			if d.ApproximateCreationDateTime != nil {
				c.At = d.ApproximateCreationDateTime.UTC()
			}
		}
		changes = append(changes, c)
	}
	return changes, aws.ToString(out.NextShardIterator), nil
}

// FromStreamItem converts an image of the Streams API into the table's
// attribute values (the two services have distinct, identical types); nil
// stays nil.
func FromStreamItem(in map[string]st.AttributeValue) Item {
	if in == nil {
		return nil
	}
	out := make(Item, len(in))
	for k, v := range in {
		out[k] = fromStreamValue(v)
	}
	return out
}

func fromStreamValue(v st.AttributeValue) types.AttributeValue {
	switch x := v.(type) {
	case *st.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}
	case *st.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}
	case *st.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: x.Value}
	case *st.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}
	case *st.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}
	case *st.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: x.Value}
	case *st.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: x.Value}
	case *st.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: x.Value}
	case *st.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = fromStreamValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *st.AttributeValueMemberM:
		m := make(map[string]types.AttributeValue, len(x.Value))
		for k, e := range x.Value {
			m[k] = fromStreamValue(e)
		}
		return &types.AttributeValueMemberM{Value: m}
	default:
		// An unknown member (a type added to the API later): NULL, so the
		// translator sees the attribute as absent rather than crashing.
		return &types.AttributeValueMemberNULL{Value: true}
	}
}

// classifyStreams maps a Streams API error onto the kit's errors.
func classifyStreams(op string, err error) error {
	var (
		expired *st.ExpiredIteratorException
		trimmed *st.TrimmedDataAccessException
		limit   *st.LimitExceededException
	)
	switch {
	case errors.As(err, &expired):
		return fmt.Errorf("kit: %s: %w", op, ErrIteratorExpired)
	case errors.As(err, &trimmed):
		return fmt.Errorf("kit: %s: %w", op, ErrTrimmed)
	case errors.As(err, &limit):
		return fmt.Errorf("kit: %s: %w", op, ErrThrottled)
	}
	return fmt.Errorf("kit: %s: %w", op, err)
}

// System returns the handle of the stream consumer: it reaches the
// platform's system partition (keys.System: shard leases and
// checkpoints) and every tenant's own partition T#<t> (the bucket
// counters), and nothing else — not a debtor's items. The consumer reads
// every tenant's changes from one stream, so its counters' writes are not
// scoped to one tenant; they are scoped to the counters' partition.
func (k *Kit) System() *Tenant { return &Tenant{k: k, system: true} }

// tenantOwn reports whether pk is a tenant's own partition, T#<t>.
func tenantOwn(pk string) bool {
	rest, ok := strings.CutPrefix(pk, "T"+keys.Sep)
	return ok && rest != "" && !strings.Contains(rest, keys.Sep)
}
