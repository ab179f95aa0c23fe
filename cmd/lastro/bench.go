package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lastro/collections/calendar"
	"lastro/collections/secret"
	"lastro/cost"
	"lastro/debtor"
)

// benchOptions are the flags of lastro bench.
type benchOptions struct {
	target    string // an engine's URL; "" starts engines
	admin     string // its admin token
	serve     []int  // process counts to start, each on one networked store
	scenarios []string
	requests  int
	duration  time.Duration
	clients   int
	debtors   int
	due       int
	profile   string // a folder for the engine's CPU and heap profiles
	dataDir   string // where started processes keep their data ("": a temporary folder)
	// now is the started engines' frozen clock (LASTRO_NOW); zero for a
	// target, whose clock is its own.
	now time.Time
	// childEnv are extra variables of started processes (a test's
	// re-executed binary needs its marker).
	childEnv []string
}

// at is the instant requests are signed at and dates counted from.
func (o benchOptions) at() time.Time {
	if o.now.IsZero() {
		return time.Now()
	}
	return o.now
}

// benchInstant is the started engines' frozen clock: the next weekday
// from today at 09:00 in São Paulo, inside the default contact window
// (the agenda's SMS go out) and ahead of the real clock (the store's TTL,
// which runs on the real clock, sweeps nothing of the run's).
func benchInstant(real time.Time) time.Time {
	d := real.UTC().AddDate(0, 0, 1)
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, 1)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, time.UTC)
}

var benchScenarios = []string{"settlement", "pix", "view360", "portfolio", "agenda"}

// benchCmd: lastro bench — a load generator in its own process.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", "[--target URL --admin-token T | --serve 1,2,3] [flags]", stderr)
	var o benchOptions
	var serve, scen string
	fs.StringVar(&o.target, "target", "", "a running lastro serve on loopback (http://127.0.0.1:PORT); without it bench starts its own")
	fs.StringVar(&o.admin, "admin-token", os.Getenv("LASTRO_ADMIN_TOKEN"), "the target's admin token (LASTRO_ADMIN_TOKEN)")
	fs.StringVar(&serve, "serve", "", "start this many lastro serve processes on one lastro ddb serve, in turn (e.g. 1,2,3); "+
		"empty: one lastro serve on its embedded store")
	fs.StringVar(&scen, "scenarios", strings.Join(benchScenarios, ","), "what to run: "+strings.Join(benchScenarios, ", "))
	fs.IntVar(&o.requests, "requests", 5000, "requests per scenario (1-1000000)")
	fs.DurationVar(&o.duration, "duration", time.Minute, "longest time per scenario (1s-30m)")
	// 16 in flight: at 800 req/s that is 20 ms each on average (Little's
	// law), room for the p99 < 50 ms the target asks; 32 or more measure
	// queueing, not the engine.
	fs.IntVar(&o.clients, "clients", 16, "concurrent connections (1-512)")
	fs.IntVar(&o.debtors, "debtors", 500, "debtors (one late contract and a Pix charge each) for the webhooks, the 360 and the portfolio (10-100000)")
	fs.IntVar(&o.due, "due", 10000, "contracts due in the agenda run (0-1000000)")
	fs.StringVar(&o.profile, "profile", "", "a folder: fetch the engine's CPU profile during the settlement scenario (5-30 s) and its heap after (engines bench starts only)")
	fs.StringVar(&o.dataDir, "data-dir", "", "where started processes keep their data (default: a temporary folder, removed after)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range strings.Split(scen, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(benchScenarios, s) {
			return fmt.Errorf("--scenarios: unknown scenario %q (%s)", s, strings.Join(benchScenarios, ", "))
		}
		o.scenarios = append(o.scenarios, s)
	}
	if serve != "" {
		for _, f := range strings.Split(serve, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 8 {
				return fmt.Errorf("--serve: %q is not a process count of 1-8", f)
			}
			o.serve = append(o.serve, n)
		}
	}
	switch {
	case len(o.scenarios) == 0:
		return errors.New("--scenarios: none given")
	case o.requests < 1 || o.requests > 1_000_000:
		return errors.New("--requests must be 1-1000000")
	case o.duration < time.Second || o.duration > 30*time.Minute:
		return errors.New("--duration must be 1s-30m")
	case o.clients < 1 || o.clients > 512:
		return errors.New("--clients must be 1-512")
	case o.debtors < 10 || o.debtors > 100_000:
		return errors.New("--debtors must be 10-100000")
	case o.due < 0 || o.due > 1_000_000:
		return errors.New("--due must be 0-1000000")
	case o.target != "" && len(o.serve) > 0:
		return errors.New("--target and --serve exclude each other")
	case o.target != "" && o.admin == "":
		return errors.New("--target needs --admin-token (or LASTRO_ADMIN_TOKEN)")
	case o.target != "" && o.profile != "":
		return errors.New("--profile needs engines bench starts (their profiling listener is on a port only bench knows)")
	}
	if o.target != "" {
		if err := loopbackURL(o.target); err != nil {
			return err
		}
		rep, err := benchRun(ctx, o, []engineProc{{url: strings.TrimRight(o.target, "/")}}, nil, stdout, stderr)
		if err != nil {
			return err
		}
		return printBench(stdout, []benchReport{rep})
	}
	counts := o.serve
	if len(counts) == 0 {
		counts = []int{0} // one serve on its embedded store
	}
	var reports []benchReport
	for _, n := range counts {
		rep, err := benchStarted(ctx, o, n, stdout, stderr)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	return printBench(stdout, reports)
}

