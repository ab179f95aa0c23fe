package kit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
	"github.com/aws/smithy-go/middleware"
)

// NewEmbeddedClient returns the SDK client for the embedded store at
// endpoint, sending its requests through hc (InProcess for the store in the
// same process). Credentials are anonymous: the embedded store checks no
// signature, so the SDK skips SigV4 signing (a measurable share of each
// request's CPU) and nothing else changes on the wire. The SDK's standard
// retries stay on, as against DynamoDB. Through InProcess the client
// also leaves out what guards a network the request never crosses
// (docs/adr/0087-the-in-process-client-sheds-network-guards.md): the automatic
// ClientRequestToken of transactions, the CRC32 check of answers, the
// body's SHA-256 (a signature's input) and the per-call endpoint rules.
func NewEmbeddedClient(endpoint string, hc *http.Client) *dynamodb.Client {
	inProcess := isInProcess(hc)
	return dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}},
		func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			if hc != nil {
				o.HTTPClient = hc
			}
			if !inProcess {
				return
			}
			o.DisableValidateResponseChecksum = true
			o.AccountIDEndpointMode = aws.AccountIDEndpointModeDisabled
			if u, err := url.Parse(endpoint); err == nil {
				o.EndpointResolverV2 = fixedEndpoint{u: *u}
			}
			o.APIOptions = append(o.APIOptions, withoutAutoToken, withoutPayloadHash)
		})
}

// isInProcess reports a client made by InProcess.
func isInProcess(hc *http.Client) bool {
	if hc == nil {
		return false
	}
	_, ok := hc.Transport.(handlerTransport)
	return ok
}

// withoutAutoToken removes the SDK's automatic ClientRequestToken of
// TransactWriteItems (absent from the other operations' stacks). The
// token lets a retry after a lost answer be replayed, and an answer
// cannot be lost in process; without it the store neither hashes each
// transaction's request nor stores the token with its commit. Exactly
// once still rests where it always did: every transaction's conditions
// (the settlement's STL attribute_not_exists, versions).
func withoutAutoToken(s *middleware.Stack) error {
	if _, ok := s.Initialize.Get(autoTokenID); !ok {
		return nil
	}
	_, err := s.Initialize.Remove(autoTokenID)
	return err
}

// withoutPayloadHash removes the SHA-256 of every request body, which
// only a SigV4 signature uses: the client signs nothing (anonymous
// credentials) and the store checks nothing.
func withoutPayloadHash(s *middleware.Stack) error {
	if _, ok := s.Finalize.Get(payloadHashID); !ok {
		return nil
	}
	_, err := s.Finalize.Remove(payloadHashID)
	return err
}

// payloadHashID is the SDK's identifier of the middleware that hashes
// the request body for SigV4.
const payloadHashID = "ComputePayloadHash"

// autoTokenID is the SDK's identifier of the middleware that fills
// ClientRequestToken.
const autoTokenID = "OperationIdempotencyTokenAutoFill"

// fixedEndpoint resolves every call to one endpoint, parsed once: the
// embedded store has no regions, partitions or FIPS variants for the
// SDK's endpoint rules to choose between.
type fixedEndpoint struct{ u url.URL }

func (f fixedEndpoint) ResolveEndpoint(context.Context, dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	return smithyendpoints.Endpoint{URI: f.u}, nil
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
