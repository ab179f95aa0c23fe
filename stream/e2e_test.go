package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/engine/enginetest"
	"lastro/portfolio"
	"lastro/stream"
)

// month is the scripted month of issue 16's acceptance: one tenant's
// portfolio driven through the public HTTP API with the clock moved day
// by day, the agenda run each morning, the TTL swept each night.
type month struct {
	*enginetest.Env
	keys    enginetest.Keys
	tenant  string
	debtors map[string]string // contract → debtorKey
	archive *kit.Kit
	streams *kit.Streams
}

const e2eTenant = "t-e2e"

func newMonth(t *testing.T) *month {
	t.Helper()
	env := enginetest.New(t, enginetest.At(enginetest.SaoPaulo("2026-07-31", 10, 0)), enginetest.Shards(2))
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, env.StoreClient)
	if _, err := table.EnsureArchive(context.Background(), db, enginetest.Table+table.ArchiveSuffix); err != nil {
		t.Fatal(err)
	}
	m := &month{Env: env, keys: env.CreateTenant(t, e2eTenant), tenant: e2eTenant, debtors: map[string]string{},
		archive: kit.New(db, enginetest.Table+table.ArchiveSuffix),
		streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, env.StoreClient))}
	return m
}

func (m *month) call(t *testing.T, role, method, path, body string, want int) map[string]any {
	t.Helper()
	status, out := m.Do(t, method, path, m.keys[role], body)
	if status != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
	}
	return out
}