// loopbackURL refuses a target that is not on this machine's loopback:
// the generator is a load test, never pointed at someone else's server.
func loopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("--target must be http://127.0.0.1:PORT (or [::1]), got %q", raw)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--target %s is not a loopback address: bench loads only this machine's own engine", u.Host)
}

// engineProc is one engine the generator drives.
type engineProc struct {
	url   string
	pprof string // its profiling listener, when bench started it
	pid   int
	dir   string
	cmd   *exec.Cmd
	done  chan struct{}
}

// benchStarted starts n lastro serve processes on one lastro ddb serve
// (n = 0: one lastro serve on its embedded store), runs the scenarios
// and stops them.
func benchStarted(ctx context.Context, o benchOptions, n int, stdout, stderr io.Writer) (benchReport, error) {
	root := o.dataDir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "lastro-bench-"); err != nil {
			return benchReport{}, err
		}
		defer os.RemoveAll(root)
	}
	root = filepath.Join(root, fmt.Sprintf("run-%d", n))
	admin := "adm-bench-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-0123456789"
	o.now = benchInstant(time.Now())
	env := []string{"LASTRO_ADMIN_TOKEN=" + admin, "LASTRO_SCHEDULER=off", "LASTRO_ADDR=127.0.0.1:0", "LASTRO_PPROF_ADDR=127.0.0.1:0",
		"LASTRO_NOW=" + o.now.Format(time.RFC3339),
		// The agenda scenario is one POST /v1/agenda/run per engine, which
		// at 100,000 contracts answers after more than serve's default
		// 60 s write timeout.
		"LASTRO_WRITE_TIMEOUT=" + benchCallTimeout(o).String(),
		// One data key for every engine: they share the table, and with it
		// the tenants' sealed secrets.
		"LASTRO_DATA_KEY=" + base64.StdEncoding.EncodeToString(secret.Random(secret.KeySize))}
	var store *engineProc
	if n > 0 {
		s, err := startProc(ctx, filepath.Join(root, "store"), "embedded DynamoDB store listening", o.childEnv,
			"ddb", "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(root, "store"))
		if err != nil {
			return benchReport{}, err
		}
		defer s.stop()
		store = s
		env = append(env, "LASTRO_DYNAMODB_ENDPOINT="+s.url, "AWS_ACCESS_KEY_ID=lastro-bench", "AWS_SECRET_ACCESS_KEY=lastro-bench", "AWS_REGION=us-east-1")
	}
	var engines []engineProc
	for i := range max(n, 1) {
		dir := filepath.Join(root, fmt.Sprintf("engine-%d", i))
		e, err := startProc(ctx, dir, "lastro listening", slices.Concat(env, o.childEnv, []string{"LASTRO_DATA_DIR=" + dir}), "serve")
		if err != nil {
			return benchReport{}, err
		}
		defer e.stop()
		engines = append(engines, *e)
	}
	o.admin = admin
	rep, err := benchRun(ctx, o, engines, store, stdout, stderr)
	rep.processes = n
	return rep, err
}

