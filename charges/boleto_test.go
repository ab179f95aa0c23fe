package charges_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"lastro/charges"
)

// remessaLines fetches shipping file n and splits it into its records,
// checking each is 240 characters ended by CR LF.
func remessaLines(t *testing.T, get func() (int, string)) []string {
	t.Helper()
	status, raw := get()
	if status != http.StatusOK || !strings.HasSuffix(raw, "\r\n") {
		t.Fatalf("remessa: %d %.200q", status, raw)
	}
	lines := strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n")
	for i, l := range lines {
		if len(l) != 240 {
			t.Fatalf("line %d has %d characters", i+1, len(l))
		}
	}
	return lines
}

func segments(lines []string, seg byte) []string {
	var out []string
	for _, l := range lines {
		if l[7] == '3' && l[13] == seg {
			out = append(out, l)
		}
	}
	return out
}

// TestRemessaRegistersIssuedAndCancelledBoletos: two boletos issued make
// shipping file 1 with one segment P each (movement 01), the payer's name
// in Q without accents; asking for file 1 again answers the same bytes and
// the charges say SENT in file 1. Then a boleto cancelled after shipping
// goes in file 2 as a withdrawal (02), and one cancelled before any file
// is not shipped at all. Nothing pending is 422; only a supervisor writes
// files.
func TestRemessaRegistersIssuedAndCancelledBoletos(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC)
	env, keys, dk, first := issueOver(t, at, charges.BOLETO)
	op, sup := keys["operator"], keys["supervisor"]
	if reg, _ := first["registration"].(map[string]any); reg["status"] != charges.RegistrationPending || reg["bank"] != "001" {
		t.Fatalf("a new boleto's registration %v", first["registration"])
	}
	status, second := env.Do(t, http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":2,"method":"BOLETO"}`, dk))
	if status != http.StatusCreated {
		t.Fatalf("second boleto: %d %v", status, second)
	}
	if status, _ := env.Do(t, http.MethodPost, "/v1/boleto/remessas", op, ""); status != http.StatusForbidden {
		t.Fatalf("operator remessa: %d", status)
	}
	status, file := env.Do(t, http.MethodPost, "/v1/boleto/remessas", sup, "")
	if status != http.StatusCreated || file["number"] != float64(1) || file["titles"] != float64(2) || file["entries"] != float64(2) ||
		file["fileName"] != "CB001000001.REM" {
		t.Fatalf("remessa 1: %d %v", status, file)
	}
	get := func(n int) func() (int, string) {
		return func() (int, string) {
			return env.Raw(t, http.MethodGet, fmt.Sprintf("/v1/boleto/remessas/%d", n), sup, "")
		}
	}
	lines := remessaLines(t, get(1))
	_, again := get(1)()
	if strings.Join(lines, "\r\n")+"\r\n" != again {
		t.Fatal("file 1 asked again answered other bytes")
	}
	ps := segments(lines, 'P')
	if len(ps) != 2 || len(segments(lines, 'Q')) != 2 || len(segments(lines, 'R')) != 2 || len(lines) != 2*3+4 {
		t.Fatalf("segments of file 1: %d P in %d lines", len(ps), len(lines))
	}
	// Oldest first; two issued at the same instant go by nosso número.
	shipped := map[string]bool{}
	for _, p := range ps {
		if p[15:17] == "01" {
			shipped[strings.TrimSpace(p[37:57])] = true
		}
	}
	if !shipped[first["chargeId"].(string)] || !shipped[second["chargeId"].(string)] {
		t.Errorf("P segments %q", ps)
	}
	if q := segments(lines, 'Q')[0]; !strings.HasPrefix(q[33:73], "PESSOA SINTETICA") {
		t.Errorf("payer in Q: %q", q[33:73])
	}
	if status, out := env.Do(t, http.MethodPost, "/v1/boleto/remessas", sup, ""); status != http.StatusUnprocessableEntity ||
		out["error"].(map[string]any)["code"] != "no_pending_registrations" {
		t.Fatalf("nothing pending: %d %v", status, out)
	}
	status, view := env.Do(t, http.MethodGet, "/v1/charges/"+first["chargeId"].(string), op, "")
	if reg, _ := view["registration"].(map[string]any); status != http.StatusOK || reg["status"] != charges.RegistrationSent || reg["file"] != float64(1) ||
		view["linhaDigitavel"] != first["linhaDigitavel"] {
		t.Fatalf("charge after file 1: %d %v", status, view)
	}

	// Withdrawn after shipping: a pedido de baixa in the next file. A
	// third boleto cancelled before any file never reaches the bank.
	if status, out := env.Do(t, http.MethodDelete, "/v1/charges/"+first["chargeId"].(string), sup, ""); status != http.StatusOK ||
		out["status"] != charges.StatusCancelled {
		t.Fatalf("cancel: %d %v", status, out)
	}
	status, third := env.Do(t, http.MethodPost, "/v1/charges", op, fmt.Sprintf(`{"debtorKey":%q,"contractId":"C-1","seq":2,"method":"BOLETO"}`, dk))
	if status != http.StatusCreated {
		t.Fatalf("third boleto: %d %v", status, third)
	}
	if status, out := env.Do(t, http.MethodDelete, "/v1/charges/"+third["chargeId"].(string), sup, ""); status != http.StatusOK {
		t.Fatalf("cancel unshipped: %d %v", status, out)
	}
	if status, out := env.Do(t, http.MethodDelete, "/v1/charges/"+third["chargeId"].(string), sup, ""); status != http.StatusOK ||
		out["alreadyCancelled"] != true {
		t.Fatalf("cancel again: %d %v", status, out)
	}
	status, file2 := env.Do(t, http.MethodPost, "/v1/boleto/remessas", sup, "")
	if status != http.StatusCreated || file2["number"] != float64(2) || file2["titles"] != float64(1) || file2["cancels"] != float64(1) {
		t.Fatalf("remessa 2: %d %v", status, file2)
	}
	ps = segments(remessaLines(t, get(2)), 'P')
	if len(ps) != 1 || ps[0][15:17] != "02" || strings.TrimSpace(ps[0][37:57]) != first["chargeId"] {
		t.Fatalf("file 2: %q", ps)
	}
	status, list := env.Do(t, http.MethodGet, "/v1/boleto/remessas", sup, "")
	if items, _ := list["items"].([]any); status != http.StatusOK || len(items) != 2 || items[0].(map[string]any)["number"] != float64(2) {
		t.Fatalf("list: %d %v", status, list)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/boleto/remessas/9", sup, ""); status != http.StatusNotFound {
		t.Fatalf("file 9: %d", status)
	}
	if status, _ := env.Do(t, http.MethodGet, "/v1/boleto/remessas/x", sup, ""); status != http.StatusBadRequest {
		t.Fatalf("file x: %d", status)
	}
}

