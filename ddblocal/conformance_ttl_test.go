package ddblocal_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"lastro/ddblocal"
)

func (l *lab) setTTL(table, attr string, enabled bool) error {
	_, err := l.db.UpdateTimeToLive(l.ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(enabled)}})
	return err
}

func (l *lab) ttlStatus(table string) string {
	l.t.Helper()
	out, err := l.db.DescribeTimeToLive(l.ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		l.t.Fatal(err)
	}
	d := out.TimeToLiveDescription
	return fmt.Sprintf("%s %s", d.TimeToLiveStatus, aws.ToString(d.AttributeName))
}

func (l *lab) exists(table string, key attrs) bool {
	l.t.Helper()
	out, err := l.db.GetItem(l.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		l.t.Fatal(err)
	}
	return out.Item != nil
}

func TestTTLUpdateAndDescribe(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("ttl_spec", "pk"))
	if got := l.ttlStatus(tbl); got != "DISABLED " {
		t.Errorf("fresh table: %q, want DISABLED without an attribute", got)
	}
	out, err := l.db.UpdateTimeToLive(l.ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(tbl),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if spec := out.TimeToLiveSpecification; aws.ToString(spec.AttributeName) != "expires" || !aws.ToBool(spec.Enabled) {
		t.Errorf("UpdateTimeToLive answered %+v", spec)
	}
	if got := l.ttlStatus(tbl); got != "ENABLED expires" {
		t.Errorf("after enabling: %q", got)
	}
	// The SDK refuses to send requests missing required members, so these
	// go over plain HTTP.
	missing := func(spec string) error {
		return rawCall(t, l.url, "DynamoDB_20120810.UpdateTimeToLive", `{"TableName":"`+tbl+`"`+spec+`}`)
	}
	cases := []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"enable again", l.setTTL(tbl, "expires", true), "ValidationException", "TimeToLive is already enabled"},
		{"enable another attribute", l.setTTL(tbl, "other", true), "ValidationException",
			"TimeToLive is active on a different AttributeName: current AttributeName is expires"},
		{"disable another attribute", l.setTTL(tbl, "other", false), "ValidationException",
			"TimeToLive is active on a different AttributeName: current AttributeName is expires"},
		{"unknown table", l.setTTL("ttl_nothere", "expires", true), "ResourceNotFoundException", ""},
		{"attribute name too long", l.setTTL(tbl, strings.Repeat("x", 256), true), "ValidationException",
			"1 validation error detected: Value '" + strings.Repeat("x", 256) + "' at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"empty attribute name", l.setTTL(tbl, "", true), "ValidationException",
			"1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"no attribute name", missing(`,"TimeToLiveSpecification":{"Enabled":true}`), "ValidationException",
			"1 validation error detected: Value null at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must not be null"},
		{"no Enabled", missing(`,"TimeToLiveSpecification":{"AttributeName":"x"}`), "ValidationException",
			"1 validation error detected: Value null at 'timeToLiveSpecification.enabled' failed to satisfy constraint: Member must not be null"},
		{"no specification", missing(""), "ValidationException",
			"1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectAPIError(t, c.err, c.code, c.msg) })
	}
	if err := l.setTTL(tbl, "expires", false); err != nil {
		t.Fatal(err)
	}
	if got := l.ttlStatus(tbl); got != "DISABLED " {
		t.Errorf("after disabling: %q", got)
	}
	expectAPIError(t, l.setTTL(tbl, "expires", false), "ValidationException", "TimeToLive is already disabled")
}