// startProc starts this binary with args in its own process group and
// waits for its JSON log line whose msg is listening.
func startProc(ctx context.Context, dir, listening string, env []string, args ...string) (*engineProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LASTRO_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	logf, err := os.Create(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(logf, pw)
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &engineProc{pid: cmd.Process.Pid, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); pw.Close(); logf.Close(); close(p.done) }()
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			switch line.Msg {
			case "pprof listening":
				p.pprof = "http://" + line.Addr
			case listening:
				if p.url == "" {
					p.url = "http://" + line.Addr
					close(found)
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case <-found:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("lastro %s exited before listening (its log: %s)", strings.Join(args[:min(2, len(args))], " "), filepath.Join(dir, "log.jsonl"))
	case <-time.After(2 * time.Minute):
		p.stop()
		return nil, fmt.Errorf("lastro %s did not start listening in 2 minutes", args[0])
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// stop interrupts the process (a graceful shutdown) and waits for it,
// killing it after 30 s.
func (p *engineProc) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// processCPUOf is a process's user + system CPU time so far (Linux; 0
// elsewhere or once it is gone).
func processCPUOf(pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command may contain spaces: the fields start after its ")".
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// scenarioResult is one scenario's figures.
type scenarioResult struct {
	name        string
	requests    int
	took        time.Duration
	lat         []time.Duration
	engineCPU   time.Duration // all engines
	storeCPU    time.Duration // the networked store, when there is one
	allocs      uint64        // heap allocations of all engines (0: unknown)
	genCPU      time.Duration // this process's, the generator's
	unit        string        // what a request is ("req", "contract")
	units       int
	exactlyOnce string // the check's verdict, when the scenario has one
}

// benchReport is one process count's run.
type benchReport struct {
	processes int // 0: one serve on its embedded store
	results   []scenarioResult
}

// benchFixture is the portfolio the scenarios run on.
type benchFixture struct {
	tenant, secret     string
	operator, sup      string
	debtors, chargeIDs []string
}

func benchRun(ctx context.Context, o benchOptions, engines []engineProc, store *engineProc, stdout, stderr io.Writer) (benchReport, error) {
	var rep benchReport
	hc := &http.Client{Timeout: benchCallTimeout(o), Transport: &http.Transport{MaxIdleConns: 4 * o.clients, MaxIdleConnsPerHost: o.clients, IdleConnTimeout: time.Minute}}
	// A 503 (an engine's in-flight cap, the store's throttling) is sent
	// again after its Retry-After, as providers redeliver; the report
	// counts them.
	var retried atomic.Int64
	clients := make([]*cost.Client, len(engines))
	for i, e := range engines {
		clients[i] = &cost.Client{URL: e.url, HTTP: hc, Retries: 10, Retried: &retried}
	}
	fmt.Fprintf(stderr, "bench: %d engine(s), seeding %d debtors\n", len(engines), o.debtors)
	f, err := benchSeed(ctx, clients[0], o, "t-bench-"+strconv.FormatInt(time.Now().Unix()%1e6, 10))
	if err != nil {
		return rep, err
	}
	cpu := func() (time.Duration, time.Duration) {
		var e time.Duration
		for _, p := range engines {
			if p.pid > 0 {
				e += processCPUOf(p.pid)
			}
		}
		var s time.Duration
		if store != nil {
			s = processCPUOf(store.pid)
		}
		return e, s
	}
	for _, sc := range o.scenarios {
		fmt.Fprintf(stderr, "bench: %s\n", sc)
		var res scenarioResult
		// Read outside the CPU window: writing the figures costs the
		// engine a little CPU.
		m0, mok := engineMallocs(ctx, engines)
		e0, s0 := cpu()
		g0 := processCPUOf(os.Getpid())
		var e1, s1, g1 time.Duration
		var m1 uint64
		var m1ok bool
		window := func() (time.Duration, time.Duration, time.Duration, uint64, bool) {
			e, s := cpu()
			g := processCPUOf(os.Getpid())
			m, ok := engineMallocs(ctx, engines)
			return e, s, g, m, ok
		}
		switch sc {
		case "settlement", "pix":
			var stopProfile func() error
			if o.profile != "" && sc == "settlement" && engines[0].pprof != "" {
				// As long as the scenario is expected to take (at about
				// 500 req/s), within 5-30 s.
				stopProfile = startProfile(ctx, engines[0].pprof, o.profile, min(o.duration, max(5*time.Second, time.Duration(o.requests)*2*time.Millisecond), 30*time.Second))
			}
			res, err = benchWebhooks(ctx, o, clients, f, sc == "pix")
			if stopProfile != nil {
				err = errors.Join(err, stopProfile())
			}
		case "view360":
			res, err = benchLoad(ctx, o, "view360", func(ctx context.Context, n int) error {
				return clients[n%len(clients)].Expect(ctx, http.StatusOK, http.MethodGet, "/v1/debtors/"+f.debtors[(n*7919)%len(f.debtors)], f.operator, nil, nil)
			})
		case "portfolio":
			buckets := []string{"D001_030", "D031_060"}
			res, err = benchLoad(ctx, o, "portfolio", func(ctx context.Context, n int) error {
				return clients[n%len(clients)].Expect(ctx, http.StatusOK, http.MethodGet, "/v1/portfolio?limit=100&bucket="+buckets[n%2], f.sup, nil, nil)
			})
		case "agenda":
			if o.due == 0 {
				continue
			}
			// The window is the first run alone: not the seeding before
			// it, nor the second run that proves nothing is left.
			res, err = benchAgenda(ctx, o, clients, engines, stderr, func() {
				m0, mok = engineMallocs(ctx, engines)
				e0, s0 = cpu()
				g0 = processCPUOf(os.Getpid())
			}, func() { e1, s1, g1, m1, m1ok = window() })
		}
		if err != nil {
			return rep, fmt.Errorf("bench %s: %w", sc, err)
		}
		if sc != "agenda" {
			e1, s1, g1, m1, m1ok = window()
		}
		res.engineCPU, res.storeCPU, res.genCPU = e1-e0, s1-s0, g1-g0
		if m1ok && mok && m1 > m0 {
			res.allocs = m1 - m0
		}
		if n := retried.Swap(0); n > 0 {
			res.exactlyOnce = strings.TrimPrefix(res.exactlyOnce+fmt.Sprintf("; %d requests sent again after a 503", n), "; ")
		}
		rep.results = append(rep.results, res)
	}
	if o.profile != "" && engines[0].pprof != "" {
		if err := fetchTo(ctx, engines[0].pprof+"/debug/pprof/heap", filepath.Join(o.profile, fmt.Sprintf("heap-%d.pprof", len(engines)))); err != nil {
			return rep, err
		}
		fmt.Fprintf(stderr, "bench: profiles in %s (go tool pprof -top FILE)\n", o.profile)
	}
	return rep, nil
}

// engineMallocs adds up the engines' heap allocations so far (the
// runtime's MemStats.Mallocs, which the allocs profile's text form
// ends with); false when an engine has no profiling listener.
func engineMallocs(ctx context.Context, engines []engineProc) (uint64, bool) {
	var total uint64
	for _, e := range engines {
		if e.pprof == "" {
			return 0, false
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.pprof+"/debug/pprof/allocs?debug=1", nil)
		if err != nil {
			return 0, false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, false
		}
		n, ok := uint64(0), false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			if v, found := strings.CutPrefix(sc.Text(), "# Mallocs = "); found {
				n, err = strconv.ParseUint(v, 10, 64)
				ok = err == nil
			}
		}
		resp.Body.Close()
		if !ok {
			return 0, false
		}
		total += n
	}
	return total, true
}

// startProfile fetches a CPU profile of d in the
// background; the returned function waits for it.
func startProfile(ctx context.Context, base, dir string, d time.Duration) func() error {
	secs := int(d / time.Second)
	done := make(chan error, 1)
	go func() {
		done <- fetchTo(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, max(secs, 1)), filepath.Join(dir, "cpu.pprof"))
	}()
	return func() error { return <-done }
}

func fetchTo(ctx context.Context, u, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: status %d", resp.StatusCode)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, resp.Body); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// benchSeed creates the tenant and its portfolio through the API.
func benchSeed(ctx context.Context, c *cost.Client, o benchOptions, tenantID string) (*benchFixture, error) {
	var k struct {
		APIKeys       map[string]string `json:"apiKeys"`
		WebhookSecret string            `json:"webhookSecret"`
	}
	if err := c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/tenants", o.admin, map[string]string{"tenantId": tenantID, "name": "Bench"}, &k); err != nil {
		return nil, err
	}
	f := &benchFixture{tenant: tenantID, secret: k.WebhookSecret, operator: k.APIKeys["operator"], sup: k.APIKeys["supervisor"],
		debtors: make([]string, o.debtors), chargeIDs: make([]string, o.debtors)}
	today := calendar.Today(o.at(), time.FixedZone("BRT", -3*3600))
	docs := benchDocuments(o.debtors, 0xbe7c)
	err := parallel(ctx, o.debtors, min(o.clients, 16), func(i int) error {
		var reg struct {
			DebtorKey string `json:"debtorKey"`
		}
		if err := c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/debtors", f.operator, map[string]string{"document": docs[i],
			"name": "Pessoa Sintética", "phone": benchPhone(i)}, &reg); err != nil {
			return err
		}
		id := fmt.Sprintf("B-%06d", i)
		// 14 or 40 days late: the two first buckets.
		first := today.AddDays(-14 - 26*(i%2))
		var inst []map[string]any
		for s := range 12 {
			inst = append(inst, map[string]any{"seq": s + 1, "dueDate": first.AddMonths(s).String(), "principalCents": 90000, "interestCents": 10000})
		}
		if err := c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/debtors/"+reg.DebtorKey+"/contracts", f.operator,
			map[string]any{"contractId": id, "productCode": "CREDIARIO_12X", "installments": inst}, nil); err != nil {
			return err
		}
		var ch struct {
			ChargeID string `json:"chargeId"`
		}
		if err := c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/charges", f.operator,
			map[string]any{"debtorKey": reg.DebtorKey, "contractId": id, "seq": 1, "method": "PIX"}, &ch); err != nil {
			return err
		}
		f.debtors[i], f.chargeIDs[i] = reg.DebtorKey, ch.ChargeID
		return nil
	})
	return f, err
}

