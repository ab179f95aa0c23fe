package ddblocal_test

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// latestStream returns the table's LatestStreamArn, checking it has the
// shape AWS gives it.
func (l *lab) latestStream(table string) string {
	l.t.Helper()
	out, err := l.db.DescribeTable(l.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		l.t.Fatal(err)
	}
	arn, label := aws.ToString(out.Table.LatestStreamArn), aws.ToString(out.Table.LatestStreamLabel)
	if want := aws.ToString(out.Table.TableArn) + "/stream/" + label; arn != want || label == "" {
		l.t.Fatalf("LatestStreamArn %q with label %q, want %q", arn, label, want)
	}
	return arn
}

// shard returns the stream's only shard.
func (l *lab) shard(arn string) st.Shard {
	l.t.Helper()
	out, err := l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		l.t.Fatal(err)
	}
	if n := len(out.StreamDescription.Shards); n != 1 {
		l.t.Fatalf("DescribeStream: %d shards, want 1", n)
	}
	return out.StreamDescription.Shards[0]
}

// iterator returns a shard iterator of the given type (seq for the
// sequence-number types).
func (l *lab) iterator(arn string, kind st.ShardIteratorType, seq string) string {
	l.t.Helper()
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: l.shard(arn).ShardId, ShardIteratorType: kind}
	if seq != "" {
		in.SequenceNumber = aws.String(seq)
	}
	out, err := l.streams.GetShardIterator(l.ctx, in)
	if err != nil {
		l.t.Fatalf("GetShardIterator %s: %v", kind, err)
	}
	return aws.ToString(out.ShardIterator)
}

// records reads one page from an iterator.
func (l *lab) records(it string, limit int32) ([]st.Record, *string) {
	l.t.Helper()
	in := &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	out, err := l.streams.GetRecords(l.ctx, in)
	if err != nil {
		l.t.Fatalf("GetRecords: %v", err)
	}
	return out.Records, out.NextShardIterator
}

// render prints a stream attribute value compactly.
func render(v st.AttributeValue) string {
	switch x := v.(type) {
	case *st.AttributeValueMemberS:
		return "S:" + x.Value
	case *st.AttributeValueMemberN:
		return "N:" + x.Value
	case *st.AttributeValueMemberB:
		return "B:" + base64.StdEncoding.EncodeToString(x.Value)
	case *st.AttributeValueMemberBOOL:
		return fmt.Sprint("BOOL:", x.Value)
	case *st.AttributeValueMemberNULL:
		return "NULL"
	case *st.AttributeValueMemberSS:
		return fmt.Sprint("SS:", x.Value)
	case *st.AttributeValueMemberNS:
		return fmt.Sprint("NS:", x.Value)
	case *st.AttributeValueMemberL:
		parts := make([]string, len(x.Value))
		for i, e := range x.Value {
			parts[i] = render(e)
		}
		return "L[" + strings.Join(parts, ",") + "]"
	case *st.AttributeValueMemberM:
		return "M{" + renderImage(x.Value) + "}"
	}
	return fmt.Sprintf("?%T", v)
}

