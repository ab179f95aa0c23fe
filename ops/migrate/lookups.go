package migrate

import (
	"context"
	"fmt"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/ops"
)

// Filer is what a Lookups migration does with the items of its source
// type: the lookup entries each should have in its own partition (not an
// index attribute on the item itself), which ones a page lacks, and how
// one is filed. The shape's owning package writes the entry (ADR 0084).
type Filer interface {
	// Lacking returns the items of page (all of the source type) that
	// lack their entries, and the write units filing each would take.
	Lacking(ctx context.Context, d ops.Deps, page []kit.Item) ([]kit.Item, []float64, error)
	// File writes one lacking item's entries; kit.ErrConditionFailed when
	// a writer or a rerun got there first.
	File(ctx context.Context, d ops.Deps, item kit.Item) error
	// Expect is the entry a source item should have: should false when
	// it needs none, known false when its key cannot be told from the
	// item (verify counts it as lacking).
	Expect(tenantID string, item kit.Item) (k kit.Key, should, known bool)
}

// Lookups is the kind of a migration that files lookup entries for
// existing items (docs/adr/0084): a backfill whose writes are new items
// in lookup partitions of the base table, each conditioned on not
// existing.
const Lookups Kind = "lookups"

// ContractLookups files the contract-id lookup entry of every contract
// header created before the lookups (ADR 0084). Its steps, in the order of
// docs/adr/0081: no index to create (the entries are base-table
// partitions); new contracts write their entry (contract.Create); this
// backfill; verify; and the search by contract id finds old contracts
// once it is done. A header's entry exists or not, told by one strongly
// consistent BatchGet per page; each missing one is one conditioned put.
func ContractLookups() *Migration {
	return &Migration{Name: "contract-lookups", Kind: Lookups, Version: 1, Type: contract.TypeHeader, EntryType: contract.TypeLookup,
		Summary: "a contract-id lookup entry for every contract header, so the desk finds old contracts by id", Filer: contractFiler{}}
}

// PhoneLookups files the phone lookup entry of every profile with a phone
// registered before the lookups (ADR 0084): the profile's phoneLookup is
// its stamp, so a rerun skips it without a read. Each is opened (the
// phone is sealed), hashed under the tenant's current secret and written
// with the profile in one transaction conditioned on its version (steps
// as ContractLookups').
func PhoneLookups() *Migration {
	return &Migration{Name: "phone-lookups", Kind: Lookups, Version: 1, Type: "PROFILE", EntryType: debtor.TypePhoneLookup,
		Summary: "a phone lookup entry (the phone's HMAC) for every profile with a phone, so the desk finds old debtors by phone", Filer: phoneFiler{}}
}

type contractFiler struct{}

func (contractFiler) entry(it kit.Item) (kit.Key, bool) {
	id, dk := str(it, "contractId"), str(it, "debtorKey")
	t := tenantOf(str(it, "PK"))
	if t == "" || !keys.ValidIdentifier(id) || !keys.ValidDebtorKey(dk) || str(it, "PK") != keys.Debtor(t, dk) || str(it, "SK") != keys.Contract(id) {
		return kit.Key{}, false
	}
	return contract.LookupKey(t, id, dk), true
}

func (f contractFiler) Lacking(ctx context.Context, d ops.Deps, page []kit.Item) ([]kit.Item, []float64, error) {
	byTenant := map[string][]kit.Item{}
	for _, it := range page {
		if _, ok := f.entry(it); ok {
			t := tenantOf(str(it, "PK"))
			byTenant[t] = append(byTenant[t], it)
		}
	}
	var out []kit.Item
	var units []float64
	for t, items := range byTenant {
		ks := make([]kit.Key, len(items))
		for i, it := range items {
			ks[i], _ = f.entry(it)
		}
		found, err := d.Kit.Tenant(t, nil).BatchGet(ctx, ks, true)
		if err != nil {
			return nil, nil, fmt.Errorf("read contract lookups: %w", err)
		}
		have := map[string]bool{}
		for _, e := range found {
			have[str(e, "PK")+"\x00"+str(e, "SK")] = true
		}
		for i, it := range items {
			if !have[ks[i].PK+"\x00"+ks[i].SK] {
				out = append(out, it)
				units = append(units, 1) // one small put
			}
		}
	}
	return out, units, nil
}

func (f contractFiler) File(ctx context.Context, d ops.Deps, it kit.Item) error {
	k, ok := f.entry(it)
	if !ok {
		return nil
	}
	t := tenantOf(k.PK)
	at := str(it, "createdAt")
	if at == "" {
		at = keys.Timestamp(d.Clock.Now())
	}
	return contract.FileLookup(ctx, d.Kit.Tenant(t, nil), t, str(it, "contractId"), str(it, "debtorKey"), at)
}

func (f contractFiler) Expect(_ string, it kit.Item) (kit.Key, bool, bool) {
	k, ok := f.entry(it)
	return k, ok, ok
}

type phoneFiler struct{}

func (phoneFiler) Lacking(_ context.Context, _ ops.Deps, page []kit.Item) ([]kit.Item, []float64, error) {
	var out []kit.Item
	var units []float64
	for _, it := range page {
		if tenantOf(str(it, "PK")) != "" && debtor.LacksPhoneLookup(it) {
			out = append(out, it)
			// The transaction: the profile's update at twice its size in
			// 1 KB units (it grows by the hash) and the entry's put.
			units = append(units, 2*writeUnits(itemSize(it)+len("phoneLookup")+32)+2)
		}
	}
	return out, units, nil
}

func (phoneFiler) File(ctx context.Context, d ops.Deps, it kit.Item) error {
	t, err := d.Tenants.Get(ctx, tenantOf(str(it, "PK")))
	if err != nil {
		return err
	}
	return d.Debtors.FilePhoneLookup(ctx, t, it)
}

func (phoneFiler) Expect(tenantID string, it kit.Item) (kit.Key, bool, bool) {
	return debtor.ExpectedPhoneLookup(tenantID, it)
}

// lookupVerify is a Lookups migration's verification state: per tenant,
// the entries the source items should have (those a key is known for)
// and the entries found.
type lookupVerify struct {
	expected map[string]map[kit.Key]bool
	found    map[string]map[kit.Key]bool
}

func newLookupVerify() *lookupVerify {
	return &lookupVerify{expected: map[string]map[kit.Key]bool{}, found: map[string]map[kit.Key]bool{}}
}

func add(m map[string]map[kit.Key]bool, t string, k kit.Key) {
	if m[t] == nil {
		m[t] = map[kit.Key]bool{}
	}
	m[t][k] = true
}

// see counts one scanned item: a source item's expected entry (Source;
// unknown keys count as lacking) or an entry of the migration's type.
func (m *Migration) see(it kit.Item, lv *lookupVerify, cnt func(string) *Count) {
	id := tenantOf(str(it, "PK"))
	if id == "" {
		return
	}
	switch str(it, "type") {
	case m.Type:
		k, should, known := m.Filer.Expect(id, it)
		if !should {
			return
		}
		cnt(id).Source++
		if known {
			add(lv.expected, id, k)
		}
	case m.EntryType:
		add(lv.found, id, keyOf(it))
		cnt(id)
	}
}

// settle fills the counts: Carrying the source items whose entry exists,
// Index the entries found (an entry no source expects is a difference).
func (lv *lookupVerify) settle(c *Count) {
	for k := range lv.expected[c.Tenant] {
		if lv.found[c.Tenant][k] {
			c.Carrying++
		}
	}
	c.Index = int64(len(lv.found[c.Tenant]))
}
