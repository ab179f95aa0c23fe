package ops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/tenant"
)

// Debtor-key rotation phases, in order (docs/adr/0075).
const (
	PhaseBegin   = "begin"   // secret version v+1 added and made current
	PhaseMove    = "move"    // every debtor collection copied, verified, switched, deleted
	PhaseLookups = "lookups" // the tenant-wide families naming a debtor rewritten
	PhaseRetire  = "retire"  // the old PROFILEs left behind deleted, the old secrets retired
)

// RotateOptions tune a debtor-key rotation.
type RotateOptions struct {
	WCU float64 // write capacity units a second the job may spend; 0: no limit
	// Settle is how long after the new version was added the old
	// PROFILEs left behind are kept at least: an instance that cached the
	// tenant before the rotation (tenant.DefaultTenantCacheTTL) still
	// computes old keys, and finds its debtors through them. 0: no wait.
	Settle time.Duration
}

// rotatePage bounds a GSI3 page, so the checkpoint (and the lease) is
// saved every rotatePage debtors, well within LeaseTTL at any pace.
const rotatePage = 50

// RotateReport is what a rotation did.
type RotateReport struct {
	Tenant    string           `json:"tenant"`
	Version   int              `json:"keyVersion"` // the version every debtor is keyed with now
	Phase     string           `json:"phase"`
	Counts    map[string]int64 `json:"counts"`
	Conflicts int64            `json:"conflicts"` // debtors that could not move (their new key is taken)
	Done      bool             `json:"done"`
}

// ErrRotationConflicts is returned when debtors could not move: their
// new key is held by another debtor. The rotation stays unfinished (the
// old secret is kept) until they are resolved.
var ErrRotationConflicts = errors.New("ops: some debtors could not move to their new key")

// lookupFamily is one family of items outside a debtor's partition that
// names its debtor key in a debtorKey attribute only (the phone and
// contract-id entries name it in their key: lookupMoves), which the move rewrites
// (conditioned on the old key, so a rerun is idempotent). A per-debtor
// family finds its items from the debtor's own items; a tenant-wide one
// lists the tenant partitions that hold it, read with keyed Queries.
// New families are added here, in one place.
type lookupFamily struct {
	name string
	// of returns, from the items of one debtor's collection, the keys
	// of the family's items (partition: every item of that partition).
	of func(tenantID string, items []kit.Item) []lookupRef
	// partitions lists, for a tenant-wide family, the partitions to read.
	partitions func(t *tenant.Tenant) []string
}

type lookupRef struct {
	key       kit.Key
	partition bool
}

// lookupsNamingADebtor are the families of items that name a debtor key
// outside the debtor's partition.
var lookupsNamingADebtor = []lookupFamily{
	{name: "chargeLookups", of: func(tenantID string, items []kit.Item) []lookupRef {
		var out []lookupRef
		for _, it := range items {
			p, err := keys.Parse(keys.SK, str(it, "SK"))
			if err == nil && len(p.Parts) == 2 && p.Parts[0].Prefix == "CT" && p.Parts[1].Prefix == "CHG" {
				out = append(out, lookupRef{key: kit.Key{PK: keys.Charge(tenantID, p.Parts[1].Fields["chargeId"]), SK: keys.ChargeSK}})
			}
		}
		return out
	}},
	// A settlement's record and its reversals and refunds, under its own
	// partition: the debtor's events name the settlement.
	{name: "settlements", of: func(tenantID string, items []kit.Item) []lookupRef {
		seen := map[string]bool{}
		var out []lookupRef
		for _, it := range items {
			id := str(it, "settlementId")
			if d, ok := it["details"].(*types.AttributeValueMemberM); ok && id == "" {
				if v, ok := d.Value["settlementId"].(*types.AttributeValueMemberS); ok {
					id = v.Value
				}
			}
			if id != "" && keys.ValidIdentifier(id) && !seen[id] {
				seen[id] = true
				out = append(out, lookupRef{key: kit.Key{PK: keys.Settlement(tenantID, id)}, partition: true})
			}
		}
		return out
	}},
	{name: "outbox", partitions: func(t *tenant.Tenant) []string {
		out := make([]string, t.Shards)
		for i := range t.Shards {
			out[i] = keys.Outbox(t.ID, i)
		}
		return out
	}},
	{name: "remessaPending", partitions: func(t *tenant.Tenant) []string {
		return []string{keys.Remessas(t.ID, t.Boleto().Bank)}
	}},
}

