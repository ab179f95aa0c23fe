package bacen_test

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"lastro/collections/egress"
	"lastro/psp"
	"lastro/psp/bacen"
)

// recorder is a loopback PSP stand-in that counts every request and
// whether one carried the client's credentials.
type recorder struct {
	srv   *httptest.Server
	hits  atomic.Int32
	creds atomic.Int32
}

func newRecorder(t *testing.T, tls bool, h http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	f := func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		if req.Header.Get("Authorization") != "" || req.URL.Path == "/oauth/token" {
			r.creds.Add(1)
		}
		if h != nil {
			h(w, req)
			return
		}
		http.Error(w, "no", http.StatusTeapot)
	}
	if tls {
		r.srv = httptest.NewTLSServer(http.HandlerFunc(f))
	} else {
		r.srv = httptest.NewServer(http.HandlerFunc(f))
	}
	t.Cleanup(r.srv.Close)
	return r
}

// TestCredentialsNeverGoOverPlainHTTP: with loopback not allowed, a PSP
// whose base or token URL is plain http is refused when the client is
// built, and nothing reaches the server; with loopback allowed it is the
// explicit development opt-in.
func TestCredentialsNeverGoOverPlainHTTP(t *testing.T) {
	t.Parallel()
	plain := newRecorder(t, false, nil)
	for name, cfg := range map[string]bacen.Config{
		"base URL":   {BaseURL: plain.srv.URL},
		"token URL":  {BaseURL: "https://pix.psp.example/api/v2", TokenURL: plain.srv.URL + "/oauth/token"},
		"nil policy": {BaseURL: plain.srv.URL},
	} {
		cfg.ClientID, cfg.ClientSecret, cfg.Chave = "id", "secret", chave
		if name != "nil policy" {
			cfg.Egress = egress.New()
		}
		if _, err := bacen.New(cfg); !errors.Is(err, egress.ErrNotAllowed) {
			t.Errorf("%s: New: %v", name, err)
		}
	}
	if plain.hits.Load() != 0 {
		t.Fatalf("the plain http server got %d requests", plain.hits.Load())
	}
	// The operator allowed loopback: the same PSP is reached.
	c, err := bacen.New(bacen.Config{BaseURL: plain.srv.URL, ClientID: "id", ClientSecret: "secret", Chave: chave,
		Egress: egress.New(egress.AllowLoopback())})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Get(context.Background(), psp.Cob, txid)
	if plain.creds.Load() == 0 {
		t.Fatal("with loopback allowed the token request never came")
	}
}

// TestAPSPNameThatResolvesToLoopbackIsRefusedWhenDialled: a PSP host
// name accepted when set (no IP literal) that resolves to loopback when
// dialled is refused before a connection, the token request first: the
// client secret goes nowhere, and the error is a rejection, not an outage.
func TestAPSPNameThatResolvesToLoopbackIsRefusedWhenDialled(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, true, nil)
	port := srv.srv.URL[strings.LastIndexByte(srv.srv.URL, ':')+1:]
	rebind := egress.Resolver(func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	root := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.srv.Certificate().Raw}))
	c, err := bacen.New(bacen.Config{BaseURL: "https://pix.psp.example:" + port + "/api/v2", ClientID: "id", ClientSecret: "secret",
		Chave: chave, RootCAsPEM: root, Egress: egress.New(rebind)})
	if err != nil {
		t.Fatalf("a public-looking name refused when set: %v", err)
	}
	_, err = c.CreateCob(context.Background(), psp.CobInput{TxID: txid, AmountCents: 100, ExpirationSeconds: 3600})
	if !errors.Is(err, psp.ErrRejected) || !errors.Is(err, egress.ErrNotAllowed) {
		t.Fatalf("dialled: %v", err)
	}
	if srv.hits.Load() != 0 {
		t.Fatalf("the server got %d requests", srv.hits.Load())
	}
}

// TestATokenRedirectToPlainHTTPIsNotFollowed: an allowed (loopback, TLS)
// token endpoint that redirects to plain http does not get the
// credentials re-sent there.
func TestATokenRedirectToPlainHTTPIsNotFollowed(t *testing.T) {
	t.Parallel()
	plain := newRecorder(t, false, nil)
	tlsSrv := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	root := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.srv.Certificate().Raw}))
	c, err := bacen.New(bacen.Config{BaseURL: tlsSrv.srv.URL, ClientID: "id", ClientSecret: "secret", Chave: chave, RootCAsPEM: root,
		Egress: egress.New(egress.AllowLoopback())})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateCob(context.Background(), psp.CobInput{TxID: txid, AmountCents: 100, ExpirationSeconds: 3600}); err == nil {
		t.Fatal("a redirected token request succeeded")
	}
	if tlsSrv.creds.Load() == 0 || plain.hits.Load() != 0 {
		t.Fatalf("tls token requests %d, plain http requests %d (want >0, 0)", tlsSrv.creds.Load(), plain.hits.Load())
	}
}

// TestTrustedSkipsThePolicy: the engine's own sandbox (Trusted) is
// reached over plain loopback http with no policy at all.
func TestTrustedSkipsThePolicy(t *testing.T) {
	t.Parallel()
	plain := newRecorder(t, false, nil)
	c, err := bacen.New(bacen.Config{BaseURL: plain.srv.URL, ClientID: "id", ClientSecret: "secret", Chave: chave, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Get(context.Background(), psp.Cob, txid)
	if plain.hits.Load() == 0 {
		t.Fatal("the trusted PSP was never called")
	}
}
