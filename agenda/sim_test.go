package agenda_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/contactlimit"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine/enginetest"
	"lastro/tenant"
)

// signSpec is one contract to sign: n monthly instalments of R$ 1,000.00
// from first.
type signSpec struct {
	id    string
	first calendar.Date
	n     int
}

// signed is a contract signed by signMany.
type signed struct {
	dk, id string
}

// signMany registers one debtor per spec (with a phone and an e-mail, so
// contacts are delivered) and signs its contract through the services, on
// workers goroutines. It returns errors instead of failing a test, so a
// benchmark can use it too.
func signMany(ctx context.Context, env *enginetest.Env, tn *tenant.Tenant, specs []signSpec, workers int) ([]signed, error) {
	out := make([]signed, len(specs))
	jobs := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				s := specs[i]
				r, err := env.Debtors.Register(ctx, tn, debtor.RegisterInput{Document: env.CPF(), Name: "Pessoa Sintética",
					Phone: "+55 11 90000-0001", Email: "p@example.invalid"}, debtor.Actor{Role: "operator"})
				if err != nil {
					errc <- fmt.Errorf("register for %s: %w", s.id, err)
					return
				}
				insts := make([]contract.InstallmentInput, s.n)
				for k := range insts {
					insts[k] = contract.InstallmentInput{Seq: k + 1, DueDate: s.first.AddMonths(k).String(),
						PrincipalCents: contract.Cents(90000), InterestCents: contract.Cents(10000)}
				}
				if _, err := env.Contracts.Create(ctx, tn, r.DebtorKey, contract.Input{ContractID: s.id, ProductCode: "CREDIARIO_12X",
					Installments: insts}, contract.Actor{Role: "operator"}); err != nil {
					errc <- fmt.Errorf("sign %s: %w", s.id, err)
					return
				}
				out[i] = signed{dk: r.DebtorKey, id: s.id}
			}
		})
	}
	var err error
feed:
	for i := range specs {
		select {
		case jobs <- i:
		case err = <-errc:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errc)
	return out, errors.Join(err, <-errc)
}

// itemSize is an item's size as DynamoDB bills it: attribute names plus
// values (strings by their UTF-8 bytes, numbers by their base-100 digit
// pairs plus one, maps and lists 3 bytes plus 1 per element).
func itemSize(it kit.Item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, c := range v.Value {
			n += 1 + len(k) + valueSize(c)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, c := range v.Value {
			n += 1 + valueSize(c)
		}
		return n
	}
	return 0
}

// numberSize is an integer's stored size: digit pairs plus one byte.
func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	s = strings.TrimRight(s, "0") // trailing zeros are the exponent's
	if s == "" {
		return 1
	}
	return (len(s)+1)/2 + 1
}

func kb(size int) float64 { return max(math.Ceil(float64(size)/1024), 1) }

func str(it kit.Item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func num(it kit.Item, name string) int {
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		var v int
		fmt.Sscan(n.Value, &v)
		return v
	}
	return 0
}

// due is one agenda entry due on a run.
type due struct{ contractID, action string }

// dueEntries reads, outside any measured operation, the agenda entries a
// run of date will handle: every shard's partitions from date − k to date.
func dueEntries(t *testing.T, f *fixture, date calendar.Date) []due {
	t.Helper()
	db := f.Kit.Tenant(f.t.ID, f.t.CursorKey())
	var out []due
	for p := date.AddDays(-agenda.DefaultCatchUp); !p.After(date); p = p.AddDays(1) {
		for s := range f.t.Shards {
			cursor := ""
			for {
				page, err := db.QueryPage(bg, kit.Query{Index: table.Agenda, Partition: keys.Agenda(f.t.ID, p.String(), s)}, cursor)
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range page.Items {
					out = append(out, due{contractID: str(it, "contractId"), action: str(it, "nextAction")})
				}
				if cursor = page.Next; cursor == "" {
					break
				}
			}
		}
	}
	return out
}

