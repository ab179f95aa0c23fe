package main

import (
	"encoding/json"
	"fmt"
	"lastro/contract"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/ddblocal"
	"lastro/engine/enginetest"
)

// TestSettlementsExactlyOnceUnderFaults: 200 settlements over 50 contracts
// (each contract gets four: its three instalments paid exactly and one
// extra 10.00), every one delivered three times at once and replayed an
// hour later, while the store throttles or fails 5 % of the requests of
// each kind. A provider retries on 503 (and on a dropped connection).
// In the end every balance is exact to the cent, there are 200 STL items,
// and every contract's header version says it was changed exactly four
// times: no settlement applied twice, none lost.
func TestSettlementsExactlyOnceUnderFaults(t *testing.T) {
	t.Parallel()
	te, clk := newTestEngineAt(t)
	keysOf := te.CreateTenant(t, "t-eo")
	op, secret := keysOf["operator"], keysOf["webhook"]
	setup := time.Now()
	const contracts = 50
	type delivery struct{ id, body string }
	var all []delivery
	dks := make([]string, contracts)
	for i := range contracts {
		cid := fmt.Sprintf("C-%03d", i)
		if i%5 == 0 { // ten debtors of five contracts each
			dks[i] = lateContractHTTP(t, te, op, te.CPF(), cid)
		} else {
			dks[i] = dks[i-1]
			signLateContract(t, te, op, dks[i], cid)
		}
		var ids [3]string
		for seq := 1; seq <= 3; seq++ {
			ids[seq-1] = chargeHTTP(t, te, op, dks[i], cid, seq, "PIX")["chargeId"].(string)
		}
		paid := "2026-09-24T09:00:00-03:00"
		all = append(all,
			delivery{cid + "-1", enginetest.WebhookBody("stl-"+cid+"-1", ids[0], 102467, paid)},
			delivery{cid + "-2", enginetest.WebhookBody("stl-"+cid+"-2", ids[1], 100000, paid)},
			delivery{cid + "-3", enginetest.WebhookBody("stl-"+cid+"-3", ids[2], 100000, paid)},
			delivery{cid + "-x", enginetest.WebhookBody("stl-"+cid+"-x", ids[2], 1000, paid)})
	}
	t.Logf("setup in %v", time.Since(setup))
	if len(all) != 200 {
		t.Fatalf("%d settlements", len(all))
	}
	// Deliver contract by contract in turn (C-000-1, C-001-1, ...), so
	// the contention is that of duplicates, not of one contract's queue.
	interleaved := make([]delivery, 0, len(all))
	for k := range 4 {
		for i := range contracts {
			interleaved = append(interleaved, all[i*4+k])
		}
	}
	all = interleaved

	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	// First a store outage longer than the SDK's own retries: the webhook answers 503 and writes nothing, so the
	// provider's retry is what applies it.
	if err := te.Store.SetFault(ddblocal.FaultRule{Kind: ddblocal.FaultInternalError, Operations: []string{"TransactWriteItems"}, Rate: 1, Count: 20}); err != nil {
		t.Fatal(err)
	}
	if status, body, err := te.Deliver("t-eo", secret, all[0].body, clk.Now(), client); err != nil || status != 503 || enginetest.ErrorCode(enginetest.JSON(t, body)) != "throttled" {
		t.Fatalf("during an outage: %d %s %v", status, body, err)
	}
	if it, _ := te.Kit.Tenant("t-eo", nil).Get(t.Context(), kit.Key{PK: keys.Settlement("t-eo", "stl-"+all[0].id), SK: keys.SettlementSK}, true); it != nil {
		t.Fatal("a 503 left an STL item")
	}
	te.Store.ClearFaults()
	// Then 5 % of every request throttled and 5 % failed.
	for _, kind := range []ddblocal.FaultKind{ddblocal.FaultThrottling, ddblocal.FaultInternalError} {
		if err := te.Store.SetFault(ddblocal.FaultRule{Kind: kind, Rate: 0.05}); err != nil {
			t.Fatal(err)
		}
	}
	var applied, unavailable, other atomic.Int64
	// provide delivers one webhook until the engine answers 200, as a
	// payment provider does: a 503 (or no answer) is retried with backoff.
	provide := func(d delivery, signedAt func() time.Time) (map[string]any, error) {
		for attempt := 0; attempt < 50; attempt++ {
			status, body, err := te.Deliver("t-eo", secret, d.body, signedAt(), client)
			switch {
			case err == nil && status == 200:
				var out map[string]any
				if err := json.Unmarshal([]byte(body), &out); err != nil {
					return nil, err
				}
				return out, nil
			case err == nil && status == 503, err != nil:
				unavailable.Add(1)
			default:
				other.Add(1)
				return nil, fmt.Errorf("%s: %d %s", d.id, status, body)
			}
			time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
		}
		return nil, fmt.Errorf("%s: gave up", d.id)
	}
	start := time.Now()
	first := make([]map[string]any, len(all))
	var mu sync.Mutex
	sem := make(chan struct{}, 24)
	var wg sync.WaitGroup
	errc := make(chan error, len(all)*3)
	for i, d := range all {
		for range 3 { // three concurrent deliveries of the same settlement
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				out, err := provide(d, clk.Now)
				if err != nil {
					errc <- err
					return
				}
				if out["status"] == "applied" {
					applied.Add(1)
					mu.Lock()
					first[i] = out
					mu.Unlock()
				} else if out["status"] != "already_applied" {
					errc <- fmt.Errorf("%s: %v", d.id, out)
				}
			}()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	t.Logf("600 deliveries in %v: %d applied, %d answers 503 (or no answer) retried, %d other", time.Since(start), applied.Load(), unavailable.Load(), other.Load())
	if applied.Load() != 200 {
		t.Fatalf("%d deliveries answered applied, want exactly 200", applied.Load())
	}

	// An hour later the provider replays everything (signed anew: the old
	// signatures are outside the window).
	clk.Advance(time.Hour)
	replays := make(chan error, len(all))
	for i, d := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := provide(d, clk.Now)
			if err != nil {
				replays <- err
				return
			}
			f := first[i]
			if out["status"] != "already_applied" || out["appliedCents"] != f["appliedCents"] || out["creditCents"] != f["creditCents"] || out["receivedAt"] != f["receivedAt"] {
				replays <- fmt.Errorf("replay of %s: %v, first %v", d.id, out, f)
			}
		}()
	}
	wg.Wait()
	close(replays)
	for err := range replays {
		t.Fatal(err)
	}
	if status, _, _ := te.Deliver("t-eo", secret, all[0].body, clk.Now().Add(-time.Hour), client); status != 401 {
		t.Fatalf("an hour-old signature: %d", status)
	}
	te.Store.ClearFaults()
	t.Logf("replays done at %v", time.Since(start))

	// Every balance exact to the cent, every settlement recorded once.
	db := te.Kit.Tenant("t-eo", nil)
	ctx := t.Context()
	stls := 0
	for _, d := range all {
		it, err := db.Get(ctx, kit.Key{PK: keys.Settlement("t-eo", "stl-"+d.id), SK: keys.SettlementSK}, true)
		if err != nil || it == nil {
			t.Fatalf("STL of %s: %v %v", d.id, it, err)
		}
		stls++
	}
	if stls != 200 {
		t.Fatalf("%d STL items", stls)
	}
	events := 0
	for i, dk := range dks {
		cid := fmt.Sprintf("C-%03d", i)
		c, err := contract.Load(ctx, te.Kit.Tenant("t-eo", nil), "t-eo", dk, cid)
		if err != nil || c == nil {
			t.Fatal(err)
		}
		h := c.Header
		// Four changes by settlements after creation (version 1), nothing
		// owed, 10.00 of credit: 1024.67 + 3 × 1000.00 + 10.00 paid for
		// 3024.67 owed.
		if h.Version != 5 || h.Status != contract.StatusSettled || h.OutstandingCents != 0 || h.CreditCents != 1000 || h.NextAction != "" || h.GSI2PK != "" {
			t.Fatalf("%s header: %+v", cid, h)
		}
		var paid int64
		for _, in := range c.Installments {
			if in.Status != contract.InstPaid || in.PaidCents != 100000 {
				t.Fatalf("%s instalment %d: %+v", cid, in.Seq, in)
			}
			paid += in.PaidCents + in.FinePaidCents + in.LateInterestPaidCents
		}
		if in := c.Installment(1); in.FineCents != 2000 || in.FinePaidCents != 2000 || in.LateInterestCents != 467 || in.LateInterestPaidCents != 467 {
			t.Fatalf("%s late charges: %+v", cid, in)
		}
		if paid+h.CreditCents != 102467+200000+1000 {
			t.Fatalf("%s: %d paid + %d credit", cid, paid, h.CreditCents)
		}
		// Seq 0 holds the payment that found the contract paid off.
		for seq := 0; seq <= 3; seq++ {
			p, err := db.QueryPage(ctx, kit.Query{Partition: keys.Debtor("t-eo", dk), Sort: kit.BeginsWith(keys.EventsPrefix(cid, seq)), Consistent: true}, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range p.Items {
				var ev contract.Event
				if err := attributevalue.UnmarshalMap(it, &ev); err != nil {
					t.Fatal(err)
				}
				if ev.EventType == "SettlementApplied" {
					events++
				}
			}
		}
	}
	if events != 200 {
		t.Fatalf("%d SettlementApplied events, want 200", events)
	}
	t.Logf("whole run: %v", time.Since(start))
}
