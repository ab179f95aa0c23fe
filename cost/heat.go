package cost

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/keys"
	"lastro/contract"
	"lastro/debtor"
)

// DynamoDB's throughput limits of one partition, of the table or of an
// index.
const (
	PartitionWCU = 1000
	PartitionRCU = 3000
)

// HeatProfile is the load of the seed's worst moment (its sections 3–5):
// at 00:07 on a payday the agenda reschedules the largest tenant's
// delinquent contracts while settlement webhooks arrive at their peak.
type HeatProfile struct {
	Tenants      int     // 40
	Contracts    int     // active contracts, all tenants: 8M
	LargestShare float64 // the largest tenant's share: 0.6
	Delinquent   int     // in collection, all tenants: 2M
	// Reschedules is how many of the largest tenant's contracts the
	// agenda acts on and moves to the next date in the window (1.2M).
	Reschedules int
	// Window is how long the agenda's burst lasts: 20 minutes, the
	// target for 2M contracts.
	Window time.Duration
	// SettlementsPerSecond is the payday peak, all tenants (800).
	SettlementsPerSecond float64
	// Shards are the agenda index's shards (16).
	Shards int
	// BucketShares are the delinquent contracts' shares per bucket
	// (an assumption: the seeds give none).
	BucketShares map[string]float64
	// Date is the run's date; the rescheduled entries move to the next.
	Date calendar.Date
}

// SeedHeat is the seed's profile.
func SeedHeat() HeatProfile {
	return HeatProfile{Tenants: 40, Contracts: 8_000_000, LargestShare: 0.6, Delinquent: 2_000_000, Reschedules: 1_200_000,
		Window: 20 * time.Minute, SettlementsPerSecond: 800, Shards: 16,
		BucketShares: map[string]float64{"D001_030": 0.40, "D031_060": 0.20, "D061_090": 0.15, "D091_PLUS": 0.25},
		Date:         calendar.MustParse("2026-10-06")}
}

func (p HeatProfile) validate() error {
	switch {
	case p.Tenants < 1 || p.Contracts < 1 || p.Delinquent < 0 || p.Delinquent > p.Contracts:
		return errors.New("heat: tenants and contracts must be positive, delinquent at most the contracts")
	case p.LargestShare <= 0 || p.LargestShare > 1:
		return errors.New("heat: the largest tenant's share must be in (0, 1]")
	case p.Reschedules < 0 || p.Reschedules > 20_000_000:
		return errors.New("heat: reschedules must be 0-20000000")
	case p.Window < time.Second:
		return errors.New("heat: the window must be at least a second")
	case p.SettlementsPerSecond < 0 || p.SettlementsPerSecond > 1e6:
		return errors.New("heat: settlements per second must be 0-1000000")
	case p.Shards < 1 || p.Shards > 1024:
		return errors.New("heat: shards must be 1-1024")
	}
	total := 0.0
	for _, s := range p.BucketShares {
		total += s
	}
	if math.Abs(total-1) > 1e-6 {
		return fmt.Errorf("heat: bucket shares add up to %.3f, want 1", total)
	}
	return nil
}

// Design is a key design the simulator replays the profile through.
type Design string

// The designs: ours and the three the seed rejects.
const (
	Ours           Design = "lastro (debtor PK, GSI1 sharded, GSI2 by bucket)"
	TenantPK       Design = "tenant as partition key"
	UnshardedGSI1  Design = "GSI1 without shard"
	DaysPastDueKey Design = "daysPastDue in GSI2's sort key (model A)"
)

// Designs are every design, ours first.
var Designs = []Design{Ours, TenantPK, UnshardedGSI1, DaysPastDueKey}

// Peak is the hottest partition of one table or index under a design.
type Peak struct {
	Structure string  // "table", "agenda", "portfolio"
	Partition string  // its key, with ids elided
	WCU, RCU  float64 // per second
}

// Over reports whether the partition exceeds a limit.
func (p Peak) Over() bool { return p.WCU > PartitionWCU || p.RCU > PartitionRCU }

// HeatResult is one design's peaks.
type HeatResult struct {
	Design Design
	Peaks  []Peak // table, agenda, portfolio
}

// Over reports whether any partition of the design exceeds a limit.
func (h HeatResult) Over() bool { return slices.ContainsFunc(h.Peaks, Peak.Over) }

// second accumulates one second's units per partition and keeps, per
// structure, the hottest partition-second seen.
type second struct {
	wcu, rcu map[string]float64
	best     Peak
	score    float64
}

func newSecond(structure string) *second {
	return &second{wcu: map[string]float64{}, rcu: map[string]float64{}, best: Peak{Structure: structure}, score: -1}
}

