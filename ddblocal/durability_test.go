package ddblocal_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// openAt opens a persistent store on dir and serves it; stop closes both.
func openAt(t *testing.T, dir string) (c *dynamodb.Client, stop func()) {
	t.Helper()
	st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	hs := httptest.NewServer(st.Handler())
	var once sync.Once
	stop = func() {
		once.Do(func() {
			hs.Close()
			if err := st.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return ddbtest.NewClient(hs.URL, aws.NopRetryer{}), stop
}

func createSimple(ctx context.Context, c *dynamodb.Client, name string) error {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	return err
}

// A CreateTable racing a DeleteTable of the same name either is refused
// (the old table still exists, or is being deleted) or creates a table
// that survives a restart.
func TestCreateTableDuringDeleteIsDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	// Rounds for at most a few seconds: the window the test aims at is
	// narrow, so each round is one more chance to land in it.
	budget := time.Now().Add(4 * time.Second)
	for round := 0; round < 100 && time.Now().Before(budget); round++ {
		deadline := time.Now().Add(10 * time.Second)
		c, stop := openAt(t, dir)
		if err := createSimple(ctx, c, "reborn"); err != nil {
			t.Fatalf("round %d: create: %v", round, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("reborn")})
			done <- err
		}()
		// Creators spin until one succeeds: the first success lands as
		// early as the store allows after the delete began.
		var wg sync.WaitGroup
		var mu sync.Mutex
		created := false
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					mu.Lock()
					stopNow := created
					mu.Unlock()
					if stopNow {
						return
					}
					err := createSimple(ctx, c, "reborn")
					if err == nil {
						mu.Lock()
						created = true
						mu.Unlock()
						return
					}
					var riu *types.ResourceInUseException
					if !errors.As(err, &riu) {
						t.Errorf("round %d: create during delete: %v", round, err)
						return
					}
					if msg := riu.ErrorMessage(); strings.Contains(msg, "deleted") && msg != "Attempt to change a resource which is still in use: Table is being deleted: reborn" {
						t.Errorf("message %q", msg)
					}
				}
			})
		}
		wg.Wait()
		if !created {
			t.Fatalf("round %d: no CreateTable succeeded within 10s of the delete", round)
		}
		if err := <-done; err != nil {
			t.Fatalf("round %d: delete: %v", round, err)
		}
		stop()
		c, stop = openAt(t, dir)
		if _, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("reborn")}); err != nil {
			t.Fatalf("round %d: the table created after the delete is gone after a restart: %v", round, err)
		}
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("reborn")}); err != nil {
			t.Fatalf("round %d: cleanup: %v", round, err)
		}
		stop()
	}
}

// A strongly consistent LSI Query that fetches attributes from the table
// reads the index and the items from one moment: under concurrent writes
// that move items along the index and delete them, every item it returns
// is whole, satisfies the key condition and comes in index order.
func TestLSIQueryFetchesFromItsSnapshot(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("lsi"),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("rank"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{
			IndexName: aws.String("byRank"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("rank"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	const items = 20
	put := func(i, rank int) error {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lsi"), Item: map[string]types.AttributeValue{
			"pk": crashS("p"), "sk": crashS("s" + strconv.Itoa(i)), "rank": crashN(rank), "payload": crashS(strings.Repeat("x", 100))}})
		return err
	}
	for i := range items {
		if err := put(i, i); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (j*7 + w) % items
				var err error
				if j%3 == 0 {
					_, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("lsi"),
						Key: map[string]types.AttributeValue{"pk": crashS("p"), "sk": crashS("s" + strconv.Itoa(i))}})
				} else {
					err = put(i, (j*13)%100) // moves the item along the index, in and out of the queried range
				}
				if err != nil {
					t.Errorf("writer: %v", err)
					return
				}
			}
		})
	}
	deadline := time.Now().Add(2 * time.Second)
	for q := 0; q < 400 && time.Now().Before(deadline) && !t.Failed(); q++ {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("lsi"), IndexName: aws.String("byRank"),
			ConsistentRead:            aws.Bool(true),
			Select:                    types.SelectAllAttributes,
			KeyConditionExpression:    aws.String("pk = :p AND #r BETWEEN :lo AND :hi"),
			ExpressionAttributeNames:  map[string]string{"#r": "rank"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": crashS("p"), ":lo": crashN(20), ":hi": crashN(60)}})
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		prev := -1
		for _, it := range out.Items {
			if _, ok := it["payload"]; !ok {
				t.Errorf("query %d returned a partial item: %v", q, crashCanon(it))
				continue
			}
			r := crashNum(t, it, "rank")
			if r < 20 || r > 60 {
				t.Errorf("query %d returned rank %d, outside its key condition", q, r)
			}
			if r < prev {
				t.Errorf("query %d out of index order: %d after %d", q, r, prev)
			}
			prev = r
		}
	}
	close(stop)
	wg.Wait()
}

