package cost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"lastro/collections/calendar"
	"lastro/contract"
	"lastro/debtor"
)

// Target is a running engine the catalogue drives: a fresh one, since
// the catalogue creates its own tenants and reads the store's totals
// around each operation (nothing else may write meanwhile).
type Target struct {
	Client     Client
	AdminToken string
	// Meter is the table's consumed capacity (store-wide totals).
	Meter Meter
	// Parts, when set, is the engine's own per-operation totals (the
	// kit's meter, by the names the services give their operations):
	// each result then also says which of them it ran.
	Parts func() map[string]Units
	// Now is the engine's clock, frozen for the run: dates are counted
	// from it, webhooks are signed at it.
	Now time.Time
	// Export, when set, runs a full ExportTableToPointInTime and waits
	// for it: its cost is measured like any operation's.
	Export func(ctx context.Context) error
	// Shards are the tenants' agenda shards (the engine's default, 16).
	Shards int
	// Advance, when set, moves the engine's clock forward: the agenda's
	// actions are then measured over the days they fall due on.
	Advance func(time.Duration)
}

// Result is one measured business operation.
type Result struct {
	Name     string           `json:"name"`
	What     string           `json:"what"` // the request(s) measured
	Capacity Capacity         `json:"capacity"`
	Parts    map[string]Units `json:"parts,omitempty"`
	Detail   string           `json:"detail,omitempty"`
	Budget   string           `json:"budget,omitempty"` // the budget's rule, when docs/design.md sets one
	Over     string           `json:"over,omitempty"`   // why the budget is not met; "" when met
}

// zone is the engine's default tenant zone, São Paulo (no daylight saving
// since 2019).
var zone = time.FixedZone("BRT", -3*3600)

// tenantKeys are a tenant's credentials as its creation answers them.
type tenantKeys struct {
	APIKeys       map[string]string `json:"apiKeys"`
	WebhookSecret string            `json:"webhookSecret"`
}

// run is one catalogue run's state.
type run struct {
	t       Target
	ctx     context.Context
	rng     *rand.Rand
	today   calendar.Date
	results []Result
	tenant  string
	keys    tenantKeys
	used    map[string]bool
}

// Run measures every business operation on t, in order, and checks the
// budgets; the results come back even when a budget is over (Over says
// why). An error means an operation could not be run at all.
func Run(ctx context.Context, t Target) ([]Result, error) {
	if t.Meter == nil {
		return nil, errors.New("cost: the target has no meter")
	}
	if t.Shards == 0 {
		t.Shards = 16
	}
	r := &run{t: t, ctx: ctx, rng: rand.New(rand.NewPCG(26, 0x1a57)), today: calendar.Today(t.Now, zone), used: map[string]bool{}}
	for _, step := range []func() error{r.main, r.agenda, r.export} {
		if err := step(); err != nil {
			return r.results, err
		}
	}
	for i := range r.results {
		checkBudget(&r.results[i])
	}
	return r.results, nil
}

// measure runs fn as one operation and records what the store metered
// around it.
func (r *run) measure(name, what string, fn func() (string, error)) (Result, error) {
	before := r.t.Meter()
	var parts map[string]Units
	if r.t.Parts != nil {
		parts = r.t.Parts()
	}
	detail, err := fn()
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	res := Result{Name: name, What: what, Capacity: r.t.Meter().Sub(before), Detail: detail}
	if r.t.Parts != nil {
		res.Parts = map[string]Units{}
		for op, u := range r.t.Parts() {
			if d := u.Sub(parts[op]); d != (Units{}) {
				res.Parts[op] = d
			}
		}
	}
	r.results = append(r.results, res)
	return res, nil
}

func (r *run) cpf() string {
	for {
		d := debtor.GenerateCPF(r.rng).Digits()
		if !r.used[d] {
			r.used[d] = true
			return d
		}
	}
}

func (r *run) createTenant(id string) (tenantKeys, error) {
	var k tenantKeys
	if err := r.t.Client.Expect(r.ctx, http.StatusCreated, http.MethodPost, "/v1/tenants", r.t.AdminToken,
		map[string]string{"tenantId": id, "name": "Custo " + id}, &k); err != nil {
		return k, err
	}
	// The engine caches tenants and keys: the first request of each key
	// loads them. Warm the caches, so each operation below pays only for
	// itself, as in steady state.
	for _, role := range []string{"operator", "supervisor", "compliance"} {
		if err := r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet, "/v1/tenant", k.APIKeys[role], nil, nil); err != nil {
			return k, err
		}
	}
	return k, nil
}

