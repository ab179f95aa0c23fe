package stream_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lastro/collections/kit"
	"lastro/collections/pii/piitest"
	"lastro/collections/signature"
	"lastro/engine/enginetest"
	"lastro/stream"
)

// receiver is a tenant's events endpoint: it verifies each post with the
// secret PUT /v1/tenant/events-webhook answered, the way receivers verify
// the engine's webhooks (signature.Verify), and keeps the bodies.
type receiver struct {
	t      *testing.T
	now    func() time.Time
	status int // answered to every post; 200 unless set

	mu     sync.Mutex
	secret string
	bodies []string
	events []stream.Event
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := signature.Verify(r.secret, req.Header.Get(signature.TimestampHeader), req.Header.Get(signature.SignatureHeader), body, r.now()); err != nil {
		r.t.Errorf("signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.status != 0 && r.status != http.StatusOK {
		w.WriteHeader(r.status)
		return
	}
	var b stream.WebhookBody
	if err := json.Unmarshal(body, &b); err != nil {
		r.t.Errorf("body: %v", err)
	}
	r.bodies = append(r.bodies, string(body))
	r.events = append(r.events, b.Events...)
}

// TestTenantEventsWebhookEndToEnd: a supervisor points its tenant's
// events at an endpoint over HTTP, a debtor pays a Pix charge, and the
// consumer, with the file sink and the tenants' webhooks as lastro stream
// wires them, posts the SettlementApplied event to that endpoint signed
// with the secret shown once, without the debtor's personal data. Another
// tenant's endpoint that keeps failing does not hold it back: its events
// go to the events dead letter, and the stream moves on.
func TestTenantEventsWebhookEndToEnd(t *testing.T) {
	t.Parallel()
	// The endpoints are httptest servers on loopback: allowed explicitly.
	env := enginetest.New(t, enginetest.Egress(loopback))
	ctx := context.Background()
	good := &receiver{t: t, now: env.Clock.Now}
	bad := &receiver{t: t, now: env.Clock.Now, status: http.StatusInternalServerError}
	goodSrv, badSrv := httptest.NewServer(good), httptest.NewServer(bad)
	defer goodSrv.Close()
	defer badSrv.Close()

	pay := func(tenantID string, rec *receiver, url string) {
		t.Helper()
		k := env.CreateTenant(t, tenantID)
		call := func(method, path, token, body string, want int) map[string]any {
			t.Helper()
			status, out := env.Do(t, method, path, token, body)
			if status != want {
				t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
			}
			return out
		}
		// Only the supervisor configures it, and only a URL the rules allow.
		call(http.MethodPut, "/v1/tenant/events-webhook", k["operator"], `{"url":"`+url+`"}`, http.StatusForbidden)
		call(http.MethodPut, "/v1/tenant/events-webhook", k["supervisor"], `{"url":"http://bank.example/events"}`, http.StatusBadRequest)
		set := call(http.MethodPut, "/v1/tenant/events-webhook", k["supervisor"], `{"url":"`+url+`"}`, http.StatusOK)
		rec.mu.Lock()
		rec.secret, _ = set["secret"].(string)
		rec.mu.Unlock()
		if set["url"] != url || !strings.HasPrefix(rec.secret, "evtsec_") {
			t.Fatalf("configured: %v", set)
		}
		reg := call(http.MethodPost, "/v1/debtors", k["operator"],
			`{"document":"529.982.247-25","name":"`+piitest.Name+`","phone":"`+piitest.Phone+`","email":"`+piitest.Email+`"}`, http.StatusCreated)
		dk := reg["debtorKey"].(string)
		call(http.MethodPost, "/v1/debtors/"+dk+"/contracts", k["operator"], `{"contractId":"C-1","productCode":"CREDIARIO_12X","installments":[
			{"seq":1,"dueDate":"2026-09-10","principalCents":90000,"interestCents":10000},
			{"seq":2,"dueDate":"2026-10-10","principalCents":90000,"interestCents":10000}]}`, http.StatusCreated)
		ch := call(http.MethodPost, "/v1/charges", k["operator"], `{"debtorKey":"`+dk+`","contractId":"C-1","seq":1,"method":"PIX"}`, http.StatusCreated)
		body := enginetest.WebhookBody("stl-"+tenantID, ch["chargeId"].(string), int64(ch["amountCents"].(float64)), env.Clock.Now().UTC().Format(time.RFC3339))
		if status, out, err := env.Deliver(tenantID, k["webhook"], body, env.Clock.Now(), nil); err != nil || status != http.StatusOK {
			t.Fatalf("settlement: %d %s %v", status, out, err)
		}
	}
	pay("t-dead-hook", bad, badSrv.URL+"/events") // first, so its failure comes before the good tenant's batch
	pay("t-hook", good, goodSrv.URL+"/events")

	status, doc := env.Raw(t, http.MethodGet, "/openapi.json", "", "")
	if status != http.StatusOK || !strings.Contains(doc, `"/v1/tenant/events-webhook"`) {
		t.Errorf("the served OpenAPI lacks PUT /v1/tenant/events-webhook (%d)", status)
	}

	dir := t.TempDir()
	file := stream.NewFileSink(filepath.Join(dir, "events.jsonl"))
	defer file.Close()
	deadEvents := stream.NewEventDeadLetterFile(filepath.Join(dir, "webhook-dead-letter.jsonl"))
	defer deadEvents.Close()
	hook := &stream.Webhook{Targets: stream.TenantTargets(env.Tenants), Clock: env.Clock, DeadLetter: deadEvents, Egress: env.Egress,
		Backoff: kit.Backoff{Attempts: 2, Base: time.Millisecond}}
	c, err := stream.New(stream.Config{Kit: env.Kit, Streams: kit.NewStreams(kit.NewEmbeddedStreamsClient(kit.InProcessEndpoint, env.StoreClient)),
		Translate: stream.Translate, Publisher: stream.Fanout{file, hook}, DeadLetter: &memDead{}, Owner: "test",
		Clock: env.Clock, Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Drain(ctx)
	if err != nil {
		t.Fatalf("drain: %v", err)
	}

	good.mu.Lock()
	defer good.mu.Unlock()
	settled := 0
	for _, e := range good.events {
		if e.Tenant != "t-hook" {
			t.Errorf("t-hook's endpoint got tenant %s's event %s", e.Tenant, e.ID)
		}
		if e.Type == stream.SettlementApplied && e.ContractID == "C-1" {
			settled++
		}
	}
	if settled != 1 {
		t.Errorf("t-hook's endpoint got %d SettlementApplied events, want 1 (of %d events; the drain saw %d)", settled, len(good.events), rep.Events)
	}
	for _, b := range good.bodies {
		if hits := piitest.Leaks(b); hits != nil {
			t.Errorf("a webhook body holds personal data %v", hits)
		}
	}
	dead, err := stream.ReadDeadEvents(filepath.Join(dir, "webhook-dead-letter.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	deadSettled := 0
	for _, d := range dead {
		if d.Tenant != "t-dead-hook" || d.Event.Tenant != "t-dead-hook" {
			t.Errorf("dead letter holds tenant %s's event", d.Tenant)
		}
		if d.Event.Type == stream.SettlementApplied {
			deadSettled++
		}
	}
	if deadSettled != 1 {
		t.Errorf("the failing tenant's dead letter has %d SettlementApplied events, want 1 (%d kept)", deadSettled, len(dead))
	}
	all, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil || strings.Count(string(all), `"SettlementApplied"`) != 2 {
		t.Errorf("the events file has not both tenants' settlements: %v", err)
	}
}
