package settlement

// Test-only access to the service's internals, for the external test
// package (settlement_test), which builds the engine through enginetest.

// SetBeforeWrite installs a hook that runs between a settlement's reads
// and its transaction on every attempt, so a test can commit a racing
// write in between.
func (s *Service) SetBeforeWrite(f func(attempt int)) { s.beforeWrite = f }

// STLItem is the stored settlement record.
type STLItem = stlItem

// ListedPayment checks one payment a PSP lists for a charge.
var ListedPayment = listedPayment