// items is the table's contract headers and agenda-written events, by
// contract.
type items struct {
	headers map[string]kit.Item
	events  map[string][]kit.Item // actorRole system:agenda only
}

func scan(t *testing.T, f *fixture) items {
	t.Helper()
	out := items{headers: map[string]kit.Item{}, events: map[string][]kit.Item{}}
	for _, it := range f.ScanAll(t) {
		switch str(it, "type") {
		case contract.TypeHeader:
			out.headers[str(it, "contractId")] = it
		case contract.TypeEvent:
			if str(it, "actorRole") == "system:agenda" {
				id := str(it, "contractId")
				out.events[id] = append(out.events[id], it)
			}
		}
	}
	return out
}

// projected is the size of an index entry: the table's and the index's
// keys plus the projected attributes.
func projected(it kit.Item, attrs ...string) int {
	n := 0
	for _, a := range append([]string{"PK", "SK"}, attrs...) {
		if v, ok := it[a]; ok {
			n += len(a) + valueSize(v)
		}
	}
	return n
}

// TestAgendaWritesAreEventDriven runs a month of the agenda over 10,000
// contracts and shows model B's promise (seed 001, "escrita sem evento"):
// write units follow what happened — steps executed, bucket moves, due
// checks — and never the calendar. Every header write is explained by an
// agenda entry that was due (or a delivered notice's evidence), the
// table's write units are exactly what those writes cost, and the month
// costs a fraction of model A's nightly daysPastDue recompute on the same
// contracts.
func TestAgendaWritesAreEventDriven(t *testing.T) {
	t.Parallel()
	const (
		days    = 30
		workers = 8
	)
	contracts := simContracts(t)
	// Signed on a Monday at 07:00; runs every day at 08:00 from that day
	// on, 30 days. The Monday is the next one in real time: the embedded
	// store expires items (the agenda's lease, the contact counters) on
	// the real clock, so business dates long past would have the lease
	// deleted under a running shard.
	signDay := nextMonday(time.Now())
	f := newFixture(t, at(signDay.String(), 7, 0))
	rng := rand.New(rand.NewPCG(1, 2))
	specs := make([]signSpec, contracts)
	startLate := 0
	for i := range specs {
		s := signSpec{id: fmt.Sprintf("C-%05d", i), n: 12}
		if i%4 == 0 {
			// A quarter delinquent already: the first instalment 1-120
			// days before signing.
			s.first = signDay.AddDays(-(1 + rng.IntN(120)))
			startLate++
		} else {
			// Current: the first instalment 1-60 days out, so about half
			// of them fall due (and into the agenda) during the month.
			s.first = signDay.AddDays(1 + rng.IntN(60))
		}
		specs[i] = s
	}
	began := time.Now()
	if _, err := signMany(bg, f.Env, f.t, specs, workers); err != nil {
		t.Fatal(err)
	}
	t.Logf("signed %d contracts in %s", contracts, time.Since(began).Round(time.Millisecond))
	before := scan(t, f)
	if len(before.headers) != contracts {
		t.Fatalf("%d headers, want %d", len(before.headers), contracts)
	}
	delinquentAtStart := 0
	for _, h := range before.headers {
		if str(h, "oldestOverdueDueDate") != "" {
			delinquentAtStart++
		}
	}

	meterBefore := map[string]kit.OpTotal{}
	for _, o := range f.Kit.Meter().Snapshot() {
		meterBefore[o.Name] = o
	}
	storeBefore := f.Store.ConsumedCapacity(enginetest.Table)
	ctx, month := kit.Operation(bg, "agenda.month")
	dueCount := map[string]int{}     // per contract: entries handled
	byAction := map[string]int{}     // entries handled, by the action due
	dueChecks := map[string]string{} // contract → date its DUE_CHECK ran
	executed := map[string]int{}
	blocked := 0
	blockedBy := map[string]int{}
	pages := 0 // agenda pages handled: one checkpoint each
	began = time.Now()
	for d := range days {
		date := signDay.AddDays(d)
		entries := dueEntries(t, f, date)
		for _, e := range entries {
			dueCount[e.contractID]++
			byAction[e.action]++
			if e.action == "DUE_CHECK" {
				dueChecks[e.contractID] = date.String()
			}
		}
		f.Clock.Set(at(date.String(), 8, 0))
		var mu sync.Mutex
		rep, err := f.Agenda.Run(ctx, f.t, date, agenda.Options{Progress: func(agenda.Progress) { mu.Lock(); pages++; mu.Unlock() }})
		if err != nil {
			t.Fatalf("run %s: %v", date, err)
		}
		if rep.Skipped != 0 {
			t.Fatalf("run %s skipped %d entries: nothing pays in this month", date, rep.Skipped)
		}
		for _, sr := range rep.Shards {
			if sr.Busy || sr.Resumed {
				t.Fatalf("run %s: shard %d busy %v, resumed %v: one engine, nothing else holds a lease", date, sr.Shard, sr.Busy, sr.Resumed)
			}
		}
		for a, n := range rep.Executed {
			executed[a] += n
		}
		for r, n := range rep.Blocked {
			blocked += n
			blockedBy[r] += n
		}
	}
	runTime := time.Since(began)
	// The store's own meter (CloudWatch's view) splits the month's writes
	// into the table's and each index's; kit's Usage.Index mixes an
	// index's read and write units, and the runner reads the agenda index.
	storeAfter := f.Store.ConsumedCapacity(enginetest.Table)
	gsiWCU := func(name string) float64 {
		return storeAfter.GlobalSecondaryIndexes[name].WriteCapacityUnits - storeBefore.GlobalSecondaryIndexes[name].WriteCapacityUnits
	}
	tableWCU := storeAfter.WriteCapacityUnits - storeBefore.WriteCapacityUnits
	agendaWCU, portfolioWCU, debtorsWCU := gsiWCU(table.Agenda), gsiWCU(table.Portfolio), gsiWCU(table.TenantDebtors)
	after := scan(t, f)

	// Every header write of the month is explained per contract: one per
	// agenda entry handled, plus one when a notice's delivery evidence is
	// recorded (NoticeDelivered). Nothing else touched a header.
	var handled, headerWrites, stepEvents, notices int
	evTypes := map[string]int{}
	for id, h := range after.headers {
		writes := num(h, "version") - num(before.headers[id], "version")
		n := 0
		for _, ev := range after.events[id] {
			evTypes[str(ev, "eventType")]++
			switch str(ev, "eventType") {
			case agenda.EvNoticeProof:
				notices++
				n++
			case agenda.EvStepExecuted, agenda.EvStepBlocked, agenda.EvBureauReport:
				stepEvents++
			default:
				t.Errorf("%s: unexpected agenda event %s", id, str(ev, "eventType"))
			}
		}
		if want := dueCount[id] + n; writes != want {
			t.Errorf("%s: %d header writes, want %d (%d entries handled, %d notice proofs)", id, writes, want, dueCount[id], n)
		}
		handled += dueCount[id]
		headerWrites += writes
	}
	if total := sum(byAction); handled != total {
		t.Errorf("handled %d entries, the agenda listed %d", handled, total)
	}

	// What the month cost, from ConsumedCapacity. The agenda's own writes
	// (headers, events, leases) are measured on the month's context; the
	// contact gateway names its own operations (contact.claim,
	// contact.evidence, contact.record), so they come from the kit's
	// meter, as a difference over the month.
	contactOps := map[string]kit.OpTotal{}
	for _, o := range f.Kit.Meter().Snapshot() {
		if strings.HasPrefix(o.Name, "contact.") || o.Name == "agenda.lease" {
			b := meterBefore[o.Name]
			contactOps[o.Name] = kit.OpTotal{Name: o.Name, RRU: o.RRU - b.RRU, WRU: o.WRU - b.WRU, Calls: o.Calls - b.Calls}
		}
	}
	puts, txs, updates := month.Calls("PutItem"), month.Calls("TransactWriteItems"), month.Calls("UpdateItem")
	headerOnly := handled - stepEvents // executions that wrote no event: a DUE_CHECK or BUCKET_MOVE with no step today
	if puts != headerOnly || txs != stepEvents+notices {
		t.Errorf("header writes: %d PutItem + %d TransactWriteItems, want %d header-only + %d with an event", puts, txs, headerOnly, stepEvents+notices)
	}
	if puts+txs != headerWrites {
		t.Errorf("%d header write calls, %d header versions", puts+txs, headerWrites)
	}
	// Lease item: acquire and release per shard and day, a checkpoint
	// per page of entries.
	// (A page slower than a third of the lease renews it once more inside
	// the page: only under heavy load, so a few are allowed.)
	// Renewals inside slow pages and the heartbeat's depend on wall time
	// (a third of the lease each), which a loaded machine stretches.
	slack := pages/10 + 5 + int(runTime/(agenda.DefaultLease/3))*f.t.Shards
	if runs := days * f.t.Shards; updates < 2*runs+pages || updates > 2*runs+pages+slack {
		t.Errorf("%d lease updates, want %d for %d shard runs and %d pages (a few more under load)", updates, 2*runs+pages, runs, pages)
	}
	// The shard's lease across dates (ADR 0063): taken and let go per
	// shard run, renewed with each checkpoint (and by the heartbeat while
	// a slow entry is in flight: only under heavy load).
	lease := contactOps["agenda.lease"]
	if runs := days * f.t.Shards; lease.Calls < 2*runs+pages || lease.Calls > 2*runs+pages+2*slack || lease.WRU != float64(lease.Calls) {
		t.Errorf("%d shard lease writes (%.0f WRU), want %d for %d shard runs and %d pages", lease.Calls, lease.WRU, 2*runs+pages, runs, pages)
	}

	// Sizes: every header and event image is billed by the KB.
	var headers, events []kit.Item
	for id, h := range after.headers {
		headers = append(headers, h, before.headers[id])
		events = append(events, after.events[id]...)
	}
	hUnits, eUnits := unitRange(headers), unitRange(events)
	// Index arms: a header write moves its agenda entry (a delete and a
	// put, ≤ 1 KB each) or drops it, and adds, moves or updates its
	// portfolio entry at most once; the notice proof replans the contract
	// (its entry moves to the report), so it counts as one of them.
	moving := float64(puts + txs)
	if agendaWCU < moving || agendaWCU > 2*moving {
		t.Errorf("agenda index WCU %.0f, want %.0f-%.0f", agendaWCU, moving, 2*moving)
	}
	if portfolioWCU > 2*moving {
		t.Errorf("portfolio index WCU %.0f, want ≤ %.0f", portfolioWCU, 2*moving)
	}
	if debtorsWCU != 0 {
		t.Errorf("tenant-debtors index WCU %.0f, want 0", debtorsWCU)
	}
	// Contacts (ADR 0062): an allowed step's counter, PENDING evidence and
	// outbox entry are in the step's own transaction (below); a blocked
	// step's evidence is a put of its own; each delivered attempt then
	// costs its outcome and the entry's deletion, 1 WRU each (small items,
	// no index). No counter is ever spent outside a step's write. A call
	// is reserved as a message is but has no outbox entry and is not
	// delivered: its task goes on the day's call list, written with its
	// step (ADR 0066), and the desk records its outcome. The month's
	// debtors have one contract each, so no step joins another's contact.
	if n := blockedBy["JOINED"]; n != 0 {
		t.Fatalf("%d steps joined another contract's contact: one contract per debtor", n)
	}
	claims, evidence, outcomes := contactOps["contact.claim"], contactOps["contact.evidence"], contactOps["contact.record"]
	deleted := contactOps[contactlimit.OutboxOperation]
	calls := executed["CALL_D15"]
	reserved := evTypes[agenda.EvStepExecuted]
	messages := reserved - calls
	if evidence.Calls != evTypes[agenda.EvStepBlocked] || evidence.WRU != float64(evidence.Calls) {
		t.Errorf("contact evidence: %d calls %.0f WRU, want %d blocked steps at 1 WRU", evidence.Calls, evidence.WRU, evTypes[agenda.EvStepBlocked])
	}
	if outcomes.Calls != messages || outcomes.WRU != float64(outcomes.Calls) {
		t.Errorf("contact outcomes: %d calls %.0f WRU, want %d at 1 WRU", outcomes.Calls, outcomes.WRU, messages)
	}
	// Deletions go in batches of up to 25 (contactlimit.Deletions): 1 WRU
	// per entry, fewer calls than entries.
	if deleted.WRU != float64(messages) || deleted.Calls > messages || deleted.Calls < (messages+24)/25 || deleted.RRU != 0 {
		t.Errorf("outbox deletions: %d calls %.0f WRU %.1f RRU, want %d at 1 WRU in batches of up to 25", deleted.Calls, deleted.WRU, deleted.RRU, messages)
	}
	if claims.Calls != 0 {
		t.Errorf("contact claims outside the steps' writes: %d calls", claims.Calls)
	}
	contactWRU := claims.WRU + evidence.WRU + outcomes.WRU + deleted.WRU + lease.WRU
	monthWRU := month.WRU() + contactWRU
	if all := tableWCU + agendaWCU + portfolioWCU; all != monthWRU {
		t.Errorf("the store metered %.0f WCU, the operations %.0f WRU", all, monthWRU)
	}
	// Table arm, exactly: a header-only write is one PutItem (H units), a
	// write with an event one transaction (2H + 2E: transactions double),
	// and an allowed step's transaction also carries the counter and the
	// evidence, and the outbox entry for a message or the call list's task
	// for a call (2 × 3); a lease update and each contact write after it 1
	// (each deleted outbox entry too, batched or not).
	contactCalls := float64(claims.Calls + evidence.Calls + outcomes.Calls + messages + lease.Calls)
	inTx := float64(6 * reserved)
	lo := float64(puts)*hUnits[0] + float64(txs)*2*(hUnits[0]+eUnits[0]) + float64(updates) + contactCalls + inTx
	hi := float64(puts)*hUnits[1] + float64(txs)*2*(hUnits[1]+eUnits[1]) + float64(updates) + contactCalls + inTx
	if tableWCU < lo || tableWCU > hi {
		t.Errorf("table WCU %.0f, want %.0f-%.0f (H %v, E %v)", tableWCU, lo, hi, hUnits, eUnits)
	}
	bound := hi + 4*moving
	if monthWRU > bound {
		t.Errorf("month WRU %.0f over what its actions explain, %.0f", monthWRU, bound)
	}

	// Never a write per contract per day.
	if limit := contracts * days / 3; headerWrites >= limit {
		t.Errorf("%d header writes in %d days over %d contracts: not event-driven (limit %d)", headerWrites, days, contracts, limit)
	}

	// Model A on the same contracts: every open delinquent contract's
	// header rewritten every night with its daysPastDue (an UpdateItem of
	// the header grown by the attribute), and its portfolio entry moved
	// (daysPastDue in the GSI2 sort key: a delete and a put). Contracts
	// delinquent at the start count every night; the others from the
	// night after their DUE_CHECK.
	var modelA float64
	perNight := func(h kit.Item) float64 {
		grown := itemSize(h) + len("daysPastDue") + numberSize("120")
		entry := projected(h, "GSI2PK", "daysPastDue", "debtorKey", "contractId", "oldestOverdueDueDate", "productCode", "lastContactAt") +
			len("daysPastDue") + numberSize("120")
		return kb(grown) + 2*kb(entry)
	}
	for id, h := range after.headers {
		nights := 0
		if str(before.headers[id], "oldestOverdueDueDate") != "" {
			nights = days
		} else if d, ok := dueChecks[id]; ok && str(h, "oldestOverdueDueDate") != "" {
			nights = days - calendar.MustParse(d).Sub(signDay)
		}
		modelA += float64(nights) * perNight(h)
	}

	t.Logf("month: %d contracts (%d delinquent at the start, %d due checks), %d days, runs took %s",
		contracts, delinquentAtStart, byAction["DUE_CHECK"], days, runTime.Round(time.Millisecond))
	t.Logf("entries handled by action due: %v; executed: %v; contacts blocked: %d; events: %v", byAction, executed, blocked, evTypes)
	t.Logf("header writes: %d (contracts × days = %d, limit /3 = %d)", headerWrites, contracts*days, contracts*days/3)
	t.Logf("outbox: %d entries put in the steps' transactions, %.0f deleted after their outcome (%d calls)", reserved, deleted.WRU, deleted.Calls)
	t.Logf("calls: %d header-only PutItem, %d TransactWriteItems (header + event), %d lease UpdateItem; contacts %d claims, %d evidence, %d outcomes",
		puts, txs, updates, claims.Calls, evidence.Calls, outcomes.Calls)
	t.Logf("model B month WRU: %.0f = agenda %.0f + contacts %.0f (claim %.0f, evidence %.0f, outcome %.0f); by arm: table %.0f, agenda index %.0f, portfolio %.0f",
		monthWRU, month.WRU(), contactWRU, claims.WRU, evidence.WRU, outcomes.WRU, tableWCU, agendaWCU, portfolioWCU)
	t.Logf("header %v KB-units, event %v; bound from the actions %.0f", hUnits, eUnits, bound)
	t.Logf("of model B's header writes, %d exist only because the calendar moved (a DUE_CHECK or BUCKET_MOVE with no step that day)", headerOnly)
	t.Logf("model A (nightly daysPastDue recompute, same contracts): %.0f WRU = Σ nights × (⌈(header + daysPastDue)/1 KB⌉ + 2 × ⌈GSI2 entry/1 KB⌉); %.1f× model B",
		modelA, modelA/monthWRU)
	if modelA <= monthWRU {
		t.Errorf("model A %.0f WRU is not above model B's %.0f", modelA, monthWRU)
	}
}

