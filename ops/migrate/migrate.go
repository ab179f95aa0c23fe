// Package migrate is Lastro's migrations toolkit (docs/adr/0081): a
// registry of named migrations and the three commands that act on one,
// Plan (a dry run with the blast radius), Run (the backfill) and Verify
// (counts and key violations).
//
// A migration is additive when it adds application attributes only: the
// code reads them with a default and nothing is written to old items. It
// is a backfill when it adds indexing attributes (a GSI's keys), which
// every existing item that should appear in the index must carry before a
// read may rely on it: a parallel maintenance scan filtered on `type`,
// paced in write units a second, one checkpoint per segment in the system
// partition, each write guarded by `schemaVersion` so a rerun or a resumed
// run never writes an item twice (docs/design.md#migrations).
package migrate

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
)

// Kind says whether a migration touches existing items.
type Kind string

// The two kinds of migration (seed: the one question that decides), and
// Lookups (lookups.go), a backfill of new items rather than attributes.
const (
	Additive Kind = "additive" // application attributes only: nothing to backfill
	Backfill Kind = "backfill" // new indexing attributes: existing items are decorated
)

// Migration is one registered migration.
type Migration struct {
	// Name is what `lastro migrate plan|run|verify NAME` takes.
	Name string
	Kind Kind
	// Summary says in one line what the migration is for.
	Summary string
	// Version is the schemaVersion the migration stamps: an item at it or
	// above is never written again.
	Version int
	// Type is the `type` of the items the backfill decorates (the source
	// filter).
	Type string
	// Index is the GSI the new key attributes feed (verify counts it).
	Index string
	// Attrs are the indexing attributes the backfill writes.
	Attrs []string
	// Want returns the indexing attributes item should carry, and false
	// when the item is outside the migration (it belongs to no tenant).
	Want func(item kit.Item) (map[string]string, bool)
	// Partition is the index partition the items of tenant id are in, for
	// verify's count of the target index.
	Partition func(id string) string
	// Filer files the lookup entries of a Lookups migration, whose
	// entries are items of EntryType (docs/adr/0084).
	Filer     Filer
	EntryType string
}

// needs reports whether item lacks an attribute of want, and so the
// backfill would write it. An attribute present with another value is a
// violation for Verify, never overwritten: the backfill adds keys, it does
// not move items between index partitions.
func (m *Migration) needs(item kit.Item) (map[string]string, bool) {
	if str(item, "type") != m.Type || m.stamped(item) {
		return nil, false
	}
	want, ok := m.Want(item)
	if !ok {
		return nil, false
	}
	for _, a := range m.Attrs {
		if _, has := item[a]; !has {
			return want, true
		}
	}
	return nil, false
}

// stamped reports whether item's schemaVersion is at the migration's.
func (m *Migration) stamped(item kit.Item) bool {
	n, ok := item[SchemaVersion].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	var v int
	_, err := fmt.Sscan(n.Value, &v)
	return err == nil && v >= m.Version
}

// SchemaVersion is the attribute a backfill stamps on the items it wrote.
const SchemaVersion = "schemaVersion"

// Registry is the set of migrations the binary knows, by name.
type Registry struct{ byName map[string]*Migration }

// ErrUnknown is returned for a name no migration is registered under.
var ErrUnknown = errs.E(errs.Invalid, "unknown_migration", "unknown migration (lastro migrate list names them)")

// NewRegistry returns a registry of ms. A duplicate name, a backfill
// without its source type, version or key attributes is refused: a
// registration error is a programming error caught by the tests.
func NewRegistry(ms ...*Migration) (*Registry, error) {
	r := &Registry{byName: map[string]*Migration{}}
	for _, m := range ms {
		if m.Name == "" || r.byName[m.Name] != nil {
			return nil, fmt.Errorf("migrate: migration name %q empty or registered twice", m.Name)
		}
		switch m.Kind {
		case Additive:
		case Backfill:
			if m.Type == "" || m.Version < 1 || len(m.Attrs) == 0 || m.Want == nil || m.Index == "" || m.Partition == nil {
				return nil, fmt.Errorf("migrate: backfill %s needs a type, a version, its key attributes, Want, an index and Partition", m.Name)
			}
		case Lookups:
			if m.Type == "" || m.Version < 1 || m.Filer == nil || m.EntryType == "" {
				return nil, fmt.Errorf("migrate: lookups %s needs a source type, a version, a Filer and its entries' type", m.Name)
			}
		default:
			return nil, fmt.Errorf("migrate: migration %s: kind %q is neither additive, backfill nor lookups", m.Name, m.Kind)
		}
		r.byName[m.Name] = m
	}
	return r, nil
}

// Registered returns the registry of the migrations Lastro ships.
func Registered() *Registry {
	r, err := NewRegistry(TenantDebtors(), ContractLookups(), PhoneLookups())
	if err != nil {
		panic(err) // the shipped registrations are checked by TestRegistered
	}
	return r
}

// Lookup returns the migration called name.
func (r *Registry) Lookup(name string) (*Migration, error) {
	if m := r.byName[name]; m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("migration %q: %w", name, ErrUnknown)
}

// List returns the migrations by name.
func (r *Registry) List() []*Migration {
	out := make([]*Migration, 0, len(r.byName))
	for _, m := range r.byName {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// tenantOf is the tenant a key value (a table or index partition)
// belongs to: T#<t>#... ("" for the platform's partitions).
func tenantOf(key string) string {
	rest, ok := strings.CutPrefix(key, "T"+keys.Sep)
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, keys.Sep)
	return id
}

func str(it kit.Item, attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func keyOf(it kit.Item) kit.Key { return kit.Key{PK: str(it, "PK"), SK: str(it, "SK")} }

var errNoBackfill = errors.New("migrate: an additive migration has nothing to backfill")
