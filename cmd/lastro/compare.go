package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/calendar"
	"lastro/collections/errs"
	"lastro/collections/kit"
	"lastro/contract"
	"lastro/cost"
	"lastro/debtor"
	"lastro/tenant"
)

// compareOptions are the flags of lastro cost compare.
type compareOptions struct {
	sizes       []int // portfolio sizes for keyed page vs Scan, ascending
	abSizes     []int // contract counts for model A vs model B
	days        int
	workers     int
	extrapolate int // delinquent contracts to extrapolate the month to (2M)
	// inMemory keeps each comparison's store in memory instead of in a
	// temporary data directory: faster at small sizes, but 100,000
	// contracts with their stream records hold more than 10 GB.
	inMemory bool
}

func parseSizes(flagName, v string) ([]int, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil // the comparison is skipped
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 10 || n > 1_000_000 {
			return nil, fmt.Errorf("--%s: %q is not a size of 10-1000000 contracts", flagName, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s: no size given", flagName)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// compareCmd: lastro cost compare — the seed's two comparisons side by
// side, each on one private store with one data set.
func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cost compare", "[--sizes 1000,10000,100000] [--ab-sizes 10000,100000] [--days 30]", stderr)
	sizes := fs.String("sizes", "1000,10000", "portfolio sizes (contracts) for the keyed page against Scan + FilterExpression, grown on one store; none skips it")
	ab := fs.String("ab-sizes", "10000", "contract counts for model A against model B, each on its own store; none skips it")
	days := fs.Int("days", 30, "simulated days of model A and model B (1-90)")
	workers := fs.Int("workers", 8, "concurrent writers while seeding (1-64)")
	extra := fs.Int("extrapolate", 2_000_000, "delinquent contracts the month is extrapolated to")
	inMemory := fs.Bool("in-memory", false, "keep the stores in memory rather than in temporary data directories (small sizes only: 100000 contracts take more than 10 GB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o := compareOptions{days: *days, workers: *workers, extrapolate: *extra, inMemory: *inMemory}
	var err error
	if o.sizes, err = parseSizes("sizes", *sizes); err != nil {
		return err
	}
	if o.abSizes, err = parseSizes("ab-sizes", *ab); err != nil {
		return err
	}
	switch {
	case o.days < 1 || o.days > 90:
		return errors.New("--days must be 1-90")
	case o.workers < 1 || o.workers > 64:
		return errors.New("--workers must be 1-64")
	case o.extrapolate < 1:
		return errors.New("--extrapolate must be positive")
	}
	prices := cost.OnDemand()
	fmt.Fprintf(stdout, "prices: %s, $%.3f per million WRU, $%.3f per million RRU (before 2024-11: $%.2f and $%.2f)\n\n",
		prices.Name, prices.PerMWRU, prices.PerMRRU, cost.OnDemandBefore2024().PerMWRU, cost.OnDemandBefore2024().PerMRRU)
	for _, n := range o.abSizes {
		if _, err := compareModels(ctx, n, o, stdout, stderr); err != nil {
			return err
		}
	}
	if len(o.sizes) == 0 {
		return nil
	}
	_, err = compareScan(ctx, o, stdout, stderr)
	return err
}

// seededContract is the synthetic portfolio compare builds: what model A needs of
// each contract.
type seededContract struct {
	id, dk      string
	first       calendar.Date // the first instalment's due date
	outstanding int64
}

// seedPortfolio adds contracts [from, to) to tenant tn through the
// services, as lastro demo seed does: one debtor each, 12 monthly
// instalments of R$ 1,000.00; a quarter delinquent (first instalment
// 1-120 days late), the rest current (first due in 1-60 days, so about
// half fall due within a month).
func seedPortfolio(ctx context.Context, c *costEngine, tn *tenant.Tenant, from, to, workers int, progress io.Writer) ([]seededContract, error) {
	today := calendar.Today(c.clock.Now(), tn.Location)
	out := make([]seededContract, to-from)
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	actor := debtor.Actor{Role: "system:cost-compare"}
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= to || ctx.Err() != nil {
					return
				}
				rng := rand.New(rand.NewPCG(uint64(i), 0xc057))
				s, err := seedOne(ctx, c, tn, i, rng, today, actor)
				if err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					return
				}
				out[i-from] = s
				if done := i - from + 1; done%5000 == 0 {
					fmt.Fprintf(progress, "  seeded %d of %d contracts (%.0f/s)\n", done, to-from, float64(done)/time.Since(start).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(first, ctx.Err()); err != nil {
		return nil, err
	}
	return out, nil
}

func seedOne(ctx context.Context, c *costEngine, tn *tenant.Tenant, i int, rng *rand.Rand, today calendar.Date, actor debtor.Actor) (seededContract, error) {
	doc := debtor.GenerateCPF(rng)
	reg, err := c.Debtors.Register(ctx, tn, debtor.RegisterInput{Document: doc.Formatted(), Name: "Pessoa Sintética",
		Phone: "+55 11 90000-0000", Email: "pessoa@example.invalid"}, actor)
	if err != nil {
		return seededContract{}, fmt.Errorf("debtor %d: %w", i, err)
	}
	first := today.AddDays(1 + rng.IntN(60))
	if i%4 == 0 {
		first = today.AddDays(-(1 + rng.IntN(120)))
	}
	ci := contract.Input{ContractID: fmt.Sprintf("C-%07d", i), ProductCode: "CREDIARIO_12X"}
	for s := range 12 {
		ci.Installments = append(ci.Installments, contract.InstallmentInput{Seq: s + 1, DueDate: first.AddMonths(s).String(),
			PrincipalCents: contract.Cents(90000), InterestCents: contract.Cents(10000)})
	}
	created, err := c.Contracts.Create(ctx, tn, reg.DebtorKey, ci, actor)
	if err != nil && !errs.Is(err, errs.Conflict) {
		return seededContract{}, fmt.Errorf("contract %d: %w", i, err)
	}
	s := seededContract{id: ci.ContractID, dk: reg.DebtorKey, first: first, outstanding: 12 * 100000}
	if created != nil {
		s.outstanding = created.OutstandingCents
	}
	return s, nil
}

// compareTenant creates the comparison's tenant and returns it loaded,
// with its supervisor's key.
func compareTenant(ctx context.Context, c *costEngine, id string) (*tenant.Tenant, string, error) {
	created, err := c.Tenants.Create(ctx, tenant.CreateInput{TenantID: id, Name: "Comparação " + id})
	if err != nil {
		return nil, "", err
	}
	tn, err := c.Tenants.Get(ctx, id)
	return tn, created.APIKeys["supervisor"], err
}

// bucketMoveWRU is what one BUCKET_MOVE costs, as lastro cost measures it
// (table 3, agenda 2, portfolio 2; TestCostCatalogue holds the two equal).
const bucketMoveWRU = 7

// modelATable is model A's table on the same store: the same keys, and a
// portfolio index whose sort key is the stored daysPastDue.
const modelATable = "lastro-model-a"

func createModelA(ctx context.Context, db *dynamodb.Client) error {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(modelATable), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s("PK"), s("SK"), s("GSI2PK"),
			{AttributeName: aws.String("daysPastDue"), AttributeType: types.ScalarAttributeTypeN}},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("portfolio"),
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("GSI2PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("daysPastDue"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude,
				NonKeyAttributes: []string{"debtorKey", "contractId", "oldestOverdueDueDate", "productCode", "lastContactAt", "outstandingCents"}}}},
	})
	return err
}