type registered struct {
	DebtorKey string `json:"debtorKey"`
}

func (r *run) registerDebtor(key string) (string, error) {
	var out registered
	err := r.t.Client.Expect(r.ctx, http.StatusCreated, http.MethodPost, "/v1/debtors", key, map[string]string{
		"document": r.cpf(), "name": "Pessoa Sintética", "phone": "+55 11 90000-0000", "email": "pessoa@example.invalid"}, &out)
	if err != nil {
		// A debtor registered again answers 200; a new one 201.
		return "", err
	}
	return out.DebtorKey, nil
}

// contractBody is a contract of n monthly instalments of 900.00 + 100.00,
// the first due on first.
func contractBody(id string, first calendar.Date, n int) map[string]any {
	var inst []map[string]any
	for i := range n {
		inst = append(inst, map[string]any{"seq": i + 1, "dueDate": first.AddMonths(i).String(), "principalCents": 90000, "interestCents": 10000})
	}
	return map[string]any{"contractId": id, "productCode": "CREDIARIO_12X", "installments": inst}
}

func (r *run) createContract(key, dk, id string, first calendar.Date, n int) (contract.Created, error) {
	var out contract.Created
	err := r.t.Client.Expect(r.ctx, http.StatusCreated, http.MethodPost, "/v1/debtors/"+dk+"/contracts", key, contractBody(id, first, n), &out)
	return out, err
}

type issued struct {
	ChargeID    string `json:"chargeId"`
	AmountCents int64  `json:"amountCents"`
}

func (r *run) charge(key, dk, id string, seq int) (issued, error) {
	var out issued
	err := r.t.Client.Expect(r.ctx, http.StatusCreated, http.MethodPost, "/v1/charges", key,
		map[string]any{"debtorKey": dk, "contractId": id, "seq": seq, "method": "PIX"}, &out)
	return out, err
}

func (r *run) settle(tenantID, secret, body, want string) (string, error) {
	status, raw, err := r.t.Client.Webhook(r.ctx, "/v1/webhooks/"+tenantID+"/settlements", secret, []byte(body), r.t.Now)
	if err != nil {
		return "", err
	}
	var out struct {
		Status    string `json:"status"`
		AppliedTo []any  `json:"appliedTo"`
	}
	_ = json.Unmarshal(raw, &out)
	if status != http.StatusOK || out.Status != want {
		return "", fmt.Errorf("settlement webhook: status %d, %q, want 200 %q", status, out.Status, want)
	}
	return fmt.Sprintf("%s, %d instalment(s)", out.Status, len(out.AppliedTo)), nil
}

func settlementBody(id, chargeID string, cents int64, paidAt time.Time) string {
	return fmt.Sprintf(`{"settlementId":%q,"chargeId":%q,"amountCents":%d,"paidAt":%q}`, id, chargeID, cents, paidAt.In(zone).Format(time.RFC3339))
}

