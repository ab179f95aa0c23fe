package bacen_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"lastro/collections/calendar"
	"lastro/collections/clock"
	"lastro/collections/egress"
	"lastro/collections/signature"
	"lastro/pix/brcode"
	"lastro/psp"
	"lastro/psp/bacen"
	"lastro/psp/psptest"
	"lastro/psp/sandbox"
)

const chave = "7d9f0335-8dcc-4054-9bf9-0dbd61d36906"

// clientCert is a self-signed client certificate and its key, PEM.
func clientCert(t *testing.T) (certPEM, keyPEM string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lastro tenant"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})), cert
}

// fixture is a sandbox behind TLS that requires a client certificate,
// and the PEMs a client needs to reach it.
type fixture struct {
	sb               *sandbox.Sandbox
	srv              *httptest.Server
	cfg              bacen.Config
	clk              *clock.Manual
	mu               sync.Mutex
	hooks            []*http.Request
	bodies           []string
	hookSrv          *httptest.Server
	webhookSecretKey string
	// rec is the recording PSP in front of the sandbox, nil when the Pix
	// API document is absent (the checks against it are then skipped).
	rec *psptest.Recorder
}

// debtor is a synthetic payer (a CPF with valid check digits).
var debtor = &psp.Devedor{CPF: "52998224725", Nome: "Pessoa Sintetica"}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clk: clock.NewManual(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)), webhookSecretKey: "whsec_test"}
	f.hookSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.hooks, f.bodies = append(f.hooks, r), append(f.bodies, string(b))
		f.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(f.hookSrv.Close)
	f.sb = sandbox.New(sandbox.Options{ClientID: "tenant-client", ClientSecret: "s3cret", WebhookSecret: f.webhookSecretKey, Clock: f.clk})
	certPEM, keyPEM, cert := clientCert(t)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	var h http.Handler = f.sb.Handler()
	if spec := psptest.LoadIfPresent(t); spec != nil {
		f.rec = spec.Strict(t, "", h)
		h = f.rec
	}
	f.srv = httptest.NewUnstartedServer(h)
	f.srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	f.sb.SetBaseURL(f.srv.URL)
	root := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw}))
	// The PSP is an httptest server on loopback: allowed explicitly.
	f.cfg = bacen.Config{BaseURL: f.srv.URL, ClientID: "tenant-client", ClientSecret: "s3cret", CertPEM: certPEM, KeyPEM: keyPEM,
		RootCAsPEM: root, Chave: chave, Egress: egress.New(egress.AllowLoopback())}
	return f
}

func (f *fixture) client(t *testing.T, edit func(*bacen.Config)) *bacen.Client {
	t.Helper()
	cfg := f.cfg
	if edit != nil {
		edit(&cfg)
	}
	c, err := bacen.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const txid = "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF"

func TestCobOverMutualTLS(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, nil)
	ctx := context.Background()
	ch, err := c.CreateCob(ctx, psp.CobInput{TxID: txid, AmountCents: 102467, ExpirationSeconds: 86400})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status != psp.StatusActive || ch.AmountCents != 102467 || ch.TxID != txid || ch.Kind != psp.Cob || ch.Raw.Chave != chave {
		t.Fatalf("cob: %+v", ch)
	}
	code, err := brcode.Parse(ch.PixCopiaECola)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(f.srv.URL, "https://")
	if !code.Dynamic || code.URL != ch.Location || !strings.HasPrefix(code.URL, host+"/qr/v2/") || code.AmountCents != 102467 {
		t.Fatalf("code %+v for %+v", code, ch)
	}
	// The location answers the charge, as a banking app reads it.
	resp, err := f.srv.Client().Get("https://" + code.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the location answered a client without certificate: %d", resp.StatusCode)
	}
	// Overwriting is a new revision of the same charge.
	again, err := c.CreateCob(ctx, psp.CobInput{TxID: txid, AmountCents: 100000, ExpirationSeconds: 3600})
	if err != nil || again.Revision != 1 || again.AmountCents != 100000 || again.Location != ch.Location {
		t.Fatalf("overwrite: %+v %v", again, err)
	}
	got, err := c.Get(ctx, psp.Cob, txid)
	if err != nil || got.AmountCents != 100000 || got.Raw.Calendario.Expiracao != 3600 {
		t.Fatalf("get: %+v %v", got, err)
	}
	removed, err := c.Cancel(ctx, psp.Cob, txid)
	if err != nil || removed.Status != psp.StatusRemoved {
		t.Fatalf("cancel: %+v %v", removed, err)
	}
	if _, err := c.Cancel(ctx, psp.Cob, txid); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("second cancel: %v", err)
	}
	if _, err := c.Get(ctx, psp.CobV, txid); !errors.Is(err, psp.ErrNotFound) {
		t.Fatalf("get a cobv that is a cob: %v", err)
	}
	if _, err := c.CreateCob(ctx, psp.CobInput{TxID: "short", AmountCents: 1, ExpirationSeconds: 60}); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("bad txid: %v", err)
	}
	// A refusal names the route, never the Pix key in the webhook's path.
	if err := c.RegisterWebhook(ctx, "ftp://nowhere"); !errors.Is(err, psp.ErrRejected) || strings.Contains(err.Error(), chave) ||
		!strings.Contains(err.Error(), "/webhook/{chave}") {
		t.Fatalf("bad webhook: %v", err)
	}
}

