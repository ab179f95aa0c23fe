package migrate

import (
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ops"
)

// TenantDebtors is the migration Lastro ships: every PROFILE carries
// GSI3PK = T#<t>#PROFILES, the key of the tenant-debtors index through
// which offboarding, erasure and key rotation enumerate a tenant's debtors
// (docs/design.md#gsi3-tenant-debtors). Registration writes it; a profile
// written by another path (an import, a restore of an older layout, a
// hand repair) lacks it and is invisible to those jobs. Its steps, in the
// order of docs/adr/0081: the index exists (table.TenantDebtors), new
// items carry the key (debtor registration), this backfill, verify, and
// only then the jobs that read the index run: they ask ops.ReadsSwitched,
// true once a verify recorded zero differences.
func TenantDebtors() *Migration {
	return &Migration{
		Name:    ops.TenantDebtorsMigration,
		Kind:    Backfill,
		Summary: "GSI3PK on every debtor profile, so the tenant-debtors index lists every debtor",
		Version: 1,
		Type:    "PROFILE",
		Index:   table.TenantDebtors,
		Attrs:   []string{string(keys.GSI3PK)},
		Want: func(it kit.Item) (map[string]string, bool) {
			id := tenantOf(str(it, "PK"))
			if id == "" || str(it, "SK") != keys.ProfileSK {
				return nil, false
			}
			return map[string]string{string(keys.GSI3PK): keys.Profiles(id)}, true
		},
		Partition: keys.Profiles,
	}
}
