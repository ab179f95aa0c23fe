package ddblocal

import "github.com/cockroachdb/pebble/v2"

// streamOperations serves the DynamoDB Streams API.
func (s *Store) streamOperations() map[string]handlerFunc {
	return map[string]handlerFunc{}
}

// appendStreamRecords adds the stream records of committed changes to the
// batch. Called with s.commit held.
func (s *Store) appendStreamRecords(b *pebble.Batch, changes []*change) {}
