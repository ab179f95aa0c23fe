package ddblocal

import (
	"lastro/ddblocal/internal/wire"
)

// Overloaded returns the content type and body of the answer the store's
// listener gives past its HTTP caps (connections, requests in flight):
// DynamoDB's ThrottlingException, which the AWS SDKs retry with backoff.
// The server in front of the store (httpserve) writes it with its own 503
// and Retry-After; an answer in any other shape reaches the SDKs as an
// unmodelled "UnknownError".
func Overloaded() (contentType, body string) {
	e := &wire.APIError{Type: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput."}
	// Neither part needs JSON escaping.
	return "application/x-amz-json-1.0", `{"__type":"` + e.Namespace() + e.Type + `","message":"` + e.Message + `"}`
}