// rotation is one run of the job on one tenant.
type rotation struct {
	d      Deps
	j      *job
	t      *tenant.Tenant
	db     *kit.Tenant
	target int
	pacer  *Pacer
	// tenantWide indexes the tenant-wide families' items by the debtor key
	// they name, read when the move phase starts.
	tenantWide map[string][]kit.Item
}

// RotateDebtorKeys rotates tenant id's debtor-key secret: it adds version
// v+1 and makes it current, then moves every debtor collection, found
// through GSI3, to the key its document has under the new secret — copy
// every item (the PROFILE sealed again for its new partition), verify
// the counts, switch in one transaction (the old PROFILE marked movedTo,
// conditioned on its version, and every item with agenda or portfolio
// index keys moved, conditioned on its version, so their index entries
// move in the same step, and its phone and contract-id lookup entries,
// whose keys name the debtor key), rewrite the lookups naming the debtor, delete
// the old partition. Interrupted, it resumes from its checkpoint
// (SYS / JOB#rotate#<t>); a debtor interrupted halfway is copied again.
// When every debtor moved it deletes the old PROFILEs left behind and
// retires the old secret versions.
func RotateDebtorKeys(ctx context.Context, d Deps, id string, o RotateOptions) (*RotateReport, error) {
	if !tenant.ValidID(id) {
		return nil, errs.E(errs.Invalid, "invalid_tenant_id", "tenantId must be 2-32 of a-z 0-9 -, starting with a letter or digit")
	}
	ctx = kit.Within(ctx, "ops.rotate")
	d.Tenants.Invalidate(id)
	if _, err := d.Tenants.Get(ctx, id); err != nil {
		return nil, err
	}
	j, err := acquire(ctx, d.Kit, d.Clock, "rotate", id, d.Owner)
	if err != nil {
		return nil, err
	}
	if j.item.Phase == PhaseDone {
		// The last rotation finished: this run starts another.
		j.item.Phase, j.item.Cursor, j.item.Counts, j.item.Note = "", "", nil, ""
	}
	r := &rotation{d: d, j: j, pacer: NewPacer(o.WCU, nil)}
	if j.item.Phase == "" || j.item.Phase == PhaseBegin {
		if err := j.advance(ctx, PhaseBegin); err != nil {
			return nil, err
		}
		target, added, err := d.Tenants.BeginDebtorKeyRotation(ctx, id)
		if err != nil {
			return nil, err
		}
		j.set("target", int64(target))
		if j.item.Note == "" {
			j.item.Note = keys.Timestamp(d.Clock.Now()) // when the new version became current
		}
		if err := j.advance(ctx, PhaseMove); err != nil {
			return nil, err
		}
		if added {
			d.progress("rotate %s: debtor-key secret version %d added and made current", id, target)
		} else {
			d.progress("rotate %s: resuming the unfinished rotation to version %d", id, target)
		}
	}
	r.target = int(j.item.Counts["target"])
	if err := r.load(ctx, id); err != nil {
		return nil, err
	}
	if j.item.Phase == PhaseMove {
		if err := r.moveAll(ctx); err != nil {
			return r.report(), err
		}
		if err := j.advance(ctx, PhaseLookups); err != nil {
			return nil, err
		}
	}
	if j.item.Phase == PhaseLookups {
		if err := r.tenantWideLookups(ctx); err != nil {
			return r.report(), err
		}
		if err := j.advance(ctx, PhaseRetire); err != nil {
			return nil, err
		}
	}
	if j.item.Phase == PhaseRetire {
		if err := r.settle(ctx, o.Settle); err != nil {
			return r.report(), err
		}
		if err := r.retire(ctx); err != nil {
			return r.report(), err
		}
		if err := j.advance(ctx, PhaseDone); err != nil {
			return nil, err
		}
		d.progress("rotate %s: done: %d debtors on version %d, older secret versions retired", id, j.item.Counts["debtors"], r.target)
	}
	return r.report(), nil
}