// TestBoletoSlip: a boleto's slip is a PDF printing its linha digitável;
// it has no QR (422 no_br_code).
func TestBoletoSlip(t *testing.T) {
	t.Parallel()
	env, keys, _, ch := issueOver(t, time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC), charges.BOLETO)
	status, raw := env.Raw(t, http.MethodGet, "/v1/charges/"+ch["chargeId"].(string)+"/slip.pdf", keys["operator"], "")
	if status != http.StatusOK || !strings.HasPrefix(raw, "%PDF-") || !strings.Contains(raw, ch["linhaDigitavel"].(string)) {
		t.Fatalf("slip: %d %.80q", status, raw)
	}
	if status, _ := env.Raw(t, http.MethodGet, "/v1/charges/"+ch["chargeId"].(string)+"/qr.png", keys["operator"], ""); status != http.StatusUnprocessableEntity {
		t.Fatalf("qr of a boleto: %d", status)
	}
	if status, _ := env.Raw(t, http.MethodGet, "/v1/charges/nope/slip.pdf", keys["operator"], ""); status != http.StatusNotFound {
		t.Fatalf("slip of nothing: %d", status)
	}
}

// TestPixQRAndSlip: a Pix charge's QR image decodes to its BR Code, and
// its slip is a PDF with the QR.
func TestPixQRAndSlip(t *testing.T) {
	t.Parallel()
	e := newPixEnv(t, "", "")
	status, ch := e.issue(t, time.Date(2026, 9, 24, 13, 0, 0, 0, time.UTC), "")
	if status != http.StatusCreated || ch["pixCopiaECola"] == "" {
		t.Fatalf("pix: %d %v", status, ch)
	}
	id := ch["chargeId"].(string)
	status, raw := e.Raw(t, http.MethodGet, "/v1/charges/"+id+"/qr.png", e.keys["operator"], "")
	if status != http.StatusOK {
		t.Fatalf("qr: %d %s", status, raw)
	}
	img, err := png.Decode(bytes.NewReader([]byte(raw)))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	if err != nil || got.GetText() != ch["pixCopiaECola"] {
		t.Fatalf("the QR reads %v %v, want the BR Code", got, err)
	}
	status, raw = e.Raw(t, http.MethodGet, "/v1/charges/"+id+"/slip.pdf", e.keys["operator"], "")
	if status != http.StatusOK || !strings.HasPrefix(raw, "%PDF-") || !strings.Contains(raw, "/Subtype /Image") {
		t.Fatalf("pix slip: %d %.80q", status, raw)
	}
}