// modelAItem is a model A contract item: the header with its promises and
// history embedded (the seed's 1.1 KB), daysPastDue stored.
func modelAItem(tenantID string, s seededContract, dpd int) map[string]types.AttributeValue {
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	var history []types.AttributeValue
	for i := range 9 {
		history = append(history, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"at": str("2026-09-0" + strconv.Itoa(i+1) + "T09:00:00.000Z"), "action": str("SMS_D5"), "outcome": str("DELIVERED"), "by": str("system:agenda")}})
	}
	it := map[string]types.AttributeValue{"PK": str("T#" + tenantID + "#D#" + s.dk), "SK": str("CT#" + s.id), "type": str("CONTRACT"),
		"tenantId": str(tenantID), "debtorKey": str(s.dk), "contractId": str(s.id), "productCode": str("CREDIARIO_12X"), "currency": str("BRL"),
		"chargesPolicy": str("CP#v0000"), "dunningPolicy": str("DP#v0000"), "status": str("IN_COLLECTION"), "statusReason": str("DUE_CHECK"),
		"oldestOverdueDueDate": str(s.first.String()), "outstandingCents": num(s.outstanding), "updatedAt": str("2026-09-24T12:00:00.000Z"),
		"version": num(1), "history": &types.AttributeValueMemberL{Value: history},
		"promises": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"promisedDate": str("2026-09-30"), "amountCents": num(50000), "status": str("BROKEN")}}}}}
	if dpd > 0 {
		it["GSI2PK"], it["daysPastDue"] = str("T#"+tenantID+"#B#"+bucketOf(dpd)), num(int64(dpd))
	}
	return it
}

