package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeRefusesInternalWebhooksUnlessAllowed runs the real binary:
// by default a supervisor cannot point its events webhook or its PSP at
// plain http, loopback or the metadata service (400 url_not_allowed);
// with LASTRO_EGRESS_ALLOW=loopback, plain http to loopback is accepted
// and the metadata service still is not; a bad allow-list stops serve
// before it starts.
func TestServeRefusesInternalWebhooksUnlessAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		allow string
		want  map[string]int // URL -> status
	}{
		{"", map[string]int{"http://127.0.0.1:9/events": 400, "https://127.0.0.1/events": 400, "https://[::1]/events": 400,
			"https://169.254.169.254/latest/meta-data/": 400, "https://10.0.0.1/events": 400, "https://localhost/events": 400,
			"https://bank.example/events": 200}},
		{"loopback", map[string]int{"http://127.0.0.1:9/events": 200, "https://[::1]/events": 200,
			"https://169.254.169.254/latest/meta-data/": 400, "http://bank.example/events": 400}},
	} {
		t.Run("allow="+tc.allow, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken}
			if tc.allow != "" {
				env["LASTRO_EGRESS_ALLOW"] = tc.allow
			}
			s := startServe(t, env)
			call := func(method, path, token, body string) (int, map[string]any) {
				t.Helper()
				return doJSON(t, method, "http://"+s.addr+path, token, body)
			}
			status, created := call(http.MethodPost, "/v1/tenants", testAdminToken, `{"tenantId":"t-egress","name":"Crediário t-egress"}`)
			if status != http.StatusCreated {
				t.Fatalf("create tenant: %d %v", status, created)
			}
			sup := created["apiKeys"].(map[string]any)["supervisor"].(string)
			for u, want := range tc.want {
				status, out := call(http.MethodPut, "/v1/tenant/events-webhook", sup, `{"url":"`+u+`"}`)
				if status != want {
					t.Errorf("events webhook %s: %d %v, want %d", u, status, out, want)
				}
				if e, _ := out["error"].(map[string]any); want == 400 && e["code"] != "url_not_allowed" {
					t.Errorf("events webhook %s: %v", u, out)
				}
				psp := `{"baseUrl":"` + u + `","clientId":"c","clientSecret":"s","chave":"0f6b3c1e-2d4a-4e8b-9c7d-5a1f2e3b4c5d"}`
				if status, out := call(http.MethodPut, "/v1/tenant/psp", sup, psp); status != want {
					t.Errorf("PSP base URL %s: %d %v, want %d", u, status, out, want)
				}
			}
		})
	}
	code, _, stderr := runChild(t, map[string]string{"LASTRO_DATA_DIR": ":memory:", "LASTRO_EGRESS_ALLOW": "everything"}, "serve")
	if code == 0 || !strings.Contains(stderr, "LASTRO_EGRESS_ALLOW") {
		t.Fatalf("a bad LASTRO_EGRESS_ALLOW: exit %d %s", code, stderr)
	}
}
