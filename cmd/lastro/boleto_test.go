package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"lastro/boleto"
	"lastro/collections/calendar"
)

func TestBoletoParseCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string // lines of stdout
	}{
		{"line as five arguments", []string{"boleto", "parse", "--today", "2026-12-01", "00190.00009", "01234.567988", "76543.210173", "1", "15790000102467"},
			[]string{"bank            001", "due date        2026-09-24 (factor 1579, read around 2026-12-01)", "amount          R$ 1.024,67 (102467 cents)",
				"  nossoNumero   12345679876543210", "  carteira      17", "barcode         00191157900001024670000001234567987654321017"}},
		{"barcode, restarted factor", []string{"boleto", "parse", "--today", "2026-12-01", "00191100000001500000000001234567000000000117"},
			[]string{"due date        2025-02-22 (factor 1000, read around 2026-12-01)", "amount          R$ 1.500,00 (150000 cents)",
				"linha digitável 00190.00009 01234.567004 00000.001172 1 10000000150000"}},
		{"the same factor read in 2045", []string{"boleto", "parse", "--today", "2045-01-01", "00191100000001500000000001234567000000000117"},
			[]string{"due date        2049-10-14 (factor 1000, read around 2045-01-01)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), tt.args, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v; stderr %s", err, stderr.String())
			}
			lines := strings.Split(stdout.String(), "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("no line %q in:\n%s", w, stdout.String())
				}
			}
		})
	}
}

func TestBoletoParseCommandRefusesBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no input", []string{"boleto", "parse"}, "needs a linha digitável"},
		{"no subcommand", []string{"boleto"}, "unknown boleto command"},
		{"bad check digit", []string{"boleto", "parse", "00190.00009 01234.567004 00000.001172 2 10000000150000"}, "general check digit"},
		{"letters", []string{"boleto", "parse", "hello"}, "only digits"},
		{"too short", []string{"boleto", "parse", "0019"}, "47 digits"},
		{"bad --today", []string{"boleto", "parse", "--today", "01/12/2026", "00191100000001500000000001234567000000000117"}, "--today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error(), tt.want) || stdout.Len() != 0 {
				t.Fatalf("run = %v, stdout %q; want an error holding %q", err, stdout.String(), tt.want)
			}
		})
	}
	// As a process: one error line, exit 1, no panic.
	code, _, stderr := runChild(t, map[string]string{"LASTRO_DATA_DIR": ":memory:"}, "boleto", "parse", "00190.00009 01234.567004 00000.001172 2 10000000150000")
	failsOnOneLine(t, code, stderr, "the general check digit does not match")
}

// TestBoletoParseOutsideTheWindowAndConvenio8: a valid line whose factor
// names no date of the window around --today is still printed, with a
// note naming the factor's nearest dates; an 8-digit convênio is split
// at 8 when given, and labelled as undecidable when not.
func TestBoletoParseOutsideTheWindowAndConvenio8(t *testing.T) {
	t.Parallel()
	free := "000000" + "12345678" + "100000042" + "17"
	b, err := boleto.New(boleto.BankBB, calendar.MustParse("2026-10-10"), 100, free)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"factor outside its window", []string{"boleto", "parse", "--today", "2034-01-01", "00191100000001500000000001234567000000000117"},
			[]string{"due date        outside the window (factor 1000, read around 2034-01-01)",
				"note            factor 1000 names no date from 3000 days before to 5500 days after 2034-01-01; its nearest dates are 2025-02-22 and 2049-10-14",
				"linha digitável 00190.00009 01234.567004 00000.001172 1 10000000150000"}},
		{"convênio of 8 given", []string{"boleto", "parse", "--today", "2026-10-01", "--convenio", "12345678", b.Barcode()},
			[]string{"  convenio      12345678", "  sequencia     100000042", "  convenioDigits 8"}},
		{"convênio of 8 not given", []string{"boleto", "parse", "--today", "2026-10-01", b.Barcode()},
			[]string{"  nossoNumero   12345678100000042", "  convenioDigits 7 or 8 (the free field does not tell; the convênio does)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), tt.args, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v; stderr %s", err, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains("\n"+stdout.String(), "\n"+w+"\n") {
					t.Errorf("no line %q in:\n%s", w, stdout.String())
				}
			}
		})
	}
}

// TestBoletoRemessaCommandNeedsAKeyAndAVerb: the command refuses to run
// without a key, a verb or a number, before any request.
func TestBoletoRemessaCommandNeedsAKeyAndAVerb(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"boleto", "remessa"}, "needs new, list or get N"},
		{[]string{"boleto", "remessa", "send"}, "LASTRO_API_KEY"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}
