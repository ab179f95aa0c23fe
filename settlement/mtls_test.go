package settlement_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"lastro/engine"
	"lastro/psp"
	"lastro/settlement"
	"lastro/tenant"
)

// issuer is a certificate with its key, to sign others.
type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCert makes a certificate valid from notBefore to notAfter, signed by
// parent (self-signed when nil), a CA when ca, else for the usage given.
func newCert(t *testing.T, parent *issuer, cn string, ca bool, usage x509.ExtKeyUsage, notBefore, notAfter time.Time) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: ca}
	if ca {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = nil
	}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{cert: cert, key: key}
}

func (i *issuer) pem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: i.cert.Raw}))
}

func (i *issuer) tls(t *testing.T) tls.Certificate {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(i.key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair([]byte(i.pem()), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMutualTLSWebhook: the PSP webhook listener applies a BACEN notice
// whose client certificate the tenant trusts — chained to its CA, or
// pinned — with no HMAC header at all, and refuses one from a wrong CA,
// an expired certificate and another tenant's certificate, applying
// nothing. The certificates are made here; their validity is judged on
// the engine's clock.
func TestMutualTLSWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // tenant t-pay, now 2026-09-24 09:00 in São Paulo
	other, _ := f.Tenant(t, "t-other")
	dk := f.contract(t, "C-1", "2026-09-10", 2)
	ch := f.charge(t, dk, "C-1", 1)

	now := f.Clock.Now()
	from, until := now.Add(-24*time.Hour), now.Add(365*24*time.Hour)
	caA := newCert(t, nil, "PSP A client CA", true, 0, from, until)
	pspA := newCert(t, caA, "psp-a", false, x509.ExtKeyUsageClientAuth, from, until)
	expiredA := newCert(t, caA, "psp-a-old", false, x509.ExtKeyUsageClientAuth, now.Add(-60*24*time.Hour), now.Add(-time.Hour))
	stranger := newCert(t, newCert(t, nil, "some CA", true, 0, from, until), "psp-x", false, x509.ExtKeyUsageClientAuth, from, until)
	pinnedB := newCert(t, nil, "psp-b", false, x509.ExtKeyUsageClientAuth, from, until)
	for _, tc := range []struct {
		tn  *tenant.Tenant
		set tenant.WebhookTLS
	}{{f.t, tenant.WebhookTLS{ClientCAsPEM: caA.pem()}}, {other, tenant.WebhookTLS{PinnedCertPEM: pinnedB.pem()}}} {
		if _, err := f.Tenants.SetWebhookTLS(bg, tc.tn, tenant.WebhookTLS{ClientCAsPEM: "x"}); err == nil {
			t.Fatal("webhook TLS before a PSP: accepted")
		}
		tn := tc.tn
		if _, err := f.Tenants.SetPSP(bg, tn, tenant.PSPSettings{BaseURL: "https://pix.psp.example/api/v2", ClientID: "c", ClientSecret: "s",
			Chave: "7d9f0335-8dcc-4054-9bf9-0dbd61d36906"}); err != nil {
			t.Fatal(err)
		}
		tn, err := f.Tenants.Get(bg, tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		view, err := f.Tenants.SetWebhookTLS(bg, tn, tc.set)
		if err != nil {
			t.Fatal(err)
		}
		if tc.set.PinnedCertPEM != "" && len(view.PinnedSHA256) != 1 {
			t.Fatalf("view: %+v", view)
		}
	}

	serverCA := newCert(t, nil, "lastro server CA", true, 0, from, until)
	server := newCert(t, serverCA, "localhost", false, x509.ExtKeyUsageServerAuth, from, until)
	srv := httptest.NewUnstartedServer(f.MutualTLSHandler())
	srv.TLS = engine.WebhookTLSConfig(server.tls(t))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.cert)
	post := func(client *issuer, tenantID, e2e, txid string) (int, string) {
		t.Helper()
		cfg := &tls.Config{RootCAs: roots, ServerName: "localhost"}
		if client != nil {
			cfg.Certificates = []tls.Certificate{client.tls(t)}
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
		body := fmt.Sprintf(`{"pix":[{"endToEndId":%q,"txid":%q,"valor":%q,"horario":%q}]}`, e2e, txid, psp.FormatValor(ch.AmountCents),
			now.UTC().Format(time.RFC3339))
		resp, err := hc.Post(srv.URL+"/v1/webhooks/"+tenantID+"/pix", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	e2e := func(n int) string { return fmt.Sprintf("E00000000202609241200MTLS%07d", n) }
	for i, tt := range []struct {
		name     string
		client   *issuer
		tenantID string
		want     int
	}{
		{"a wrong CA", stranger, f.t.ID, http.StatusUnauthorized},
		{"an expired certificate", expiredA, f.t.ID, http.StatusUnauthorized},
		{"another tenant's certificate", pinnedB, f.t.ID, http.StatusUnauthorized},
		{"a certificate of the tenant's CA on another tenant", pspA, other.ID, http.StatusUnauthorized},
		{"no certificate", nil, f.t.ID, 0},
	} {
		status, raw := post(tt.client, tt.tenantID, e2e(i), ch.ChargeID)
		if status != tt.want || (tt.want != 0 && !strings.Contains(raw, "client_certificate_refused")) {
			t.Errorf("%s: %d %s, want %d", tt.name, status, raw, tt.want)
		}
		if f.stl(t, e2e(i)) != nil {
			t.Errorf("%s: the payment was recorded", tt.name)
		}
	}
	status, raw := post(pspA, f.t.ID, e2e(100), ch.ChargeID)
	if status != http.StatusOK || !strings.Contains(raw, `"status":"applied"`) {
		t.Fatalf("the tenant's PSP: %d %s", status, raw)
	}
	if stl := f.stl(t, e2e(100)); stl == nil || stl.Outcome != settlement.OutcomeApplied || stl.AmountCents != ch.AmountCents {
		t.Fatalf("settlement: %+v", stl)
	}
	if status, raw := post(pspA, f.t.ID, e2e(100), ch.ChargeID); status != http.StatusOK || !strings.Contains(raw, "already_applied") {
		t.Fatalf("again: %d %s", status, raw)
	}
	// A pinned certificate opens its own tenant's webhook (no such charge
	// there: the payment waits in suspense, recorded once).
	if status, raw := post(pinnedB, other.ID, e2e(101), ch.ChargeID); status != http.StatusOK || !strings.Contains(raw, `"unmatched"`) {
		t.Fatalf("pinned: %d %s", status, raw)
	}
}