// benchLoad runs fn for request numbers 0.. on o.clients goroutines until
// o.requests are done or o.duration has passed.
func benchLoad(ctx context.Context, o benchOptions, name string, fn func(context.Context, int) error) (scenarioResult, error) {
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	lat := make([]time.Duration, o.requests)
	var next, done atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := int(next.Add(1)) - 1
				if n >= o.requests {
					return
				}
				t0 := time.Now()
				if err := fn(ctx, n); err != nil {
					if ctx.Err() != nil {
						return // the time bound, not a failure
					}
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
					cancel()
					return
				}
				lat[n] = time.Since(t0)
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	var got []time.Duration
	for _, d := range lat {
		if d > 0 {
			got = append(got, d)
		}
	}
	return scenarioResult{name: name, requests: len(got), took: took, lat: got, unit: "req", units: len(got)}, first
}

// benchWebhooks posts signed settlements (small partial payments of late
// contracts, so every one takes the full path), our JSON or the Pix
// format. With several engines each settlement is delivered twice, to
// two engines at once, and the check is that exactly one delivery
// applied it.
func benchWebhooks(ctx context.Context, o benchOptions, clients []*cost.Client, f *benchFixture, pix bool) (scenarioResult, error) {
	twice := len(clients) > 1
	var applied, dup atomic.Int64
	seq := time.Now().UnixNano() % 1e9
	body := func(n int) (string, []byte) {
		ch := f.chargeIDs[n%len(f.chargeIDs)]
		cents := 100 + n%7
		now := o.at().UTC()
		if pix {
			return "/v1/webhooks/" + f.tenant + "/pix", fmt.Appendf(nil, `{"pix":[{"endToEndId":"E%08d%s%011d","txid":%q,"valor":"%d.%02d","horario":%q}]}`,
				seq%1e8, now.Format("200601021504"), n, ch, cents/100, cents%100, now.Format("2006-01-02T15:04:05.000Z"))
		}
		return "/v1/webhooks/" + f.tenant + "/settlements", fmt.Appendf(nil, `{"settlementId":"bench-%d-%d","chargeId":%q,"amountCents":%d,"paidAt":%q}`,
			seq, n, ch, cents, now.Format(time.RFC3339))
	}
	post := func(ctx context.Context, c *cost.Client, path string, b []byte) (string, error) {
		status, raw, err := c.Webhook(ctx, path, f.secret, b, o.at())
		if err != nil {
			return "", err
		}
		if status != http.StatusOK {
			return "", fmt.Errorf("webhook: status %d", status)
		}
		switch {
		case bytes.Contains(raw, []byte(`"already_applied"`)):
			return "already_applied", nil
		case bytes.Contains(raw, []byte(`"applied"`)):
			return "applied", nil
		}
		return "", fmt.Errorf("webhook: answer neither applied nor already_applied")
	}
	name := "settlement"
	if pix {
		name = "pix"
	}
	res, err := benchLoad(ctx, o, name, func(ctx context.Context, n int) error {
		path, b := body(n)
		if !twice {
			s, err := post(ctx, clients[n%len(clients)], path, b)
			if s == "applied" {
				applied.Add(1)
			}
			return err
		}
		// The same settlement to two engines at once.
		var wg sync.WaitGroup
		out := make([]string, 2)
		errs := make([]error, 2)
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[j], errs[j] = post(ctx, clients[(n+j)%len(clients)], path, b)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for _, s := range out {
			if s == "applied" {
				applied.Add(1)
			} else {
				dup.Add(1)
			}
		}
		return nil
	})
	if twice {
		res.units = res.requests * 2
		res.exactlyOnce = fmt.Sprintf("%d settlements delivered twice to two engines: %d applied, %d already_applied", res.requests, applied.Load(), dup.Load())
		if applied.Load() != int64(res.requests) || dup.Load() != int64(res.requests) {
			return res, fmt.Errorf("exactly once broken: %s", res.exactlyOnce)
		}
		res.exactlyOnce += ": exactly once"
	} else if applied.Load() != int64(res.requests) {
		return res, fmt.Errorf("%d of %d settlements applied", applied.Load(), res.requests)
	}
	return res, err
}