// settle waits until the new version has been current for at least d,
// so no instance still holds the tenant as it was before the rotation
// when the old PROFILEs it would find its debtors through are deleted.
func (r *rotation) settle(ctx context.Context, d time.Duration) error {
	begun, err := time.Parse(time.RFC3339, r.j.item.Note)
	if d <= 0 || err != nil {
		return ctx.Err()
	}
	wait := begun.Add(d).Sub(r.d.Clock.Now())
	if wait <= 0 {
		return ctx.Err()
	}
	r.d.progress("rotate %s: waiting %s for every instance to load the new secret", r.j.item.Subject, wait.Round(time.Second))
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func (r *rotation) report() *RotateReport {
	c := map[string]int64{}
	for k, v := range r.j.item.Counts {
		if k != "target" {
			c[k] = v
		}
	}
	return &RotateReport{Tenant: r.j.item.Subject, Version: r.target, Phase: r.j.item.Phase, Counts: c,
		Conflicts: c["conflicts"], Done: r.j.item.Phase == PhaseDone}
}

// load reads the tenant afresh (its new secret) and the store handle.
func (r *rotation) load(ctx context.Context, id string) error {
	r.d.Tenants.Invalidate(id)
	t, err := r.d.Tenants.Get(ctx, id)
	if err != nil {
		return err
	}
	if t.KeyVersion != r.target {
		return fmt.Errorf("rotate %s: the tenant's key version is %d, the job's %d", id, t.KeyVersion, r.target)
	}
	r.t, r.db = t, r.d.Kit.Tenant(t.ID, t.CursorKey())
	return nil
}

// moveAll walks GSI3 from the checkpoint's cursor, moving every debtor
// still keyed with an older version, and walks it again until a whole
// pass finds none (a registration made under an older version on an
// instance whose tenant was cached is found by the next pass).
func (r *rotation) moveAll(ctx context.Context) error {
	var err error
	if r.tenantWide, err = r.readTenantWide(ctx); err != nil {
		return err
	}
	for {
		whole := r.j.item.Cursor == ""
		if whole {
			r.j.set("passFound", 0)
			r.j.set("conflicts", 0)
		}
		if err := r.pass(ctx); err != nil {
			return err
		}
		if whole && r.j.item.Counts["passFound"] == 0 {
			if n := r.j.item.Counts["conflicts"]; n > 0 {
				return fmt.Errorf("%w: %d (see the progress lines)", ErrRotationConflicts, n)
			}
			return nil
		}
	}
}

// pass is one walk of GSI3 from the checkpoint's cursor to its end.
func (r *rotation) pass(ctx context.Context) error {
	return debtorPages(ctx, r.db, r.t.ID, rotatePage, r.j.item.Cursor, func(dk string) error {
		found, err := r.move(ctx, dk)
		if err != nil {
			return err
		}
		if found {
			r.j.count("passFound", 1)
		}
		return nil
	}, func(next string) error {
		r.j.item.Cursor = next
		if err := r.j.save(ctx); err != nil {
			return err
		}
		r.d.progress("rotate %s: %d debtors moved (%d items)", r.t.ID, r.j.item.Counts["debtors"], r.j.item.Counts["items"])
		return nil
	})
}

// move moves one debtor listed by GSI3 unless it is already keyed with
// the target version; it reports whether it found one to move.
func (r *rotation) move(ctx context.Context, oldDK string) (bool, error) {
	for attempt := 0; ; attempt++ {
		old, err := r.profile(ctx, oldDK)
		if err != nil || old == nil {
			return false, err
		}
		if to := str(old, debtor.AttrMovedTo); to != "" {
			return false, r.finish(ctx, oldDK, to)
		}
		if num(old, "keyVersion") >= r.target {
			return false, nil // a copy, or registered under the new secret
		}
		rk, err := r.d.Debtors.RekeyProfile(ctx, r.t, old, r.target)
		if err != nil {
			return false, err
		}
		if cur, err := r.profile(ctx, rk.DebtorKey); err != nil {
			return false, err
		} else if cur != nil && str(cur, debtor.AttrMovingFrom) != oldDK {
			r.j.count("conflicts", 1)
			r.d.progress("rotate %s: a debtor cannot move: its new key is taken (a collision); left under its old key", r.t.ID)
			return false, nil
		}
		res, err := r.copyAndSwitch(ctx, oldDK, rk)
		if err != nil {
			return false, err
		}
		if res == skipped {
			return false, nil
		}
		if res == raced {
			if attempt == 4 {
				return false, fmt.Errorf("rotate %s: a debtor kept changing during its move; run again", r.t.ID)
			}
			continue // a writer raced the switch: copy again
		}
		if err := r.finish(ctx, oldDK, rk.DebtorKey); err != nil {
			return false, err
		}
		r.j.count("debtors", 1)
		return true, nil
	}
}

// indexed reports whether an item carries agenda or portfolio index keys:
// such items move in the switch's transaction, so their index entries
// never show a debtor twice or not at all.
func indexed(it kit.Item) bool {
	_, a := it[string(keys.GSI1PK)]
	_, b := it[string(keys.GSI2PK)]
	return a || b
}

// What copyAndSwitch did.
const (
	switched = iota
	raced    // the switch's conditions failed: a writer changed the debtor meanwhile
	skipped  // the debtor cannot move (counted as a conflict)
)

// copyAndSwitch copies the debtor's items to the new partition, verifies
// the count and switches.
func (r *rotation) copyAndSwitch(ctx context.Context, oldDK string, rk *debtor.Rekeyed) (int, error) {
	oldPK, newPK := keys.Debtor(r.t.ID, oldDK), keys.Debtor(r.t.ID, rk.DebtorKey)
	items, err := r.partition(ctx, oldPK)
	if err != nil {
		return raced, err
	}
	var plain []kit.Item
	var moving [][2]kit.Item // old, new
	for _, it := range items {
		if str(it, "SK") == keys.ProfileSK {
			continue
		}
		c := rewrite(it, oldDK, rk.DebtorKey, newPK)
		if indexed(it) {
			// Copied without its index keys; the switch writes them.
			bare := kit.Item{}
			for k, v := range c {
				if k != string(keys.GSI1PK) && k != string(keys.GSI1SK) && k != string(keys.GSI2PK) {
					bare[k] = v
				}
			}
			plain = append(plain, bare)
			moving = append(moving, [2]kit.Item{it, c})
			continue
		}
		plain = append(plain, c)
	}
	now := keys.Timestamp(r.d.Clock.Now())
	lookups, contracts, err := r.lookupMoves(items, rk, now)
	if err != nil {
		return raced, err
	}
	// The switch: two PROFILE writes, two per indexed item, the lookup
	// moves (two per contract and the phone's two): at most 24 contracts
	// fit DynamoDB's 100 items (docs/adr/0075).
	if 2+2*len(moving)+len(lookups) > maxTransactItems {
		r.j.count("conflicts", 1)
		r.d.progress("rotate %s: a debtor has %d contracts, more than one switch moves; left under its old key", r.t.ID, contracts)
		return skipped, nil
	}
	for start := 0; start < len(plain); start += 25 {
		batch := plain[start:min(start+25, len(plain))]
		if err := r.pacer.Wait(ctx, float64(len(batch))); err != nil {
			return raced, err
		}
		if err := r.db.BatchWrite(ctx, batch, nil); err != nil {
			return raced, err
		}
	}
	if err := r.pacer.Wait(ctx, 1); err != nil {
		return raced, err
	}
	copyCond := expression.AttributeNotExists(expression.Name("PK")).Or(expression.Name(debtor.AttrMovingFrom).Equal(expression.Value(oldDK)))
	if err := r.db.Put(ctx, rk.Item, &copyCond); err != nil {
		return raced, fmt.Errorf("copy profile: %w", err)
	}
	// Verify: the new partition holds one item per old item.
	copied, err := r.partition(ctx, newPK)
	if err != nil {
		return raced, err
	}
	if len(copied) != len(items) {
		return raced, fmt.Errorf("rotate %s: a debtor's copy holds %d items, its partition %d", r.t.ID, len(copied), len(items))
	}
	// Switch: the old PROFILE becomes a tombstone naming the new key
	// (no sealed data, off GSI3), the copy stops naming the old key as
	// the debtor's, and the indexed items and the lookup entries move.
	tomb := expression.Set(expression.Name(debtor.AttrMovedTo), expression.Value(rk.DebtorKey)).
		Set(expression.Name("version"), expression.Value(rk.Version+1)).Set(expression.Name("updatedAt"), expression.Value(now)).
		Remove(expression.Name("pii")).Remove(expression.Name(string(keys.GSI3PK)))
	tombCond := rk.Unchanged()
	flip := expression.Set(expression.Name(debtor.AttrMovedFrom), expression.Value(oldDK)).Remove(expression.Name(debtor.AttrMovingFrom))
	flipCond := expression.Name(debtor.AttrMovingFrom).Equal(expression.Value(oldDK))
	actions := []kit.Action{
		kit.UpdateAction(kit.Key{PK: oldPK, SK: keys.ProfileSK}, tomb, &tombCond),
		kit.UpdateAction(kit.Key{PK: newPK, SK: keys.ProfileSK}, flip, &flipCond),
	}
	for _, m := range moving {
		cond := unchanged(m[0])
		actions = append(actions, kit.DeleteAction(kit.Key{PK: oldPK, SK: str(m[0], "SK")}, &cond), kit.PutAction(m[1], nil))
	}
	actions = append(actions, lookups...)
	if err := r.pacer.Wait(ctx, float64(2*len(actions))); err != nil {
		return raced, err
	}
	err = r.db.Transact(ctx, actions...)
	var tc *kit.TxCanceled
	if errors.As(err, &tc) || errors.Is(err, kit.ErrConflict) {
		r.j.count("retries", 1)
		return raced, nil
	}
	if err != nil {
		return raced, fmt.Errorf("switch: %w", err)
	}
	r.j.count("items", int64(len(items)))
	return switched, nil
}

// maxTransactItems is DynamoDB's limit of items in one transaction.
const maxTransactItems = 100

// lookupMoves are the switch's writes of the lookups whose key names the
// debtor key (ADR 0084), which a debtorKey rewrite cannot move: for each
// contract header among the old partition's items its contract-id entry
// under the old key deleted and one under the new key put, and the phone
// entry moved to the phone's hash under the new secret (rk's, the copy's
// phoneLookup). They move in the switch's transaction, so a search finds
// the debtor under exactly one key at every instant.
func (r *rotation) lookupMoves(items []kit.Item, rk *debtor.Rekeyed, now string) ([]kit.Action, int, error) {
	out, err := rk.PhoneLookupMove(r.t, now)
	if err != nil {
		return nil, 0, err
	}
	contracts := 0
	for _, it := range items {
		id := str(it, "contractId")
		if str(it, "type") != contract.TypeHeader || !keys.ValidIdentifier(id) || str(it, "SK") != keys.Contract(id) {
			continue
		}
		put, err := contract.LookupPut(r.t.ID, id, rk.DebtorKey, now)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, contract.LookupDelete(r.t.ID, id, str(it, "debtorKey")), put)
		contracts++
	}
	return out, contracts, nil
}

