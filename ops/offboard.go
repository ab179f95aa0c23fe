package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/debtor"
	"lastro/tenant"
)

// Offboarding phases, in order.
const (
	PhaseExport = "export" // hand-over files written, before counts taken
	PhaseDelete = "delete" // debtors, lookups and tenant items deleted
	PhaseKey    = "key"    // the TENANT item, its sealed secrets, and the directory entry
	PhaseVerify = "verify" // a scan counts what is left
)

// Deps are what the jobs need.
type Deps struct {
	Kit     *kit.Kit
	Tenants *tenant.Service
	Debtors *debtor.Service
	Clock   clock.Clock
	Log     *slog.Logger
	// Progress receives one line per step (stderr of the command).
	Progress io.Writer
	// Owner names this run on leases.
	Owner string
	// Segments is the parallel scan's segment count (default 4).
	Segments int
}

func (d Deps) progress(format string, args ...any) {
	if d.Progress != nil {
		fmt.Fprintf(d.Progress, format+"\n", args...)
	}
}

func (d Deps) segments() int32 {
	if d.Segments <= 0 {
		return 4
	}
	return int32(d.Segments)
}

// OffboardOptions tune an offboarding.
type OffboardOptions struct {
	Out string  // hand-over folder (created 0700); required
	WCU float64 // write capacity units a second spent on deletes; 0: no limit
}

// OffboardReport is what an offboarding proves: the items per tenant
// before and after, and what it deleted.
type OffboardReport struct {
	Tenant      string           `json:"tenant"`
	Deleted     map[string]int64 `json:"deleted"`
	Before      map[string]int64 `json:"before"` // items per tenant before the deletes
	After       map[string]int64 `json:"after"`  // ... and after
	Remaining   int64            `json:"remaining"`
	Untouched   bool             `json:"othersUntouched"`
	HandOver    string           `json:"handOver"`
	ManifestSHA string           `json:"manifestSha256"`
}

// ErrNotEmpty is returned when the verification finds items of the
// offboarded tenant left.
var ErrNotEmpty = errors.New("ops: items of the offboarded tenant remain")

