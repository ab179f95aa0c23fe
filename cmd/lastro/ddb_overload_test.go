package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"lastro/collections/httpserve"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// TestStoreOverloadIsDynamoDBThrottling: past the store listener's
// in-flight cap the SDK sees DynamoDB's ThrottlingException, which its
// retryer treats as a throttle to retry, not an UnknownError.
func TestStoreOverloadIsDynamoDBThrottling(t *testing.T) {
	t.Parallel()
	st, err := ddblocal.Open(ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	entered, release := make(chan struct{}), make(chan struct{})
	inner := st.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hold") != "" {
			entered <- struct{}{}
			<-release
			return
		}
		inner.ServeHTTP(w, r)
	})
	l := httpserve.DefaultLimits()
	l.MaxInFlight = 1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserve.Run(ctx, ln, h, storeLimits(l), time.Second, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { cancel(); <-done })
	url := "http://" + ln.Addr().String()
	held := make(chan struct{})
	go func() {
		defer close(held)
		if resp, err := http.Post(url+"/?hold=1", "application/json", nil); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	_, err = ddbtest.NewClient(url, aws.NopRetryer{}).ListTables(context.Background(), &dynamodb.ListTablesInput{})
	release <- struct{}{}
	<-held
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ThrottlingException" {
		t.Fatalf("past the in-flight cap: %v, want ThrottlingException", err)
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Fatalf("the SDK does not take %v for a throttle", err)
	}
	// Under the cap the store answers.
	if _, err := ddbtest.NewClient(url, aws.NopRetryer{}).ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("under the cap: %v", err)
	}
}