func TestCredentialsAndCertificateAreRequired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		edit func(*bacen.Config)
		want error
	}{
		{"wrong client secret", func(c *bacen.Config) { c.ClientSecret = "nope" }, psp.ErrRejected},
		{"no client certificate", func(c *bacen.Config) { c.CertPEM, c.KeyPEM = "", "" }, psp.ErrUnavailable},
		{"untrusted server", func(c *bacen.Config) { c.RootCAsPEM = "" }, psp.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.client(t, tt.edit).CreateCob(ctx, psp.CobInput{TxID: txid, AmountCents: 100, ExpirationSeconds: 3600})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	for _, cfg := range []bacen.Config{{}, {BaseURL: "https://x", ClientID: "a", ClientSecret: "b", Chave: "k", CertPEM: "x"},
		{BaseURL: "https://x", ClientID: "a", ClientSecret: "b", Chave: "k", CertPEM: "x", KeyPEM: "y"}} {
		if _, err := bacen.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestCobVCarriesFineAndInterestAndPaysLate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t, nil)
	ctx := context.Background()
	due := calendar.MustParse("2026-09-10")
	in := psp.CobVInput{TxID: txid, AmountCents: 100000, DueDate: due, ValidAfterDueDays: 30,
		FinePercent: decimal.RequireFromString("2"), InterestMonthly: decimal.RequireFromString("1.00"), Debtor: debtor}
	ch, err := c.CreateCobV(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	v := ch.Raw.Valor
	if v.Multa == nil || *v.Multa != (psp.Modalidade{Modalidade: 2, ValorPerc: "2.00"}) || v.Juros == nil ||
		*v.Juros != (psp.Modalidade{Modalidade: 3, ValorPerc: "1.00"}) || ch.Raw.Calendario.DataDeVencimento != "2026-09-10" {
		t.Fatalf("cobv: %+v", ch.Raw)
	}
	code, err := brcode.Parse(ch.PixCopiaECola)
	if err != nil || code.AmountCents != 0 || code.URL != ch.Location {
		t.Fatalf("a cobv's code has no amount: %+v %v", code, err)
	}
	for _, tt := range []struct {
		pay  string
		want int64
	}{
		{"2026-09-10", 100000},             // on the due date
		{"2026-09-12", 100000 + 2000 + 67}, // 2 days: 1 % a month / 30 × 2 = 66.67 → 67
		{"2026-10-10", 100000 + 2000 + 1000},
	} {
		got, err := sandbox.Due(psp.CobV, *ch.Raw, calendar.MustParse(tt.pay))
		if err != nil || got != tt.want {
			t.Errorf("Due on %s = %d, %v; want %d", tt.pay, got, err, tt.want)
		}
	}
	if _, err := sandbox.Due(psp.CobV, *ch.Raw, calendar.MustParse("2026-10-11")); err == nil {
		t.Error("paid past validadeAposVencimento: accepted")
	}
	// A percent the API cannot carry is refused before any call.
	in.InterestMonthly = decimal.RequireFromString("0.333")
	if _, err := c.CreateCobV(ctx, in); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("three decimals: %v", err)
	}

	// Paid two days late through the sandbox: the webhook, signed with our
	// HMAC, carries the amount the PSP computed.
	if err := c.RegisterWebhook(ctx, f.hookSrv.URL+"/v1/webhooks/t-1"); err != nil {
		t.Fatal(err)
	}
	f.clk.Set(time.Date(2026, 9, 12, 15, 0, 0, 0, time.UTC))
	paid := post(t, f, "/sandbox/pay", `{"txid":"`+txid+`"}`)
	if paid.WebhookStatus != http.StatusOK || paid.Payment.Valor != "1020.67" || len(paid.Payment.EndToEndID) != 32 ||
		!strings.HasPrefix(paid.Payment.EndToEndID, "E") || paid.Payment.Chave != chave || paid.WebhookURL != f.hookSrv.URL+"/v1/webhooks/t-1/pix" {
		t.Fatalf("paid: %+v", paid)
	}
	again := post(t, f, "/sandbox/redeliver", `{"endToEndId":"`+paid.Payment.EndToEndID+`"}`)
	if !reflect.DeepEqual(again.Payment, paid.Payment) {
		t.Fatalf("redelivered %+v, first %+v", again.Payment, paid.Payment)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.hooks) != 2 || f.bodies[0] != f.bodies[1] {
		t.Fatalf("webhooks: %v", f.bodies)
	}
	for i, r := range f.hooks {
		if r.URL.Path != "/v1/webhooks/t-1/pix" {
			t.Errorf("path %s", r.URL.Path)
		}
		err := signature.Verify(f.webhookSecretKey, r.Header.Get(signature.TimestampHeader), r.Header.Get(signature.SignatureHeader),
			[]byte(f.bodies[i]), f.clk.Now())
		if err != nil {
			t.Errorf("signature: %v", err)
		}
	}
	var n psp.Notice
	if err := json.Unmarshal([]byte(f.bodies[0]), &n); err != nil || len(n.Pix) != 1 || n.Pix[0].TxID != txid ||
		n.Pix[0].Horario != "2026-09-12T15:00:00Z" {
		t.Fatalf("notice: %s", f.bodies[0])
	}
	got, err := c.Get(ctx, psp.CobV, txid)
	if err != nil || got.Status != psp.StatusPaid || len(got.Payments) != 1 || !reflect.DeepEqual(got.Payments[0], paid.Payment) {
		t.Fatalf("after payment: %+v %v", got, err)
	}
	// A paid charge cannot be removed: the PSP refuses the PATCH.
	if _, err := c.Cancel(ctx, psp.CobV, txid); !errors.Is(err, psp.ErrRejected) {
		t.Fatalf("cancel a paid charge: %v", err)
	}
}

func post(t *testing.T, f *fixture, path, body string) sandbox.Paid {
	t.Helper()
	// The sandbox's own routes are reached with the client certificate too.
	cert, err := tls.X509KeyPair([]byte(f.cfg.CertPEM), []byte(f.cfg.KeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	hc := f.srv.Client()
	hc.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{cert}
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.sb.OperatorToken())
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out sandbox.Paid
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
	}
	return out
}

// TestARefusalNamesTheProblemNotItsTitle: a PSP's problem title and detail
// may repeat what it was sent (the Pix key, a payer's name); the error
// keeps only the catalogue's type.
func TestARefusalNamesTheProblemNotItsTitle(t *testing.T) {
	t.Parallel()
	const leak = "chave 12345678909 de Maria Silva"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida","title":"` + leak + `","status":400,"detail":"` + leak + `"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := bacen.New(bacen.Config{BaseURL: srv.URL, ClientID: "id", ClientSecret: "secret", Chave: "7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
		Egress: egress.New(egress.AllowLoopback())})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateCob(context.Background(), psp.CobInput{TxID: "abcdefghijklmnopqrstuvwxyz012345", AmountCents: 1000, ExpirationSeconds: 3600})
	if !errors.Is(err, psp.ErrRejected) || !strings.Contains(err.Error(), "CobOperacaoInvalida") ||
		strings.Contains(err.Error(), "12345678909") || strings.Contains(err.Error(), "Maria") {
		t.Fatalf("refusal: %v", err)
	}
}