// Offboard exports tenant id's data for hand-over, then deletes every
// item of it: each debtor collection found through GSI3 with the charge,
// phone and contract-id lookups its items name, the tenant's other partitions,
// then a sweep of what no key leads to (idempotency records), and last
// the TENANT item with its sealed secrets and the directory entry. A scan
// before and after counts every tenant's items. Interrupted, it resumes
// from its checkpoint: deleted debtors leave GSI3, so the enumeration
// restarts where the work is.
func Offboard(ctx context.Context, d Deps, id string, o OffboardOptions) (*OffboardReport, error) {
	if !tenant.ValidID(id) {
		return nil, errs.E(errs.Invalid, "invalid_tenant_id", "tenantId must be 2-32 of a-z 0-9 -, starting with a letter or digit")
	}
	if o.Out == "" {
		return nil, errs.E(errs.Invalid, "no_out", "offboarding needs a hand-over folder (--out)")
	}
	ctx = kit.Within(ctx, "ops.offboard")
	j, err := acquire(ctx, d.Kit, d.Clock, "offboard", id, d.Owner)
	if err != nil {
		return nil, err
	}
	rep := &OffboardReport{Tenant: id, HandOver: o.Out}
	if j.item.Phase == PhaseDone {
		d.progress("offboard %s: already done", id)
		return reportOf(j, rep), nil
	}
	var t *tenant.Tenant
	if j.item.Phase == "" || j.item.Phase == PhaseExport || j.item.Phase == PhaseDelete {
		d.Tenants.Invalidate(id)
		if t, err = d.Tenants.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	pacer := NewPacer(o.WCU, nil)
	if j.item.Phase == "" || j.item.Phase == PhaseExport {
		if err := j.advance(ctx, PhaseExport); err != nil {
			return nil, err
		}
		before, sum, err := exportTenant(ctx, d, t, o.Out)
		if err != nil {
			return nil, err
		}
		j.item.Before, j.item.Note = before, sum
		j.item.Phase = PhaseDelete
		if err := j.save(ctx); err != nil {
			return nil, err
		}
		d.progress("offboard %s: hand-over written to %s (%d items)", id, o.Out, before[id])
	}
	if j.item.Phase == PhaseDelete {
		if err := deleteTenant(ctx, d, j, t, pacer); err != nil {
			return nil, err
		}
		if err := j.advance(ctx, PhaseKey); err != nil {
			return nil, err
		}
	}
	if j.item.Phase == PhaseKey {
		// Last: the TENANT item holds the tenant's sealed secrets (debtor-key
		// HMAC, webhook, cursor). Without them nothing left anywhere (a
		// backup) maps a document to a debtor key again (ADR 0076).
		db := d.Kit.Tenant(id, nil).WithDirectory()
		err := db.Transact(ctx, kit.DeleteAction(kit.Key{PK: keys.Tenant(id), SK: keys.TenantSK}, nil),
			kit.DeleteAction(kit.Key{PK: keys.Directory, SK: keys.DirectoryEntry(id)}, nil))
		if err != nil {
			return nil, fmt.Errorf("delete tenant item: %w", err)
		}
		d.Tenants.Invalidate(id)
		j.count("tenantItem", 1)
		if err := j.advance(ctx, PhaseVerify); err != nil {
			return nil, err
		}
		d.progress("offboard %s: tenant item and its secrets destroyed", id)
	}
	after, err := countByTenant(ctx, d, "offboard-verify", nil)
	if err != nil {
		return nil, err
	}
	j.set("remaining", after[id])
	j.item.After = after
	if after[id] == 0 {
		if err := j.advance(ctx, PhaseDone); err != nil {
			return nil, err
		}
	} else if err := j.save(ctx); err != nil {
		return nil, err
	}
	reportOf(j, rep)
	d.progress("offboard %s: %d items remain; other tenants untouched: %v", id, rep.Remaining, rep.Untouched)
	if rep.Remaining != 0 {
		return rep, ErrNotEmpty
	}
	return rep, nil
}

func reportOf(j *job, rep *OffboardReport) *OffboardReport {
	rep.Deleted = map[string]int64{}
	for k, v := range j.item.Counts {
		if k != "remaining" {
			rep.Deleted[k] = v
		}
	}
	rep.Before, rep.After, rep.Remaining, rep.ManifestSHA = j.item.Before, j.item.After, j.item.Counts["remaining"], j.item.Note
	rep.Untouched = rep.After != nil
	for t, n := range rep.Before {
		if t != rep.Tenant && rep.After[t] != n {
			rep.Untouched = false
		}
	}
	return rep
}

// tenantOf is the tenant a partition key belongs to ("" for the platform
// partitions).
func tenantOf(pk string) string {
	rest, ok := strings.CutPrefix(pk, "T"+keys.Sep)
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

// countByTenant counts every item of the table per tenant with a parallel
// maintenance scan; fn, when set, also sees each item (serialised).
func countByTenant(ctx context.Context, d Deps, job string, fn func(kit.Item) error) (map[string]int64, error) {
	total := d.segments()
	counts := make([]map[string]int64, total)
	errc := make(chan error, total)
	var mu chanMutex = make(chan struct{}, 1)
	for seg := range total {
		counts[seg] = map[string]int64{}
		go func() {
			errc <- d.Kit.MaintenanceScan(ctx, job, seg, total, func(it kit.Item) error {
				counts[seg][tenantOf(str(it, "PK"))]++
				if fn == nil {
					return nil
				}
				mu <- struct{}{}
				defer func() { <-mu }()
				return fn(it)
			})
		}()
	}
	var err error
	for range total {
		err = errors.Join(err, <-errc)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, c := range counts {
		for k, v := range c {
			if k != "" {
				out[k] += v
			}
		}
	}
	return out, nil
}

// chanMutex serialises the scan segments' callbacks.
type chanMutex chan struct{}

// exportTenant writes the hand-over: items.jsonl (every item of the
// tenant, sealed personal data and secrets left out, API keys omitted),
// debtors.jsonl (one data report per debtor, the profile decrypted) and
// manifest.json (counts per item type and the files' SHA-256). It
// returns the items per tenant of the table and the manifest's SHA-256.
func exportTenant(ctx context.Context, d Deps, t *tenant.Tenant, dir string) (map[string]int64, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("hand-over folder: %w", err)
	}
	items, err := newHashedFile(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		return nil, "", err
	}
	defer items.Close()
	byType := map[string]int64{}
	before, err := countByTenant(ctx, d, "offboard-export", func(it kit.Item) error {
		pk := str(it, "PK")
		if tenantOf(pk) != t.ID || strings.HasPrefix(str(it, "SK"), "APIKEY#") || strings.HasPrefix(str(it, "SK"), "WEBSESSION#") {
			return nil
		}
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			return err
		}
		delete(m, "pii")     // in debtors.jsonl, decrypted
		delete(m, "secrets") // the engine's, not the tenant's data
		byType[fmt.Sprint(m["type"])]++
		return items.writeJSON(m)
	})
	if err != nil {
		return nil, "", err
	}
	if err := items.Close(); err != nil {
		return nil, "", err
	}
	debtors, err := newHashedFile(filepath.Join(dir, "debtors.jsonl"))
	if err != nil {
		return nil, "", err
	}
	defer debtors.Close()
	n := 0
	err = eachDebtor(ctx, d.Kit, t, func(dk string) error {
		r, err := d.Debtors.HandOver(ctx, t, dk)
		if err != nil {
			return fmt.Errorf("hand-over of a debtor: %w", err)
		}
		n++
		if n%500 == 0 {
			d.progress("offboard %s: %d debtors exported", t.ID, n)
		}
		return debtors.writeJSON(r)
	})
	if err != nil {
		return nil, "", err
	}
	if err := debtors.Close(); err != nil {
		return nil, "", err
	}
	manifest, err := json.MarshalIndent(map[string]any{"tenant": t.ID, "itemsByType": byType, "debtors": n,
		"files": map[string]string{"items.jsonl": items.sum(), "debtors.jsonl": debtors.sum()}}, "", "  ")
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o600); err != nil {
		return nil, "", fmt.Errorf("write manifest: %w", err)
	}
	s := sha256.Sum256(manifest)
	return before, hex.EncodeToString(s[:]), nil
}