// renderImage prints an image with sorted attributes ("" for none).
func renderImage(m map[string]st.AttributeValue) string {
	if m == nil {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+render(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// event is a record reduced to what a consumer cares about.
type event struct{ name, keys, old, new string }

func eventOf(r st.Record) event {
	return event{string(r.EventName), renderImage(r.Dynamodb.Keys), renderImage(r.Dynamodb.OldImage), renderImage(r.Dynamodb.NewImage)}
}

func sameEvents(t *testing.T, what string, got []st.Record, want []event) {
	t.Helper()
	var g []string
	for _, r := range got {
		g = append(g, fmt.Sprintf("%+v", eventOf(r)))
	}
	var w []string
	for _, e := range want {
		w = append(w, fmt.Sprintf("%+v", e))
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s: records\n%s\nwant\n%s", what, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

var seqPattern = regexp.MustCompile(`^[0-9]{21,40}$`)

func seqLess(a, b string) bool {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x.Cmp(y) < 0
}

func TestStreamsDeliverChangesInOrder(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_order", "pk", "sk").withStream(types.StreamViewTypeNewAndOldImages))
	arn := l.latestStream(tbl)

	list, err := l.streams.ListStreams(l.ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(tbl)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Streams) != 1 || aws.ToString(list.Streams[0].StreamArn) != arn || aws.ToString(list.Streams[0].TableName) != tbl ||
		!strings.HasSuffix(arn, "/stream/"+aws.ToString(list.Streams[0].StreamLabel)) {
		t.Fatalf("ListStreams = %+v, want the table's stream %s", list.Streams, arn)
	}
	desc, err := l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	sd := desc.StreamDescription
	if sd.StreamStatus != st.StreamStatusEnabled || sd.StreamViewType != st.StreamViewTypeNewAndOldImages || aws.ToString(sd.TableName) != tbl ||
		aws.ToString(sd.StreamArn) != arn || len(sd.KeySchema) != 2 || aws.ToString(sd.KeySchema[1].AttributeName) != "sk" {
		t.Errorf("DescribeStream = %+v", sd)
	}
	shard := sd.Shards[0]
	if !seqPattern.MatchString(aws.ToString(shard.SequenceNumberRange.StartingSequenceNumber)) || shard.SequenceNumberRange.EndingSequenceNumber != nil ||
		len(aws.ToString(shard.ShardId)) < 28 || len(aws.ToString(shard.ShardId)) > 65 {
		t.Errorf("shard = %+v", shard)
	}

	it := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, "")
	k := attrs{"pk": str("a"), "sk": str("1")}
	l.put(tbl, attrs{"pk": str("a"), "sk": str("1"), "x": num("1")})
	l.put(tbl, attrs{"pk": str("a"), "sk": str("1"), "x": num("1")}) // unchanged: no record
	l.put(tbl, attrs{"pk": str("a"), "sk": str("1"), "x": num("2")})
	upd := func(expr, cond string) error {
		in := &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: k, UpdateExpression: aws.String(expr),
			ExpressionAttributeValues: attrs{":v": num("3")}}
		if cond != "" {
			in.ConditionExpression = aws.String(cond)
		}
		_, err := l.db.UpdateItem(l.ctx, in)
		return err
	}
	if err := upd("SET y = :v", ""); err != nil {
		t.Fatal(err)
	}
	if err := upd("SET y = :v", "attribute_not_exists(pk)"); apiCode(err) != "ConditionalCheckFailedException" {
		t.Fatalf("conditional update: %v", err)
	}
	if err := upd("SET y = :v", ""); err != nil { // unchanged: no record
		t.Fatal(err)
	}
	for range 2 { // the second delete finds nothing: no record
		if _, err := l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("b"), "sk": str("1")},
		UpdateExpression: aws.String("SET z = :v"), ExpressionAttributeValues: attrs{":v": str("new")}}); err != nil {
		t.Fatal(err)
	}

	recs, next := l.records(it, 0)
	keyA, keyB := "pk=S:a sk=S:1", "pk=S:b sk=S:1"
	sameEvents(t, "changes", recs, []event{
		{"INSERT", keyA, "-", "pk=S:a sk=S:1 x=N:1"},
		{"MODIFY", keyA, "pk=S:a sk=S:1 x=N:1", "pk=S:a sk=S:1 x=N:2"},
		{"MODIFY", keyA, "pk=S:a sk=S:1 x=N:2", "pk=S:a sk=S:1 x=N:2 y=N:3"},
		{"REMOVE", keyA, "pk=S:a sk=S:1 x=N:2 y=N:3", "-"},
		{"INSERT", keyB, "-", "pk=S:b sk=S:1 z=S:new"},
	})
	ids := map[string]bool{}
	prev := ""
	for i, r := range recs {
		d := r.Dynamodb
		seq := aws.ToString(d.SequenceNumber)
		if !seqPattern.MatchString(seq) || (prev != "" && !seqLess(prev, seq)) || (prev != "" && len(prev) != len(seq)) {
			t.Errorf("record %d: sequence number %q after %q", i, seq, prev)
		}
		prev = seq
		if aws.ToString(r.EventSource) != "aws:dynamodb" || aws.ToString(r.EventVersion) != "1.1" || aws.ToString(r.AwsRegion) != "us-east-1" {
			t.Errorf("record %d: source %q version %q region %q", i, aws.ToString(r.EventSource), aws.ToString(r.EventVersion), aws.ToString(r.AwsRegion))
		}
		if id := aws.ToString(r.EventID); ids[id] || len(id) != 32 {
			t.Errorf("record %d: eventID %q not unique or not 32 hex digits", i, id)
		} else {
			ids[id] = true
		}
		if d.StreamViewType != st.StreamViewTypeNewAndOldImages || aws.ToInt64(d.SizeBytes) <= 0 || r.UserIdentity != nil {
			t.Errorf("record %d: view %q size %d identity %+v", i, d.StreamViewType, aws.ToInt64(d.SizeBytes), r.UserIdentity)
		}
		if !aws.ToTime(d.ApproximateCreationDateTime).Equal(l.clock.Now()) {
			t.Errorf("record %d: ApproximateCreationDateTime %v, want %v", i, aws.ToTime(d.ApproximateCreationDateTime), l.clock.Now())
		}
	}
	if next == nil {
		t.Fatal("no NextShardIterator on an open shard")
	}
	more, again := l.records(*next, 0)
	if len(more) != 0 || again == nil {
		t.Errorf("reading past the end: %d records, next %v; want none and an iterator", len(more), again)
	}
}

func TestStreamsViewTypes(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	cases := []struct {
		view types.StreamViewType
		want []event
	}{
		{types.StreamViewTypeKeysOnly, []event{{"INSERT", "pk=S:k", "-", "-"}, {"MODIFY", "pk=S:k", "-", "-"}, {"REMOVE", "pk=S:k", "-", "-"}}},
		{types.StreamViewTypeNewImage, []event{{"INSERT", "pk=S:k", "-", "a=N:1 pk=S:k"}, {"MODIFY", "pk=S:k", "-", "a=N:2 pk=S:k"}, {"REMOVE", "pk=S:k", "-", "-"}}},
		{types.StreamViewTypeOldImage, []event{{"INSERT", "pk=S:k", "-", "-"}, {"MODIFY", "pk=S:k", "a=N:1 pk=S:k", "-"}, {"REMOVE", "pk=S:k", "a=N:2 pk=S:k", "-"}}},
		{types.StreamViewTypeNewAndOldImages, []event{{"INSERT", "pk=S:k", "-", "a=N:1 pk=S:k"}, {"MODIFY", "pk=S:k", "a=N:1 pk=S:k", "a=N:2 pk=S:k"}, {"REMOVE", "pk=S:k", "a=N:2 pk=S:k", "-"}}},
	}
	for _, c := range cases {
		tbl := l.create(newTable("str_view_"+strings.ToLower(string(c.view)), "pk").withStream(c.view))
		arn := l.latestStream(tbl)
		l.put(tbl, attrs{"pk": str("k"), "a": num("1")})
		l.put(tbl, attrs{"pk": str("k"), "a": num("2")})
		if _, err := l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("k")}}); err != nil {
			t.Fatal(err)
		}
		recs, _ := l.records(l.iterator(arn, st.ShardIteratorTypeTrimHorizon, ""), 0)
		sameEvents(t, string(c.view), recs, c.want)
		for _, r := range recs {
			if r.Dynamodb.StreamViewType != st.StreamViewType(c.view) {
				t.Errorf("%s: record StreamViewType %q", c.view, r.Dynamodb.StreamViewType)
			}
		}
	}
}

