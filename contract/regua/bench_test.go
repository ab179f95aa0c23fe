package regua

import (
	"testing"

	"lastro/collections/calendar"
	"lastro/policy"
)

// BenchmarkNext measures one plan of a 24-instalment contract in each
// situation the workers meet most: current, a step owed, a report gated
// on its notice.
func BenchmarkNext(b *testing.B) {
	insts := make([]Installment, 24)
	for i := range insts {
		insts[i] = Installment{Seq: i + 1, Due: calendar.MustParse("2026-08-10").AddMonths(i), Open: true}
	}
	pol, cal := policy.DefaultDunning(), calendar.New()
	for _, bc := range []struct {
		name string
		f    Facts
	}{
		{"current", Facts{Today: calendar.MustParse("2026-08-01")}},
		{"owed-step", Facts{Today: calendar.MustParse("2026-09-20")}},
		{"report-gated", Facts{Today: calendar.MustParse("2026-10-29"),
			Executed: Executed{LastStep: 60, LastAt: calendar.MustParse("2026-10-22"), NoticeAt: calendar.MustParse("2026-10-22")}}},
	} {
		f := bc.f
		f.Installments, f.Policy, f.Calendar = insts, pol, cal
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p := Next(f); p.Action == "" {
					b.Fatal("no action")
				}
			}
		})
	}
}