// main runs the request-path operations on one tenant.
func (r *run) main() error {
	r.tenant = "t-cost"
	res, err := r.measure("tenant.create", "POST /v1/tenants", func() (string, error) {
		k, err := r.createTenant(r.tenant)
		r.keys = k
		return "", err
	})
	_ = res
	if err != nil {
		return err
	}
	op, sup, comp := r.keys.APIKeys["operator"], r.keys.APIKeys["supervisor"], r.keys.APIKeys["compliance"]

	// The typical debtor of docs/design.md's budgets: one contract of 12
	// instalments, 14 days late, and (below) 10 contact attempts.
	var dk string
	if _, err := r.measure("debtor.register", "POST /v1/debtors", func() (string, error) {
		dk, err = r.registerDebtor(op)
		return "", err
	}); err != nil {
		return err
	}
	late := r.today.AddDays(-14)
	if _, err := r.measure("contract.create", "POST /v1/debtors/{dk}/contracts (12 instalments, 14 days late)", func() (string, error) {
		c, err := r.createContract(op, dk, "C-TYP", late, 12)
		return fmt.Sprintf("bucket %v, next %v", deref(c.Bucket), deref(c.NextAction)), err
	}); err != nil {
		return err
	}
	// The desk's searches of the typical debtor (ADR 0084): the lookup
	// partition's Query and the matched profile, both strongly consistent.
	for _, l := range []struct{ name, body string }{
		{"debtor.lookup phone", `{"phone":"(11) 90000-0000"}`},
		{"debtor.lookup contract", `{"contractId":"C-TYP"}`},
	} {
		if _, err := r.measure(l.name, "POST /v1/debtors/lookup "+l.body, func() (string, error) {
			var f struct {
				DebtorKey string `json:"debtorKey"`
			}
			err := r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodPost, "/v1/debtors/lookup", op, json.RawMessage(l.body), &f)
			if err == nil && f.DebtorKey != dk {
				err = fmt.Errorf("lookup found %q, want the typical debtor", f.DebtorKey)
			}
			return "1 match", err
		}); err != nil {
			return err
		}
	}
	var ch issued
	if _, err := r.measure("charge.issue", "POST /v1/charges (Pix, instalment 1)", func() (string, error) {
		ch, err = r.charge(op, dk, "C-TYP", 1)
		return "", err
	}); err != nil {
		return err
	}

	// Payments touching k = 1..3 instalments: contracts with three
	// overdue instalments, a charge per instalment, the first charge paid
	// with the sum (the engine allocates oldest first).
	for k := 1; k <= 3; k++ {
		pdk, err := r.registerDebtor(op)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("C-K%d", k)
		if _, err := r.createContract(op, pdk, id, r.today.AddMonths(-3).AddDays(-5), 6); err != nil {
			return err
		}
		var total int64
		var first issued
		for seq := 1; seq <= k; seq++ {
			c, err := r.charge(op, pdk, id, seq)
			if err != nil {
				return err
			}
			total += c.AmountCents
			if seq == 1 {
				first = c
			}
		}
		body := settlementBody("stl-k"+fmt.Sprint(k), first.ChargeID, total, r.t.Now)
		if _, err := r.measure(fmt.Sprintf("settlement.apply k=%d", k), "POST /v1/webhooks/{t}/settlements", func() (string, error) {
			return r.settle(r.tenant, r.keys.WebhookSecret, body, "applied")
		}); err != nil {
			return err
		}
		if k == 1 {
			if _, err := r.measure("settlement.duplicate", "the same webhook again", func() (string, error) {
				return r.settle(r.tenant, r.keys.WebhookSecret, body, "already_applied")
			}); err != nil {
				return err
			}
		}
	}
	// The typical payment: the typical debtor's one late instalment
	// paid in full through the Pix API's format.
	if _, err := r.measure("settlement.pix", "POST /v1/webhooks/{t}/pix (one payment, BACEN's format)", func() (string, error) {
		body := fmt.Sprintf(`{"pix":[{"endToEndId":"E00000000202609241200cost0000001","txid":%q,"valor":"%d.%02d","horario":%q}]}`,
			ch.ChargeID, ch.AmountCents/100, ch.AmountCents%100, r.t.Now.UTC().Format("2006-01-02T15:04:05.000Z"))
		status, raw, err := r.t.Client.Webhook(r.ctx, "/v1/webhooks/"+r.tenant+"/pix", r.keys.WebhookSecret, []byte(body), r.t.Now)
		if err != nil {
			return "", err
		}
		if status != http.StatusOK || !strings.Contains(string(raw), `"applied"`) {
			return "", fmt.Errorf("pix webhook: status %d", status)
		}
		return "outcome applied", nil
	}); err != nil {
		return err
	}

	// Contacts: the typical debtor's 10 attempts of the day, 3 allowed
	// (the default policy's daily limit), then blocked.
	contact := map[string]string{"channel": "SMS", "template": "SMS_D5", "contractId": "C-TYP"}
	for i := range 10 {
		name, want := "contact.claim allowed", http.StatusCreated
		if i >= 3 {
			name, want = "contact.claim blocked", http.StatusTooManyRequests
		}
		if i > 0 && i != 3 {
			if err := r.t.Client.Expect(r.ctx, want, http.MethodPost, "/v1/debtors/"+dk+"/contacts", op, contact, nil); err != nil {
				return err
			}
			continue
		}
		if _, err := r.measure(name, "POST /v1/debtors/{dk}/contacts (claim, evidence, delivery)", func() (string, error) {
			return "", r.t.Client.Expect(r.ctx, want, http.MethodPost, "/v1/debtors/"+dk+"/contacts", op, contact, nil)
		}); err != nil {
			return err
		}
	}

	// Reads of the typical debtor.
	if _, err := r.measure("debtor.view360", "GET /v1/debtors/{dk} (1 contract, 12 instalments, 10 contacts)", func() (string, error) {
		var v struct {
			Contracts []any `json:"contracts"`
			Contacts  []any `json:"contacts"`
		}
		err := r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet, "/v1/debtors/"+dk, op, nil, &v)
		return fmt.Sprintf("%d contract(s), %d contact(s)", len(v.Contracts), len(v.Contacts)), err
	}); err != nil {
		return err
	}
	if _, err := r.measure("contract.installments AP02", "GET .../contracts/{c}/installments", func() (string, error) {
		return "", r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet, "/v1/debtors/"+dk+"/contracts/C-TYP/installments", op, nil, nil)
	}); err != nil {
		return err
	}
	if _, err := r.measure("contract.events AP09", "GET .../installments/1/events", func() (string, error) {
		return "", r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet, "/v1/debtors/"+dk+"/contracts/C-TYP/installments/1/events", comp, nil, nil)
	}); err != nil {
		return err
	}

	// The portfolio page of 100: 100 more contracts in one bucket.
	for i := range 100 {
		pdk, err := r.registerDebtor(op)
		if err != nil {
			return err
		}
		if _, err := r.createContract(op, pdk, fmt.Sprintf("C-PF%03d", i), r.today.AddDays(-(3 + i%20)), 12); err != nil {
			return err
		}
	}
	if _, err := r.measure("portfolio.page", "GET /v1/portfolio?bucket=D001_030&limit=100", func() (string, error) {
		var p struct {
			Items []any `json:"items"`
		}
		err := r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet, "/v1/portfolio?bucket=D001_030&limit=100", sup, nil, &p)
		if err == nil && len(p.Items) != 100 {
			err = fmt.Errorf("portfolio page: %d items, want 100", len(p.Items))
		}
		return fmt.Sprintf("%d items", len(p.Items)), err
	}); err != nil {
		return err
	}

	// Arrangements, each on its own late contract.
	arrange := []struct {
		name, path, key string
		body            map[string]any
	}{
		{"arrangement.promise", "promises", op, map[string]any{"promisedDate": r.today.AddDays(3).String(), "amountCents": 50000}},
		{"arrangement.agreement", "agreements", op, map[string]any{"downPaymentCents": 50000, "installments": 6, "firstDueDate": r.today.AddMonths(1).String()}},
		{"arrangement.dispute", "disputes", op, map[string]any{"reason": "NOT_RECOGNISED"}},
		{"arrangement.write-off", "write-off", sup, map[string]any{"reason": "UNCOLLECTIBLE"}},
	}
	for i, a := range arrange {
		adk, err := r.registerDebtor(op)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("C-AR%d", i)
		if _, err := r.createContract(op, adk, id, r.today.AddDays(-40), 12); err != nil {
			return err
		}
		want := http.StatusCreated
		if a.path == "write-off" {
			want = http.StatusOK
		}
		if _, err := r.measure(a.name, "POST .../contracts/{c}/"+a.path, func() (string, error) {
			return "", r.t.Client.Expect(r.ctx, want, http.MethodPost, "/v1/debtors/"+adk+"/contracts/"+id+"/"+a.path, a.key, a.body, nil)
		}); err != nil {
			return err
		}
	}
	return nil
}