func (s *second) add(key string, wcu, rcu float64) {
	s.wcu[key] += wcu
	s.rcu[key] += rcu
}

// flush ends the second: its hottest partition (the closer to either
// limit) may be the new peak.
func (s *second) flush() {
	for k, w := range s.wcu {
		if score := max(w/PartitionWCU, s.rcu[k]/PartitionRCU); score > s.score {
			s.score, s.best.Partition, s.best.WCU, s.best.RCU = score, k, w, s.rcu[k]
		}
	}
	clear(s.wcu)
	clear(s.rcu)
}

// Unit costs of the operations, as lastro cost measures them
// (docs/performance.md#cost-per-business-operation).
const (
	// An agenda entry with a contact step: the header and its event
	// (transaction, 4), the contact counter, evidence and outcome (3),
	// the lease's share (~1): 8 WRU on the debtor's partition; 2 RRU to
	// read the contract and the profile. Its agenda entry moves (a delete
	// and a put, 1 each) and its portfolio entry changes (1).
	entryTableWRU, entryTableRRU = 8, 2
	// A settlement: the STL item (2, transactional) on its own
	// partition, the header, instalment and event (6) on the debtor's;
	// the charge lookup (1, consistent) on the charge's partition and the
	// contract read (1) on the debtor's. Its agenda entry changes or goes
	// (1), its portfolio entry moves with the balance (2).
	stlWRU, settleDebtorWRU, chargeRRU, settleDebtorRRU = 2, 6, 1, 1
	settleAgendaWRU, settlePortfolioWRU                 = 1, 2
	// An agenda page of 100 entries of ~300 bytes, eventually
	// consistent: ⌈30 KB / 4 KB⌉ × 0.5 = 4 RRU, 0.04 per entry.
	agendaReadPerEntry = 0.04
	// Model A: the 1.1 KB header rewritten (2 WRU) and its GSI2 entry
	// moved (a delete and a put).
	modelAHeaderWRU, modelAIndexWRU = 2, 2
)

// SimulateHeat replays p through the engine's key builders under every
// design, one second at a time (the agenda's entries and the settlements
// spread evenly over the window), and returns each design's hottest
// partition-second per table and index. Only the largest tenant is
// replayed: every key starts with the tenant, so smaller tenants never
// share its partitions and peak lower.
func SimulateHeat(p HeatProfile) ([]HeatResult, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	const t = "t-largest"
	seconds := int(p.Window.Seconds())
	settlements := int(p.SettlementsPerSecond * p.LargestShare * p.Window.Seconds())
	today, next := p.Date.String(), p.Date.AddDays(1).String()
	buckets := slices.Sorted(maps.Keys(p.BucketShares))
	// bucketOf spreads contract n over the buckets by their shares, in
	// no order: a shard's entries come in action and contract order,
	// whatever their buckets.
	bucketOf := func(n int) string {
		x := float64(uint32(n)*2654435761) / (1 << 32)
		acc := 0.0
		for _, b := range buckets {
			acc += p.BucketShares[b]
			if x < acc {
				return b
			}
		}
		return buckets[len(buckets)-1]
	}
	// The contracts' ids and their debtors' partitions, built once with
	// the engine's builders (one debtor per contract: the worst case for
	// nothing, the common case in collections).
	secret := []byte("heat-simulation-tenant-secret-32")
	ids := make([]string, p.Reschedules)
	debtors := make([]string, p.Reschedules)
	for n := range ids {
		ids[n] = fmt.Sprintf("C-%08d", n)
		debtors[n] = keys.Debtor(t, debtor.Key(secret, fmt.Sprintf("%011d", n)))
	}
	var out []HeatResult
	for _, d := range Designs {
		table, agenda, portfolio := newSecond("table"), newSecond("agenda (GSI1)"), newSecond("portfolio (GSI2)")
		shards := p.Shards
		if d == UnshardedGSI1 {
			shards = 1
		}
		// The agenda's partitions of today and tomorrow, per shard, and
		// each contract's shard.
		akeys := map[string][]string{}
		for _, date := range []string{today, next} {
			for s := range shards {
				k := keys.Agenda(t, date, s)
				if shards == 1 {
					k = keys.TenantPrefix(t) + "ACT#" + date // no shard suffix
				}
				akeys[date] = append(akeys[date], k)
			}
		}
		shardOf := make([]int, len(ids))
		for n, id := range ids {
			shardOf[n] = contract.Shard(id, shards)
		}
		agendaKey := func(date string, n int) string { return akeys[date][shardOf[n]] }
		partition := func(key string) string {
			if d == TenantPK {
				return keys.Tenant(t)
			}
			return key
		}
		entry, settled := 0, 0
		for sec := range seconds {
			// Entries and settlements due by the end of this second.
			for ; entry < p.Reschedules && entry*seconds < (sec+1)*p.Reschedules; entry++ {
				n := entry
				b := keys.Bucket(t, bucketOf(n))
				table.add(partition(debtors[n]), entryTableWRU, entryTableRRU)
				agenda.add(agendaKey(today, n), 1, agendaReadPerEntry)
				agenda.add(agendaKey(next, n), 1, 0)
				portfolio.add(b, 1, 0)
				if d == DaysPastDueKey {
					table.add(debtors[n], modelAHeaderWRU, 0)
					portfolio.add(b, modelAIndexWRU, 0)
				}
			}
			for ; settled < settlements && settled*seconds < (sec+1)*settlements; settled++ {
				// Paying contracts are among the rescheduled ones (the
				// worst case: their entries sit in tomorrow's partitions).
				n := (settled * 7919) % max(p.Reschedules, 1)
				if p.Reschedules == 0 {
					break
				}
				table.add(partition(keys.Settlement(t, fmt.Sprintf("E%031d", settled))), stlWRU, 0)
				table.add(partition(keys.Charge(t, fmt.Sprintf("TX%030d", n))), 0, chargeRRU)
				table.add(partition(debtors[n]), settleDebtorWRU, settleDebtorRRU)
				agenda.add(agendaKey(next, n), settleAgendaWRU, 0)
				portfolio.add(keys.Bucket(t, bucketOf(n)), settlePortfolioWRU, 0)
			}
			table.flush()
			agenda.flush()
			portfolio.flush()
		}
		out = append(out, HeatResult{Design: d, Peaks: []Peak{table.best, agenda.best, portfolio.best}})
	}
	return out, nil
}