// sign registers a debtor and signs a contract of n monthly instalments
// of R$ 1,000.00 from first.
func (m *month) sign(t *testing.T, id, first string, n int) {
	t.Helper()
	reg := m.call(t, "operator", http.MethodPost, "/v1/debtors", fmt.Sprintf(`{"document":%q,"name":"Pessoa Sintética","phone":"+55 11 90000-0001"}`, m.CPF()), http.StatusCreated)
	dk := reg["debtorKey"].(string)
	var lines []string
	for _, in := range enginetest.Monthly(first, n, 0, 0) {
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"dueDate":%q,"principalCents":90000,"interestCents":10000}`, in.Seq, in.DueDate))
	}
	m.call(t, "operator", http.MethodPost, "/v1/debtors/"+dk+"/contracts",
		fmt.Sprintf(`{"contractId":%q,"productCode":"CREDIARIO_12X","installments":[%s]}`, id, strings.Join(lines, ",")), http.StatusCreated)
	m.debtors[id] = dk
}

func (m *month) path(id string) string { return "/v1/debtors/" + m.debtors[id] + "/contracts/" + id }

// pay issues a Pix charge of instalment seq and delivers its settlement.
func (m *month) pay(t *testing.T, id string, seq int) {
	t.Helper()
	ch := m.call(t, "operator", http.MethodPost, "/v1/charges", fmt.Sprintf(`{"debtorKey":%q,"contractId":%q,"seq":%d,"method":"PIX"}`, m.debtors[id], id, seq), http.StatusCreated)
	body := enginetest.WebhookBody(fmt.Sprintf("stl-%s-%d", id, seq), ch["chargeId"].(string), int64(ch["amountCents"].(float64)), m.Clock.Now().UTC().Format(time.RFC3339))
	if status, out, err := m.Deliver(m.tenant, m.keys["webhook"], body, m.Clock.Now(), nil); err != nil || status != http.StatusOK {
		t.Fatalf("settlement of %s/%d: %d %s %v", id, seq, status, out, err)
	}
}

// script is what happens on each day of August 2026 after the morning's
// agenda run.
func (m *month) script(t *testing.T, day string) {
	t.Helper()
	switch day {
	case "2026-07-31":
		m.sign(t, "C-PAY", "2026-08-07", 3)    // late on 08-10, paid on 08-12: cured
		m.sign(t, "C-KEPT", "2026-08-07", 3)   // promise for 08-14, paid on 08-13: kept
		m.sign(t, "C-BROKEN", "2026-08-07", 3) // promise for 08-12, never paid: broken
		m.sign(t, "C-LATE", "2026-07-24", 3)   // never paid: crosses into D031_060
		m.sign(t, "C-AGREE", "2026-06-05", 4)  // two instalments late: an agreement on 08-17
		m.sign(t, "C-WO", "2026-05-08", 3)     // three late: written off on 08-20
	case "2026-08-10":
		m.call(t, "operator", http.MethodPost, m.path("C-KEPT")+"/promises", `{"promisedDate":"2026-08-14","amountCents":100000}`, http.StatusCreated)
		m.call(t, "operator", http.MethodPost, m.path("C-BROKEN")+"/promises", `{"promisedDate":"2026-08-12","amountCents":100000}`, http.StatusCreated)
	case "2026-08-12":
		m.pay(t, "C-PAY", 1)
	case "2026-08-13":
		m.pay(t, "C-KEPT", 1)
	case "2026-08-17":
		m.call(t, "operator", http.MethodPost, m.path("C-AGREE")+"/agreements", `{"downPaymentCents":50000,"installments":3,"firstDueDate":"2026-09-10"}`, http.StatusCreated)
	case "2026-08-20":
		m.call(t, "supervisor", http.MethodPost, m.path("C-WO")+"/write-off", `{"reason":"UNCOLLECTIBLE"}`, http.StatusOK)
	}
}

// consumer is a consumer on the month's engine.
func (m *month) consumer(t *testing.T, owner string, pub stream.Publisher, observe func(stream.Progress)) *stream.Consumer {
	t.Helper()
	c, err := stream.New(stream.Config{Kit: m.Kit, Streams: m.streams, Archive: m.archive, Translate: stream.Translate, Publisher: pub,
		DeadLetter: &memDead{}, Owner: owner, Lease: 5 * time.Second, Clock: m.Clock, Poll: 5 * time.Millisecond, Batch: 25, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAMonthOfThePortfolioYieldsEachDomainEventOnce is issue 16's
// acceptance: the month's domain events, published by consumers that are
// killed before a checkpoint, restarted, and run two at a time, are
// exactly those of a reference consumer that never fails — once each
// (by id), in order per contract — the business facts of the script are
// among them, the Kafka topic holds them keyed by contract, the bucket
// counters equal the buckets, and the TTL's sweeps land in the archive.
func TestAMonthOfThePortfolioYieldsEachDomainEventOnce(t *testing.T) {
	t.Parallel()
	m := newMonth(t)
	bg := context.Background()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "lastro-events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)

	// The reference reads the stream itself, every day after the
	// consumers, from its own position in memory, and translates each
	// record once: what a consumer that never fails would publish.
	var ref []stream.Event
	refAfter := ""
	reference := func() {
		t.Helper()
		sa, err := m.streams.Latest(bg, enginetest.Table)
		if err != nil {
			t.Fatal(err)
		}
		shards, err := m.streams.Shards(bg, sa.ARN)
		if err != nil || len(shards) != 1 {
			t.Fatalf("shards %v %v", shards, err)
		}
		it, err := m.streams.Iterator(bg, sa.ARN, shards[0].ID, refAfter)
		if err != nil {
			t.Fatal(err)
		}
		for it != "" {
			changes, next, err := m.streams.Records(bg, it, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				evs, err := stream.Translate(stream.Record{EventID: c.EventID, Sequence: c.Sequence, Name: c.Name, Keys: c.Keys,
					Old: c.Old, New: c.New, Service: c.Service, At: c.At})
				if err != nil {
					t.Fatalf("reference: record %s: %v", c.Sequence, err)
				}
				ref = append(ref, evs...)
				refAfter = c.Sequence
			}
			if len(changes) == 0 {
				break
			}
			it = next
		}
	}

	subject := &memPub{}
	pub := stream.Fanout{stream.NewKafka(producer, "lastro-events"), subject}
	day := time.Date(2026, 7, 31, 0, 0, 0, 0, time.UTC)
	killed, doubled := false, 0
	for ; !day.After(time.Date(2026, 8, 31, 0, 0, 0, 0, time.UTC)); day = day.AddDate(0, 0, 1) {
		d := day.Format("2006-01-02")
		m.Clock.Set(enginetest.SaoPaulo(d, 8, 0))
		m.call(t, "supervisor", http.MethodPost, "/v1/agenda/run", "{}", http.StatusOK)
		m.Clock.Set(enginetest.SaoPaulo(d, 10, 0))
		m.script(t, d)
		m.Clock.Set(enginetest.SaoPaulo(d, 23, 0))
		if _, err := m.Store.SweepExpired(); err != nil {
			t.Fatal(err)
		}
		switch {
		case d == "2026-08-13" && !killed:
			// Killed mid-way: cancelled after its first published chunk,
			// before that chunk's checkpoint; a new process takes over when
			// the dead one's lease expires (it released it on the way out).
			ctx, kill := context.WithCancel(bg)
			c := m.consumer(t, "killed", stream.Fanout{pub, &memPub{hook: func([]stream.Event) { kill() }}}, nil)
			if _, err := c.Drain(ctx); err == nil {
				t.Fatal("the killed consumer finished its drain")
			}
			killed = true
			fallthrough
		case day.Day()%3 == 0:
			// Two consumers at once.
			var wg sync.WaitGroup
			for _, owner := range []string{"a", "b"} {
				c := m.consumer(t, owner, pub, nil)
				wg.Go(func() {
					if _, err := c.Drain(bg); err != nil {
						t.Errorf("drain %s on %s: %v", owner, d, err)
					}
				})
			}
			wg.Wait()
			doubled++
		default:
			if _, err := m.consumer(t, "a", pub, nil).Drain(bg); err != nil {
				t.Fatal(err)
			}
		}
		reference()
	}
	if !killed || doubled < 5 {
		t.Fatalf("the script did not exercise its failures: killed %v, doubled %d", killed, doubled)
	}

	got := unique(t, subject.all())
	if len(got) == 0 || len(got) != len(ref) {
		t.Fatalf("%d distinct events published, the reference has %d", len(got), len(ref))
	}
	if len(subject.all()) == len(got) {
		t.Error("no event was delivered twice: the kill before a checkpoint did not happen")
	}
	// Exactly the reference's events, in the reference's order per
	// contract (the subjects' interleaving across contracts may differ
	// between two consumers, never within one: one shard, one lease).
	perContract := func(evs []stream.Event) map[string][]string {
		out := map[string][]string{}
		for _, e := range evs {
			b, _ := json.Marshal(e)
			out[e.ContractID] = append(out[e.ContractID], string(b))
		}
		return out
	}
	gotBy, refBy := perContract(got), perContract(ref)
	t.Logf("%d events (%d deliveries) over %d contracts", len(got), len(subject.all()), len(refBy))
	for ct, r := range refBy {
		if !slices.Equal(gotBy[ct], r) {
			t.Errorf("%s: events\n%v\nwant\n%v", ct, gotBy[ct], r)
		}
	}
	byContract := map[string][]stream.Event{}
	ids := map[string]bool{}
	for _, e := range got {
		if ids[e.ID] {
			t.Fatalf("event id %s twice after dedupe", e.ID)
		}
		ids[e.ID] = true
		byContract[e.ContractID] = append(byContract[e.ContractID], e)
	}
	for ct, evs := range byContract {
		for i := 1; i < len(evs); i++ {
			if seqBefore(evs[i].Sequence, evs[i-1].Sequence) {
				t.Errorf("%s: event %s (seq %s) after %s (seq %s): out of order", ct, evs[i].Type, evs[i].Sequence, evs[i-1].Type, evs[i-1].Sequence)
			}
		}
	}
	types := func(ct string) []string {
		var out []string
		for _, e := range byContract[ct] {
			out = append(out, e.Type)
		}
		return out
	}
	// The script's story, contract by contract.
	const (
		overdue, bucket, paid, cured = stream.InstallmentOverdue, stream.BucketChanged, stream.SettlementApplied, stream.ContractCured
	)
	want := map[string][]string{
		"C-PAY":    {overdue, bucket, paid, cured, bucket},                     // late, into D001_030, paid, cured, out of the bucket
		"C-KEPT":   {overdue, bucket, paid, cured, bucket, stream.PromiseKept}, // the payment keeps the promise at its check
		"C-BROKEN": {overdue, bucket, stream.PromiseBroken},                    // no payment by the promised date
		"C-LATE":   {overdue, bucket, bucket},                                  // D001_030, then D031_060
		"C-WO":     {overdue, bucket, bucket, stream.WrittenOff, bucket},       // out of the portfolio when written off
		"C-AGREE": {overdue, bucket, bucket, stream.AgreementSigned, bucket, // the agreement takes it out of the buckets...
			stream.AgreementBroken, overdue, bucket}, // ...and lapses unpaid: late again
	}
	for ct, w := range want {
		if got := types(ct); !slices.Equal(got, w) {
			t.Errorf("%s: events %v, want %v", ct, got, w)
		}
	}
	crossed := false
	for _, e := range byContract["C-LATE"] {
		if e.Type == stream.BucketChanged && e.Data["toBucket"] == "D031_060" {
			crossed = true
		}
	}
	if !crossed {
		t.Errorf("C-LATE never crossed into D031_060: %v", types("C-LATE"))
	}
	for _, e := range got {
		if e.Tenant != e2eTenant || e.SchemaVersion != stream.SchemaVersion {
			t.Errorf("event %s: tenant %q schema %d", e.ID, e.Tenant, e.SchemaVersion)
		}
	}

	// The Kafka topic holds the same events, keyed by contract.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("lastro-events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	all := subject.all()
	var recs []*kgo.Record
	for len(recs) < len(all) {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d Kafka records", len(recs), len(all))
		}
		recs = append(recs, fs.Records()...)
	}
	var onTopic []stream.Event
	for _, r := range recs {
		var e stream.Event
		if err := json.Unmarshal(r.Value, &e); err != nil {
			t.Fatal(err)
		}
		if e.ContractID != "" && string(r.Key) != stream.Key(e) {
			t.Errorf("event %s keyed %q, want its contract's key %q", e.ID, r.Key, stream.Key(e))
		}
		onTopic = append(onTopic, e)
	}
	topicIDs := map[string]bool{}
	for _, e := range unique(t, onTopic) {
		topicIDs[e.ID] = true
	}
	if len(topicIDs) != len(ids) {
		t.Errorf("the topic holds %d distinct events, the subject %d", len(topicIDs), len(ids))
	}
	for id := range ids {
		if !topicIDs[id] {
			t.Errorf("event %s missing from the topic", id)
		}
	}

	// The counters equal what the buckets hold, and the page shows them.
	m.Clock.Set(enginetest.SaoPaulo("2026-08-31", 23, 30))
	tn, err := m.Tenants.Get(bg, e2eTenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range portfolio.Buckets {
		var n, cents int64
		for _, ct := range m.ContractIDs(t, tn, kit.Query{Index: table.Portfolio, Partition: keys.Bucket(e2eTenant, b)}) {
			n++
			cents += outstanding(t, m, ct)
		}
		out := m.call(t, "supervisor", http.MethodGet, "/v1/portfolio?bucket="+b, "", http.StatusOK)
		sum, _ := out["summary"].(map[string]any)
		if n == 0 && sum == nil {
			continue
		}
		if sum == nil || int64(sum["contracts"].(float64)) != n || int64(sum["outstandingCents"].(float64)) != cents {
			t.Errorf("%s: summary %v, want %d contracts, %d cents", b, sum, n, cents)
		}
	}

	// The TTL swept the contact counters older than 8 days into the
	// archive.
	var archived int
	for _, dk := range m.debtors {
		page, err := m.archive.Tenant(e2eTenant, nil).QueryPage(bg, kit.Query{Partition: keys.Debtor(e2eTenant, dk), Sort: kit.BeginsWith("LIMIT#"), Consistent: true}, "")
		if err != nil {
			t.Fatal(err)
		}
		archived += len(page.Items)
	}
	t.Logf("%d contact counters archived", archived)
	if archived == 0 {
		t.Error("no contact counter was archived")
	}
}

// outstanding is a contract header's balance, read from the table.
func outstanding(t *testing.T, m *month, ct string) int64 {
	t.Helper()
	it, err := m.Kit.Tenant(e2eTenant, nil).Get(context.Background(), kit.Key{PK: keys.Debtor(e2eTenant, m.debtors[ct]), SK: keys.Contract(ct)}, true)
	if err != nil || it == nil {
		t.Fatalf("header %s: %v", ct, err)
	}
	var h struct {
		OutstandingCents int64 `dynamodbav:"outstandingCents"`
	}
	if err := attributevalue.UnmarshalMap(it, &h); err != nil {
		t.Fatal(err)
	}
	return h.OutstandingCents
}

// seqBefore reports whether sequence number a comes before b.
func seqBefore(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
