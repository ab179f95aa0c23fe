package ddblocal_test

// The visibility crash test checks that readers and stream consumers see
// only durable writes: it runs writers, consistent readers and a stream
// consumer against a child store, kills the store with SIGKILL mid-load,
// restarts it and checks that everything a reader saw or a consumer
// received survived, that no sequence number names two records, and that a
// consumer resuming from its checkpoint receives every later write.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

const visTable = "vis"

// visRecord is what a consumer learnt from one stream record.
type visRecord struct {
	event, key string
}

func TestCrashReadsSeeOnlyDurableWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := startCrashChild(t, dir)
	c := benchClient(child.url)
	ctx := context.Background()
	out, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(visTable),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	arn := *out.TableDescription.LatestStreamArn

	seen := map[string]bool{}         // items a reader saw, in any cycle
	records := map[uint64]visRecord{} // every record a consumer received
	var checkpoint string             // the consumer's last sequence number
	acked := map[string]bool{}        // acknowledged puts
	for cycle := range 2 {
		r := visLoad(t, child.url, arn, cycle, checkpoint, child.kill)
		for k := range r.seen {
			seen[k] = true
		}
		for k := range r.acked {
			acked[k] = true
		}
		for seq, rec := range r.records {
			if old, ok := records[seq]; ok && old != rec {
				t.Errorf("sequence number %d named %+v, then %+v", seq, old, rec)
			}
			records[seq] = rec
		}
		if r.checkpoint != "" {
			checkpoint = r.checkpoint
		}
		child = startCrashChild(t, dir)
		c = benchClient(child.url)
		items := crashScanAll(t, c, &dynamodb.ScanInput{TableName: aws.String(visTable), ConsistentRead: aws.Bool(true)})
		for k := range seen {
			if items[k] == nil {
				t.Errorf("cycle %d: a reader saw item %s, which the crash lost", cycle, k)
			}
		}
		for k := range acked {
			if items[k] == nil {
				t.Errorf("cycle %d: acknowledged item %s lost", cycle, k)
			}
		}
		// Every record a consumer received is still in the stream, under
		// the same sequence number.
		all := visReadStream(t, streamsClient(child.url), arn, stypes.ShardIteratorTypeTrimHorizon, "")
		for seq, rec := range records {
			if got, ok := all[seq]; !ok {
				t.Errorf("cycle %d: record %d (%+v) was received before the crash and is gone", cycle, seq, rec)
			} else if got != rec {
				t.Errorf("cycle %d: sequence number %d named %+v before the crash and %+v after", cycle, seq, rec, got)
			}
		}
		if t.Failed() {
			return
		}
	}
	// After the last restart, new writes reach a consumer resuming after
	// its checkpoint, with sequence numbers no record had before.
	var fresh []string
	for i := range 20 {
		k := "after#" + strconv.Itoa(i)
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(visTable),
			Item: map[string]types.AttributeValue{"pk": crashS(k)}}); err != nil {
			t.Fatalf("put after restart: %v", err)
		}
		fresh = append(fresh, k)
	}
	if checkpoint == "" {
		t.Fatal("the consumer received no record before the crashes")
	}
	resumed := visReadStream(t, streamsClient(child.url), arn, stypes.ShardIteratorTypeAfterSequenceNumber, checkpoint)
	got := map[string]uint64{}
	for seq, rec := range resumed {
		got[rec.key] = seq
		if old, ok := records[seq]; ok && old != rec {
			t.Errorf("sequence number %d named %+v before the crash and %+v after", seq, old, rec)
		}
	}
	for _, k := range fresh {
		if _, ok := got[k]; !ok {
			t.Errorf("a consumer resuming after %s missed the write of %s", checkpoint, k)
		}
	}
}

type visResult struct {
	seen       map[string]bool
	acked      map[string]bool
	records    map[uint64]visRecord
	checkpoint string
}