// RecommendShards is the agenda index's shard count: the smallest power
// of two that keeps the hottest agenda partition at half the partition
// limit with the delinquency doubled (a credit crisis: the seed's "a
// good model does not raise its own load with bad news", and on-demand
// absorbs at most twice the previous peak at once). unsharded is the
// hottest unsharded agenda partition's WCU/s.
func RecommendShards(unsharded float64) (minimum, recommended int) {
	minimum = int(math.Ceil(unsharded / PartitionWCU))
	need := unsharded * 2 / (PartitionWCU * 0.5)
	recommended = 1
	for float64(recommended) < need {
		recommended *= 2
	}
	return max(minimum, 1), recommended
}

// PrintHeat writes the results as a table against the limits, and the
// recommended shard count.
func PrintHeat(w io.Writer, p HeatProfile, results []HeatResult) error {
	fmt.Fprintf(w, "profile: %d tenants, %d contracts (largest %.0f %%), %d delinquent; %d reschedules of the largest in %s; %.0f settlements/s (largest %.0f/s); %d shards\n",
		p.Tenants, p.Contracts, p.LargestShare*100, p.Delinquent, p.Reschedules, p.Window, p.SettlementsPerSecond, p.SettlementsPerSecond*p.LargestShare, p.Shards)
	fmt.Fprintf(w, "limits per partition: %d WCU/s, %d RCU/s; rates are uniform over the window\n\n", PartitionWCU, PartitionRCU)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "design\tstructure\thottest partition\tWCU/s\tRCU/s\tverdict\t")
	var unsharded float64
	for _, r := range results {
		for _, pk := range r.Peaks {
			verdict := fmt.Sprintf("under (%.0f %% of the WCU limit)", pk.WCU/PartitionWCU*100)
			if pk.Over() {
				verdict = fmt.Sprintf("OVER ×%.1f", max(pk.WCU/PartitionWCU, pk.RCU/PartitionRCU))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%s\t\n", r.Design, pk.Structure, elide(pk.Partition), pk.WCU, pk.RCU, verdict)
			if r.Design == UnshardedGSI1 && strings.HasPrefix(pk.Structure, "agenda") {
				unsharded = pk.WCU
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unsharded > 0 {
		minimum, rec := RecommendShards(unsharded)
		fmt.Fprintf(w, "\nagenda shards: the unsharded partition peaks at %.0f WCU/s, so at least %d; with the delinquency doubled and at half the limit, %d (the engine's default is %d, which also gives the run %d workers)\n",
			unsharded, minimum, rec, p.Shards, p.Shards)
	}
	return nil
}

// elide shortens a debtor partition's key (the hash says nothing, and is
// long).
func elide(key string) string {
	if i := strings.Index(key, "#D#"); i >= 0 {
		return key[:i] + "#D#<debtorKey>"
	}
	return key
}