func TestTTLSweeperDeletesExpiredItemsOnly(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("ttl_sweep", "pk").withGSI("by_g", "g", "", types.ProjectionTypeAll).
		withStream(types.StreamViewTypeNewAndOldImages))
	arn := l.latestStream(tbl)
	now := l.clock.Now().Unix()
	secs := func(d int64) types.AttributeValue { return num(fmt.Sprint(now + d)) }
	items := []struct {
		pk      string
		ttl     types.AttributeValue // nil: no attribute
		expires bool
	}{
		{"past", secs(-60), true},
		{"past-exponent", num(fmt.Sprintf("%de1", (now-60)/10)), true},
		{"past-fraction", num(fmt.Sprintf("%d.5", now-1)), true},
		{"future", secs(3600), false},
		{"string", str(fmt.Sprint(now - 60)), false},
		{"over-five-years", secs(-6 * 365 * 24 * 3600), false},
		{"no-attribute", nil, false},
		{"set-of-numbers", &types.AttributeValueMemberNS{Value: []string{fmt.Sprint(now - 60)}}, false},
	}
	for _, it := range items {
		item := attrs{"pk": str(it.pk), "g": str("all")}
		if it.ttl != nil {
			item["expires"] = it.ttl
		}
		l.put(tbl, item)
	}
	// Without TTL enabled nothing is swept.
	if n, err := l.store.SweepExpired(); err != nil || n != 0 {
		t.Fatalf("sweep without TTL: %d, %v", n, err)
	}
	if err := l.setTTL(tbl, "expires", true); err != nil {
		t.Fatal(err)
	}
	it := l.iterator(arn, st.ShardIteratorTypeLatest, "")
	// Expired items stay readable until the sweeper runs.
	if !l.exists(tbl, attrs{"pk": str("past")}) {
		t.Fatal("an expired item vanished before the sweep")
	}
	n, err := l.store.SweepExpired()
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("sweep deleted %d items, want 3", n)
	}
	for _, it := range items {
		if got := l.exists(tbl, attrs{"pk": str(it.pk)}); got == it.expires {
			t.Errorf("item %q: exists %v after the sweep", it.pk, got)
		}
	}
	q, err := l.db.Query(l.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("by_g"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: attrs{":g": str("all")}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Count != 5 {
		t.Errorf("GSI after the sweep: %d entries, want 5", q.Count)
	}

	// The sweeper's deletions are REMOVE records marked as the service's.
	recs, _ := l.records(it, 0)
	if len(recs) != 3 {
		t.Fatalf("%d stream records, want 3 REMOVEs", len(recs))
	}
	for _, r := range recs {
		id := r.UserIdentity
		if r.EventName != st.OperationTypeRemove || id == nil || aws.ToString(id.Type) != "Service" || aws.ToString(id.PrincipalId) != "dynamodb.amazonaws.com" {
			t.Errorf("TTL record %s identity %+v, want REMOVE by Service dynamodb.amazonaws.com", r.EventName, id)
		}
		if !strings.Contains(renderImage(r.Dynamodb.OldImage), "expires=N:") {
			t.Errorf("TTL record old image %s lacks the expiry attribute", renderImage(r.Dynamodb.OldImage))
		}
	}
	// A user's delete carries no identity.
	if _, err := l.db.DeleteItem(l.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("future")}}); err != nil {
		t.Fatal(err)
	}
	recs, _ = l.records(it, 0)
	if last := recs[len(recs)-1]; last.EventName != st.OperationTypeRemove || last.UserIdentity != nil {
		t.Errorf("user delete record: %s identity %+v", last.EventName, last.UserIdentity)
	}

	// An item that expires later is swept once its time has come, and an
	// update that pushes its expiry back keeps it.
	l.put(tbl, attrs{"pk": str("soon"), "expires": secs(30)})
	l.put(tbl, attrs{"pk": str("renewed"), "expires": secs(30)})
	if _, err := l.db.UpdateItem(l.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: attrs{"pk": str("renewed")},
		UpdateExpression: aws.String("SET expires = :e"), ExpressionAttributeValues: attrs{":e": secs(7200)}}); err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(time.Minute)
	if n, err := l.store.SweepExpired(); err != nil || n != 1 {
		t.Errorf("second sweep: %d, %v; want 1", n, err)
	}
	if l.exists(tbl, attrs{"pk": str("soon")}) || !l.exists(tbl, attrs{"pk": str("renewed")}) {
		t.Error("second sweep: wrong items deleted")
	}
	// Disabling TTL stops the sweeping.
	if err := l.setTTL(tbl, "expires", false); err != nil {
		t.Fatal(err)
	}
	l.clock.Advance(3 * time.Hour)
	if n, err := l.store.SweepExpired(); err != nil || n != 0 {
		t.Errorf("sweep with TTL disabled: %d, %v", n, err)
	}
}

// TestTTLBackgroundSweeper runs the real sweeper on a short interval.
func TestTTLBackgroundSweeper(t *testing.T) {
	t.Parallel()
	l := newLab(t, func(o *ddblocal.Options) { o.Now = nil; o.TTLSweepInterval = 10 * time.Millisecond })
	tbl := l.create(newTable("ttl_background", "pk", "sk"))
	if err := l.setTTL(tbl, "exp", true); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	l.put(tbl, attrs{"pk": str("p"), "sk": str("expired"), "exp": num(fmt.Sprint(now - 10))})
	l.put(tbl, attrs{"pk": str("p"), "sk": str("alive"), "exp": num(fmt.Sprint(now + 3600))})
	deadline := time.Now().Add(5 * time.Second)
	for l.exists(tbl, attrs{"pk": str("p"), "sk": str("expired")}) {
		if time.Now().After(deadline) {
			t.Fatal("the background sweeper did not delete the expired item within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !l.exists(tbl, attrs{"pk": str("p"), "sk": str("alive")}) {
		t.Error("the background sweeper deleted an unexpired item")
	}
}

// TestTTLSweepOverHTTP runs the sweeper through the admin endpoint.
func TestTTLSweepOverHTTP(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	tbl := l.create(newTable("ttl_admin", "pk"))
	if err := l.setTTL(tbl, "exp", true); err != nil {
		t.Fatal(err)
	}
	l.put(tbl, attrs{"pk": str("a"), "exp": num(fmt.Sprint(l.clock.Now().Unix() - 1))})
	var out struct{ Deleted int }
	adminJSON(t, "POST", l.url+"/_ddblocal/ttl/sweep", nil, &out)
	if out.Deleted != 1 || l.exists(tbl, attrs{"pk": str("a")}) {
		t.Errorf("admin sweep deleted %d, item exists %v", out.Deleted, l.exists(tbl, attrs{"pk": str("a")}))
	}
}