// tokenTx is a TransactWriteItems whose maps (item, expression values)
// the SDK encodes in random order: the same request in a different byte
// order each time.
func tokenTx(token string) *dynamodb.TransactWriteItemsInput {
	item := map[string]types.AttributeValue{"pk": crashS("ledger#" + token)}
	for i := range 12 {
		item["a"+strconv.Itoa(i)] = crashN(i)
	}
	vals := map[string]types.AttributeValue{}
	for i := range 8 {
		vals[":v"+strconv.Itoa(i)] = crashN(i)
	}
	return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token), TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String("tok"), Key: map[string]types.AttributeValue{"pk": crashS("counter")},
			UpdateExpression:          aws.String("ADD n :v1 SET v0 = :v0, v2 = :v2, v3 = :v3, v4 = :v4, v5 = :v5, v6 = :v6, v7 = :v7"),
			ExpressionAttributeValues: vals}},
		{Put: &types.Put{TableName: aws.String("tok"), Item: item}},
	}}
}

func counterOf(t *testing.T, c *dynamodb.Client) int {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("tok"), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": crashS("counter")}})
	if err != nil {
		t.Fatalf("get counter: %v", err)
	}
	if out.Item == nil {
		return 0
	}
	return crashNum(t, out.Item, "n")
}

// The same TransactWriteItems sent again with its token is answered, not
// refused and not applied again, whatever order the SDK put its maps in;
// concurrent retries included.
func TestTransactTokenComparesMeaning(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	if err := createSimple(ctx, c, "tok"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				_, err := c.TransactWriteItems(ctx, tokenTx("same"))
				var inProgress *types.TransactionInProgressException
				if err != nil && !errors.As(err, &inProgress) {
					t.Errorf("retry with the same token: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if n := counterOf(t, c); n != 1 {
		t.Errorf("counter is %d after one transaction retried 20 times, want 1", n)
	}
	// Another request under the same token is still refused.
	other := tokenTx("same")
	other.TransactItems = other.TransactItems[:1]
	var mismatch *types.IdempotentParameterMismatchException
	if _, err := c.TransactWriteItems(ctx, other); !errors.As(err, &mismatch) {
		t.Errorf("a different request with the same token: %v, want IdempotentParameterMismatchException", err)
	}
}

// A token outlives a restart for ten minutes: a retry of a committed
// transaction after the store restarted is answered, not applied twice;
// after ten minutes the token is a new transaction.
func TestTransactTokenSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	open := func() (*dynamodb.Client, func()) {
		st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1, Now: clock})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		hs := httptest.NewServer(st.Handler())
		return ddbtest.NewClient(hs.URL, aws.NopRetryer{}), func() { hs.Close(); st.Close() }
	}
	c, stop := open()
	if err := createSimple(ctx, c, "tok"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TransactWriteItems(ctx, tokenTx("crash")); err != nil {
		t.Fatal(err)
	}
	stop()
	c, stop = open()
	defer func() { stop() }()
	if _, err := c.TransactWriteItems(ctx, tokenTx("crash")); err != nil {
		t.Fatalf("retry after restart: %v", err)
	}
	if n := counterOf(t, c); n != 1 {
		t.Fatalf("counter is %d after a retry that followed a restart, want 1", n)
	}
	mu.Lock()
	now = now.Add(11 * time.Minute)
	mu.Unlock()
	stop()
	c, stop = open()
	if _, err := c.TransactWriteItems(ctx, tokenTx("crash")); err != nil {
		t.Fatalf("token reused after ten minutes: %v", err)
	}
	if n := counterOf(t, c); n != 2 {
		t.Fatalf("counter is %d after the token expired and was reused, want 2", n)
	}
}

// Parallel Scan workers page through their own segments concurrently and
// see every item exactly once; a LastEvaluatedKey handed to another
// segment is refused as DynamoDB refuses it.
func TestParallelScanRefusesAnotherSegmentsKey(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	if err := createSimple(ctx, c, "seg"); err != nil {
		t.Fatal(err)
	}
	const items, segments = 200, 4
	for i := range items {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("seg"),
			Item: map[string]types.AttributeValue{"pk": crashS("k" + strconv.Itoa(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	leks := make([]map[string]types.AttributeValue, segments)
	var wg sync.WaitGroup
	for seg := range segments {
		wg.Go(func() {
			var start map[string]types.AttributeValue
			for page := 0; page < items; page++ {
				out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("seg"), Limit: aws.Int32(7),
					Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(segments), ExclusiveStartKey: start})
				if err != nil {
					t.Errorf("segment %d: %v", seg, err)
					return
				}
				mu.Lock()
				for _, it := range out.Items {
					seen[it["pk"].(*types.AttributeValueMemberS).Value]++
				}
				if leks[seg] == nil && out.LastEvaluatedKey != nil {
					leks[seg] = out.LastEvaluatedKey
				}
				mu.Unlock()
				if out.LastEvaluatedKey == nil {
					return
				}
				start = out.LastEvaluatedKey
			}
		})
	}
	wg.Wait()
	if len(seen) != items {
		t.Errorf("parallel scan saw %d items, want %d", len(seen), items)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("item %s seen %d times", k, n)
		}
	}
	for seg := range segments {
		other := (seg + 1) % segments
		if leks[seg] == nil {
			t.Fatalf("segment %d returned no LastEvaluatedKey", seg)
		}
		_, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("seg"), Segment: aws.Int32(int32(other)),
			TotalSegments: aws.Int32(segments), ExclusiveStartKey: leks[seg]})
		want := "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: 4 Segment: " + strconv.Itoa(other)
		if err == nil || !strings.Contains(err.Error(), "ValidationException: "+want) {
			t.Errorf("segment %d's key given to segment %d: %v, want ValidationException %q", seg, other, err, want)
		}
	}
}