// unchanged conditions a write on an item being as it was read: its
// version when it has one.
func unchanged(it kit.Item) expression.ConditionBuilder {
	if v, ok := it["version"].(*types.AttributeValueMemberN); ok {
		return expression.Name("version").Equal(expression.Value(&types.AttributeValueMemberN{Value: v.Value}))
	}
	return expression.AttributeExists(expression.Name("PK"))
}

// finish completes a switched debtor: items written to the old partition
// after the copy are copied (never over a newer copy), the lookups naming
// the debtor are rewritten, and the old partition is deleted but for its
// tombstone PROFILE, which the retire phase deletes.
func (r *rotation) finish(ctx context.Context, oldDK, newDK string) error {
	oldPK, newPK := keys.Debtor(r.t.ID, oldDK), keys.Debtor(r.t.ID, newDK)
	left, err := r.partition(ctx, oldPK)
	if err != nil {
		return err
	}
	if len(left) == 0 || len(left) == 1 && str(left[0], "SK") == keys.ProfileSK {
		// Finished before: the lookups were rewritten before the deletes.
		return nil
	}
	copied, err := r.partition(ctx, newPK)
	if err != nil {
		return err
	}
	have := map[string]kit.Item{}
	for _, it := range copied {
		have[str(it, "SK")] = it
	}
	var del []kit.Key
	for _, it := range left {
		sk := str(it, "SK")
		if sk == keys.ProfileSK {
			continue
		}
		c := rewrite(it, oldDK, newDK, newPK)
		cur, ok := have[sk]
		switch {
		case !ok:
			cond := expression.AttributeNotExists(expression.Name("PK"))
			if err := r.db.Put(ctx, c, &cond); err != nil && !errors.Is(err, kit.ErrConditionFailed) {
				return fmt.Errorf("copy a late item: %w", err)
			}
			have[sk] = c
			r.j.count("lateItems", 1)
		case num(it, "version") > num(cur, "version"):
			cond := unchanged(cur)
			if err := r.db.Put(ctx, c, &cond); err != nil && !errors.Is(err, kit.ErrConditionFailed) {
				return fmt.Errorf("copy a late change: %w", err)
			}
			r.j.count("lateItems", 1)
		}
		del = append(del, kit.Key{PK: oldPK, SK: sk})
	}
	all := make([]kit.Item, 0, len(have))
	for _, it := range have {
		all = append(all, it)
	}
	if err := r.rewriteLookups(ctx, oldDK, newDK, all); err != nil {
		return err
	}
	if err := deleteKeys(ctx, r.db, r.pacer, del); err != nil {
		return err
	}
	r.j.count("deleted", int64(len(del)))
	return nil
}

