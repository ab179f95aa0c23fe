package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/contract"
	"lastro/debtor"
	"lastro/engine"
	"lastro/tenant"
)

// demoProducts are the synthetic portfolio's products: code, instalments,
// principal range per instalment (cents) and monthly interest share.
var demoProducts = []struct {
	code          string
	installments  int
	minCents      int64
	maxCents      int64
	interestShare float64
}{
	{"CREDIARIO_12X", 12, 8_000, 60_000, 0.18},
	{"CARTAO_LOJA_6X", 6, 5_000, 30_000, 0.12},
	{"CDC_24X", 24, 20_000, 150_000, 0.25},
	{"CONSIGNADO_48X", 48, 15_000, 90_000, 0.10},
}

var demoFirstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Elisa", "Fábio", "Gabriela", "Heitor", "Iara", "João",
	"Larissa", "Marcos", "Natália", "Otávio", "Paula", "Rafael", "Sofia", "Tiago", "Vera", "Wagner"}

// demoCmd: lastro demo seed --tenant t-demo --debtors N.
func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "seed" {
		fmt.Fprint(stderr, "usage: lastro demo seed --tenant ID --debtors N [--seed S] [engine flags]\n")
		if len(args) > 0 && isHelp(args[0]) {
			return flag.ErrHelp
		}
		return fmt.Errorf("unknown demo command (lastro demo seed -h lists its flags)")
	}
	// One flag set: the demo's own flags and the engine's.
	fs := newFlagSet("demo seed", "--tenant ID --debtors N [--seed S] [flags]", stderr)
	tenantID := fs.String("tenant", "t-demo", "tenant to seed (created when missing; its API keys are printed once)")
	n := fs.Int("debtors", 100, "number of synthetic debtors")
	seed := fs.Uint64("seed", 1, "random seed (the same seed builds the same portfolio)")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if *n < 1 || *n > 1_000_000 {
		return fmt.Errorf("--debtors must be 1-1000000")
	}
	e, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer e.Close()
	return seedDemo(ctx, e.Engine, *tenantID, *n, *seed, stdout, stderr)
}

// seedDemo builds a synthetic portfolio through the services — the same
// code paths as the API: valid generated CPFs, names that say they are
// synthetic, mixed products, 0-180 days late. It is resumable: debtors and
// contracts that already exist are skipped.
func seedDemo(ctx context.Context, e *engine.Engine, tenantID string, n int, seed uint64, stdout, stderr io.Writer) error {
	t, err := e.Tenants.Get(ctx, tenantID)
	if errs.Is(err, errs.NotFound) {
		created, cerr := e.Tenants.Create(ctx, tenant.CreateInput{TenantID: tenantID, Name: "Demo " + tenantID})
		if cerr != nil {
			return cerr
		}
		fmt.Fprintf(stdout, "tenant %s created; API keys (shown once):\n", tenantID)
		for _, role := range []string{"operator", "supervisor", "compliance"} {
			fmt.Fprintf(stdout, "  %-10s %s\n", role, created.APIKeys[role])
		}
		fmt.Fprintf(stdout, "  webhook    %s\n", created.WebhookSecret)
		t, err = e.Tenants.Get(ctx, tenantID)
	}
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x1a57))
	today := calendar.Today(e.Clock.Now(), t.Location)
	actor := debtor.Actor{Role: "system:demo-seed"}
	bar := progressbar.NewOptions(n, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("seeding debtors"),
		progressbar.OptionShowCount(), progressbar.OptionSetItsString("debtors"), progressbar.OptionShowIts(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(200*time.Millisecond))
	contracts, late := 0, 0
	for i := range n {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "\ninterrupted after %d debtors; run again to resume\n", i)
			return err
		}
		doc := debtor.GenerateCPF(rng)
		in := debtor.RegisterInput{Document: doc.Formatted(),
			Name:  fmt.Sprintf("%s Sintético %06d", demoFirstNames[rng.IntN(len(demoFirstNames))], i+1),
			Phone: fmt.Sprintf("+55 11 90000-%04d", i%10000), Email: fmt.Sprintf("demo-%06d@example.invalid", i+1)}
		reg, err := e.Debtors.Register(ctx, t, in, actor)
		if err != nil {
			return fmt.Errorf("debtor %d: %w", i+1, err)
		}
		for c := range 1 + rng.IntN(2) {
			p := demoProducts[rng.IntN(len(demoProducts))]
			// 40 % current (first due date ahead), 60 % 1-180 days late.
			var first calendar.Date
			if rng.IntN(10) < 4 {
				first = today.AddDays(1 + rng.IntN(30))
			} else {
				first = today.AddDays(-(1 + rng.IntN(180)))
			}
			principal := p.minCents + rng.Int64N(p.maxCents-p.minCents)
			interest := int64(float64(principal) * p.interestShare)
			ci := contract.Input{ContractID: fmt.Sprintf("DEMO-%06d-%d", i+1, c+1), ProductCode: p.code}
			for s := range p.installments {
				ci.Installments = append(ci.Installments, contract.InstallmentInput{Seq: s + 1, DueDate: first.AddMonths(s).String(),
					PrincipalCents: contract.Cents(principal), InterestCents: contract.Cents(interest)})
			}
			out, err := e.Contracts.Create(ctx, t, reg.DebtorKey, ci, actor)
			if errs.Is(err, errs.Conflict) {
				continue // seeded by an earlier run
			}
			if err != nil {
				return fmt.Errorf("contract %s: %w", ci.ContractID, err)
			}
			contracts++
			if out.Bucket != nil {
				late++
			}
		}
		if err := bar.Add(1); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			return err
		}
	}
	fmt.Fprintf(stdout, "seeded %d debtors and %d new contracts (%d delinquent) in tenant %s, as of %s\n", n, contracts, late, tenantID, today)
	return nil
}
