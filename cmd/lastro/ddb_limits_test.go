package main

import (
	"testing"

	"lastro/collections/httpserve"
)

// TestStoreListenerHasNoPerAddressCap: the store's clients are SDK
// processes that keep many connections from one address (the public
// conformance suite keeps hundreds), so the store's listener caps only
// the whole, and answers past it in DynamoDB's shape.
func TestStoreListenerHasNoPerAddressCap(t *testing.T) {
	t.Parallel()
	l := storeLimits(httpserve.DefaultLimits())
	if l.MaxConnsPerAddr != l.MaxConns || l.Overload.Body == "" {
		t.Fatalf("store limits: %d per address of %d, overload %q", l.MaxConnsPerAddr, l.MaxConns, l.Overload.Body)
	}
}
