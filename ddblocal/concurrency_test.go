package ddblocal_test

// A mixed concurrent workload over one small set of hot items: single
// writes, batches, transactions, the TTL sweeper, an index created and
// another deleted while writers run, and a stream consumer following the
// shard. It must finish (no deadlock), and afterwards the counters, the
// indexes and the stream must all agree with the table.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"
)

// imageString renders an item the way renderImage renders a stream image.
func imageString(it avmap) string {
	parts := make([]string, 0, len(it))
	for k, v := range it {
		parts = append(parts, k+"="+attrString(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// expectedErr reports whether err is one a contended workload may see.
func expectedErr(err error) bool {
	var tce *types.TransactionCanceledException
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &tce) || errors.As(err, &ccf) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "LimitExceededException"
}

func TestConcurrentMixedWorkload(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("mix", "pk:S").withGSI("byG", "g:S", "", types.ProjectionTypeAll).withStream(types.StreamViewTypeNewAndOldImages))
	if err := l.setTTL(tbl, "exp", true); err != nil {
		t.Fatal(err)
	}
	arn := l.latestStream(tbl)
	follow := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, "")

	const keys = 12
	key := func(r *rand.Rand) string { return fmt.Sprint("k", r.IntN(keys)) }
	now := l.clock.Now().Unix()
	// item builds a put image: g and h are sometimes absent (sparse
	// indexes), exp sometimes in the past (swept by TTL).
	item := func(r *rand.Rand, pk string) avmap {
		it := avmap{"pk": vS(pk), "v": vN(fmt.Sprint(r.IntN(1000)))}
		if r.IntN(3) > 0 {
			it["g"] = vS(fmt.Sprint("g", r.IntN(3)))
		}
		if r.IntN(2) == 0 {
			it["h"] = vS(fmt.Sprint("h", r.IntN(3)))
		}
		if r.IntN(4) == 0 {
			it["exp"] = vN(fmt.Sprint(now - 60))
		}
		return it
	}
	fail := func(what string, err error) {
		if err != nil && !expectedErr(err) {
			t.Errorf("%s: %v", what, err)
		}
	}

	var writers sync.WaitGroup
	run := func(n int, f func(r *rand.Rand)) {
		for w := range n {
			writers.Go(func() { f(rand.New(rand.NewPCG(uint64(w), uint64(n)))) })
		}
	}
	run(3, func(r *rand.Rand) { // single-item writes
		for range 120 {
			pk := key(r)
			var err error
			switch r.IntN(4) {
			case 0:
				_, err = l.db.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: item(r, pk)})
			case 1:
				_, err = l.db.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS(pk)}})
			case 2:
				_, err = l.db.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS(pk)},
					UpdateExpression: aws.String("ADD n :one SET g = :g"), ExpressionAttributeValues: avmap{":one": vN("1"), ":g": vS("g9")}})
			default:
				_, err = l.db.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: item(r, pk), ConditionExpression: aws.String("attribute_exists(pk)")})
			}
			fail("single write", err)
		}
	})
	run(2, func(r *rand.Rand) { // batches
		for range 30 {
			var reqs []types.WriteRequest
			for _, i := range r.Perm(keys)[:4] {
				pk := fmt.Sprint("k", i)
				if r.IntN(3) == 0 {
					reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: avmap{"pk": vS(pk)}}})
				} else {
					reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item(r, pk)}})
				}
			}
			_, err := l.db.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: reqs}})
			fail("batch", err)
		}
	})
	run(3, func(r *rand.Rand) { // transactions
		for range 60 {
			var acts []types.TransactWriteItem
			for j, i := range r.Perm(keys)[:3] {
				k := avmap{"pk": vS(fmt.Sprint("k", i))}
				switch j {
				case 0:
					acts = append(acts, types.TransactWriteItem{Update: &types.Update{TableName: &tbl, Key: k,
						UpdateExpression: aws.String("ADD n :one SET h = :h"), ExpressionAttributeValues: avmap{":one": vN("1"), ":h": vS("h7")}}})
				case 1:
					acts = append(acts, types.TransactWriteItem{Put: &types.Put{TableName: &tbl, Item: item(r, fmt.Sprint("k", i))}})
				default:
					acts = append(acts, types.TransactWriteItem{Delete: &types.Delete{TableName: &tbl, Key: k}})
				}
			}
			_, err := l.db.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: acts})
			fail("transaction", err)
		}
	})
	writers.Go(func() { // the TTL sweeper
		for range 40 {
			if _, err := l.store.SweepExpired(); err != nil {
				t.Errorf("sweep: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
	})
	writers.Go(func() { // the control plane: one index added, one deleted
		time.Sleep(5 * time.Millisecond)
		_, err := l.db.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: &tbl,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("h"), AttributeType: types.ScalarAttributeTypeS}},
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: aws.String("byH"), KeySchema: schema("h", ""), Projection: projection(types.ProjectionTypeKeysOnly)}}}})
		if err != nil {
			t.Errorf("create index: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
		_, err = l.db.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: &tbl,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("byG")}}}})
		if err != nil {
			t.Errorf("delete index: %v", err)
		}
	})

	// The consumer follows the shard until the writers are done and a
	// read comes back empty.
	done := make(chan struct{})
	go func() { writers.Wait(); close(done) }()
	var followed []st.Record
	deadline := time.After(2 * time.Minute)
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		case <-deadline:
			buf := make([]byte, 1<<20)
			t.Fatalf("workload still running after 2 minutes (deadlock?):\n%s", buf[:runtime.Stack(buf, true)])
		default:
		}
		out, err := l.streams.GetRecords(bg, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(follow)})
		if err != nil {
			t.Fatalf("GetRecords: %v", err)
		}
		followed = append(followed, out.Records...)
		follow = aws.ToString(out.NextShardIterator)
		if len(out.Records) == 0 {
			if finished {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	if t.Failed() {
		return
	}

	// The stream, read again from its start, holds the same records, in
	// increasing order, and replaying them rebuilds the table exactly,
	// each old image matching what the previous record left.
	var all []st.Record
	for it := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, ""); ; {
		recs, next := l.records(it, 1000)
		all = append(all, recs...)
		if len(recs) == 0 || next == nil {
			break
		}
		it = *next
	}
	if len(all) != len(followed) {
		t.Fatalf("a consumer following the shard saw %d records, a later read %d", len(followed), len(all))
	}
	state := map[string]string{}
	for i, r := range all {
		seq := aws.ToString(r.Dynamodb.SequenceNumber)
		if got := aws.ToString(followed[i].Dynamodb.SequenceNumber); got != seq {
			t.Fatalf("record %d: the consumer saw sequence number %s, a later read %s", i, got, seq)
		}
		if i > 0 && !seqLess(aws.ToString(all[i-1].Dynamodb.SequenceNumber), seq) {
			t.Fatalf("record %d: sequence number %s does not follow %s", i, seq, aws.ToString(all[i-1].Dynamodb.SequenceNumber))
		}
		k := renderImage(r.Dynamodb.Keys)
		prev, existed := state[k]
		switch r.EventName {
		case st.OperationTypeInsert:
			if existed {
				t.Fatalf("record %d: INSERT of %s, which exists as %s", i, k, prev)
			}
		case st.OperationTypeModify, st.OperationTypeRemove:
			if old := renderImage(r.Dynamodb.OldImage); !existed || old != prev {
				t.Fatalf("record %d: %s of %s with old image %s, but the stream left %s (present %v)", i, r.EventName, k, old, prev, existed)
			}
		}
		if r.EventName == st.OperationTypeRemove {
			delete(state, k)
		} else {
			state[k] = renderImage(r.Dynamodb.NewImage)
		}
	}
	items := l.scanAll(tbl, "")
	t.Logf("%d stream records, %d items left", len(all), len(items))
	if len(items) != len(state) {
		t.Fatalf("table holds %d items, the stream replays to %d", len(items), len(state))
	}
	for _, it := range items {
		if got := state[renderImage(map[string]st.AttributeValue{"pk": &st.AttributeValueMemberS{Value: it["pk"].(*types.AttributeValueMemberS).Value}})]; got != imageString(it) {
			t.Fatalf("item %s, the stream replays to %s", imageString(it), got)
		}
	}

	// The counters and the surviving index agree with the table.
	desc, err := l.db.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: &tbl})
	if err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt64(desc.Table.ItemCount); n != int64(len(items)) {
		t.Errorf("ItemCount %d, table holds %d items", n, len(items))
	}
	if len(desc.Table.GlobalSecondaryIndexes) != 1 || aws.ToString(desc.Table.GlobalSecondaryIndexes[0].IndexName) != "byH" {
		t.Fatalf("indexes %+v, want byH alone", desc.Table.GlobalSecondaryIndexes)
	}
	var want []string
	for _, it := range items {
		if _, ok := it["h"]; ok {
			want = append(want, imageString(avmap{"pk": it["pk"], "h": it["h"]}))
		}
	}
	var got []string
	for _, it := range l.scanAll(tbl, "byH") {
		got = append(got, imageString(it))
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("index byH holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := aws.ToInt64(desc.Table.GlobalSecondaryIndexes[0].ItemCount); n != int64(len(want)) {
		t.Errorf("byH ItemCount %d, want %d", n, len(want))
	}
}

// scanAll reads a whole table or index with consistent reads.
func (l *lab) scanAll(tbl, index string) []avmap {
	l.t.Helper()
	var out []avmap
	in := &dynamodb.ScanInput{TableName: &tbl}
	if index != "" {
		in.IndexName = &index
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	for {
		page, err := l.db.Scan(bg, in)
		if err != nil {
			l.t.Fatalf("Scan: %v", err)
		}
		out = append(out, page.Items...)
		if page.LastEvaluatedKey == nil {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
