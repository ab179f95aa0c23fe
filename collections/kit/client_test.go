package kit_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ddblocal"
)

// closeRecorder records whether the transport closed the request body.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestInProcessHandsTheRequestToTheHandler(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("X-Seen", r.Method+" "+r.Host+" "+r.RequestURI+" "+r.Header.Get("X-In"))
			w.WriteHeader(http.StatusTeapot)
			w.Write(body)
		case "/implicit":
			w.Write([]byte("ok")) // no WriteHeader: 200
		case "/empty":
		}
	})
	c := kit.InProcess(h)
	tests := []struct {
		name, path, body, wantBody, wantSeen string
		status                               int
	}{
		{"status, headers and body", "/echo?q=1", "hello", "hello", "POST embedded.store.invalid /echo?q=1 in", http.StatusTeapot},
		{"implicit 200", "/implicit", "", "ok", "", http.StatusOK},
		{"nothing written", "/empty", "", "", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rb := &closeRecorder{Reader: strings.NewReader(tt.body)}
			req, err := http.NewRequest(http.MethodPost, kit.InProcessEndpoint+tt.path, rb)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-In", "in")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || string(got) != tt.wantBody || resp.Header.Get("X-Seen") != tt.wantSeen ||
				resp.ContentLength != int64(len(tt.wantBody)) {
				t.Fatalf("%d %q %q (length %d)", resp.StatusCode, got, resp.Header.Get("X-Seen"), resp.ContentLength)
			}
			if !rb.closed {
				t.Fatal("the request body was not closed")
			}
			if req.RequestURI != "" {
				t.Fatal("the client's request was modified")
			}
		})
	}
}

func TestInProcessHonoursCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // the caller gives up while the handler runs
		<-r.Context().Done()
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, kit.InProcessEndpoint+"/", nil)
	if _, err := kit.InProcess(h).Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestEmbeddedClientInProcess: the SDK client speaks the DynamoDB protocol
// to the store's handler with no socket in between.
func TestEmbeddedClientInProcess(t *testing.T) {
	t.Parallel()
	st, err := ddblocal.Open(ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(st.Handler()))
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, table.CreateInput("in-process")); err != nil {
		t.Fatal(err)
	}
	out, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 1 || out.TableNames[0] != "in-process" {
		t.Fatalf("ListTables: %v %v", out, err)
	}
}

// TestEmbeddedClientInProcessSendsNoToken: through InProcess a
// transaction goes out without the SDK's automatic ClientRequestToken
// (ADR 0087) and its condition still holds; over a socket the same client
// keeps the token.
func TestEmbeddedClientInProcessSendsNoToken(t *testing.T) {
	t.Parallel()
	st, err := ddblocal.Open(ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	var seen []bool // whether each TransactWriteItems carried a token
	rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
			mu.Lock()
			seen = append(seen, strings.Contains(string(body), `"ClientRequestToken"`))
			mu.Unlock()
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		st.Handler().ServeHTTP(w, r)
	})
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(rec))
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, table.CreateInput("no-token")); err != nil {
		t.Fatal(err)
	}
	k := kit.New(db, "no-token").Tenant("t1", nil)
	item := kit.Item{"PK": &types.AttributeValueMemberS{Value: "T#t1#X"}, "SK": &types.AttributeValueMemberS{Value: "A"}}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	put := func() error {
		return k.Transact(ctx, kit.PutAction(item, &notExists),
			kit.PutAction(kit.Item{"PK": &types.AttributeValueMemberS{Value: "T#t1#X"}, "SK": &types.AttributeValueMemberS{Value: "B"}}, nil))
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	if err := put(); !errors.Is(err, kit.ErrConditionFailed) {
		t.Fatalf("the same conditioned transaction again: %v, want ErrConditionFailed", err)
	}
	mu.Lock()
	if len(seen) != 2 || seen[0] || seen[1] {
		t.Fatalf("TransactWriteItems in process, token sent: %v, want two without", seen)
	}
	seen = nil
	mu.Unlock()

	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	overSocket := kit.New(kit.NewEmbeddedClient(srv.URL, nil), "no-token").Tenant("t1", nil)
	if err := overSocket.Transact(ctx, kit.PutAction(kit.Item{"PK": &types.AttributeValueMemberS{Value: "T#t1#Y"}, "SK": &types.AttributeValueMemberS{Value: "A"}}, nil)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !seen[0] {
		t.Fatalf("TransactWriteItems over a socket, token sent: %v, want one with", seen)
	}
}

// TestInProcessTransactionsCarryNoGeneratedToken: through InProcess the
// SDK does not generate a ClientRequestToken (ADR 0087), while a token the
// caller sets still reaches the store and makes a repeat a replay.
func TestInProcessTransactionsCarryNoGeneratedToken(t *testing.T) {
	t.Parallel()
	st, err := ddblocal.Open(ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	var bodies []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
			mu.Lock()
			bodies = append(bodies, string(body))
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		st.Handler().ServeHTTP(w, r)
	})
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(h))
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, table.CreateInput("tokens")); err != nil {
		t.Fatal(err)
	}
	put := func(token *string) error {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: token, TransactItems: []types.TransactWriteItem{{
			Put: &types.Put{TableName: aws.String("tokens"), ConditionExpression: aws.String("attribute_not_exists(PK)"),
				Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"}}},
		}}})
		return err
	}
	if err := put(nil); err != nil {
		t.Fatal(err)
	}
	// A caller's token: the second send is answered from the first.
	tok := aws.String("caller-token-1")
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("tokens"), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "s"}}}); err != nil {
		t.Fatal(err)
	}
	if err := put(tok); err != nil {
		t.Fatal(err)
	}
	if err := put(tok); err != nil {
		t.Fatalf("the same token again: %v, want the first answer", err)
	}
	if err := put(nil); !errors.As(err, new(*types.TransactionCanceledException)) {
		t.Fatalf("without a token the write runs again: %v, want its condition to fail", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 4 {
		t.Fatalf("%d transactions seen, want 4", len(bodies))
	}
	for i, b := range bodies {
		if has := strings.Contains(b, "ClientRequestToken"); has != (i == 1 || i == 2) {
			t.Errorf("transaction %d: token sent %v: %s", i, has, b)
		}
	}
}
