package tenant

import (
	"context"
	"errors"
	"testing"
	"time"

	"lastro/collections/clock"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/collections/secret"
	"lastro/collections/table"
	"lastro/ddblocal/ddbtest"
)

func TestSetBoleto(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := ddbtest.New(t)
	if _, err := table.Ensure(ctx, db, "lastro"); err != nil {
		t.Fatal(err)
	}
	s := NewService(kit.New(db, "lastro"), must2(secret.New(secret.Random(32))), clock.NewManual(time.Date(2026, 9, 24, 12, 0, 0, 0, time.UTC)), 16)
	if _, err := s.Create(ctx, CreateInput{TenantID: "t-bol", Name: "Bol"}); err != nil {
		t.Fatal(err)
	}
	tn, err := s.Get(ctx, "t-bol")
	if err != nil || tn.Boleto() != DefaultBoleto || !tn.Boleto().Default {
		t.Fatalf("fresh tenant: %v %+v", err, tn.Boleto())
	}
	for _, tt := range []struct {
		in   BoletoSettings
		code string
	}{
		{BoletoSettings{Bank: "237", Convenio: "7654321", Carteira: "09"}, "unsupported_bank"},
		{BoletoSettings{Bank: "001", Convenio: "765432", Carteira: "17"}, "invalid_boleto_settings"},
		{BoletoSettings{Bank: "001", Convenio: "0654321", Carteira: "17"}, "invalid_boleto_settings"},
		{BoletoSettings{Bank: "001", Convenio: "7654321", Carteira: "7"}, "invalid_boleto_settings"},
		{BoletoSettings{Bank: "001", Convenio: "76543a1", Carteira: "17"}, "invalid_boleto_settings"},
	} {
		_, err := s.SetBoleto(ctx, tn, tt.in)
		var e *errs.Error
		if !errs.Is(err, errs.Invalid) || !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("%+v: %v, want %s", tt.in, err, tt.code)
		}
	}
	want := BoletoSettings{Bank: "001", Convenio: "7654321", Carteira: "18"}
	if out, err := s.SetBoleto(ctx, tn, want); err != nil || *out != want {
		t.Fatalf("set: %+v %v", out, err)
	}
	// A stale tenant loses the race instead of overwriting.
	if _, err := s.SetBoleto(ctx, tn, BoletoSettings{Bank: "001", Convenio: "1111111", Carteira: "17"}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("stale write: %v", err)
	}
	got, err := s.Get(ctx, "t-bol")
	if err != nil || got.Boleto() != want {
		t.Fatalf("reloaded: %v %+v", err, got.Boleto())
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
