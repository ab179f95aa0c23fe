package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"lastro/collections/pii/piitest"
	"lastro/collections/secret"
	"lastro/engine/enginetest"
	"lastro/ops"
	"lastro/ops/migrate"
)

// cancelAfter is a progress writer that cancels a run after its first
// line: a Ctrl-C halfway through the re-seal pass.
type cancelAfter struct {
	mu     sync.Mutex
	b      strings.Builder
	lines  int
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lines++; w.lines == 1 && w.cancel != nil {
		w.cancel()
	}
	return w.b.Write(p)
}

func (w *cancelAfter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }

// TestRewrapDataKey rotates the data key of two tenants' engine: an
// engine on the same store with the new key sealing and the old one
// opening runs the re-wrap, interrupted after its first tenant and run
// again, while its API keeps answering reads and writes; then an engine
// with only the new key opens every tenant's secrets and every debtor's
// data, which read the same as before, and nothing personal reached the
// logs, the errors or the progress.
func TestRewrapDataKey(t *testing.T) {
	t.Parallel()
	old := enginetest.New(t)
	_, ka, docsA := portfolio(t, old, "t-a", 3)
	_, kb, docsB := portfolio(t, old, "t-b", 2)
	// One debtor holds the leak detector's subjects.
	status, out := old.Do(t, "POST", "/v1/debtors", ka["operator"], `{"document":"`+piitest.CPFDigits+`","name":"`+piitest.Name+
		`","phone":"`+piitest.Phone+`","email":"`+piitest.Email+`"}`)
	if status != 201 {
		t.Fatalf("register the subject: %d %v", status, out)
	}
	debtors := map[string]string{out["debtorKey"].(string): ka["compliance"]} // debtor key → its tenant's compliance key
	for dk := range docsA {
		debtors[dk] = ka["compliance"]
	}
	for dk := range docsB {
		debtors[dk] = kb["compliance"]
	}
	if len(debtors) != 6 {
		t.Fatalf("fixture: %d debtors", len(debtors))
	}
	// What a data report and a reveal say about each debtor.
	held := func(env *enginetest.Env) map[string]string {
		t.Helper()
		got := map[string]string{}
		for dk, key := range debtors {
			status, rep := env.Do(t, "GET", "/v1/debtors/"+dk+"/data-report", key, "")
			if status != 200 {
				t.Fatalf("data report of %s: %d %v", dk, status, rep)
			}
			status, rev := env.Do(t, "POST", "/v1/debtors/"+dk+"/reveal", key, `{"reason":"LEGAL_REQUEST"}`)
			if status != 200 {
				t.Fatalf("reveal of %s: %d %v", dk, status, rev)
			}
			raw, _ := json.Marshal([]any{rep["profile"], rep["contracts"], rev["document"]})
			got[dk] = string(raw)
		}
		return got
	}
	before := held(old)
	// Step 5 of the tenant-debtors migration: the re-wrap lists profiles
	// through GSI3 only once a verify recorded no difference.
	if _, err := migrate.Verify(bg, deps(old, old.Kit, nil), migrate.TenantDebtors()); err != nil {
		t.Fatal(err)
	}

	k1, k2 := enginetest.LegacyKey(old), secret.Key{ID: "v2", Bytes: secret.Random(secret.KeySize)}
	rolled := enginetest.New(t, enginetest.SharedWith(old), enginetest.DataKeys(k2, k1))
	d := deps(rolled, rolled.Kit, nil)
	o := ops.RewrapOptions{SecretsKey: "v2", PIIKey: "v2"}

	ctx, cancel := context.WithCancel(bg)
	first := &cancelAfter{cancel: cancel}
	d.Progress = first
	if _, err := ops.RewrapDataKey(ctx, d, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted re-wrap: %v", err)
	}
	// Stopped after t-a: with only the new key, t-a's debtors open and
	// t-b's do not yet.
	newOnly := func() *enginetest.Env { return enginetest.New(t, enginetest.SharedWith(old), enginetest.DataKeys(k2)) }
	mid := newOnly()
	for dk, key := range debtors {
		status, _ := mid.Do(t, "POST", "/v1/debtors/"+dk+"/reveal", key, `{"reason":"LEGAL_REQUEST"}`)
		if want := key == ka["compliance"]; (status == 200) != want {
			t.Fatalf("after the interruption, debtor of %s revealed under the new key alone: %d", map[bool]string{true: "t-a", false: "t-b"}[want], status)
		}
	}

	// Resumed, paced, with the API in use meanwhile.
	second := &cancelAfter{}
	d.Progress = second
	o.WCU = 40
	type result struct {
		rep *ops.RewrapReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := ops.RewrapDataKey(bg, d, o)
		done <- result{rep, err}
	}()
	var res result
	calls := 0
	for running := true; running || calls < 4; calls++ {
		select {
		case res = <-done:
			running = false
		default:
		}
		if calls < 4 || running {
			if status, out := rolled.Do(t, "POST", "/v1/debtors", kb["operator"], `{"document":"`+old.CPF()+`","name":"Pessoa Sintética"}`); status != 201 {
				t.Fatalf("register during the re-wrap: %d %v", status, out)
			}
			for dk, key := range debtors {
				if status, out := rolled.Do(t, "POST", "/v1/debtors/"+dk+"/reveal", key, `{"reason":"LEGAL_REQUEST"}`); status != 200 {
					t.Fatalf("reveal during the re-wrap: %d %v", status, out)
				}
				break
			}
		}
	}
	if res.err != nil {
		t.Fatalf("resumed re-wrap: %v\n%s", res.err, second.String())
	}
	rep := res.rep
	// Both runs together re-sealed the 2 tenant items and 6 profiles;
	// registrations during the run were sealed under v2 already.
	if !rep.Retirable || rep.Remaining != 0 || rep.Tenants != 2 || rep.Found["tenant v1"] != 2 || rep.Found["profile v1"] != 6 ||
		rep.Resealed["tenants"] != 2 || rep.Resealed["profiles"] != 6 || rep.Profiles < 6 {
		t.Fatalf("report after resuming: %+v\n%s", rep, second.String())
	}
	if rep.Resealed["wru"] != rep.Resealed["tenants"]+rep.Resealed["profiles"] {
		t.Errorf("write units %d for %d tenants and %d profiles: want one each", rep.Resealed["wru"], rep.Resealed["tenants"], rep.Resealed["profiles"])
	}
	if !strings.Contains(second.String(), "can be retired") {
		t.Errorf("progress: %s", second.String())
	}

	// The old key removed from the ring: every tenant and debtor opens.
	only := newOnly()
	after := held(only)
	for dk, was := range before {
		if after[dk] != was {
			t.Errorf("debtor %s after the re-wrap reads %s, before %s", dk, after[dk], was)
		}
	}
	if again, err := ops.RewrapDataKey(bg, deps(only, only.Kit, nil), o); err != nil || !again.Retirable || again.Profiles < rep.Profiles {
		t.Fatalf("run again with only the new key: %v %+v", err, rep)
	}
	// And the old key alone no longer opens what was re-sealed.
	stale := enginetest.New(t, enginetest.SharedWith(old), enginetest.DataKeys(k1))
	for dk, key := range debtors {
		if status, _ := stale.Do(t, "POST", "/v1/debtors/"+dk+"/reveal", key, `{"reason":"LEGAL_REQUEST"}`); status == 200 {
			t.Fatalf("the retired key alone revealed %s", dk)
		}
		break
	}
	for _, s := range []string{old.Logs.String(), rolled.Logs.String(), mid.Logs.String(), only.Logs.String(), stale.Logs.String(), first.String(), second.String()} {
		if hits := piitest.Leaks(s); hits != nil {
			t.Fatalf("personal data in logs or progress: %v", hits)
		}
	}
}
