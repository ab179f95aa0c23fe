package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"lastro/collections/kit"
	"lastro/stream"
)

// fakeStreams is a stream of several shards, as AWS splits them: a
// closed parent and its open child, listed child first and one shard per
// DescribeStream page.
type fakeStreams struct {
	mu     sync.Mutex
	shards []fakeShard
}

type fakeShard struct {
	id, parent string
	closed     bool
	seqs       []int
}

func (f *fakeStreams) ListStreams(context.Context, *dynamodbstreams.ListStreamsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error) {
	return &dynamodbstreams.ListStreamsOutput{Streams: []st.Stream{{StreamArn: aws.String("arn:fake/stream/L1"), StreamLabel: aws.String("L1")}}}, nil
}

func (f *fakeStreams) DescribeStream(_ context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	if in.ExclusiveStartShardId != nil {
		i = slices.IndexFunc(f.shards, func(s fakeShard) bool { return s.id == *in.ExclusiveStartShardId }) + 1
	}
	desc := &st.StreamDescription{StreamArn: in.StreamArn}
	if i < len(f.shards) {
		s := f.shards[i]
		r := &st.SequenceNumberRange{StartingSequenceNumber: aws.String(strconv.Itoa(s.seqs[0]))}
		if s.closed {
			r.EndingSequenceNumber = aws.String(strconv.Itoa(s.seqs[len(s.seqs)-1]))
		}
		sh := st.Shard{ShardId: aws.String(s.id), SequenceNumberRange: r}
		if s.parent != "" {
			sh.ParentShardId = aws.String(s.parent)
		}
		desc.Shards = []st.Shard{sh}
		if i+1 < len(f.shards) {
			desc.LastEvaluatedShardId = aws.String(s.id)
		}
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: desc}, nil
}

// Iterators are "<shard>|<position>" (the index of the next record).
func (f *fakeStreams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(*in.ShardId)
	pos := 0
	if in.ShardIteratorType == st.ShardIteratorTypeAfterSequenceNumber {
		after, _ := strconv.Atoi(*in.SequenceNumber)
		pos = slices.IndexFunc(s.seqs, func(n int) bool { return n > after })
		if pos < 0 {
			pos = len(s.seqs)
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%d", s.id, pos))}, nil
}

func (f *fakeStreams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, p, _ := strings.Cut(*in.ShardIterator, "|")
	pos, _ := strconv.Atoi(p)
	s := f.shard(id)
	end := min(pos+2, len(s.seqs))
	out := &dynamodbstreams.GetRecordsOutput{}
	for _, n := range s.seqs[pos:end] {
		ct := "C-" + id
		out.Records = append(out.Records, st.Record{EventID: aws.String(strconv.Itoa(n)), EventName: st.OperationTypeInsert,
			Dynamodb: &st.StreamRecord{SequenceNumber: aws.String(strconv.Itoa(n)),
				Keys: map[string]st.AttributeValue{"PK": &st.AttributeValueMemberS{Value: "T#t1#D#0123456789abcdef"}},
				NewImage: map[string]st.AttributeValue{"type": &st.AttributeValueMemberS{Value: "NOTE"},
					"contractId": &st.AttributeValueMemberS{Value: ct}, "n": &st.AttributeValueMemberS{Value: strconv.Itoa(n)}}}})
	}
	if end < len(s.seqs) || !s.closed {
		out.NextShardIterator = aws.String(fmt.Sprintf("%s|%d", id, end))
	}
	return out, nil
}

func (f *fakeStreams) shard(id string) fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	panic("no shard " + id)
}

// TestParentShardsAreReadBeforeTheirChildren: DescribeStream lists the
// children first, over several pages; the consumer still reads the
// closed parent to its end, then the child, then the grandchild, and
// marks the parent finished so a later pass reads only the open shard.
func TestParentShardsAreReadBeforeTheirChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fake := &fakeStreams{shards: []fakeShard{
		{id: "shardId-0003", parent: "shardId-0002", seqs: []int{700, 800}},
		{id: "shardId-0002", parent: "shardId-0001", closed: true, seqs: []int{400, 500, 600}},
		{id: "shardId-0001", closed: true, seqs: []int{100, 200, 300}},
	}}
	pub := &memPub{}
	c, err := stream.New(stream.Config{Kit: f.kit, Streams: kit.NewStreams(fake), Translate: note, Publisher: pub, DeadLetter: &memDead{},
		Owner: "a", LeaseClock: f.lease, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := ns(pub.all()), []string{"100", "200", "300", "400", "500", "600", "700", "800"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v (parents first)", got, want)
	}
	// The open shard grows; the finished ones are not read again.
	fake.mu.Lock()
	fake.shards[0].seqs = append(fake.shards[0].seqs, 900)
	fake.mu.Unlock()
	if _, err := c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ns(pub.all()); len(got) != 9 || got[8] != "900" {
		t.Fatalf("after the open shard grew: %v", got)
	}
}