// eachDebtor calls fn with every debtor key of t's profiles (GSI3,
// keyed, eventually consistent: a profile just deleted may still be
// listed, and the callers' work is idempotent). Until the tenant-debtors
// migration's verify recorded zero differences the index may miss
// profiles, so it falls back to a maintenance scan of the PROFILEs
// (docs/adr/0081, 0083).
func eachDebtor(ctx context.Context, k *kit.Kit, t *tenant.Tenant, fn func(dk string) error) error {
	switched, err := ReadsSwitched(ctx, k, TenantDebtorsMigration)
	if err != nil {
		return err
	}
	if !switched {
		prefix := keys.Debtor(t.ID, "")
		return k.MaintenanceScan(ctx, "debtors-unverified", 0, 1, func(it kit.Item) error {
			if str(it, "SK") != keys.ProfileSK || !strings.HasPrefix(str(it, "PK"), prefix) {
				return nil
			}
			dk, ok := debtorKeyOf(it)
			if !ok {
				return nil
			}
			return fn(dk)
		})
	}
	return debtorPages(ctx, k.Tenant(t.ID, t.CursorKey()), t.ID, 0, "", fn, nil)
}

// partitionKeys lists the keys of one partition (strongly consistent).
func partitionKeys(ctx context.Context, db *kit.Tenant, pk string) ([]kit.Key, []kit.Item, error) {
	var out []kit.Key
	var items []kit.Item
	for cursor := ""; ; {
		page, err := db.QueryPage(ctx, kit.Query{Partition: pk, Consistent: true}, cursor)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range page.Items {
			out = append(out, kit.Key{PK: pk, SK: str(it, "SK")})
			items = append(items, it)
		}
		if page.Next == "" {
			return out, items, nil
		}
		cursor = page.Next
	}
}

// deleteKeys deletes keys in batches of 25, paced.
func deleteKeys(ctx context.Context, db *kit.Tenant, pacer *Pacer, ks []kit.Key) error {
	for start := 0; start < len(ks); start += 25 {
		batch := ks[start:min(start+25, len(ks))]
		// A delete costs a write unit per KB of the item and one per index
		// it leaves; two a key is the engine's typical item.
		if err := pacer.Wait(ctx, float64(2*len(batch))); err != nil {
			return err
		}
		if err := db.BatchWrite(ctx, nil, batch); err != nil {
			return err
		}
	}
	return nil
}