// rewriteLookups points every lookup naming oldDK at newDK: the
// per-debtor families found from the debtor's items, and the tenant-wide
// ones from the index read when the move started.
func (r *rotation) rewriteLookups(ctx context.Context, oldDK, newDK string, items []kit.Item) error {
	var targets []kit.Item
	for _, f := range lookupsNamingADebtor {
		if f.of == nil {
			continue
		}
		for _, ref := range f.of(r.t.ID, items) {
			if !ref.partition {
				targets = append(targets, kit.Item{"PK": &types.AttributeValueMemberS{Value: ref.key.PK}, "SK": &types.AttributeValueMemberS{Value: ref.key.SK}})
				continue
			}
			its, err := r.partition(ctx, ref.key.PK)
			if err != nil {
				return err
			}
			for _, it := range its {
				if str(it, "debtorKey") == oldDK {
					targets = append(targets, it)
				}
			}
		}
	}
	targets = append(targets, r.tenantWide[oldDK]...)
	for _, it := range targets {
		n, err := r.repoint(ctx, kit.Key{PK: str(it, "PK"), SK: str(it, "SK")}, oldDK, newDK)
		if err != nil {
			return err
		}
		r.j.count("lookups", n)
	}
	return nil
}

// repoint sets one item's debtorKey from oldDK to newDK, conditioned on
// it still naming oldDK (a rerun, or an item gone, changes nothing). It
// returns 1 when it rewrote the item.
func (r *rotation) repoint(ctx context.Context, k kit.Key, oldDK, newDK string) (int64, error) {
	if err := r.pacer.Wait(ctx, 1); err != nil {
		return 0, err
	}
	cond := expression.Name("debtorKey").Equal(expression.Value(oldDK))
	_, err := r.db.Update(ctx, k, expression.Set(expression.Name("debtorKey"), expression.Value(newDK)), &cond, "")
	if errors.Is(err, kit.ErrConditionFailed) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("rewrite a lookup: %w", err)
	}
	return 1, nil
}

