package engine

import (
	"sync"
)

// exportState is the store's export bookkeeping.
type exportState struct {
	// Starting serialises a ClientToken's lookup with the start of the
	// export it names, so calls racing with one token start one export.
	Starting sync.Mutex
	Mu       sync.Mutex
	Closed   bool   // Close began: no new export starts
	Root     string // resolved root of the buckets
	Temp     bool   // root is a temporary folder Close removes
}