// benchAgenda seeds o.due contracts whose first instalment fell due
// yesterday on a tenant of their own and runs that day's agenda once,
// every engine taking its share of the shards at the same time; then it
// checks that every contract was acted on exactly once: the runs'
// reports add up, a second run finds nothing, and the engines' outboxes
// hold one SMS per contract. The first run alone falls between start
// and stop, the scenario's CPU window.
func benchAgenda(ctx context.Context, o benchOptions, clients []*cost.Client, engines []engineProc, stderr io.Writer, start, stop func()) (scenarioResult, error) {
	res := scenarioResult{name: "agenda", unit: "contract"}
	tenantID := "t-bench-agenda-" + strconv.FormatInt(time.Now().Unix()%1e6, 10)
	var k struct {
		APIKeys map[string]string `json:"apiKeys"`
	}
	if err := clients[0].Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/tenants", o.admin, map[string]string{"tenantId": tenantID, "name": "Bench agenda"}, &k); err != nil {
		return res, err
	}
	op, sup := k.APIKeys["operator"], k.APIKeys["supervisor"]
	fmt.Fprintf(stderr, "bench: agenda: seeding %d contracts due yesterday\n", o.due)
	today := calendar.Today(o.at(), time.FixedZone("BRT", -3*3600))
	t0 := time.Now()
	docs := benchDocuments(o.due, 0xa6e4)
	err := parallel(ctx, o.due, min(o.clients, 16), func(i int) error {
		c := clients[i%len(clients)]
		var reg struct {
			DebtorKey string `json:"debtorKey"`
		}
		if err := c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/debtors", op, map[string]string{"document": docs[i],
			"name": "Pessoa Sintética", "phone": benchPhone(i)}, &reg); err != nil {
			return err
		}
		var inst []map[string]any
		for s := range 12 {
			inst = append(inst, map[string]any{"seq": s + 1, "dueDate": today.AddDays(-1).AddMonths(s).String(), "principalCents": 90000, "interestCents": 10000})
		}
		return c.Expect(ctx, http.StatusCreated, http.MethodPost, "/v1/debtors/"+reg.DebtorKey+"/contracts", op,
			map[string]any{"contractId": fmt.Sprintf("A-%07d", i), "productCode": "CREDIARIO_12X", "installments": inst}, nil)
	})
	if err != nil {
		return res, err
	}
	fmt.Fprintf(stderr, "bench: agenda: seeded in %s; running on %d engine(s)\n", time.Since(t0).Round(time.Second), len(clients))
	type report struct {
		Executed map[string]int `json:"executed"`
		Failed   int            `json:"failed"`
		Shards   []struct {
			Busy bool `json:"busy"`
		} `json:"shards"`
	}
	const shards = 16
	runAll := func() ([]report, time.Duration, error) {
		reps := make([]report, len(clients))
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		start := time.Now()
		for i, c := range clients {
			var mine []int
			for s := i; s < shards; s += len(clients) {
				mine = append(mine, s)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.Expect(ctx, http.StatusOK, http.MethodPost, "/v1/agenda/run", sup, map[string]any{"shards": mine}, &reps[i])
			}()
		}
		wg.Wait()
		return reps, time.Since(start), errors.Join(errs...)
	}
	start()
	reps, took, err := runAll()
	stop()
	if err != nil {
		return res, err
	}
	total := map[string]int{}
	for _, r := range reps {
		for a, n := range r.Executed {
			total[a] += n
		}
		if r.Failed > 0 {
			return res, fmt.Errorf("agenda: %d entries failed", r.Failed)
		}
	}
	res.took, res.requests, res.units = took, o.due, o.due
	again, _, err := runAll()
	if err != nil {
		return res, err
	}
	more := 0
	for _, r := range again {
		for _, n := range r.Executed {
			more += n
		}
	}
	// The engines' outboxes: one SMS_D1 per contract, across engines.
	sent := map[string]int{}
	for _, e := range engines {
		if e.dir == "" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(e.dir, "outbox.jsonl"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
		for line := range bytes.Lines(raw) {
			var m struct{ TenantID, ContractID, Action string }
			if json.Unmarshal(line, &m) == nil && m.TenantID == tenantID {
				sent[m.ContractID+"/"+m.Action]++
			}
		}
	}
	dupSends := 0
	for _, n := range sent {
		if n > 1 {
			dupSends++
		}
	}
	res.exactlyOnce = fmt.Sprintf("%d contracts: executed %s; a second run executed %d", o.due, describeCounts(total), more)
	if engines[0].dir != "" {
		res.exactlyOnce += fmt.Sprintf("; outboxes: %d messages for %d contract actions, %d sent twice", len(sent), len(sent), dupSends)
	}
	if total["SMS_D1"] != o.due || more != 0 || (engines[0].dir != "" && (len(sent) != o.due || dupSends != 0)) {
		return res, fmt.Errorf("exactly once broken: %s", res.exactlyOnce)
	}
	res.exactlyOnce += ": exactly once"
	return res, nil
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// printBench writes one table for every process count.
func printBench(w io.Writer, reports []benchReport) error {
	for _, rep := range reports {
		switch rep.processes {
		case 0:
			fmt.Fprintln(w, "one lastro serve on its embedded store (in process, persistent data directory), generator in the bench process, over loopback")
		default:
			fmt.Fprintf(w, "%d lastro serve process(es) on one lastro ddb serve (persistent), generator in the bench process, over loopback\n", rep.processes)
		}
		fmt.Fprintf(w, "  %-10s %8s %10s %9s %9s %9s %12s %12s %14s %12s\n", "scenario", "count", "rate", "p50", "p95", "p99", "engine CPU", "store CPU", "engine allocs", "bench CPU")
		for _, r := range rep.results {
			per := func(d time.Duration) string {
				if d == 0 || r.units == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f ms/%s", float64(d.Microseconds())/1000/float64(r.units), r.unit)
			}
			allocs := "-"
			if r.allocs > 0 && r.units > 0 {
				allocs = fmt.Sprintf("%d/%s", r.allocs/uint64(r.units), r.unit)
			}
			rate := float64(r.units) / r.took.Seconds()
			if r.name == "agenda" {
				fmt.Fprintf(w, "  %-10s %8d %7.0f/s  %9s %9s %9s %12s %12s %14s %12s\n", r.name, r.units, rate, "-", "-", "-", per(r.engineCPU), per(r.storeCPU), allocs, per(r.genCPU))
			} else {
				fmt.Fprintf(w, "  %-10s %8d %7.0f/s  %9s %9s %9s %12s %12s %14s %12s\n", r.name, r.units, rate, ms(pct(r.lat, 0.5)), ms(pct(r.lat, 0.95)), ms(pct(r.lat, 0.99)),
					per(r.engineCPU), per(r.storeCPU), allocs, per(r.genCPU))
			}
			if r.exactlyOnce != "" {
				fmt.Fprintf(w, "             %s\n", r.exactlyOnce)
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// benchDocuments returns n distinct CPFs drawn from seed. Drawn one by
// one, about five of 100,000 random CPFs repeat, and a repeat registers
// no new debtor (200, not 201).
func benchDocuments(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0xd0c5))
	seen := make(map[string]bool, n)
	docs := make([]string, 0, n)
	for len(docs) < n {
		if d := debtor.GenerateCPF(rng).Digits(); !seen[d] {
			seen[d] = true
			docs = append(docs, d)
		}
	}
	return docs
}

// benchPhone is the i-th seeded debtor's mobile phone: one each, as
// debtors have, so no phone lookup partition (ADR 0084) holds them all.
func benchPhone(i int) string { return fmt.Sprintf("+55 11 9%08d", i%100_000_000) }

// benchCallTimeout bounds one request of the bench: an agenda run is one
// request, as long as its scenario may last.
func benchCallTimeout(o benchOptions) time.Duration {
	return max(2*time.Minute, o.duration+time.Minute)
}
