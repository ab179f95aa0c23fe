package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"lastro/stream"
)

// TestKafkaKeepsAContractsEventsInOrder produces to franz-go's in-process
// cluster (the real protocol) and reads the topic back: every event once,
// keyed by tenant and contract, a contract's events on one partition in
// the order published.
func TestKafkaKeepsAContractsEventsInOrder(t *testing.T) {
	t.Parallel()
	const topic = "lastro-events"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	pub := stream.NewKafka(producer, topic)

	// Several contracts of two tenants, their events interleaved across
	// batches; the ids say each contract's order.
	var published []stream.Event
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for batch := range 5 {
		var evs []stream.Event
		for c := range 6 {
			e := stream.Event{ID: fmt.Sprintf("%d-%d", batch, c), Type: stream.BucketChanged, SchemaVersion: 1,
				Tenant: fmt.Sprint("t", c%2), ContractID: fmt.Sprint("C-", c), DebtorKey: dk, At: at, Sequence: fmt.Sprint(batch)}
			evs = append(evs, e)
		}
		if batch == 2 { // an event about no contract
			evs = append(evs, stream.Event{ID: "u", Type: stream.SettlementUnmatched, SchemaVersion: 1, Tenant: "t0", At: at, Sequence: "2"})
		}
		if err := pub.Publish(ctx, evs); err != nil {
			t.Fatal(err)
		}
		published = append(published, evs...)
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got []*kgo.Record
	for len(got) < len(published) {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(got), len(published), err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		got = append(got, fs.Records()...)
	}
	if len(got) != len(published) {
		t.Fatalf("%d records, want %d", len(got), len(published))
	}
	partition := map[string]int32{}
	order := map[string][]string{}
	for _, r := range got {
		var e stream.Event
		if err := json.Unmarshal(r.Value, &e); err != nil {
			t.Fatal(err)
		}
		if string(r.Key) != stream.Key(e) {
			t.Errorf("record of %s keyed %q, want %q", e.ID, r.Key, stream.Key(e))
		}
		if p, ok := partition[string(r.Key)]; ok && p != r.Partition {
			t.Errorf("key %s on partitions %d and %d", r.Key, p, r.Partition)
		}
		partition[string(r.Key)] = r.Partition
		order[string(r.Key)] = append(order[string(r.Key)], e.ID)
		hdr := map[string]string{}
		for _, h := range r.Headers {
			hdr[h.Key] = string(h.Value)
		}
		if hdr["type"] != e.Type || hdr["id"] != e.ID || hdr["schemaVersion"] != "1" {
			t.Errorf("headers %v of %+v", hdr, e)
		}
	}
	for c := range 6 {
		key := fmt.Sprintf("t%d#C-%d", c%2, c)
		want := []string{}
		for batch := range 5 {
			want = append(want, fmt.Sprintf("%d-%d", batch, c))
		}
		if !slices.Equal(order[key], want) {
			t.Errorf("contract %s read as %v, want %v", key, order[key], want)
		}
	}
	if !slices.Equal(order["t0"], []string{"u"}) {
		t.Errorf("tenant-keyed events %v", order["t0"])
	}
	if len(partitionsUsed(partition)) < 2 {
		t.Errorf("every key on one partition: the test would not see a reordering across partitions")
	}
}

func partitionsUsed(m map[string]int32) map[int32]bool {
	out := map[int32]bool{}
	for _, p := range m {
		out[p] = true
	}
	return out
}

func TestKafkaReportsAnUnacknowledgedBatch(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.UnknownTopicRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = stream.NewKafka(cl, "missing").Publish(ctx, []stream.Event{{ID: "1-0", Type: stream.BucketChanged, Tenant: "t0", ContractID: "C-1"}})
	if err == nil {
		t.Fatal("a batch to a missing topic was reported published")
	}
}
