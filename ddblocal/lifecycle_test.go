package ddblocal_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// A store closed by its user is closed again by ddbtest's cleanup: the
// second Close must not panic.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"", t.TempDir()} {
		srv := ddbtest.Start(t, ddblocal.Options{Dir: dir, TTLSweepInterval: 10 * time.Millisecond})
		if err := srv.Store.Close(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Store.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}

// A panic while UpdateTable holds the catalog lock (here from the clock
// the store was given) answers 500 and leaves the store serving.
func TestPanicInUpdateTableReleasesCatalog(t *testing.T) {
	t.Parallel()
	var explode atomic.Bool
	now := func() time.Time {
		if explode.CompareAndSwap(true, false) {
			panic("clock failure")
		}
		return time.Now()
	}
	// Not ddbtest.Start: if the store hangs, its cleanup would wait for
	// the hung request for ever instead of failing.
	st, err := ddblocal.Open(ddblocal.Options{Now: now, TTLSweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(st.Handler())
	c := ddbtest.NewClient(hs.URL, aws.NopRetryer{})
	_, err = c.CreateTable(bg, &dynamodb.CreateTableInput{TableName: aws.String("panics"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}})
	if err != nil {
		t.Fatal(err)
	}
	explode.Store(true)
	_, err = c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("panics"), TableClass: types.TableClassStandardInfrequentAccess})
	var ise *types.InternalServerError
	if !errors.As(err, &ise) {
		t.Fatalf("UpdateTable with a panicking clock: %v, want InternalServerError", err)
	}
	ctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if _, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("panics")}); err != nil {
		t.Fatalf("DescribeTable after the panic: %v", err)
	}
	hs.Close()
	st.Close()
}
