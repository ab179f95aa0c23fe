package kit

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// NewEmbeddedClient returns the SDK client for the embedded store at
// endpoint, sending its requests through hc (InProcess for the store in the
// same process). Credentials are anonymous: the embedded store checks no
// signature, so the SDK skips SigV4 signing (a measurable share of each
// request's CPU) and nothing else changes on the wire. The SDK's standard
// retries stay on, as against DynamoDB.
//
// Through InProcess, a transaction goes without the SDK's generated
// ClientRequestToken (ADR 0088): the token only makes a retry of a
// request whose answer was lost in transit safe, and a handler called in
// the same goroutine loses no answer, while the store hashes every
// token's request in canonical form and stores it with the commit. What
// makes an engine write happen once is its condition (the header's
// version, attribute_not_exists), with or without a token.
func NewEmbeddedClient(endpoint string, hc *http.Client) *dynamodb.Client {
	return dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}},
		func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			if hc != nil {
				o.HTTPClient = hc
				if _, ok := hc.Transport.(handlerTransport); ok {
					o.APIOptions = append(o.APIOptions, withoutTokenAutoFill)
				}
			}
		})
}

// tokenAutoFill is the SDK's middleware that fills ClientRequestToken.
const tokenAutoFill = "OperationIdempotencyTokenAutoFill"

// withoutTokenAutoFill removes tokenAutoFill from an operation's stack,
// where it is (TransactWriteItems, ExecuteTransaction): a token the
// caller sets still goes out.
func withoutTokenAutoFill(s *middleware.Stack) error {
	if _, ok := s.Initialize.Get(tokenAutoFill); ok {
		if _, err := s.Initialize.Remove(tokenAutoFill); err != nil {
			return fmt.Errorf("kit: %w", err)
		}
	}
	return nil
}

// InProcessEndpoint is the endpoint of a store reached through InProcess:
// any URL would do (no socket is opened); this one says what it is.
const InProcessEndpoint = "http://embedded.store.invalid"

// InProcess returns an HTTP client whose every request is answered by h in
// the calling goroutine: the same SDK client and wire protocol as over a
// socket, with no port for anyone else to reach and no loopback round trip.
func InProcess(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h}}
}

// handlerTransport is the http.RoundTripper of InProcess.
type handlerTransport struct{ h http.Handler }

// RoundTrip hands req to the handler as a server would receive it and
// returns the buffered answer. The request itself is not modified (the
// RoundTripper contract): the handler gets a shallow copy.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		return nil, fmt.Errorf("kit: in-process request without a URL")
	}
	in := *req
	in.RequestURI = req.URL.RequestURI()
	in.Host = req.URL.Host
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.Proto == "" {
		in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	}
	w := &bufferedResponse{header: http.Header{}}
	t.h.ServeHTTP(w, &in)
	if req.Body != nil {
		req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// bufferedResponse is the http.ResponseWriter the handler writes to.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// NewClient returns the SDK client for DynamoDB with cfg (AWS, or any
// endpoint when endpoint is set): for binaries other than cmd/lastro,
// such as the stream's Lambda handler, which must not build it themselves.
func NewClient(cfg aws.Config, endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
}
