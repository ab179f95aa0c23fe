package agenda

// SetBeforeSave runs f between an action's reads and its write, so tests
// can force a payment into that gap.
func (r *Runner) SetBeforeSave(f func(contractID string)) { r.beforeSave = f }
