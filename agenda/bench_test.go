package agenda_test

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"lastro/agenda"
	"lastro/collections/calendar"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/engine/enginetest"
)

// BenchmarkAgendaRun times one agenda run over due=N entries spread over
// the tenant's 16 shards, on the embedded store with a data directory
// (Pebble, synced commits, as lastro serve runs). Every entry is a
// contract whose first instalment fell due the day before yesterday's
// business day: a DUE_CHECK that makes it delinquent and runs the first
// régua step (SMS_D1) in the same write — load, contact claim (profile
// read, LIMIT counter, evidence), header and event transaction, delivery
// to the file outbox, outcome. Seeding goes through the services, on
// parallel goroutines, outside the timer; each iteration seeds its own
// tenant so the run always finds N due entries.
//
// Metrics: entries/s (agenda entries handled, the target's unit: 2M due
// contracts in 20 minutes is 1,700/s), actions/s (DUE_CHECK and SMS_D1
// both count), run-s, WRU/entry and RRU/entry, and CPU-ms/entry: the
// process's user and system CPU over the timed runs per entry, which other
// work on a shared machine disturbs far less than the rates.
//
// LASTRO_AGENDA_PROFILE=file writes a CPU profile of the timed runs only
// (-cpuprofile would be dominated by the seeding).
//
// The collector runs as lastro serve runs it: at servingGCPercent unless
// GOGC is set, so GOGC=100 measures the runtime's default.
func BenchmarkAgendaRun(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("due=%d", n), func(b *testing.B) { benchAgendaRun(b, n) })
	}
}

// seedWorkers sign contracts in parallel: enough to keep the store's
// group commit busy while the SDK path uses both cores.
const seedWorkers = 32

// servingGCPercent is the collector setting lastro serve uses unless GOGC
// is set (cmd/lastro): the benchmark measures the worker as it runs.
const servingGCPercent = 400

func benchAgendaRun(b *testing.B, n int) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(servingGCPercent))
	}
	// Future dates: the store expires lease items on the real clock.
	signDay := nextMonday(time.Now())
	env, err := enginetest.Open(enginetest.DataDir(b.TempDir()), enginetest.At(at(signDay.String(), 7, 0)))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := env.Close(); err != nil {
			b.Error(err)
		}
	}()
	var prof *os.File
	if path := os.Getenv("LASTRO_AGENDA_PROFILE"); path != "" {
		if prof, err = os.Create(path); err != nil {
			b.Fatal(err)
		}
		defer prof.Close()
	}
	var entries, actions int
	var runTime, cpu time.Duration
	var wru, rru float64
	b.StopTimer()
	for i := range b.N {
		tn, _ := env.Tenant(b, fmt.Sprintf("t-bench-%d", i))
		env.Clock.Set(at(signDay.String(), 7, 0))
		// First instalment due on Tuesday, 12 monthly: the DUE_CHECK is
		// the payable date's next day.
		first := signDay.AddDays(1)
		specs := make([]signSpec, n)
		for k := range specs {
			specs[k] = signSpec{id: fmt.Sprintf("B-%06d", k), first: first, n: 12}
		}
		began := time.Now()
		list, err := signMany(bg, env, tn, specs, seedWorkers)
		if err != nil {
			b.Fatal(err)
		}
		seeded := time.Since(began)
		// Every contract waits for the same DUE_CHECK.
		c, err := contract.Load(bg, env.Kit.Tenant(tn.ID, tn.CursorKey()), tn.ID, list[0].dk, list[0].id)
		if err != nil || c == nil || c.Header.NextAction != "DUE_CHECK" {
			b.Fatalf("seeded contract: %+v, %v", c, err)
		}
		runDate := calendar.MustParse(c.Header.NextActionDate)
		shards := map[int]int{}
		for _, s := range list {
			shards[contract.Shard(s.id, tn.Shards)]++
		}
		b.Logf("seeded %d contracts (%d shards, %d-%d each) in %s (%.0f/s); run date %s",
			n, len(shards), minOf(shards), maxOf(shards), seeded.Round(time.Millisecond), float64(n)/seeded.Seconds(), runDate)

		env.Clock.Set(at(runDate.String(), 8, 0))
		// The contact gateway meters its own operations, so the run's
		// capacity is the meter's difference over every operation.
		w0, r0 := meterTotals(env.Kit)
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		began = time.Now()
		cpu0 := processCPU(b)
		rep, err := env.Agenda.Run(bg, tn, runDate, agenda.Options{})
		cpu += processCPU(b) - cpu0
		elapsed := time.Since(began)
		b.StopTimer()
		if prof != nil {
			pprof.StopCPUProfile()
			prof = nil // one profile: the first run
		}
		if err != nil {
			b.Fatal(err)
		}
		if rep.Executed["DUE_CHECK"] != n || rep.Skipped != 0 {
			b.Fatalf("run: executed %v, skipped %d, want %d DUE_CHECKs", rep.Executed, rep.Skipped, n)
		}
		done := 0
		for _, v := range rep.Executed {
			done += v
		}
		entries += n
		actions += done
		runTime += elapsed
		w1, r1 := meterTotals(env.Kit)
		wru += w1 - w0
		rru += r1 - r0
		b.Logf("run: %d entries, executed %v, blocked %v in %s", n, rep.Executed, rep.Blocked, elapsed.Round(time.Millisecond))
	}
	secs := runTime.Seconds()
	b.ReportMetric(float64(entries)/secs, "entries/s")
	b.ReportMetric(float64(actions)/secs, "actions/s")
	b.ReportMetric(secs/float64(b.N), "run-s")
	b.ReportMetric(wru/float64(entries), "WRU/entry")
	b.ReportMetric(rru/float64(entries), "RRU/entry")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(entries), "CPU-ms/entry")
}

// processCPU is the user and system CPU the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func meterTotals(k *kit.Kit) (wru, rru float64) {
	for _, o := range k.Meter().Snapshot() {
		wru += o.WRU
		rru += o.RRU
	}
	return wru, rru
}

func minOf(m map[int]int) int {
	r := -1
	for _, v := range m {
		if r < 0 || v < r {
			r = v
		}
	}
	return r
}

func maxOf(m map[int]int) int {
	r := 0
	for _, v := range m {
		r = max(r, v)
	}
	return r
}
