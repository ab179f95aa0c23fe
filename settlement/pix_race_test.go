package settlement_test

import (
	"encoding/json"
	"net/http"
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
