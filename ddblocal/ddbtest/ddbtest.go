// Package ddbtest starts an embedded DynamoDB-compatible store for tests and
// returns an AWS SDK client pointed at it, so tests exercise the same code
// path as production: the SDK over HTTP.
package ddbtest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"lastro/ddblocal"
)

// Server is a running store with its endpoint.
type Server struct {
	Store *ddblocal.Store
	URL   string
}

// Start starts an in-memory store (or a persistent one when opts.Dir is
// set) on a loopback port; it stops when the test ends.
func Start(t testing.TB, opts ddblocal.Options) *Server {
	t.Helper()
	st, err := ddblocal.Open(opts)
	if err != nil {
		t.Fatalf("ddbtest: open store: %v", err)
	}
	hs := httptest.NewServer(st.Handler())
	t.Cleanup(func() {
		hs.Close()
		st.Close()
	})
	return &Server{Store: st, URL: hs.URL}
}

// Client returns an SDK client for the server, with retries disabled so
// tests see every error the store returns.
func (s *Server) Client() *dynamodb.Client {
	return NewClient(s.URL, aws.NopRetryer{})
}

// NewClient returns a DynamoDB client for endpoint with fake credentials.
func NewClient(endpoint string, retryer aws.Retryer) *dynamodb.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		if retryer != nil {
			o.Retryer = retryer
		}
	})
}

// New starts an in-memory store and returns a client for it.
func New(t testing.TB) *dynamodb.Client {
	return Start(t, ddblocal.Options{}).Client()
}

// Ctx is a background context for tests that have none.
var Ctx = context.Background()
