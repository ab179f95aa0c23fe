package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for localhost (valid around
// now: the child's clock is the system's) and its key as PEM files in
// dir, and answers them with the pair.
func selfSigned(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string, pair tls.Certificate, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: name}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if pair, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	return certFile, keyFile, pair, cert
}

// TestServeOpensTheMutualTLSWebhookListener: with the listener's
// address, certificate and key, serve answers the Pix webhook over TLS
// only to a client with a certificate, in the API's error shape (a
// tenant never configured: 404 before anything is read).
func TestServeOpensTheMutualTLSWebhookListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, _, serverCert := selfSigned(t, dir, "server", x509.ExtKeyUsageServerAuth)
	_, _, clientPair, _ := selfSigned(t, dir, "client", x509.ExtKeyUsageClientAuth)
	srv := startChild(t, map[string]string{"LASTRO_ADDR": "127.0.0.1:0", "LASTRO_DATA_DIR": ":memory:", "LASTRO_ADMIN_TOKEN": testAdminToken,
		"LASTRO_PSP_WEBHOOK_TLS_ADDR": "127.0.0.1:0", "LASTRO_PSP_WEBHOOK_TLS_CERT": certFile, "LASTRO_PSP_WEBHOOK_TLS_KEY": keyFile,
		"LASTRO_SCHEDULER": "off"}, "PSP webhook listener on mutual TLS: each call's client certificate is checked against its tenant's webhook TLS settings", "serve")
	roots := x509.NewCertPool()
	roots.AddCert(serverCert)
	post := func(certs []tls.Certificate) (*http.Response, error) {
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		return hc.Post("https://"+srv.addr+"/v1/webhooks/t-none/pix", "application/json", strings.NewReader(`{"pix":[]}`))
	}
	if resp, err := post(nil); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate got %d", resp.StatusCode)
	}
	resp, err := post([]tls.Certificate{clientPair})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(raw), `"tenant_not_found"`) {
		t.Fatalf("an unknown tenant: %d %s", resp.StatusCode, raw)
	}
}
