// Package engine is the store's core, below every API family (ADR 0061):
// the Store with its catalog of tables and indexes, item storage and the
// write path (item locks, index entries, counters), stream records,
// idempotency tokens, the capacity meter, fault injection, the TTL
// sweeper, and the expression and key helpers the families share. It
// imports only wire and the storage engine; the families embed its Store
// and add their handlers, and its Hooks let them recover at Open.
package engine
