package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSearchByPhoneAndContractID: the operator's search box takes a phone
// in Brazilian spellings (every debtor of the fixture shares one: a list
// of them, masked, each linking to its 360, none of the other tenant's)
// and a contract id (one match: straight to the 360); a miss keeps what
// was typed and says what to try.
func TestSearchByPhoneAndContractID(t *testing.T) {
	t.Parallel()
	s := seed(t, 3)
	c := s.client(t)
	s.login(t, c, s.keys["operator"])
	find := func(q string) (*http.Response, string) {
		t.Helper()
		return get(t, c, s.URL+"/ui/debtors?q="+url.QueryEscape(q))
	}
	mine := append([]string{s.xssDK}, s.dks...)
	for _, q := range []string{"(11) 90000-0003", "+55 11 90000-0003", "11900000003"} {
		resp, body := find(q)
		if resp.StatusCode != http.StatusOK || strings.Count(body, `class="match"`) != len(mine) {
			t.Fatalf("phone %s: %d, %d matches listed, want %d", q, resp.StatusCode, strings.Count(body, `class="match"`), len(mine))
		}
		for _, dk := range mine {
			if !strings.Contains(body, `href="/ui/debtors/`+dk+`"`) {
				t.Errorf("phone %s: %s not listed", q, dk)
			}
		}
		if strings.Contains(body, s.otherDK) || strings.Contains(body, "Pessoa Sintética") || strings.Contains(body, "onerror") {
			t.Errorf("phone %s: the list shows another tenant's debtor or a name", q)
		}
		if !strings.Contains(body, "CPF ***.") || !strings.Contains(body, "telefone") {
			t.Errorf("phone %s: no masked document or how it was found", q)
		}
	}
	resp, _ := find("C-UI-001")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/ui/debtors/"+s.dks[1] {
		t.Errorf("contract C-UI-001: %d to %q, want the 360 of %s", resp.StatusCode, loc, s.dks[1])
	}
	resp, body := find("C-NOPE-9")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `value="C-NOPE-9"`) || !strings.Contains(body, "tente o telefone com DDD") {
		t.Errorf("miss: %d %s", resp.StatusCode, body)
	}
	resp, body = find("ninguém?")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Digite um CPF") || !strings.Contains(body, "ningu") {
		t.Errorf("not a key: %d %s", resp.StatusCode, body)
	}
}