// visLoad runs 8 writers putting new items, 4 readers reading the items
// being written (consistent GetItem; one reader also scans) and a stream
// consumer, and kills the store once a few hundred writes were
// acknowledged.
func visLoad(t *testing.T, url, arn string, cycle int, checkpoint string, kill func()) visResult {
	const writers, readers = 8, 4
	c := benchClient(url)
	sc := streamsClient(url)
	var (
		wg, rg   sync.WaitGroup
		mu       sync.Mutex
		n        atomic.Int64
		killed   atomic.Bool
		inflight [writers]atomic.Int64
		res      = visResult{seen: map[string]bool{}, acked: map[string]bool{}, records: map[uint64]visRecord{}, checkpoint: checkpoint}
	)
	key := func(w, i int) string { return fmt.Sprintf("w#%d#%d#%d", cycle, w, i) }
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				inflight[w].Store(int64(i))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(visTable),
					Item: map[string]types.AttributeValue{"pk": crashS(key(w, i))}})
				cancel()
				if err != nil {
					if !killed.Load() {
						t.Errorf("put failed before the crash: %v", err)
					}
					return
				}
				mu.Lock()
				res.acked[key(w, i)] = true
				mu.Unlock()
				n.Add(1)
			}
		})
	}
	stop := make(chan struct{})
	for r := range readers {
		rg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				if r == 0 && j%4 == 0 {
					// A consistent Scan page: what it returns must be durable too.
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					page, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(visTable), ConsistentRead: aws.Bool(true), Limit: aws.Int32(100)})
					cancel()
					if err != nil {
						if killed.Load() {
							return
						}
						continue
					}
					mu.Lock()
					for _, it := range page.Items {
						res.seen[it["pk"].(*types.AttributeValueMemberS).Value] = true
					}
					mu.Unlock()
					continue
				}
				w := (r + j) % writers
				k := key(w, int(inflight[w].Load()))
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(visTable), ConsistentRead: aws.Bool(true),
					Key: map[string]types.AttributeValue{"pk": crashS(k)}})
				cancel()
				if err != nil {
					if killed.Load() {
						return
					}
					continue
				}
				if got.Item != nil {
					mu.Lock()
					res.seen[k] = true
					mu.Unlock()
				}
			}
		})
	}
	rg.Go(func() {
		typ, seq := stypes.ShardIteratorTypeTrimHorizon, (*string)(nil)
		if checkpoint != "" {
			typ, seq = stypes.ShardIteratorTypeAfterSequenceNumber, aws.String(checkpoint)
		}
		it := visIterator(sc, arn, typ, seq)
		for it != nil {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			page, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			cancel()
			if err != nil {
				return
			}
			mu.Lock()
			for _, rec := range page.Records {
				s := visSeq(t, *rec.Dynamodb.SequenceNumber)
				res.records[s] = visRecord{event: string(rec.EventName), key: rec.Dynamodb.Keys["pk"].(*stypes.AttributeValueMemberS).Value}
				res.checkpoint = *rec.Dynamodb.SequenceNumber
			}
			mu.Unlock()
			it = page.NextShardIterator
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	target := int64(300 + rand.IntN(300))
	for n.Load() < target && time.Now().Before(deadline) && !t.Failed() {
		time.Sleep(2 * time.Millisecond)
	}
	killed.Store(true)
	kill()
	wg.Wait()
	close(stop)
	rg.Wait()
	t.Logf("cycle %d: killed after %d acknowledged puts; readers saw %d items, the consumer %d records",
		cycle, n.Load(), len(res.seen), len(res.records))
	return res
}

// visIterator returns a shard iterator of the stream's only shard, or nil.
func visIterator(sc *dynamodbstreams.Client, arn string, typ stypes.ShardIteratorType, seq *string) *string {
	ctx := context.Background()
	d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil || len(d.StreamDescription.Shards) == 0 {
		return nil
	}
	it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn),
		ShardId: d.StreamDescription.Shards[0].ShardId, ShardIteratorType: typ, SequenceNumber: seq})
	if err != nil {
		return nil
	}
	return it.ShardIterator
}

// visReadStream reads the stream from an iterator position to its current
// end.
func visReadStream(t *testing.T, sc *dynamodbstreams.Client, arn string, typ stypes.ShardIteratorType, seq string) map[uint64]visRecord {
	t.Helper()
	var sp *string
	if seq != "" {
		sp = aws.String(seq)
	}
	it := visIterator(sc, arn, typ, sp)
	if it == nil {
		t.Fatalf("no %s iterator for %s", typ, arn)
	}
	out := map[uint64]visRecord{}
	for it != nil {
		// A connection the client kept from before a kill can fail one
		// read ("use of closed network connection"): the same iterator
		// reads the same records again, so a failed call is retried.
		var page *dynamodbstreams.GetRecordsOutput
		var err error
		for try := 0; try < 3; try++ {
			if page, err = sc.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: it}); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("get records: %v", err)
		}
		if len(page.Records) == 0 {
			break
		}
		for _, rec := range page.Records {
			s := visSeq(t, *rec.Dynamodb.SequenceNumber)
			r := visRecord{event: string(rec.EventName), key: rec.Dynamodb.Keys["pk"].(*stypes.AttributeValueMemberS).Value}
			if old, dup := out[s]; dup {
				t.Errorf("sequence number %d names %+v and %+v", s, old, r)
			}
			out[s] = r
		}
		it = page.NextShardIterator
	}
	return out
}

// visSeq parses a sequence number (21 digits: "1" and 20 more).
func visSeq(t *testing.T, s string) uint64 {
	n, err := strconv.ParseUint(s[1:], 10, 64)
	if err != nil || len(s) != 21 {
		t.Errorf("bad sequence number %q", s)
	}
	return n
}
