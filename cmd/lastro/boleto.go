package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"lastro/boleto"
	"lastro/collections/calendar"
	"lastro/report"
	"lastro/tenant"
)

// boletoCmd: lastro boleto parse | remessa.
func boletoCmd(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) error {
	if len(args) > 0 && args[0] == "remessa" {
		return remessaCmd(ctx, args[1:], stdout, stderr, http.DefaultClient)
	}
	if len(args) == 0 || args[0] != "parse" {
		fmt.Fprint(stderr, "usage: lastro boleto parse [--today YYYY-MM-DD] [--convenio C] <linha digitável | barcode>\n"+
			"       lastro boleto remessa new|list|get N [--url URL] [--out FILE]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return errors.New("unknown boleto command (lastro boleto parse <linha>, lastro boleto remessa new|list|get N)")
	}
	fs := newFlagSet("boleto parse", "[flags] <linha digitável | barcode>", stderr)
	today := fs.String("today", "", "the date the due factor is decoded around (default: today in "+tenant.DefaultTimeZone+")")
	convenio := fs.String("convenio", "", "the beneficiary's convênio, to split a free field whose layout cannot tell (Banco do Brasil: 7 or 8 digits)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	// The line is often pasted as its five space-separated fields.
	input := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(input) == "" {
		fs.Usage()
		return errors.New("boleto parse needs a linha digitável or a barcode")
	}
	ref, err := referenceDate(*today, now)
	if err != nil {
		return err
	}
	b, err := boleto.Parse(input)
	if err != nil {
		return err
	}
	due, note := "none (factor 0000)", ""
	if d, ok, err := b.DueDate(ref); err != nil {
		// Still a valid line: the factor just names no date of the
		// window (docs/adr/0034), so say which dates it names.
		before, after := boleto.NearestDatesOfFactor(b.Factor, ref)
		due = "outside the window"
		note = fmt.Sprintf("note            factor %04d names no date from %d days before to %d days after %s; its nearest dates are %s and %s\n",
			b.Factor, boleto.PastDays, boleto.FutureDays, ref, orNone(before), orNone(after))
	} else if ok {
		due = d.String()
	}
	w := &errWriter{w: stdout}
	w.printf("bank            %s\n", b.Bank)
	w.printf("currency        %c\n", b.Currency)
	w.printf("due date        %s (factor %04d, read around %s)\n", due, b.Factor, ref)
	w.printf("%s", note)
	w.printf("amount          %s (%d cents)\n", report.BRL(b.AmountCents), b.AmountCents)
	w.printf("free field      %s\n", b.FreeField)
	fields, ok := b.Fields()
	if *convenio != "" {
		carteira := ""
		if len(fields) > 0 {
			carteira = fieldValue(fields, "carteira")
		}
		l, err := boleto.LayoutFor(boleto.Agreement{Bank: b.Bank, Convenio: *convenio, Carteira: carteira})
		if err != nil {
			return fmt.Errorf("--convenio: %w", err)
		}
		if f, err := l.Fields(b.FreeField); err == nil {
			fields, ok = f, true
		}
	}
	if ok {
		for _, f := range fields {
			w.printf("  %-13s %s\n", f.Name, f.Value)
		}
	}
	w.printf("barcode         %s\n", b.Barcode())
	w.printf("linha digitável %s\n", b.Line())
	return w.err
}

func orNone(d calendar.Date) string {
	if d.IsZero() {
		return "none"
	}
	return d.String()
}

func fieldValue(fields []boleto.Field, name string) string {
	for _, f := range fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

func referenceDate(flagValue string, now time.Time) (calendar.Date, error) {
	if flagValue != "" {
		d, err := calendar.Parse(flagValue)
		if err != nil {
			return calendar.Date{}, fmt.Errorf("--today %q is not a date YYYY-MM-DD", flagValue)
		}
		return d, nil
	}
	loc, err := time.LoadLocation(tenant.DefaultTimeZone)
	if err != nil {
		return calendar.Date{}, err
	}
	return calendar.Today(now, loc), nil
}

// remessaCmd talks to a running engine's API with a supervisor's key: the
// shipping files hold payers' data sealed under the engine's key, which
// only the engine opens, and the API is where their numbering is
// conditioned (docs/adr/0072).
func remessaCmd(ctx context.Context, args []string, stdout, stderr io.Writer, client *http.Client) error {
	fs := newFlagSet("boleto remessa", "new | list | get N", stderr)
	base := fs.String("url", envOr("LASTRO_API_URL", "http://127.0.0.1:8080"), "the engine's API (LASTRO_API_URL)")
	out := fs.String("out", "", "get: write the file here instead of standard output")
	if len(args) == 0 {
		fs.Usage()
		return errors.New("boleto remessa needs new, list or get N")
	}
	verb, rest := args[0], args[1:]
	var number string
	if verb == "get" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		number, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if verb == "get" && number == "" && fs.NArg() > 0 {
		number = fs.Arg(0)
	}
	key := os.Getenv("LASTRO_API_KEY")
	if key == "" {
		return errors.New("boleto remessa needs a supervisor's API key in LASTRO_API_KEY")
	}
	var method, path string
	switch verb {
	case "new":
		method, path = http.MethodPost, "/v1/boleto/remessas"
	case "list":
		method, path = http.MethodGet, "/v1/boleto/remessas"
	case "get":
		if n, err := strconv.Atoi(number); err != nil || n < 1 {
			return errors.New("boleto remessa get needs the file's number")
		}
		method, path = http.MethodGet, "/v1/boleto/remessas/"+number
	default:
		return fmt.Errorf("unknown boleto remessa command %q (new, list, get N)", verb)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(*base, "/")+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if verb == "new" {
		// One shipping file per run, even when the request is retried.
		req.Header.Set("Idempotency-Key", "cli-remessa-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("boleto remessa: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("boleto remessa: %w", err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("boleto remessa: the API answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if verb == "get" && *out != "" {
		if err := os.WriteFile(*out, body, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s (%d bytes, sha256 %s)\n", *out, len(body), resp.Header.Get("X-Lastro-Remessa-Sha256"))
		return nil
	}
	_, err = stdout.Write(body)
	return err
}

// errWriter keeps the first write error, so a closed stdout is reported
// once instead of checked on every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// envOr is the environment variable's value, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