// deleteTenant deletes every item of t but its TENANT item: each debtor
// collection (the PROFILE last, so an interrupted debtor is listed again)
// with the lookups its items name, the suspense and settlement
// partitions, the tenant partition, then whatever a sweep still finds.
func deleteTenant(ctx context.Context, d Deps, j *job, t *tenant.Tenant, pacer *Pacer) error {
	db := d.Kit.Tenant(t.ID, t.CursorKey())
	visitLookups := func(items []kit.Item) []kit.Key {
		var out []kit.Key
		for _, it := range items {
			sk := str(it, "SK")
			if p, err := keys.Parse(keys.SK, sk); err == nil && len(p.Parts) == 2 && p.Parts[0].Prefix == "CT" && p.Parts[1].Prefix == "CHG" {
				out = append(out, kit.Key{PK: keys.Charge(t.ID, p.Parts[1].Fields["chargeId"]), SK: keys.ChargeSK})
			}
		}
		// The phone and contract-id lookup entries naming the debtor
		// (ADR 0084).
		return append(out, debtor.LookupKeysIn(t.ID, items)...)
	}
	n := 0
	err := eachDebtor(ctx, d.Kit, t, func(dk string) error {
		ks, items, err := partitionKeys(ctx, db, keys.Debtor(t.ID, dk))
		if err != nil {
			return err
		}
		lookups := visitLookups(items)
		sort.SliceStable(ks, func(a, b int) bool { return ks[b].SK == keys.ProfileSK && ks[a].SK != keys.ProfileSK })
		if err := deleteKeys(ctx, db, pacer, lookups); err != nil {
			return err
		}
		if err := deleteKeys(ctx, db, pacer, ks); err != nil {
			return err
		}
		j.count("debtors", 1)
		j.count("debtorItems", int64(len(ks)))
		j.count("lookups", int64(len(lookups)))
		n++
		if n%100 == 0 {
			d.progress("offboard %s: %d debtors deleted", t.ID, n)
			return j.save(ctx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := j.save(ctx); err != nil {
		return err
	}
	d.progress("offboard %s: %d debtor collections deleted", t.ID, j.item.Counts["debtors"])
	// Suspense entries name settlements; the tenant partition holds the
	// policies, keys, runs and counters.
	ks, items, err := partitionKeys(ctx, db, keys.Suspense(t.ID))
	if err != nil {
		return err
	}
	var stl []kit.Key
	for _, it := range items {
		if id := str(it, "settlementId"); id != "" && keys.ValidIdentifier(id) {
			sk, _, err := partitionKeys(ctx, db, keys.Settlement(t.ID, id))
			if err != nil {
				return err
			}
			stl = append(stl, sk...)
		}
	}
	if err := deleteKeys(ctx, db, pacer, append(stl, ks...)); err != nil {
		return err
	}
	j.count("suspense", int64(len(ks)+len(stl)))
	ks, _, err = partitionKeys(ctx, db, keys.Tenant(t.ID))
	if err != nil {
		return err
	}
	own := ks[:0]
	for _, k := range ks {
		if k.SK != keys.TenantSK {
			own = append(own, k)
		}
	}
	if err := deleteKeys(ctx, db, pacer, own); err != nil {
		return err
	}
	j.count("tenantItems", int64(len(own)))
	if err := j.save(ctx); err != nil {
		return err
	}
	// The sweep: settlements, charge lookups and idempotency records no
	// key of the tenant leads to. It reads the whole table, as the counts
	// do (ADR 0076).
	var left []kit.Key
	if _, err := countByTenant(ctx, d, "offboard-sweep", func(it kit.Item) error {
		pk, sk := str(it, "PK"), str(it, "SK")
		if tenantOf(pk) == t.ID && !(pk == keys.Tenant(t.ID) && sk == keys.TenantSK) {
			left = append(left, kit.Key{PK: pk, SK: sk})
		}
		return nil
	}); err != nil {
		return err
	}
	if err := deleteKeys(ctx, db, pacer, left); err != nil {
		return err
	}
	j.count("swept", int64(len(left)))
	d.progress("offboard %s: swept %d items no key led to", t.ID, len(left))
	return j.save(ctx)
}

// hashedFile is a 0600 file whose SHA-256 is computed as it is written.
type hashedFile struct {
	f    *os.File
	h    hashWriter
	done bool
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

func newHashedFile(path string) (*hashedFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hand-over file: %w", err)
	}
	return &hashedFile{f: f, h: sha256.New()}, nil
}

func (h *hashedFile) writeJSON(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	raw = append(raw, '\n')
	h.h.Write(raw)
	_, err = h.f.Write(raw)
	return err
}

func (h *hashedFile) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// Close syncs and closes the file once.
func (h *hashedFile) Close() error {
	if h.done {
		return nil
	}
	h.done = true
	return errors.Join(h.f.Sync(), h.f.Close())
}