// readTenantWide reads the tenant-wide families' partitions (keyed,
// strongly consistent) and indexes their items by the debtor key named.
func (r *rotation) readTenantWide(ctx context.Context) (map[string][]kit.Item, error) {
	out := map[string][]kit.Item{}
	for _, f := range lookupsNamingADebtor {
		if f.partitions == nil {
			continue
		}
		for _, pk := range f.partitions(r.t) {
			its, err := r.partition(ctx, pk)
			if err != nil {
				return nil, err
			}
			for _, it := range its {
				if dk := str(it, "debtorKey"); dk != "" {
					out[dk] = append(out[dk], it)
				}
			}
		}
	}
	return out, nil
}

// tenantWideLookups reads the tenant-wide families again once every
// debtor moved and rewrites what still names a key whose PROFILE moved
// (items written after the move phase read them).
func (r *rotation) tenantWideLookups(ctx context.Context) error {
	wide, err := r.readTenantWide(ctx)
	if err != nil {
		return err
	}
	for dk, its := range wide {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := r.profile(ctx, dk)
		if err != nil {
			return err
		}
		to := str(p, debtor.AttrMovedTo)
		if to == "" {
			continue
		}
		for _, it := range its {
			n, err := r.repoint(ctx, kit.Key{PK: str(it, "PK"), SK: str(it, "SK")}, dk, to)
			if err != nil {
				return err
			}
			r.j.count("lookups", n)
		}
	}
	return r.j.save(ctx)
}

