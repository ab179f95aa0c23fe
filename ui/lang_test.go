package ui_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"lastro/collections/calendar"
	"lastro/ui"
)

// TestPortugueseUnlessEnglishIsChosen: without the switch's cookie the
// pages are Portuguese, whatever the browser's Accept-Language says
// (ADR 0086); the switch sets the cookie and comes back to the page.
func TestPortugueseUnlessEnglishIsChosen(t *testing.T) {
	t.Parallel()
	s := seed(t, 1)
	c := s.client(t)
	for _, accept := range []string{"", "pt-BR,pt;q=0.9", "en-US,en;q=0.9"} {
		body := getWith(t, c, s.URL+"/ui/login", accept)
		if !strings.Contains(body, `<html lang="pt-BR">`) || !strings.Contains(body, "Chave de API") || !strings.Contains(body, `id="lang-en"`) {
			t.Errorf("Accept-Language %q: not the Portuguese login", accept)
		}
	}
	resp, _ := get(t, c, s.URL+"/ui/lang?to=en&next="+url.QueryEscape("/ui/login?next=/ui/suspense"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login?next=/ui/suspense" {
		t.Fatalf("switch: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == ui.LangCookie {
			ck = k
		}
	}
	if ck == nil || ck.Value != "en" || ck.Path != "/" || ck.MaxAge <= 0 || ck.SameSite != http.SameSiteLaxMode {
		t.Fatalf("language cookie %+v", ck)
	}
	body := getWith(t, c, s.URL+"/ui/login", "pt-BR")
	if !strings.Contains(body, `<html lang="en">`) || !strings.Contains(body, "API key") || strings.Contains(body, "Chave de API") || !strings.Contains(body, `id="lang-pt"`) {
		t.Errorf("after the switch: not the English login\n%s", body)
	}
	// Another site cannot be the switch's way back; an unknown language
	// is a 400 page that changes nothing.
	if resp, _ := get(t, c, s.URL+"/ui/lang?to=pt-BR&next=//evil.example/"); resp.Header.Get("Location") != "/" {
		t.Errorf("switch to another site: %q", resp.Header.Get("Location"))
	}
	if resp, body := get(t, c, s.URL+"/ui/lang?to=fr"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "idioma desconhecido") {
		t.Errorf("unknown language: %d", resp.StatusCode)
	}
	if body := getWith(t, c, s.URL+"/ui/login", ""); !strings.Contains(body, `<html lang="pt-BR">`) {
		t.Error("switching back to Portuguese did not stick")
	}
}

func getWith(t *testing.T, c *http.Client, u, acceptLanguage string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEveryPageInBothLanguages renders each page, an error page and a
// refused form in Portuguese and in English: the <html lang>, a label,
// money and dates follow the language, and the other language's label is
// not there.
func TestEveryPageInBothLanguages(t *testing.T) {
	t.Parallel()
	s := seed(t, 3)
	s.suspend(t, "C-UI-001", 4000)
	dk := s.dks[0]
	// A call the operator took and recorded: the debtor's contact
	// history and the dashboard's collectors show its outcome.
	s.call(t, calendar.Today(s.Clock.Now(), s.t.Location), "C-UI-001", s.operatorID(), "REACHED")
	type check struct{ pt, en string }
	pages := []struct {
		key, path string
		status    int
		checks    []check
	}{
		{"supervisor", "/ui/dashboard", 200, []check{{"Painel da carteira", "Portfolio dashboard"}, {"31–60 dias", "31–60 days"}, {"Total em atraso", "Total overdue"}, {"Hoje: 24/09/2026", "Today: 2026-09-24"},
			// the sections of ADR 0085: promises, cure, contacts against the cap, collectors, shards
			{"Promessas resolvidas hoje (24/09/2026) e no mês até hoje (01/09/2026 a 24/09/2026)", "Promises resolved today (2026-09-24) and in the month so far (2026-09-01 to 2026-09-24)"},
			{"Taxa de cumprimento", "Kept rate"}, {"Mês até hoje", "Month so far"},
			{"Taxa de cura do mês", "Cure rate of the month"}, {"Em atraso no início do mês", "Delinquent at the start of the month"}, {"0,0 %", "0.0%"},
			{"contato(s) por devedor por dia (política de cobrança)", "contact(s) per debtor per day (dunning policy)"},
			{"Contatos recusados hoje por motivo", "Contacts refused today by reason"}, {"limite diário de contatos atingido", "daily contact limit reached"}, {"sem endereço no canal", "no address on the channel"},
			{"Cobradores hoje", "Collectors today"}, {"Em atendimento", "Working"}, {"falou com o devedor: 1", "spoke with the debtor: 1"},
			{"Agenda de hoje por fatia", "Today&#39;s agenda by shard"}, {"não iniciada", "not started"}, {"Baixar CSV da agenda", "Download the agenda CSV"}}},
		{"supervisor", "/ui/dashboard.csv?table=nope", 400, []check{{"table deve ser uma de: buckets, promises", "table must be one of: buckets, promises"}}},
		{"supervisor", "/ui/portfolio?bucket=D031_060", 200, []check{{"Carteira em atraso", "Overdue portfolio"}, {"Dias de atraso", "Days past due"}, {"R$ 250,00", "R$ 250.00"}, {"10/08/2026", "2026-08-10"}}},
		{"supervisor", "/ui/agenda?date=2026-09-24", 200, []check{{"Agenda de 24/09/2026", "Agenda for 2026-09-24"}, {"Executar agora", "Run now"}}},
		{"supervisor", "/ui/suspense", 200, []check{{"Pagamentos sem cobrança identificada", "Payments without an identified charge"}, {"R$ 40,00", "R$ 40.00"}, {"pago em 24/09/2026 08:30", "paid on 2026-09-24 08:30"}, {"Aplicar", "Apply"}}},
		{"operator", "/ui/debtors/" + dk, 200, []check{{"Saldo atualizado (tudo)", "Updated balance (all)"}, {"Vencida", "Overdue"}, {"Registrar promessa de pagamento", "Record a promise to pay"}, {"Histórico do devedor", "Debtor history"}}},
		{"operator", "/ui/debtors/" + s.dks[1], 200, []check{{"ligação: falou com o devedor", "call: spoke with the debtor"}}},
		{"operator", "/ui/debtors/" + dk + "?events=C-UI-000/0", 200, []check{{"Contrato cadastrado", "Contract created"}}},
		{"operator", "/ui/debtors", 200, []check{{"CPF, CNPJ, telefone, número do contrato ou chave do devedor", "CPF, CNPJ, phone, contract number or debtor key"}}},
		{"operator", "/ui/debtors?q=11900000003", 200, []check{{"4 devedores encontrados", "4 debtors found"}, {"telefone", "phone"}, {"Abrir visão 360", "Open the 360 view"}}},
		{"operator", "/ui/debtors?q=C-NOPE", 404, []check{{"Nenhum devedor encontrado", "No debtor found"}}},
		{"operator", "/ui/queue?date=2026-09-24", 200, []check{{"Fila de ligações de 24/09/2026", "Call queue for 2026-09-24"}, {"Valor devido", "Amount due"}}},
		{"operator", "/ui/dashboard", 403, []check{{"Acesso negado", "Access denied"}, {"o papel operador(a) não pode abrir esta página", "the role operator cannot open this page"}}},
		{"supervisor", "/ui/agenda?shard=99", 400, []check{{"Dados inválidos", "Invalid data"}, {"a fatia deve ser de 0 a", "the shard must be 0 to"}}},
		{"operator", "/ui/debtors/" + dk + "?events=nope", 400, []check{{"events deve ser", "events must be"}}},
	}
	for _, l := range []string{"pt-BR", "en"} {
		c := map[string]*http.Client{}
		for _, key := range []string{"supervisor", "operator"} {
			c[key] = s.client(t)
			s.login(t, c[key], s.keys[key])
			get(t, c[key], s.URL+"/ui/lang?to="+l)
		}
		for _, p := range pages {
			resp, body := get(t, c[p.key], s.URL+p.path)
			if resp.StatusCode != p.status || !strings.Contains(body, `<html lang="`+l+`">`) {
				t.Errorf("%s %s: %d, want %d in %s", l, p.path, resp.StatusCode, p.status, l)
				continue
			}
			for _, ch := range p.checks {
				want, not := ch.pt, ch.en
				if l == "en" {
					want, not = ch.en, ch.pt
				}
				if !strings.Contains(body, want) || strings.Contains(body, not) {
					t.Errorf("%s %s: want %q and not %q", l, p.path, want, not)
				}
			}
		}
		// A refused form answers in the page's language, the form filled
		// (a contract of its own per language: one promise each).
		i := map[string]int{"pt-BR": 0, "en": 2}[l]
		path := "/ui/debtors/" + s.dks[i]
		_, page := get(t, c["operator"], s.URL+path)
		form := url.Values{"csrf": {csrfOf(t, page)}, "contractId": {fmt.Sprintf("C-UI-%03d", i)}, "promisedDate": {"2026-09-29"}, "amount": {"cento e cinquenta"}}
		resp, body := post(t, c["operator"], s.URL+path+"/promises", form)
		want := map[string]string{"pt-BR": "valor inválido: use reais com até dois decimais", "en": "invalid amount: use reais with up to two decimals"}[l]
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) || !strings.Contains(body, `value="cento e cinquenta"`) {
			t.Errorf("%s refused promise: %d, want 400 with %q and the form filled", l, resp.StatusCode, want)
		}
		// An amount as each language writes it.
		form.Set("amount", map[string]string{"pt-BR": "1.234,56", "en": "1,234.56"}[l])
		if resp, _ := post(t, c["operator"], s.URL+path+"/promises", form); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("%s promise of %s: %d", l, form.Get("amount"), resp.StatusCode)
		}
		_, after := get(t, c["operator"], s.URL+path+"?flash=promise")
		flash := map[string]string{"pt-BR": "Promessa registrada.", "en": "Promise recorded."}[l]
		amount := map[string]string{"pt-BR": "R$ 1.234,56", "en": "R$ 1,234.56"}[l]
		if !strings.Contains(after, flash) || !strings.Contains(after, amount) {
			t.Errorf("%s: the promise's flash %q or amount %q missing", l, flash, amount)
		}
		// The CSV names the buckets in the page's language.
		_, csv := get(t, c["supervisor"], s.URL+"/ui/dashboard.csv")
		if name := map[string]string{"pt-BR": "31–60 dias", "en": "31–60 days"}[l]; !strings.Contains(csv, ","+name+",") {
			t.Errorf("%s CSV:\n%s", l, csv)
		}
		// The other tables write codes and numbers, the same in both.
		if _, csv := get(t, c["supervisor"], s.URL+"/ui/dashboard.csv?table=collectors"); !strings.Contains(csv, ","+s.operatorID()+",1,0,0,1,REACHED,1") {
			t.Errorf("%s collectors CSV:\n%s", l, csv)
		}
	}
}

