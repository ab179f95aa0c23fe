package engine_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"lastro/collections/web"
	"lastro/engine/enginetest"
)

// TestOpenAPIDocument checks /openapi.json as served: every route the
// engine registers is described with a unique operationId and its 4xx
// answers in the error shape, and the webhook names its signature
// headers. With LASTRO_OPENAPI_OUT set it also writes the document there,
// for the OpenAPI linter of .ci/run.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	env := enginetest.New(t)
	status, raw := env.Raw(t, http.MethodGet, "/openapi.json", "", "")
	if status != http.StatusOK {
		t.Fatalf("openapi.json: %d", status)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document: %v %q", err, doc.OpenAPI)
	}
	ids := map[string]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			where := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s: operationId %q (also %s)", where, id, ids[id])
			}
			ids[id] = where
			responses, _ := op["responses"].(map[string]any)
			fours := 0
			for code, r := range responses {
				if !strings.HasPrefix(code, "4") {
					continue
				}
				fours++
				if !strings.Contains(mustJSON(t, r), `"$ref":"#/components/schemas/Error"`) {
					t.Errorf("%s %s: not in the error shape: %v", where, code, r)
				}
			}
			if fours == 0 || responses["400"] == nil {
				t.Errorf("%s: no 4xx responses: %v", where, responses)
			}
			if op["security"] == nil && (responses["401"] == nil || responses["403"] == nil) {
				t.Errorf("%s: behind an API key without 401 and 403", where)
			}
		}
	}
	for _, r := range env.Web.Echo.Routes() {
		if !env.Web.Documented(r.Method, r.Path) {
			t.Errorf("route %s %s is not documented", r.Method, r.Path)
		}
	}
	for want, where := range map[string]string{
		web.OperationID(http.MethodGet, "/v1/portfolio"):                                    "GET /v1/portfolio",
		web.OperationID(http.MethodPost, "/v1/settlements/unmatched/:settlementId/resolve"): "POST /v1/settlements/unmatched/{settlementId}/resolve",
	} {
		if ids[want] != where {
			t.Errorf("operationId %s is %q, want %s", want, ids[want], where)
		}
	}
	for _, path := range []string{"/v1/webhooks/{tenantId}/settlements", "/v1/webhooks/{tenantId}/pix", "/v1/webhooks/{tenantId}/pix/pix"} {
		hook := mustJSON(t, doc.Paths[path]["post"]["parameters"])
		for _, h := range []string{"X-Lastro-Timestamp", "X-Lastro-Signature"} {
			if !strings.Contains(hook, `"in":"header"`) || !strings.Contains(hook, `"name":"`+h+`"`) {
				t.Errorf("%s parameters lack %s: %s", path, h, hook)
			}
		}
	}
	// The return-file import takes the bank's file as text, not JSON.
	returns := mustJSON(t, doc.Paths["/v1/boletos/returns"]["post"]["requestBody"])
	if !strings.Contains(returns, `"text/plain":{"schema":{"type":"string"}}`) || doc.Paths["/v1/boletos/returns"]["post"]["responses"].(map[string]any)["413"] == nil {
		t.Errorf("return-file import body: %s", returns)
	}
	if doc.Paths["/v1/tenant/boleto"]["put"] == nil || doc.Paths["/v1/tenant/boleto"]["get"] == nil {
		t.Error("the boleto settings are not documented")
	}
	if out := os.Getenv("LASTRO_OPENAPI_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOperationID(t *testing.T) {
	t.Parallel()
	tests := []struct{ method, path, want string }{
		{"GET", "/v1/portfolio", "getPortfolio"},
		{"GET", "/v1/debtors/:debtorKey", "getDebtorsByDebtorKey"},
		{"POST", "/v1/settlements/unmatched/:settlementId/resolve", "postSettlementsUnmatchedBySettlementIdResolve"},
		{"GET", "/openapi.json", "getOpenapiJson"},
	}
	for _, tt := range tests {
		if got := web.OperationID(tt.method, tt.path); got != tt.want {
			t.Errorf("OperationID(%s %s) = %s, want %s", tt.method, tt.path, got, tt.want)
		}
	}
}