func TestStreamsIteratorTypes(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_iters", "pk").withStream(types.StreamViewTypeKeysOnly))
	arn := l.latestStream(tbl)
	for _, k := range []string{"a", "b", "c"} {
		l.put(tbl, attrs{"pk": str(k)})
	}
	all, _ := l.records(l.iterator(arn, st.ShardIteratorTypeTrimHorizon, ""), 0)
	if len(all) != 3 {
		t.Fatalf("TRIM_HORIZON: %d records, want 3", len(all))
	}
	seq := func(i int) string { return aws.ToString(all[i].Dynamodb.SequenceNumber) }
	keys := func(recs []st.Record) string {
		var ks []string
		for _, r := range recs {
			ks = append(ks, renderImage(r.Dynamodb.Keys))
		}
		return strings.Join(ks, ",")
	}
	start := aws.ToString(l.shard(arn).SequenceNumberRange.StartingSequenceNumber)
	cases := []struct {
		name string
		kind st.ShardIteratorType
		seq  string
		want string
	}{
		{"AT_SEQUENCE_NUMBER of the second", st.ShardIteratorTypeAtSequenceNumber, seq(1), "pk=S:b,pk=S:c"},
		{"AFTER_SEQUENCE_NUMBER of the second", st.ShardIteratorTypeAfterSequenceNumber, seq(1), "pk=S:c"},
		{"AFTER_SEQUENCE_NUMBER of the last", st.ShardIteratorTypeAfterSequenceNumber, seq(2), ""},
		{"AT the shard's StartingSequenceNumber", st.ShardIteratorTypeAtSequenceNumber, start, "pk=S:a,pk=S:b,pk=S:c"},
		{"LATEST", st.ShardIteratorTypeLatest, "", ""},
	}
	for _, c := range cases {
		recs, _ := l.records(l.iterator(arn, c.kind, c.seq), 0)
		if got := keys(recs); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	latest := l.iterator(arn, st.ShardIteratorTypeLatest, "")
	l.put(tbl, attrs{"pk": str("d")})
	if recs, _ := l.records(latest, 0); keys(recs) != "pk=S:d" {
		t.Errorf("LATEST then a write: %q, want the write", keys(recs))
	}
	// Limit pages through the shard.
	it := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, "")
	var got []string
	for range 5 {
		recs, next := l.records(it, 1)
		if len(recs) > 1 {
			t.Fatalf("Limit 1 returned %d records", len(recs))
		}
		got = append(got, keys(recs))
		it = aws.ToString(next)
	}
	if strings.Join(got, ";") != "pk=S:a;pk=S:b;pk=S:c;pk=S:d;" {
		t.Errorf("paging with Limit 1: %q", got)
	}
}