// agenda measures the agenda on a tenant of its own, where each contract
// sits on a shard of its own: a run of one shard is one entry. A run of
// an empty shard (the lease, the page queries, the release) is measured
// apart and subtracted. Then the clock moves a day at a time and each
// contract's shard runs every day, so every action of the default régua
// falls due in turn (DUE_CHECK, the contact steps, BUCKET_MOVE, the bureau
// notice and report, a promise's check); the first run of each is kept.
func (r *run) agenda() error {
	const id = "t-cost-agenda"
	k, err := r.createTenant(id)
	if err != nil {
		return err
	}
	op, sup := k.APIKeys["operator"], k.APIKeys["supervisor"]
	taken := map[int]bool{}
	n := 0
	place := func(first calendar.Date) (string, string, contract.Created, error) {
		var cid string
		for {
			n++
			cid = fmt.Sprintf("C-AG%03d", n)
			if s := contract.Shard(cid, r.t.Shards); !taken[s] {
				taken[s] = true
				break
			}
		}
		dk, err := r.registerDebtor(op)
		if err != nil {
			return "", "", contract.Created{}, err
		}
		created, err := r.createContract(op, dk, cid, first, 12)
		return dk, cid, created, err
	}
	// A current contract whose first instalment falls due today, and one
	// late contract with a promise for tomorrow.
	_, _, current, err := place(r.today)
	if err != nil {
		return err
	}
	pdk, pid, promised, err := place(r.today.AddDays(-10))
	if err != nil {
		return err
	}
	if err := r.t.Client.Expect(r.ctx, http.StatusCreated, http.MethodPost, "/v1/debtors/"+pdk+"/contracts/"+pid+"/promises", op,
		map[string]any{"promisedDate": r.today.AddDays(1).String(), "amountCents": 50000}, nil); err != nil {
		return err
	}
	empty := -1
	for s := range r.t.Shards {
		if !taken[s] {
			empty = s
			break
		}
	}
	if _, err := r.measure("agenda.page AP03", "GET /v1/agenda?shard={s}&date={d} (one entry)", func() (string, error) {
		return "", r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodGet,
			fmt.Sprintf("/v1/agenda?shard=%d&date=%s", current.Shard, deref(current.NextActionDate)), sup, nil, nil)
	}); err != nil {
		return err
	}
	runShard := func(shard int) (map[string]int, error) {
		var rep struct {
			Executed map[string]int `json:"executed"`
			Blocked  map[string]int `json:"blocked"`
			Failed   int            `json:"failed"`
		}
		err := r.t.Client.Expect(r.ctx, http.StatusOK, http.MethodPost, "/v1/agenda/run", sup, map[string]any{"shards": []int{shard}}, &rep)
		if err == nil && rep.Failed > 0 {
			err = fmt.Errorf("agenda run: %d entries failed", rep.Failed)
		}
		if rep.Executed == nil {
			rep.Executed = map[string]int{}
		}
		for k, v := range rep.Blocked {
			rep.Executed["blocked "+k] += v
		}
		return rep.Executed, err
	}
	base, err := r.measure("agenda.run empty shard", "POST /v1/agenda/run {shards:[s]} with nothing due (lease, page queries, release)", func() (string, error) {
		_, err := runShard(empty)
		return "", err
	})
	if err != nil {
		return err
	}
	if r.t.Advance == nil {
		return nil
	}
	seen := map[string]bool{}
	for day := 0; day <= 100 && len(seen) < 16; day++ {
		if day > 0 {
			r.t.Advance(24 * time.Hour)
		}
		for _, c := range []contract.Created{current, promised} {
			var ex map[string]int
			res, err := r.measure("agenda.entry", "", func() (string, error) {
				var err error
				ex, err = runShard(c.Shard)
				return describe(ex), err
			})
			if err != nil {
				return err
			}
			r.results = r.results[:len(r.results)-1] // kept below if new
			key := describe(ex)
			if len(ex) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			res.Name = "agenda.entry " + strings.Join(slices.Sorted(maps.Keys(ex)), "+")
			res.What = fmt.Sprintf("one entry on day %d with its delivery: the shard's run minus an empty shard's", day)
			res.Capacity = res.Capacity.Sub(base.Capacity)
			for op, u := range base.Parts {
				if d := res.Parts[op].Sub(u); d != (Units{}) {
					res.Parts[op] = d
				} else {
					delete(res.Parts, op)
				}
			}
			r.results = append(r.results, res)
		}
	}
	return nil
}

func (r *run) export() error {
	if r.t.Export == nil {
		return nil
	}
	_, err := r.measure("export", "ExportTableToPointInTime (full) and wait", func() (string, error) {
		return "", r.t.Export(r.ctx)
	})
	return err
}

func describe(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "nothing executed"
	}
	return "executed " + strings.Join(parts, " ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