// retire walks GSI3 once more: every PROFILE that moved loses its
// movedFrom mark and the tombstone it names is deleted (after a last
// look for late items). Then the older secret versions are dropped.
func (r *rotation) retire(ctx context.Context) error {
	err := debtorPages(ctx, r.db, r.t.ID, rotatePage, r.j.item.Cursor, func(dk string) error {
		cur, err := r.profile(ctx, dk)
		if err != nil {
			return err
		}
		from := str(cur, debtor.AttrMovedFrom)
		if from == "" {
			return nil
		}
		if err := r.finish(ctx, from, dk); err != nil {
			return err
		}
		if err := r.pacer.Wait(ctx, 2); err != nil {
			return err
		}
		gone := expression.AttributeNotExists(expression.Name("PK")).Or(expression.Name(debtor.AttrMovedTo).Equal(expression.Value(dk)))
		if err := r.db.Delete(ctx, kit.Key{PK: keys.Debtor(r.t.ID, from), SK: keys.ProfileSK}, &gone); err != nil {
			return fmt.Errorf("delete an old profile: %w", err)
		}
		mark := expression.Name(debtor.AttrMovedFrom).Equal(expression.Value(from))
		if _, err := r.db.Update(ctx, kit.Key{PK: keys.Debtor(r.t.ID, dk), SK: keys.ProfileSK},
			expression.Remove(expression.Name(debtor.AttrMovedFrom)), &mark, ""); err != nil && !errors.Is(err, kit.ErrConditionFailed) {
			return fmt.Errorf("clear a moved mark: %w", err)
		}
		r.j.count("tombstones", 1)
		return nil
	}, func(next string) error {
		r.j.item.Cursor = next
		return r.j.save(ctx)
	})
	if err != nil {
		return err
	}
	r.d.progress("rotate %s: %d old profiles deleted", r.t.ID, r.j.item.Counts["tombstones"])
	if err := r.d.Tenants.RetireDebtorKeys(ctx, r.t.ID, r.target); err != nil {
		return err
	}
	r.d.Tenants.Invalidate(r.t.ID)
	return nil
}

func (r *rotation) profile(ctx context.Context, dk string) (kit.Item, error) {
	return r.db.Get(ctx, kit.Key{PK: keys.Debtor(r.t.ID, dk), SK: keys.ProfileSK}, true)
}

func (r *rotation) partition(ctx context.Context, pk string) ([]kit.Item, error) {
	_, items, err := partitionKeys(ctx, r.db, pk)
	return items, err
}

// rewrite is item it of the old partition as it goes to the new one: its
// PK, and every string value naming the old debtor key (debtorKey
// attributes, at any depth) naming the new one.
func rewrite(it kit.Item, oldDK, newDK, newPK string) kit.Item {
	out := make(kit.Item, len(it))
	for k, v := range it {
		out[k] = rewriteValue(v, oldDK, newDK)
	}
	out["PK"] = &types.AttributeValueMemberS{Value: newPK}
	return out
}

func rewriteValue(v types.AttributeValue, oldDK, newDK string) types.AttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		if x.Value == oldDK {
			return &types.AttributeValueMemberS{Value: newDK}
		}
	case *types.AttributeValueMemberM:
		m := make(map[string]types.AttributeValue, len(x.Value))
		for k, e := range x.Value {
			m[k] = rewriteValue(e, oldDK, newDK)
		}
		return &types.AttributeValueMemberM{Value: m}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = rewriteValue(e, oldDK, newDK)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return v
}

func num(it kit.Item, attr string) int {
	if v, ok := it[attr].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.Atoi(v.Value)
		return n
	}
	return 0
}