func TestStreamsTransactionsAndBatches(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_tx", "pk").withStream(types.StreamViewTypeNewAndOldImages))
	arn := l.latestStream(tbl)
	l.put(tbl, attrs{"pk": str("old"), "v": num("1")})
	l.put(tbl, attrs{"pk": str("chk")})
	it := l.iterator(arn, st.ShardIteratorTypeLatest, "")
	_, err := l.db.TransactWriteItems(l.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: attrs{"pk": str("n1")}}},
		{Update: &types.Update{TableName: aws.String(tbl), Key: attrs{"pk": str("old")}, UpdateExpression: aws.String("SET v = :v"),
			ExpressionAttributeValues: attrs{":v": num("2")}}},
		{Delete: &types.Delete{TableName: aws.String(tbl), Key: attrs{"pk": str("missing")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(tbl), Key: attrs{"pk": str("chk")}, ConditionExpression: aws.String("attribute_exists(pk)")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A cancelled transaction leaves nothing.
	_, err = l.db.TransactWriteItems(l.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: attrs{"pk": str("n2")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(tbl), Key: attrs{"pk": str("nope")}, ConditionExpression: aws.String("attribute_exists(pk)")}},
	}})
	if apiCode(err) != "TransactionCanceledException" {
		t.Fatalf("cancelled transaction: %v", err)
	}
	_, err = l.db.BatchWriteItem(l.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
		{PutRequest: &types.PutRequest{Item: attrs{"pk": str("b1")}}},
		{DeleteRequest: &types.DeleteRequest{Key: attrs{"pk": str("n1")}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := l.records(it, 0)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	// A batch's items are not ordered among themselves.
	if renderImage(recs[2].Dynamodb.Keys) > renderImage(recs[3].Dynamodb.Keys) {
		recs[2], recs[3] = recs[3], recs[2]
	}
	sameEvents(t, "transaction then batch", recs, []event{
		{"INSERT", "pk=S:n1", "-", "pk=S:n1"},
		{"MODIFY", "pk=S:old", "pk=S:old v=N:1", "pk=S:old v=N:2"},
		{"INSERT", "pk=S:b1", "-", "pk=S:b1"},
		{"REMOVE", "pk=S:n1", "pk=S:n1", "-"},
	})
	if seqLess(aws.ToString(recs[3].Dynamodb.SequenceNumber), aws.ToString(recs[1].Dynamodb.SequenceNumber)) {
		t.Error("batch records precede the transaction's")
	}
}

func TestStreamsDisableAndReenable(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_disable", "pk").withStream(types.StreamViewTypeKeysOnly))
	first := l.latestStream(tbl)
	it := l.iterator(first, st.ShardIteratorTypeTrimHorizon, "")
	l.put(tbl, attrs{"pk": str("before")})
	update := func(spec *types.StreamSpecification) error {
		_, err := l.db.UpdateTable(l.ctx, &dynamodb.UpdateTableInput{TableName: aws.String(tbl), StreamSpecification: spec})
		return err
	}
	if err := update(&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}); apiCode(err) != "ValidationException" {
		t.Errorf("enabling an enabled stream: %v, want ValidationException", err)
	}
	if err := update(&types.StreamSpecification{StreamEnabled: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	l.put(tbl, attrs{"pk": str("between")})
	desc, err := l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(first)})
	if err != nil {
		t.Fatal(err)
	}
	rng := desc.StreamDescription.Shards[0].SequenceNumberRange
	if desc.StreamDescription.StreamStatus != st.StreamStatusDisabled || !seqPattern.MatchString(aws.ToString(rng.EndingSequenceNumber)) {
		t.Errorf("disabled stream: status %s, range %+v", desc.StreamDescription.StreamStatus, rng)
	}
	// Still readable; a closed shard read to its end has no next iterator.
	recs, next := l.records(it, 0)
	sameEvents(t, "disabled stream", recs, []event{{"INSERT", "pk=S:before", "-", "-"}})
	if next != nil {
		t.Errorf("closed shard read to its end returned NextShardIterator %q", *next)
	}
	if err := update(&types.StreamSpecification{StreamEnabled: aws.Bool(false)}); apiCode(err) != "ValidationException" {
		t.Errorf("disabling a disabled stream: %v, want ValidationException", err)
	}

	if err := update(&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}); err != nil {
		t.Fatal(err)
	}
	second := l.latestStream(tbl)
	if second == first {
		t.Fatalf("re-enabled stream kept the ARN %s", first)
	}
	l.put(tbl, attrs{"pk": str("after")})
	recs, _ = l.records(l.iterator(second, st.ShardIteratorTypeTrimHorizon, ""), 0)
	sameEvents(t, "new stream", recs, []event{{"INSERT", "pk=S:after", "-", "pk=S:after"}})
	recs, _ = l.records(l.iterator(first, st.ShardIteratorTypeTrimHorizon, ""), 0)
	sameEvents(t, "old stream after re-enabling", recs, []event{{"INSERT", "pk=S:before", "-", "-"}})
	list, err := l.streams.ListStreams(l.ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(tbl)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Streams) != 2 {
		t.Errorf("ListStreams after re-enabling: %d streams, want 2", len(list.Streams))
	}
	page, err := l.streams.ListStreams(l.ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(tbl), Limit: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Streams) != 1 || page.LastEvaluatedStreamArn == nil {
		t.Fatalf("ListStreams Limit 1: %+v", page)
	}
	rest, err := l.streams.ListStreams(l.ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(tbl), ExclusiveStartStreamArn: page.LastEvaluatedStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Streams) != 1 || aws.ToString(rest.Streams[0].StreamArn) == aws.ToString(page.Streams[0].StreamArn) {
		t.Errorf("ListStreams second page: %+v", rest.Streams)
	}

	// Deleting the table disables the stream, which stays readable.
	if _, err := l.db.DeleteTable(l.ctx, &dynamodb.DeleteTableInput{TableName: aws.String(tbl)}); err != nil {
		t.Fatal(err)
	}
	desc, err = l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(second)})
	if err != nil || desc.StreamDescription.StreamStatus != st.StreamStatusDisabled {
		t.Fatalf("stream of a deleted table: %v %+v", err, desc)
	}
	recs, _ = l.records(l.iterator(second, st.ShardIteratorTypeTrimHorizon, ""), 0)
	sameEvents(t, "stream of a deleted table", recs, []event{{"INSERT", "pk=S:after", "-", "pk=S:after"}})
	// A day later both streams are gone.
	l.clock.Advance(25 * time.Hour)
	if _, err := l.store.SweepExpired(); err != nil {
		t.Fatal(err)
	}
	_, err = l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(second)})
	expectAPIError(t, err, "ResourceNotFoundException", "Requested resource not found: Stream: "+second+" not found")
	all, err := l.streams.ListStreams(l.ctx, &dynamodbstreams.ListStreamsInput{})
	if err != nil || len(all.Streams) != 0 {
		t.Errorf("ListStreams a day after: %v %+v", err, all)
	}
}