func bucketOf(dpd int) string {
	switch {
	case dpd <= 30:
		return "D001_030"
	case dpd <= 60:
		return "D031_060"
	case dpd <= 90:
		return "D061_090"
	}
	return "D091_PLUS"
}

// parallel runs fn(i) for i in [0, n) on workers goroutines.
func parallel(ctx context.Context, n, workers int, fn func(int) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(first, ctx.Err())
}

// compareModels runs model B (the engine's agenda, every day) and model A
// (the nightly daysPastDue recompute) over the same contracts for
// o.days days on one store.
// abResult is what compareModels measured.
type abResult struct {
	delinquentNights int
	a, b             cost.Capacity
	bucketMoves      int
}

func compareModels(ctx context.Context, n int, o compareOptions, stdout, stderr io.Writer) (abResult, error) {
	var res abResult
	c, err := newCostEngine(ctx, costEngineOptions{onDisk: !o.inMemory})
	if err != nil {
		return res, err
	}
	defer c.Close()
	tn, sup, err := compareTenant(ctx, c, "t-ab")
	if err != nil {
		return res, err
	}
	fmt.Fprintf(stderr, "model A / model B at %d contracts: seeding\n", n)
	start := time.Now()
	contracts, err := seedPortfolio(ctx, c, tn, 0, n, o.workers, stderr)
	if err != nil {
		return res, err
	}
	seedTook := time.Since(start)
	if err := createModelA(ctx, c.db); err != nil {
		return res, err
	}
	today := calendar.Today(c.clock.Now(), tn.Location)
	dpd := func(s seededContract, d calendar.Date) int { return max(0, d.Sub(s.first)) }
	// Model A's items, written once (not counted: model B's creation is
	// not counted either).
	if err := parallel(ctx, len(contracts), o.workers, func(i int) error {
		_, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(modelATable), Item: modelAItem(tn.ID, contracts[i], dpd(contracts[i], today))})
		return err
	}); err != nil {
		return res, err
	}
	meterB, meterA := c.meter("lastro"), c.meter(modelATable)
	b0, a0 := meterB(), meterA()
	delinquentNights, delinquentAtStart := 0, 0
	for _, s := range contracts {
		if dpd(s, today) > 0 {
			delinquentAtStart++
		}
	}
	executed := map[string]int{}
	runTook, recomputeTook := time.Duration(0), time.Duration(0)
	for day := range o.days {
		date := today.AddDays(day)
		// 09:00 in São Paulo: the run's hour, inside the contact window.
		c.clock.Set(time.Date(date.Year(), date.Month(), date.Day(), 12, 0, 0, 0, time.UTC))
		t0 := time.Now()
		var rep struct {
			Executed map[string]int `json:"executed"`
			Failed   int            `json:"failed"`
		}
		if err := (&cost.Client{URL: c.url, HTTP: &http.Client{Timeout: 30 * time.Minute}}).Expect(ctx, http.StatusOK, http.MethodPost,
			"/v1/agenda/run", sup, map[string]any{"date": date.String()}, &rep); err != nil {
			return res, err
		}
		if rep.Failed > 0 {
			return res, fmt.Errorf("model B, %s: %d agenda entries failed", date, rep.Failed)
		}
		for a, k := range rep.Executed {
			executed[a] += k
		}
		runTook += time.Since(t0)
		// Model A that night: every delinquent contract's daysPastDue
		// rewritten, its portfolio entry moved.
		t0 = time.Now()
		var late []int
		for i, s := range contracts {
			if dpd(s, date) > 0 {
				late = append(late, i)
			}
		}
		delinquentNights += len(late)
		if err := parallel(ctx, len(late), o.workers, func(j int) error {
			s := contracts[late[j]]
			d := dpd(s, date)
			_, err := c.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(modelATable),
				Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "T#" + tn.ID + "#D#" + s.dk}, "SK": &types.AttributeValueMemberS{Value: "CT#" + s.id}},
				UpdateExpression: aws.String("SET daysPastDue = :d, GSI2PK = :b"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberN{Value: strconv.Itoa(d)},
					":b": &types.AttributeValueMemberS{Value: "T#" + tn.ID + "#B#" + bucketOf(d)}}})
			return err
		}); err != nil {
			return res, err
		}
		recomputeTook += time.Since(t0)
	}
	b, a := meterB().Sub(b0), meterA().Sub(a0)
	prices := cost.OnDemand()
	perNight := func(u cost.Units) float64 { return u.WRU / float64(max(delinquentNights, 1)) }
	fmt.Fprintf(stdout, "MODEL A against MODEL B: %d contracts (%d delinquent at the start, %d delinquent contract-nights), %d days; seeded in %s\n",
		n, delinquentAtStart, delinquentNights, o.days, seedTook.Round(time.Second))
	fmt.Fprintf(stdout, "  model B (ours: the agenda acting on events; everything it wrote, contacts included): table %.0f WRU, agenda %.0f, portfolio %.0f = %.0f WRU; %.0f RRU; runs took %s\n",
		b.Table.WRU, b.Index("agenda").WRU, b.Index("portfolio").WRU, b.Total().WRU, b.Total().RRU, runTook.Round(time.Second))
	fmt.Fprintf(stdout, "    executed: %s; of which calendar-only bucket moves: %d\n", describeCounts(executed), executed["BUCKET_MOVE"])
	fmt.Fprintf(stdout, "  model A (nightly daysPastDue recompute alone, 1.1 KB contract, daysPastDue in GSI2's sort key): table %.0f WRU, portfolio %.0f = %.0f WRU; took %s\n",
		a.Table.WRU, a.Index("portfolio").WRU, a.Total().WRU, recomputeTook.Round(time.Second))
	// Like for like: what knowing each contract's delay costs. Model A
	// rewrites it every night; model B writes only when a contract
	// crosses a bucket (BUCKET_MOVE), the one write that exists because
	// days passed. Both pay the steps and contacts on top.
	moves := float64(executed["BUCKET_MOVE"]) * bucketMoveWRU
	scale := float64(o.extrapolate) * 30 / float64(max(delinquentNights, 1))
	fmt.Fprintf(stdout, "  like for like, the delay kept up to date: model A %.0f WRU against model B's %d bucket moves × %d WRU = %.0f WRU: %.0f×\n",
		a.Total().WRU, executed["BUCKET_MOVE"], bucketMoveWRU, moves, a.Total().WRU/max(moves, 1))
	fmt.Fprintf(stdout, "  per delinquent contract-night: model A %.2f WRU, model B %.3f WRU (bucket moves), %.2f WRU (everything, steps and contacts included)\n",
		perNight(a.Total()), moves/float64(max(delinquentNights, 1)), perNight(b.Total()))
	fmt.Fprintf(stdout, "  extrapolated to %d delinquent contracts × 30 nights (×%.0f): model A %.0fM WRU ($%.2f/month), model B %.1fM WRU ($%.2f/month); the seed: 240M ($150) against 6M ($4)\n\n",
		o.extrapolate, scale, a.Total().WRU*scale/1e6, prices.Dollars(cost.Units{WRU: a.Total().WRU * scale}),
		moves*scale/1e6, prices.Dollars(cost.Units{WRU: moves * scale}))
	res.delinquentNights, res.a, res.b, res.bucketMoves = delinquentNights, a, b, executed["BUCKET_MOVE"]
	return res, nil
}

func describeCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// scanPoint is one size of the keyed-page against Scan comparison.
type scanPoint struct {
	size                 int
	items                int
	keyedRRU, scanRRU    float64
	keyedP50, view360P50 time.Duration
	scanTook             time.Duration
}

// compareScan grows one portfolio through o.sizes and, at each size,
// measures the portfolio page on its index and the same screen as a
// Scan + FilterExpression of the whole table (a named measurement:
// kit.MaintenanceScanWhere), and the 360 view.
func compareScan(ctx context.Context, o compareOptions, stdout, stderr io.Writer) ([]scanPoint, error) {
	c, err := newCostEngine(ctx, costEngineOptions{onDisk: !o.inMemory})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tn, sup, err := compareTenant(ctx, c, "t-scan")
	if err != nil {
		return nil, err
	}
	client := &cost.Client{URL: c.url, HTTP: &http.Client{Timeout: time.Minute}}
	meter := c.meter("lastro")
	var points []scanPoint
	var all []seededContract
	for _, size := range o.sizes {
		fmt.Fprintf(stderr, "keyed page against Scan: growing the portfolio to %d contracts\n", size)
		more, err := seedPortfolio(ctx, c, tn, len(all), size, o.workers, stderr)
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
		pt := scanPoint{size: size}
		// The keyed page: the bucket every delinquent contract starts in
		// most often, 100 largest balances, 25 times.
		const rounds = 25
		before := meter()
		var lat []time.Duration
		for range rounds {
			t0 := time.Now()
			if err := client.Expect(ctx, http.StatusOK, http.MethodGet, "/v1/portfolio?bucket=D031_060&limit=100", sup, nil, nil); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t0))
		}
		pt.keyedRRU = meter().Sub(before).Total().RRU / rounds
		pt.keyedP50 = median(lat)
		// The 360 view of debtors across the portfolio.
		lat = lat[:0]
		for i := range rounds {
			s := all[(i*7919)%len(all)]
			t0 := time.Now()
			if _, err := c.Debtors.View(ctx, tn, s.dk, 0, ""); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t0))
		}
		pt.view360P50 = median(lat)
		// The same screen by Scan + FilterExpression: every item read,
		// the bucket's contracts kept, sorted, the first 100 shown.
		before = meter()
		t0 := time.Now()
		var balances []int64
		items := 0
		err = c.Kit.MaintenanceScanWhere(ctx, "cost-compare-portfolio-screen",
			expression.Name("type").Equal(expression.Value("CONTRACT")).And(expression.Name("bucket").Equal(expression.Value("D031_060"))),
			func(it kit.Item) error {
				items++
				if n, ok := it["outstandingCents"].(*types.AttributeValueMemberN); ok {
					v, _ := strconv.ParseInt(n.Value, 10, 64)
					balances = append(balances, v)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		slices.Sort(balances)
		pt.scanTook = time.Since(t0)
		pt.scanRRU = meter().Sub(before).Total().RRU
		d, err := c.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("lastro")})
		if err != nil {
			return nil, err
		}
		pt.items = int(aws.ToInt64(d.Table.ItemCount))
		points = append(points, pt)
	}
	prices := cost.OnDemand()
	fmt.Fprintln(stdout, "KEYED PAGE against SCAN + FILTEREXPRESSION (the supervisor's portfolio screen, 100 largest of bucket D031_060), one store grown in place:")
	fmt.Fprintf(stdout, "  %9s %10s %9s %9s %12s %11s %11s %10s\n", "contracts", "items", "keyed RRU", "keyed p50", "360 p50", "scan RRU", "scan time", "scan/keyed")
	for _, p := range points {
		fmt.Fprintf(stdout, "  %9d %10d %9.1f %9s %12s %11.0f %11s %9.0f×\n", p.size, p.items, p.keyedRRU, p.keyedP50.Round(10*time.Microsecond),
			p.view360P50.Round(10*time.Microsecond), p.scanRRU, p.scanTook.Round(time.Millisecond), p.scanRRU/max(p.keyedRRU, 0.5))
	}
	if len(points) > 1 {
		f, l := points[0], points[len(points)-1]
		fmt.Fprintf(stdout, "  growth ×%.0f contracts: keyed page RRU ×%.2f, keyed p50 ×%.2f, 360 p50 ×%.2f; scan RRU ×%.1f, scan time ×%.1f\n",
			float64(l.size)/float64(f.size), l.keyedRRU/f.keyedRRU, float64(l.keyedP50)/float64(f.keyedP50), float64(l.view360P50)/float64(f.view360P50),
			l.scanRRU/f.scanRRU, float64(l.scanTook)/float64(f.scanTook))
	}
	l := points[len(points)-1]
	// The seed's month: 40 tenants open the screen hourly for 30 days.
	const screens = 40 * 24 * 30
	perContract := l.scanRRU / float64(l.size)
	fmt.Fprintf(stdout, "  a month of %d screens (40 tenants, hourly): keyed %.0f RRU ($%.4f); by Scan at %d contracts %.0fM RRU ($%.2f)\n",
		screens, l.keyedRRU*screens, prices.Dollars(cost.Units{RRU: l.keyedRRU * screens}), l.size, l.scanRRU*screens/1e6,
		prices.Dollars(cost.Units{RRU: l.scanRRU * screens}))
	fmt.Fprintf(stdout, "  extrapolated to 8M contracts (%.2f RRU per contract per scan): %.1fM RRU per scan ($%.2f), $%.0f/month; the seed: 12.5M RRU ($1.56 at $0.125) per scan, ~$45,000/month at its own figures\n",
		perContract, perContract*8e6/1e6, prices.Dollars(cost.Units{RRU: perContract * 8e6}), prices.Dollars(cost.Units{RRU: perContract * 8e6 * screens}))
	return points, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
