package debtor

// Test-only access to the service's internals, for the external test
// package (debtor_test), which builds the engine through enginetest.

// SetKeyOf replaces how the service computes debtor keys, to force a
// collision.
func (s *Service) SetKeyOf(f func(secret []byte, digits string) string) { s.keyOf = f }

// ProfileItem is the stored PROFILE item.
type ProfileItem = profileItem
