package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"lastro/boleto"
	"lastro/collections/calendar"
	"lastro/report"
	"lastro/tenant"
)

// boletoCmd: lastro boleto parse [--today D] <linha digitável or barcode>.
func boletoCmd(args []string, stdout, stderr io.Writer, now time.Time) error {
	if len(args) == 0 || args[0] != "parse" {
		fmt.Fprint(stderr, "usage: lastro boleto parse [--today YYYY-MM-DD] <linha digitável | barcode>\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return errors.New("unknown boleto command (lastro boleto parse <linha>)")
	}
	fs := newFlagSet("boleto parse", "[flags] <linha digitável | barcode>", stderr)
	today := fs.String("today", "", "the date the due factor is decoded around (default: today in "+tenant.DefaultTimeZone+")")
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
	due := "none (factor 0000)"
	if d, ok, err := b.DueDate(ref); err != nil {
		return err
	} else if ok {
		due = d.String()
	}
	w := &errWriter{w: stdout}
	w.printf("bank            %s\n", b.Bank)
	w.printf("currency        %c\n", b.Currency)
	w.printf("due date        %s (factor %04d, read around %s)\n", due, b.Factor, ref)
	w.printf("amount          %s (%d cents)\n", report.BRL(b.AmountCents), b.AmountCents)
	w.printf("free field      %s\n", b.FreeField)
	if fields, ok := b.Fields(); ok {
		for _, f := range fields {
			w.printf("  %-13s %s\n", f.Name, f.Value)
		}
	}
	w.printf("barcode         %s\n", b.Barcode())
	w.printf("linha digitável %s\n", b.Line())
	return w.err
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