// defaultSimContracts is the month simulation's size under go test. The
// budget is about a minute under -race on this shared 2-core machine, and
// 1,000 contracts took 51-94 s there (signing 19-35 ms, a month of agenda
// work 27-52 ms per contract, at load averages 3.5-6); 10,000 took 103 s
// without -race and would take 10-15 minutes with it. The full size runs
// with LASTRO_AGENDA_SIM_CONTRACTS=10000 (docs/performance.md).
const defaultSimContracts = 1_000

func simContracts(t *testing.T) int {
	t.Helper()
	v := os.Getenv("LASTRO_AGENDA_SIM_CONTRACTS")
	if v == "" {
		return defaultSimContracts
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 4 {
		t.Fatalf("LASTRO_AGENDA_SIM_CONTRACTS=%q: want a number of contracts ≥ 4", v)
	}
	return n
}

// nextMonday is the first Monday in São Paulo after now.
func nextMonday(now time.Time) calendar.Date {
	d := calendar.Of(now, enginetest.SaoPaulo("2026-01-01", 0, 0).Location()).AddDays(1)
	for d.Weekday() != time.Monday {
		d = d.AddDays(1)
	}
	return d
}

// unitRange is the smallest and largest KB-units of the items.
func unitRange(items []kit.Item) [2]float64 {
	if len(items) == 0 {
		return [2]float64{}
	}
	r := [2]float64{math.Inf(1), 0}
	for _, it := range items {
		u := kb(itemSize(it))
		r[0], r[1] = min(r[0], u), max(r[1], u)
	}
	return r
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
