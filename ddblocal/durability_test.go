package ddblocal_test

import (
	"context"
	"errors"
	"net/http/httptest"
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
	deadline := time.Now().Add(20 * time.Second)
	for round := 0; round < 100 && time.Now().Before(deadline); round++ {
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
