package migrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ops"
)

// Count is one tenant's counts: the items of the source type that should
// carry the key, those that carry it (the right value), and the entries of
// the tenant's partition of the target index.
type Count struct {
	Tenant   string `json:"tenant"`
	Source   int64  `json:"source"`
	Carrying int64  `json:"carrying"`
	Index    int64  `json:"index"`
}

// Violation is one item whose key attribute no index could hold, or that
// the migration's index should not hold, named by its table key (keys
// carry no personal data; an oversized one is cut short).
type Violation struct {
	PK        string `json:"pk"`
	SK        string `json:"sk"`
	Attribute string `json:"attribute"`
	Problem   string `json:"problem"`
}

// Verification is what Verify found.
type Verification struct {
	Migration   string      `json:"migration"`
	Counts      []Count     `json:"counts"`
	Differences int64       `json:"differences"` // Σ |source − carrying| + |carrying − index|
	Violations  []Violation `json:"violations"`
	// ViolationCount counts every violation; Violations lists the first
	// MaxListed.
	ViolationCount int64 `json:"violationCount"`
	OK             bool  `json:"ok"`
}

// MaxListed is how many violations a verification lists.
const MaxListed = 100

// ErrDifferences is returned when a verification finds differences or
// key violations: reads must not switch to the index yet.
var ErrDifferences = errs.E(errs.Conflict, "migration_not_verified", "the migration's index differs from its source or holds key violations")

// keyRule is one key attribute of the table or an index: its type and
// size limit.
type keyRule struct {
	attr  string
	typ   types.ScalarAttributeType
	limit int
}

