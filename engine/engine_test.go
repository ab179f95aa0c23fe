package engine_test

import (
	"context"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/ddblocal"
	"lastro/debtor"
	"lastro/engine"
	"lastro/engine/enginetest"
)

func TestNewRefusesIncompleteDeps(t *testing.T) {
	t.Parallel()
	st, err := ddblocal.Open(ddblocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := kit.NewEmbeddedClient(kit.InProcessEndpoint, kit.InProcess(st.Handler()))
	good := engine.Deps{DB: db, Table: "lastro", DataKey: secret.Random(32), AdminToken: "adm"}
	tests := []struct {
		name string
		edit func(*engine.Deps)
		want string
	}{
		{"no client", func(d *engine.Deps) { d.DB = nil }, "no DynamoDB client"},
		{"no table", func(d *engine.Deps) { d.Table = "" }, "no table name"},
		{"no admin token", func(d *engine.Deps) { d.AdminToken = "" }, "no admin token"},
		{"short data key", func(d *engine.Deps) { d.DataKey = []byte("short") }, "key"},
	}
	for _, tt := range tests {
		d := good
		tt.edit(&d)
		if _, err := engine.New(context.Background(), d); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.want)
		}
	}
	e, err := engine.New(context.Background(), good)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(context.Background()); err != nil {
		t.Fatalf("ready after New (which creates the table): %v", err)
	}
}

// TestEngineImportsNoStore keeps the layer rule: only cmd/lastro and
// test-support packages import the embedded store, and the SDK's DynamoDB
// package stays behind collections/kit and collections/table.
func TestEngineImportsNoStore(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "lastro/ddblocal") || p == "github.com/aws/aws-sdk-go-v2/service/dynamodb" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}

// TestFixture: the shared fixture serves the API with a manual clock,
// creates tenants over HTTP and through the service, signs webhooks the
// engine accepts and hands out distinct valid CPFs.
func TestFixture(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	if !env.Clock.Now().Equal(enginetest.DefaultNow) {
		t.Fatalf("clock at %v", env.Clock.Now())
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if status, out := env.Do(t, http.MethodGet, p, "", ""); status != 200 {
			t.Fatalf("%s: %d %v", p, status, out)
		}
	}
	if status, body := env.Raw(t, http.MethodGet, "/metrics", "", ""); status != 200 || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics: %d %.200s", status, body)
	}
	keys := env.CreateTenant(t, "t-http")
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant", keys["operator"], ""); status != 200 || out["tenantId"] != "t-http" {
		t.Fatalf("GET /v1/tenant: %d %v", status, out)
	}
	if status, out := env.Do(t, http.MethodGet, "/v1/tenant", "", ""); status != 401 || enginetest.ErrorCode(out) != "unauthenticated" {
		t.Fatalf("no key: %d %v", status, out)
	}
	tn, svcKeys := env.Tenant(t, "t-svc")
	if tn.ID != "t-svc" || svcKeys["supervisor"] == "" || svcKeys["webhook"] == "" {
		t.Fatalf("service tenant: %v %v", tn.ID, svcKeys)
	}
	seen := map[string]bool{}
	for range 50 {
		c := env.CPF()
		if _, err := debtor.ParseDocument(c); err != nil || seen[c] {
			t.Fatalf("CPF %s: %v (seen %v)", c, err, seen[c])
		}
		seen[c] = true
	}
	// A signed webhook at the fixture's clock is accepted (an unknown
	// charge goes to suspense); the same one signed 301 s earlier is not.
	body := enginetest.WebhookBody("stl-1", "UNKNOWN1", 100, "2026-09-24T08:00:00-03:00")
	status, res, err := env.Deliver("t-svc", svcKeys["webhook"], body, env.Clock.Now(), nil)
	if err != nil || status != 200 || enginetest.JSON(t, res)["status"] != "unmatched" {
		t.Fatalf("webhook: %d %s %v", status, res, err)
	}
	if status, _, _ := env.Deliver("t-svc", svcKeys["webhook"], body, env.Clock.Now().Add(-301*time.Second), nil); status != 401 {
		t.Fatalf("stale webhook: %d", status)
	}
	if len(env.ScanAll(t)) == 0 {
		t.Fatal("nothing in the table")
	}
}