func TestStreamsRetentionAndIteratorExpiry(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_trim", "pk").withStream(types.StreamViewTypeKeysOnly))
	arn := l.latestStream(tbl)
	l.put(tbl, attrs{"pk": str("old")})
	early := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, "")
	recs, _ := l.records(early, 0)
	oldSeq := aws.ToString(recs[0].Dynamodb.SequenceNumber)

	l.clock.Advance(16 * time.Minute)
	_, err := l.streams.GetRecords(l.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(early)})
	expectAPIError(t, err, "ExpiredIteratorException", "")

	l.clock.Advance(24*time.Hour - 21*time.Minute) // 5 minutes before "old" is a day old
	horizon := l.iterator(arn, st.ShardIteratorTypeTrimHorizon, "")
	l.put(tbl, attrs{"pk": str("new")})
	l.clock.Advance(10 * time.Minute)
	_, err = l.streams.GetRecords(l.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(horizon)})
	expectAPIError(t, err, "TrimmedDataAccessException", "")
	_, err = l.streams.GetShardIterator(l.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn),
		ShardId: l.shard(arn).ShardId, ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(oldSeq)})
	expectAPIError(t, err, "TrimmedDataAccessException", "")
	recs, _ = l.records(l.iterator(arn, st.ShardIteratorTypeTrimHorizon, ""), 0)
	sameEvents(t, "after trimming", recs, []event{{"INSERT", "pk=S:new", "-", "-"}})
}