// TestBrowserSwitchesLanguage: in a browser, the switch on the page turns
// it English (labels and <html lang="en">), the choice holds across
// pages and a login, and the switch back turns it Portuguese again.
func TestBrowserSwitchesLanguage(t *testing.T) {
	t.Parallel()
	s := seed(t, 2)
	ctx := browser(t)
	shot := newShots(t)
	htmlLang := func() string {
		return value(t, ctx, "html lang", chromedp.Evaluate[string](`document.documentElement.lang`))
	}
	text := func(sel string) string { return value(t, ctx, "text of "+sel, chromedp.Text(chromedp.CSS(sel))) }

	run(t, ctx, "login page", chromedp.Navigate(s.URL+"/ui/login"), chromedp.WaitVisible(chromedp.ID("login")))
	if l, label := htmlLang(), text(`label[for=key]`); l != "pt-BR" || label != "Chave de API" {
		t.Fatalf("first visit: lang %q, label %q", l, label)
	}
	run(t, ctx, "switch to English", chromedp.Click(chromedp.ID("lang-en")), chromedp.WaitVisible(chromedp.ID("lang-pt")))
	if l, label := htmlLang(), text(`label[for=key]`); l != "en" || label != "API key" {
		t.Fatalf("after the switch: lang %q, label %q", l, label)
	}
	shot.take(ctx, "login-en")
	run(t, ctx, "log in", chromedp.SendKeys(chromedp.CSS(`input[name=key]`), s.keys["operator"]),
		chromedp.Submit(chromedp.ID("login")), chromedp.WaitVisible(chromedp.ID("queue")))
	if l, h1, nav := htmlLang(), text(`h1`), text(`nav a[href="/ui/debtors"]`); l != "en" || !strings.HasPrefix(h1, "Call queue for ") || nav != "Find a debtor" {
		t.Errorf("queue after login: lang %q, heading %q, nav %q", l, h1, nav)
	}
	run(t, ctx, "debtor page", chromedp.Navigate(s.URL+"/ui/debtors/"+s.dks[0]), chromedp.WaitVisible(chromedp.ID("profile")))
	if got := text(`section.contract dt`); got != "Overdue today" {
		t.Errorf("debtor page in English: first figure %q", got)
	}
	shot.take(ctx, "debtor-en")
	run(t, ctx, "switch back", chromedp.Click(chromedp.ID("lang-pt")), chromedp.WaitVisible(chromedp.ID("lang-en")))
	if loc := location(t, ctx); loc != s.URL+"/ui/debtors/"+s.dks[0] {
		t.Errorf("the switch came back to %s", loc)
	}
	if l, got := htmlLang(), text(`section.contract dt`); l != "pt-BR" || got != "Em atraso hoje" {
		t.Errorf("after switching back: lang %q, first figure %q", l, got)
	}
}
