package engine

const (
	MaxBatchGetKeys  = 100
	MaxBatchWrites   = 25
	MaxResponseBytes = 16 << 20
)

// MaxPageBytes is DynamoDB's 1 MB limit on the data a Query or Scan reads
// per call, evaluated before any filter.
const MaxPageBytes = 1 << 20

// Projects reports whether an index stores attribute n.
func (ix *IndexDef) Projects(d *TableDef, n string) bool {
	if ix.ProjectionType == "ALL" || n == d.Hash.Name || n == d.Range.Name || n == ix.Hash.Name || n == ix.Range.Name {
		return true
	}
	for _, k := range ix.NonKey {
		if k == n {
			return true
		}
	}
	return false
}