func TestStreamsValidation(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("str_valid", "pk").withStream(types.StreamViewTypeKeysOnly))
	arn := l.latestStream(tbl)
	shard := l.shard(arn).ShardId
	unknown := strings.Replace(arn, "str_valid", "str_nothere", 1)
	gsi := func(kind st.ShardIteratorType, seq *string, shardID *string) error {
		_, err := l.streams.GetShardIterator(l.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shardID,
			ShardIteratorType: kind, SequenceNumber: seq})
		return err
	}
	describe := func(a string) error {
		_, err := l.streams.DescribeStream(l.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(a)})
		return err
	}
	records := func(it string, limit *int32) error {
		_, err := l.streams.GetRecords(l.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it), Limit: limit})
		return err
	}
	cases := []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"short StreamArn", describe("arn:short"), "ValidationException",
			"1 validation error detected: Value 'arn:short' at 'streamArn' failed to satisfy constraint: Member must have length greater than or equal to 37"},
		{"malformed StreamArn", describe("sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf"), "ValidationException", "Invalid StreamArn"},
		{"unknown stream", describe(unknown), "ResourceNotFoundException", "Requested resource not found: Stream: " + unknown + " not found"},
		{"unknown shard", gsi(st.ShardIteratorTypeLatest, nil, aws.String("shardId-00000000000000000000-00000000")), "ResourceNotFoundException", ""},
		{"AT_SEQUENCE_NUMBER without a sequence number", gsi(st.ShardIteratorTypeAtSequenceNumber, nil, shard), "ValidationException", ""},
		{"LATEST with a sequence number", gsi(st.ShardIteratorTypeLatest, aws.String("100000000000000000001"), shard), "ValidationException", ""},
		{"sequence number too long", gsi(st.ShardIteratorTypeLatest, aws.String(strings.Repeat("9", 41)), shard), "ValidationException", ""},
		{"unknown iterator type", gsi("bulle", nil, shard), "ValidationException",
			"1 validation error detected: Value 'bulle' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]"},
		{"garbage iterator", records("sdfsdfsgagaddafgagasgasgasdfasdfasdfasdfasdgasdasdgasdg", nil), "ValidationException", "Invalid ShardIterator"},
		{"Limit 0", records(l.iterator(arn, st.ShardIteratorTypeLatest, ""), aws.Int32(0)), "ValidationException",
			"1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"Limit 1001", records(l.iterator(arn, st.ShardIteratorTypeLatest, ""), aws.Int32(1001)), "ValidationException", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectAPIError(t, c.err, c.code, c.msg) })
	}
}

