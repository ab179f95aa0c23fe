package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/tenant"
)

// Data-key re-wrap phases, in order.
const (
	PhaseReseal = "reseal" // every tenant item and PROFILE re-sealed under the current key
	PhaseCount  = "count"  // a read-only pass counts what is still under another key
)

// RewrapOptions tune a data-key re-wrap.
type RewrapOptions struct {
	WCU float64 // write capacity units a second spent on re-seals; 0: no limit
	// SecretsKey and PIIKey are the ids of the keys that seal now (the
	// tenant box's and the personal-data sealer's): the job's subject.
	SecretsKey, PIIKey string
}

// RewrapReport is what a re-wrap found and did.
type RewrapReport struct {
	SecretsKey string `json:"secretsKey"`
	PIIKey     string `json:"piiKey"`
	// Resealed counts the items re-sealed (tenants, profiles), the write
	// units their writes consumed (wru) and, in half units, the reads
	// before them (halfRRU).
	Resealed map[string]int64 `json:"resealed"`
	// Found counts, per kind and key ("tenant v1", "profile v1"), the
	// items the re-seal pass found sealed under an older key.
	Found map[string]int64 `json:"foundUnderOldKeys"`
	// Remaining counts what the final pass still found under another key
	// than the current ones, by kind and key; zero means the old keys can
	// be retired.
	Remaining      int64            `json:"remaining"`
	RemainingByKey map[string]int64 `json:"remainingByKey"`
	Tenants        int64            `json:"tenants"`
	Profiles       int64            `json:"profiles"`
	Retirable      bool             `json:"oldKeysRetirable"`
}

// rewrapCursor is the re-seal pass's checkpoint: the tenant being worked
// on, whether its TENANT item is done, the GSI3 page of its profiles next
// to read, and whether the whole tenant is done.
type rewrapCursor struct {
	Tenant string `json:"t,omitempty"`
	Item   bool   `json:"i,omitempty"`
	Page   string `json:"p,omitempty"`
	Done   bool   `json:"d,omitempty"`
}

// ErrOldKeysInUse is returned when the final pass still finds items under
// an older key (an engine still sealing under it, or a write that raced
// the pass): roll the new key out to every engine and run again.
var ErrOldKeysInUse = errors.New("ops: items are still sealed under an older data key")

// RewrapDataKey re-seals, under the keys that seal now, the secrets of
// every tenant (found through the tenant directory) and the personal data
// of every PROFILE (found through GSI3, a tenant at a time): each one
// UpdateItem conditioned on the item's version and the ciphertext read,
// paced at o.WCU. It keeps a checkpoint after every page under a lease
// (SYS / JOB#rewrap#<keys>), so an interrupted run resumes where it
// stopped, then counts, reading only, what is still under another key:
// zero, and the old keys can be retired (docs/adr/0083). The engine
// keeps serving throughout; only the re-sealed items are written.
func RewrapDataKey(ctx context.Context, d Deps, o RewrapOptions) (*RewrapReport, error) {
	ctx = kit.Within(ctx, "ops.rewrap")
	// The re-seal pass lists each tenant's profiles through GSI3 page by
	// page (its checkpoint is a page cursor): a profile the index misses
	// would keep its old key, so it runs only on a verified index.
	if ok, err := ReadsSwitched(ctx, d.Kit, TenantDebtorsMigration); err != nil || !ok {
		if err == nil {
			err = ErrReadsNotSwitched
		}
		return nil, err
	}
	sum := sha256.Sum256([]byte(o.SecretsKey + "\x00" + o.PIIKey))
	j, err := acquire(ctx, d.Kit, d.Clock, "rewrap", hex.EncodeToString(sum[:8]), d.Owner)
	if err != nil {
		return nil, err
	}
	rep := &RewrapReport{SecretsKey: o.SecretsKey, PIIKey: o.PIIKey}
	if j.item.Phase == "" || j.item.Phase == PhaseDone {
		// A finished job is counted again: an engine may have sealed
		// under an old key since.
		phase := PhaseReseal
		if j.item.Phase == PhaseDone {
			phase = PhaseCount
		}
		if err := j.advance(ctx, phase); err != nil {
			return nil, err
		}
	}
	if j.item.Phase == PhaseReseal {
		if err := reseal(ctx, d, j, o); err != nil {
			if ctx.Err() != nil {
				// A clean stop: the counts so far, under the last whole
				// page's cursor, and the lease given up.
				if serr := j.release(context.WithoutCancel(ctx)); serr != nil {
					err = errors.Join(err, serr)
				}
				d.progress("rewrap: stopped; run again to resume")
			}
			return nil, err
		}
		if err := j.advance(ctx, PhaseCount); err != nil {
			return nil, err
		}
	}
	remaining, err := countOld(ctx, d, rep)
	if err != nil {
		return nil, err
	}
	j.item.After = remaining
	for _, n := range remaining {
		rep.Remaining += n
	}
	j.set("remaining", rep.Remaining)
	if rep.Remaining == 0 {
		err = j.advance(ctx, PhaseDone)
	} else {
		err = j.save(ctx)
	}
	if err != nil {
		return nil, err
	}
	rep.Resealed, rep.Found, rep.RemainingByKey = map[string]int64{}, map[string]int64{}, remaining
	for k, v := range j.item.Counts {
		if k != "remaining" {
			rep.Resealed[k] = v
		}
	}
	for k, v := range j.item.Before {
		rep.Found[k] = v
	}
	rep.Retirable = rep.Remaining == 0
	if rep.Retirable {
		d.progress("rewrap: %d tenants and %d profiles checked, none sealed under an older key: the old data keys can be retired", rep.Tenants, rep.Profiles)
		return rep, nil
	}
	d.progress("rewrap: %d items still under an older key %v: roll the new key out to every engine and run again", rep.Remaining, sortedKeys(remaining))
	return rep, ErrOldKeysInUse
}

