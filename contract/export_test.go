package contract

// Test-only access for the external test package (contract_test).

// Index derives the header's index attributes from its facts, as every
// header write does.
func (h *Header) Index() { h.index() }