// TestStreamsSurviveRestart checks that records are as durable as the
// data they describe and that sequence numbers keep increasing.
func TestStreamsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() (*lab, func()) {
		s, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		l := &lab{t: t, ctx: t.Context(), store: s, url: hs.URL, streams: streamsClient(hs.URL), db: ddbtest.NewClient(hs.URL, aws.NopRetryer{})}
		return l, func() { hs.Close(); s.Close() }
	}
	l, closeStore := open()
	tbl := l.create(newTable("str_durable", "pk").withStream(types.StreamViewTypeNewImage))
	arn := l.latestStream(tbl)
	l.put(tbl, attrs{"pk": str("a")})
	l.put(tbl, attrs{"pk": str("b")})
	closeStore()

	l, closeStore = open()
	defer closeStore()
	if got := l.latestStream(tbl); got != arn {
		t.Fatalf("stream after restart %s, want %s", got, arn)
	}
	l.put(tbl, attrs{"pk": str("c")})
	recs, _ := l.records(l.iterator(arn, st.ShardIteratorTypeTrimHorizon, ""), 0)
	sameEvents(t, "after restart", recs, []event{
		{"INSERT", "pk=S:a", "-", "pk=S:a"}, {"INSERT", "pk=S:b", "-", "pk=S:b"}, {"INSERT", "pk=S:c", "-", "pk=S:c"},
	})
	if len(recs) == 3 && !seqLess(aws.ToString(recs[1].Dynamodb.SequenceNumber), aws.ToString(recs[2].Dynamodb.SequenceNumber)) {
		t.Errorf("sequence numbers went back after a restart: %s then %s", aws.ToString(recs[1].Dynamodb.SequenceNumber), aws.ToString(recs[2].Dynamodb.SequenceNumber))
	}
}