// reseal is the re-seal pass, from the checkpoint's cursor on.
func reseal(ctx context.Context, d Deps, j *job, o RewrapOptions) error {
	var cur rewrapCursor
	if j.item.Cursor != "" {
		if err := json.Unmarshal([]byte(j.item.Cursor), &cur); err != nil {
			return fmt.Errorf("rewrap checkpoint: %w", err)
		}
	}
	ids, err := d.Tenants.List(ctx)
	if err != nil {
		return err
	}
	sort.Strings(ids)
	pacer := NewPacer(o.WCU, nil)
	found := func(kind, key string) {
		if j.item.Before == nil {
			j.item.Before = map[string]int64{}
		}
		j.item.Before[kind+" "+key]++
	}
	write := func(kind string, do func(context.Context) (string, bool, error)) error {
		opctx, u := kit.Operation(ctx, "ops.rewrap."+kind)
		was, wrote, err := do(opctx)
		if err != nil || !wrote {
			return err
		}
		found(kind, was)
		j.count(kind+"s", 1)
		j.count("wru", int64(u.WRU()))
		j.count("halfRRU", int64(u.RRU()*2)) // a page of keys costs 0.5
		return pacer.Wait(ctx, u.WRU())
	}
	checkpoint := func() error {
		raw, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		j.item.Cursor = string(raw)
		return j.save(ctx)
	}
	for _, id := range ids {
		if id < cur.Tenant || (id == cur.Tenant && cur.Done) {
			continue
		}
		if id != cur.Tenant {
			cur = rewrapCursor{Tenant: id}
		}
		if !cur.Item {
			err := write("tenant", func(c context.Context) (string, bool, error) { return d.Tenants.Reseal(c, id, false) })
			if errors.Is(err, tenant.ErrNoTenant) {
				cur.Done = true
				continue
			}
			if err != nil {
				return err
			}
			cur.Item = true
			if err := checkpoint(); err != nil {
				return err
			}
		}
		d.Tenants.Invalidate(id)
		t, err := d.Tenants.Get(ctx, id)
		if err != nil {
			return err
		}
		n := 0
		for {
			page, err := d.Kit.Tenant(t.ID, t.CursorKey()).QueryPage(ctx, kit.Query{Index: table.TenantDebtors, Partition: keys.Profiles(t.ID)}, cur.Page)
			if err != nil {
				return err
			}
			for _, it := range page.Items {
				if err := ctx.Err(); err != nil {
					return err
				}
				dk, ok := debtorKeyOf(it)
				if !ok {
					continue
				}
				n++
				if err := write("profile", func(c context.Context) (string, bool, error) { return d.Debtors.ResealProfile(c, t, dk, false) }); err != nil {
					return err
				}
			}
			cur.Page = page.Next
			if page.Next == "" {
				cur.Done = true
			}
			if err := checkpoint(); err != nil {
				return err
			}
			d.progress("rewrap: tenant %s: %d profiles read; %d tenants and %d profiles re-sealed so far", id, n, j.item.Counts["tenants"], j.item.Counts["profiles"])
			if cur.Done {
				break
			}
		}
	}
	return nil
}

// countOld is the read-only pass: every tenant item and PROFILE, counted
// by kind and key when sealed under another key than the current ones.
func countOld(ctx context.Context, d Deps, rep *RewrapReport) (map[string]int64, error) {
	ids, err := d.Tenants.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, id := range ids {
		was, _, err := d.Tenants.Reseal(ctx, id, true)
		if errors.Is(err, tenant.ErrNoTenant) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rep.Tenants++
		if was != rep.SecretsKey {
			out["tenant "+was]++
		}
		t, err := d.Tenants.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		err = eachDebtor(ctx, d.Kit, t, func(dk string) error {
			was, _, err := d.Debtors.ResealProfile(ctx, t, dk, true)
			if err != nil {
				return err
			}
			rep.Profiles++
			if was != "" && was != rep.PIIKey {
				out["profile "+was]++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	d.progress("rewrap: counted %d tenants and %d profiles", rep.Tenants, rep.Profiles)
	return out, nil
}

// debtorKeyOf reads the debtor key of a GSI3 entry's partition key.
func debtorKeyOf(it kit.Item) (string, bool) {
	p, err := keys.Parse(keys.PK, str(it, "PK"))
	if err != nil || len(p.Parts) < 2 || p.Parts[1].Prefix != "D" {
		return "", false
	}
	return p.Parts[1].Fields["debtorKey"], true
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
