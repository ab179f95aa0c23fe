package iam_test

import (
	"encoding/json"
	"testing"

	"lastro/collections/iam"
	"lastro/collections/keys"
)

// ownAndOthers are the partition keys the engine builds for a tenant: its
// own partition, a debtor collection, the lookups, and the index
// partitions a Query names.
func engineKeys(t string) map[string]string {
	return map[string]string{
		"tenant":     keys.Tenant(t),
		"debtor":     keys.Debtor(t, "0123456789abcdef"),
		"charge":     keys.Charge(t, "chg-1"),
		"settlement": keys.Settlement(t, "stl-1"),
		"idem":       keys.Idempotency(t, "ab12"),
		"suspense":   keys.Suspense(t),
		"agenda":     keys.Agenda(t, "2026-09-24", 3),
		"portfolio":  keys.Bucket(t, "D031_060"),
		"profiles":   keys.Profiles(t),
	}
}

func TestTenantRoleLeadingKeys(t *testing.T) {
	t.Parallel()
	r := iam.ARNs("sa-east-1", "123456789012", "lastro")
	doc, err := iam.Policy("api", r)
	if err != nil {
		t.Fatal(err)
	}
	// The document survives JSON as IAM receives it.
	raw, _ := json.Marshal(doc)
	var back iam.Document
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	tag := map[string]string{"tenantId": "t-a"}
	table, index := r.Table.(string), r.Table.(string)+"/index/agenda"
	type tc struct {
		name    string
		req     iam.Request
		allowed bool
	}
	var tests []tc
	for fam, pk := range engineKeys("t-a") {
		res := table
		if fam == "agenda" || fam == "portfolio" || fam == "profiles" {
			res = index
		}
		tests = append(tests, tc{"own " + fam, iam.Request{Action: "dynamodb:Query", Resource: res, LeadingKeys: []string{pk}, Tags: tag}, true})
		tests = append(tests, tc{"own " + fam + " put", iam.Request{Action: "dynamodb:PutItem", Resource: table, LeadingKeys: []string{pk}, Tags: tag}, true})
	}
	for _, other := range []string{"t-b", "t-ab", "t"} {
		for fam, pk := range engineKeys(other) {
			tests = append(tests, tc{other + " " + fam, iam.Request{Action: "dynamodb:GetItem", Resource: table, LeadingKeys: []string{pk}, Tags: tag}, false})
		}
	}
	tests = append(tests,
		tc{"a batch mixing tenants", iam.Request{Action: "dynamodb:BatchGetItem", Resource: table,
			LeadingKeys: []string{keys.Debtor("t-a", "0123456789abcdef"), keys.Debtor("t-b", "0123456789abcdef")}, Tags: tag}, false},
		tc{"the directory", iam.Request{Action: "dynamodb:Query", Resource: table, LeadingKeys: []string{keys.Directory}, Tags: tag}, false},
		tc{"the system partition", iam.Request{Action: "dynamodb:GetItem", Resource: table, LeadingKeys: []string{keys.System}, Tags: tag}, false},
		tc{"a Scan", iam.Request{Action: "dynamodb:Scan", Resource: table, Tags: tag}, false},
		tc{"an item action naming no key", iam.Request{Action: "dynamodb:Query", Resource: table, Tags: tag}, false},
		tc{"no tenant tag", iam.Request{Action: "dynamodb:GetItem", Resource: table, LeadingKeys: []string{keys.Tenant("t-a")}}, false},
		tc{"a tag with a wildcard", iam.Request{Action: "dynamodb:GetItem", Resource: table, LeadingKeys: []string{keys.Tenant("t-b")},
			Tags: map[string]string{"tenantId": "*"}}, false},
		tc{"another table", iam.Request{Action: "dynamodb:GetItem", Resource: "arn:aws:dynamodb:sa-east-1:123456789012:table/other",
			LeadingKeys: []string{keys.Tenant("t-a")}, Tags: tag}, false},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := iam.Evaluate(back, tt.req); got != tt.allowed {
				t.Fatalf("%+v: allowed %v, want %v", tt.req, got, tt.allowed)
			}
		})
	}
}

func TestPlatformRolesLeastPrivilege(t *testing.T) {
	t.Parallel()
	r := iam.ARNs("*", "*", "lastro")
	table := "arn:aws:dynamodb:*:*:table/lastro"
	tests := []struct {
		role    string
		req     iam.Request
		allowed bool
	}{
		{"worker", iam.Request{Action: "dynamodb:Query", Resource: table + "/index/agenda", LeadingKeys: []string{keys.Agenda("t-a", "2026-09-24", 0)}}, true},
		{"worker", iam.Request{Action: "dynamodb:UpdateItem", Resource: table, LeadingKeys: []string{keys.Debtor("t-b", "0123456789abcdef")}}, true},
		{"worker", iam.Request{Action: "dynamodb:DeleteItem", Resource: table, LeadingKeys: []string{keys.Debtor("t-b", "0123456789abcdef")}}, false},
		{"worker", iam.Request{Action: "dynamodb:Scan", Resource: table}, false},
		{"stream", iam.Request{Action: "dynamodb:GetRecords", Resource: table + "/stream/2026-09-24T00:00:00.000"}, true},
		{"stream", iam.Request{Action: "dynamodb:PutItem", Resource: table, LeadingKeys: []string{keys.System}}, true},
		{"stream", iam.Request{Action: "dynamodb:UpdateItem", Resource: table, LeadingKeys: []string{keys.Tenant("t-a")}}, true},
		{"stream", iam.Request{Action: "dynamodb:GetItem", Resource: table, LeadingKeys: []string{keys.Debtor("t-a", "0123456789abcdef")}}, false},
		{"stream", iam.Request{Action: "dynamodb:PutItem", Resource: table + "-archive"}, true},
		{"stream", iam.Request{Action: "dynamodb:Scan", Resource: table}, false},
		{"lambda", iam.Request{Action: "logs:PutLogEvents", Resource: "arn:aws:logs:*:*:log-group:x"}, true},
		{"lambda", iam.Request{Action: "dynamodb:Query", Resource: table, LeadingKeys: []string{keys.Charge("t-a", "c")}}, false},
	}
	for _, tt := range tests {
		doc, err := iam.Policy(tt.role, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := iam.Evaluate(doc, tt.req); got != tt.allowed {
			t.Errorf("%s %+v: allowed %v, want %v", tt.role, tt.req, got, tt.allowed)
		}
	}
	if _, err := iam.Policy("root", r); err == nil {
		t.Fatal("an unknown role got a policy")
	}
}