// keyRules lists the key attributes of the table and its indexes, from
// the table's definition: 2048 bytes for a partition key, 1024 for a sort
// key, as DynamoDB limits them.
func keyRules() []keyRule {
	in := table.CreateInput("lastro")
	typ := map[string]types.ScalarAttributeType{}
	for _, a := range in.AttributeDefinitions {
		typ[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	seen := map[string]bool{}
	var out []keyRule
	add := func(ks []types.KeySchemaElement) {
		for _, k := range ks {
			name := aws.ToString(k.AttributeName)
			if seen[name] {
				continue
			}
			seen[name] = true
			limit := 2048
			if k.KeyType == types.KeyTypeRange {
				limit = 1024
			}
			out = append(out, keyRule{attr: name, typ: typ[name], limit: limit})
		}
	}
	add(in.KeySchema)
	for _, g := range in.GlobalSecondaryIndexes {
		add(g.KeySchema)
	}
	return out
}

// Verify counts, for every tenant, the items of m's source type, those
// carrying m's key and the entries of the target index (for a Lookups
// migration: the source items that should have an entry, those whose
// entry exists, and the entries of its type), and checks every
// item's key attributes (table and indexes) for a wrong type, an empty
// string or a value over DynamoDB's key size limits, and m's own
// attributes for a value that is not the one the migration writes. It
// returns ErrDifferences unless everything agrees.
func Verify(ctx context.Context, d ops.Deps, m *Migration) (*Verification, error) {
	d = lockProgress(d)
	v := &Verification{Migration: m.Name}
	rules := keyRules()
	total := segments(d)
	lv := newLookupVerify()
	counts := map[string]*Count{}
	cnt := func(id string) *Count {
		if counts[id] == nil {
			counts[id] = &Count{Tenant: id}
		}
		return counts[id]
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		errl    []error
		scanned int64
	)
	flag := func(it kit.Item, attr, problem string) {
		v.ViolationCount++
		if len(v.Violations) < MaxListed {
			k := keyOf(it)
			v.Violations = append(v.Violations, Violation{PK: cut(k.PK), SK: cut(k.SK), Attribute: attr, Problem: problem})
		}
	}
	for seg := range total {
		wg.Go(func() {
			err := d.Kit.MaintenanceScanPages(ctx, "migrate-verify."+m.Name, kit.ScanSpec{Segment: seg, Total: total},
				func(items []kit.Item, _ *kit.Key) error {
					mu.Lock()
					defer mu.Unlock()
					for _, it := range items {
						scanned++
						bad := map[string]bool{}
						for _, r := range rules {
							if p := checkKey(it[r.attr], r); p != "" {
								flag(it, r.attr, p)
								bad[r.attr] = true
							}
						}
						switch m.Kind {
						case Backfill:
							m.check(it, bad, cnt, flag)
						case Lookups:
							m.see(it, lv, cnt)
						}
					}
					progress(d, "migrate %s: verify: %d items read", m.Name, scanned)
					return ctx.Err()
				})
			if err != nil {
				mu.Lock()
				errl = append(errl, fmt.Errorf("segment %d: %w", seg, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errl...); err != nil {
		return nil, err
	}
	if m.Kind == Backfill || m.Kind == Lookups {
		for _, id := range slices.Sorted(maps.Keys(counts)) {
			c := counts[id]
			if m.Kind == Lookups {
				lv.settle(c)
			} else {
				n, err := indexCount(ctx, d.Kit, m, id)
				if err != nil {
					return nil, err
				}
				c.Index = n
			}
			v.Counts = append(v.Counts, *c)
			v.Differences += abs(c.Source-c.Carrying) + abs(c.Carrying-c.Index)
		}
	}
	sort.Slice(v.Violations, func(i, j int) bool {
		a, b := v.Violations[i], v.Violations[j]
		return a.PK+"\x00"+a.SK+"\x00"+a.Attribute < b.PK+"\x00"+b.SK+"\x00"+b.Attribute
	})
	v.OK = v.Differences == 0 && v.ViolationCount == 0
	progress(d, "migrate %s: verify: %d items read, %d differences, %d key violations", m.Name, scanned, v.Differences, v.ViolationCount)
	// The readers of the index switch to it only on a recorded clean
	// verify (docs/adr/0081, step 5).
	if err := ops.RecordVerify(ctx, d.Kit, d.Clock, m.Name, v.Differences, v.ViolationCount); err != nil {
		return nil, err
	}
	if !v.OK {
		return v, ErrDifferences
	}
	return v, nil
}

// check counts item for its tenant and flags m's attributes on it that
// are not what the backfill writes; bad are the attributes the key rules
// already flagged (one problem is enough to name).
func (m *Migration) check(it kit.Item, bad map[string]bool, cnt func(string) *Count, flag func(kit.Item, string, string)) {
	id := tenantOf(str(it, "PK"))
	source := str(it, "type") == m.Type
	want, ok := m.Want(it)
	if source && ok {
		cnt(id).Source++
	}
	carries := source && ok
	for _, a := range m.Attrs {
		av, has := it[a]
		if !has {
			carries = false
			continue
		}
		s, isS := av.(*types.AttributeValueMemberS)
		switch {
		case bad[a]:
			carries = false
		case !source:
			flag(it, a, "on an item of type "+cut(str(it, "type"))+": the index is for "+m.Type+" items only")
			if isS && id != "" && s.Value == m.Partition(id) {
				cnt(id) // its tenant's index partition holds it: counted there
			}
		case !ok:
			flag(it, a, "on an item outside the migration (no tenant or another sort key)")
		case isS && s.Value != want[a] && s.Value != "":
			flag(it, a, "not the value the migration writes (another index partition)")
			carries = false
			if other := tenantOf(s.Value); other != "" {
				cnt(other) // the other tenant's partition holds it
			}
		}
	}
	if carries {
		cnt(id).Carrying++
	}
}

// checkKey returns what is wrong with v as a value of key attribute r
// ("" when nothing is, or it is absent).
func checkKey(v types.AttributeValue, r keyRule) string {
	if v == nil {
		return ""
	}
	var size int
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		if r.typ != types.ScalarAttributeTypeS {
			return "a string, the key wants " + string(r.typ)
		}
		if x.Value == "" {
			return "an empty string"
		}
		size = len(x.Value)
	case *types.AttributeValueMemberN:
		if r.typ != types.ScalarAttributeTypeN {
			return "a number, the key wants " + string(r.typ)
		}
		size = numberSize(x.Value)
	case *types.AttributeValueMemberB:
		if r.typ != types.ScalarAttributeTypeB {
			return "a binary, the key wants " + string(r.typ)
		}
		if len(x.Value) == 0 {
			return "an empty binary"
		}
		size = len(x.Value)
	default:
		return fmt.Sprintf("a %s, the key wants %s", typeName(v), r.typ)
	}
	if size > r.limit {
		return fmt.Sprintf("%d bytes, over the key limit of %d", size, r.limit)
	}
	return ""
}

func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberBOOL:
		return "boolean"
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberM:
		return "map"
	case *types.AttributeValueMemberL:
		return "list"
	default:
		return "set"
	}
}

// indexCount counts the entries of tenant id's partition of m's index.
func indexCount(ctx context.Context, k *kit.Kit, m *Migration, id string) (int64, error) {
	db := k.Tenant(id, nil)
	q := kit.Query{Index: m.Index, Partition: m.Partition(id)}
	var n int64
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, q, cursor)
		if err != nil {
			return 0, fmt.Errorf("count index %s: %w", m.Index, err)
		}
		n += int64(len(page.Items))
		if page.Next == "" {
			return n, nil
		}
		cursor = page.Next
	}
}

// cut shortens an oversized key for a report line.
func cut(s string) string {
	if len(s) > 96 {
		return s[:96] + "…"
	}
	return s
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
