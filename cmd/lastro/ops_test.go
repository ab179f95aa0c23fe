package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func runIn(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv("LASTRO_DATA_DIR", ":memory:")
	var out, errw bytes.Buffer
	err := run(context.Background(), args, &out, &errw)
	return out.String(), errw.String(), err
}

func TestIAMPolicyCommand(t *testing.T) {
	out, _, err := runIn(t, "iam", "policy", "--role", "api", "--region", "sa-east-1", "--account", "123456789012")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `T#${aws:PrincipalTag/tenantId}#D#*`) || !strings.Contains(out, "ForAllValues:StringLike") ||
		!strings.Contains(out, "arn:aws:dynamodb:sa-east-1:123456789012:table/lastro") {
		t.Fatalf("policy:\n%s", out)
	}
	if _, _, err := runIn(t, "iam", "policy", "--role", "root"); err == nil || !strings.Contains(err.Error(), "unknown role") {
		t.Fatalf("unknown role: %v", err)
	}
	out, _, err = runIn(t, "table", "definition", "--roles")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct{ Type string }
	}
	if err := json.Unmarshal([]byte(out), &tmpl); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"LastroTable", "LastroApiRole", "LastroWorkerRole", "LastroStreamRole", "LastroLambdaRole"} {
		if tmpl.Resources[r].Type == "" {
			t.Errorf("template lacks %s", r)
		}
	}
}

func TestOpsCommandsBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tenant"}, "unknown tenant command"},
		{[]string{"tenant", "offboard"}, "no tenant given"},
		{[]string{"tenant", "offboard", "T#x", "--out", "d"}, "invalid tenant id"},
		{[]string{"tenant", "offboard", "t-a"}, "--out is required"},
		{[]string{"tenant", "offboard", "t-a", "--out", "d", "--wcu", "-1"}, "--wcu"},
		{[]string{"tenant", "offboard", "t-none", "--out", "d"}, "tenant not found"},
		{[]string{"lgpd", "erase-due"}, "--tenant"},
		{[]string{"lgpd", "forget"}, "unknown lgpd command"},
		{[]string{"iam"}, "unknown iam command"},
	}
	for _, tt := range tests {
		_, _, err := runIn(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line holding %q", tt.args, err, tt.want)
		}
	}
}
