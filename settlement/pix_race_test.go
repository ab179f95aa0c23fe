package settlement_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"lastro/contract"
	"lastro/settlement"
)

// TestPixConcurrentDeliveriesApplyOnce: one notice of two payments
// delivered by eight goroutines at once (a PSP retrying on a timeout while
// the first call still runs) applies each payment once: over all the
// answers each endToEndId is "applied" exactly once and "already_applied"
// otherwise, and each contract holds one payment event.
func TestPixConcurrentDeliveriesApplyOnce(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk1, ch1 := lateContract(t, f.fixture, "C-1")
	dk2, ch2 := lateContract(t, f.fixture, "C-2")
	body := pixBody(pixPay{e2e: e2e(1), txid: ch1.ChargeID, valor: "1024.67"}, pixPay{e2e: e2e(2), txid: ch2.ChargeID, valor: "100.00"})
	const n = 8
	type answer struct {
		status int
		raw    string
		err    error
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i].status, answers[i].raw, answers[i].err = f.deliverPix(body)
		})
	}
	close(start)
	wg.Wait()
	count := map[string]map[string]int{}
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("delivery %d: %d %s %v", i, a.status, a.raw, a.err)
		}
		var out struct {
			Pix []struct {
				EndToEndID string `json:"endToEndId"`
				Status     string `json:"status"`
			} `json:"pix"`
		}
		if err := json.Unmarshal([]byte(a.raw), &out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Pix {
			if count[r.EndToEndID] == nil {
				count[r.EndToEndID] = map[string]int{}
			}
			count[r.EndToEndID][r.Status]++
		}
	}
	for _, id := range []string{e2e(1), e2e(2)} {
		if c := count[id]; c["applied"] != 1 || c["already_applied"] != n-1 {
			t.Errorf("%s: %v, want applied once and already_applied %d times", id, c, n-1)
		}
	}
	for _, c := range []struct{ dk, id string }{{dk1, "C-1"}, {dk2, "C-2"}} {
		if evs := f.events(t, c.dk, c.id, "1", settlement.EvSettlementApplied); len(evs) != 1 {
			t.Errorf("%s: %d payment events, want 1", c.id, len(evs))
		}
	}
	if in := f.load(t, dk1, "C-1").Installment(1); in.Status != contract.InstPaid {
		t.Errorf("C-1 instalment 1: %+v", in)
	}
}

// TestPixConcurrentPartialRefundsBothReverse: two partial refunds of one
// payment, notified in two calls racing each other, each reverse their
// own amount once: one's conditioned write losing to the other's is
// retried, never dropped nor doubled.
func TestPixConcurrentPartialRefundsBothReverse(t *testing.T) {
	t.Parallel()
	f := newPixFixture(t)
	dk, ch := lateContract(t, f.fixture, "C-1")
	pay := pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67"}
	if status, out := f.post(t, pixPaths[0], pixBody(pay)); status != http.StatusOK {
		t.Fatalf("payment: %d %v", status, out)
	}
	bodies := []string{
		pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67", refunds: []pixRefund{{"dev1", rtr(1), "100.00", settlement.RefundReturned}}}),
		pixBody(pixPay{e2e: e2e(1), txid: ch.ChargeID, valor: "1024.67", refunds: []pixRefund{{"dev2", rtr(2), "200.00", settlement.RefundReturned}}}),
	}
	const n = 8 // four deliveries of each
	raws := make([]string, n)
	errs := make([]error, n)
	statuses := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			statuses[i], raws[i], errs[i] = f.deliverPix(bodies[i%2])
		})
	}
	close(start)
	wg.Wait()
	reversed := 0
	for i := range n {
		if errs[i] != nil || statuses[i] != http.StatusOK {
			t.Fatalf("delivery %d: %d %s %v", i, statuses[i], raws[i], errs[i])
		}
		reversed += strings.Count(raws[i], `"status":"reversed"`)
	}
	if reversed != 2 {
		t.Errorf("%d refunds reversed over all the answers, want 2", reversed)
	}
	if evs := f.events(t, dk, "C-1", "1", settlement.EvSettlementReversed); len(evs) != 2 {
		t.Errorf("%d reversal events, want 2", len(evs))
	}
	if stl := f.stl(t, e2e(1)); stl.ReversedCents != 30000 {
		t.Errorf("stl reversed %d cents, want 30000", stl.ReversedCents)
	}
	// PaidCents is principal and interest paid: 1000.00 by the payment,
	// less the 300.00 taken back from principal.
	if in := f.load(t, dk, "C-1").Installment(1); in.PaidCents != 100000-30000 || in.InterestPaidCents != 10000 {
		t.Errorf("instalment after 300.00 of refunds: %+v", in)
	}
}
