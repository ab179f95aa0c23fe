package ddblocal_test

// The crash test runs a persistent store in a child process (this test
// binary, re-executed with crashChildEnv set), drives a concurrent write
// load at it, kills it with SIGKILL mid-load, restarts it on the same data
// directory and checks that nothing acknowledged was lost, that no
// transaction is half applied and that the GSI matches the base items.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
)

// crashChildEnv, when set to a directory, turns the test binary into a
// standalone store serving that directory (see init).
const crashChildEnv = "DDBLOCAL_CRASH_CHILD_DIR"

// init runs before the testing framework, so the child never runs tests:
// it serves until killed, or until its parent goes away (stdin closes).
func init() {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(runCrashChild(dir))
	}
}

func runCrashChild(dir string) int {
	st, err := ddblocal.Open(ddblocal.Options{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	fmt.Printf("listening %s\n", ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3) // orphaned: the parent died without killing us
	}()
	if err := st.Serve(context.Background(), ln); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// crashChild is a running child store.
type crashChild struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

func startCrashChild(t *testing.T, dir string) *crashChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child store: %v", err)
	}
	c := &crashChild{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.kill()
		stdin.Close()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			addr <- strings.TrimPrefix(sc.Text(), "listening ")
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-addr:
		c.url = "http://" + a
	case <-c.done:
		t.Fatalf("child store exited before listening: %v", cmd.ProcessState)
	case <-time.After(30 * time.Second):
		t.Fatal("child store did not start within 30s")
	}
	return c
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *crashChild) kill() {
	c.cmd.Process.Kill()
	<-c.done
}

// crashState is what the test knows of one item written by a put writer.
type crashState struct {
	exists   bool
	hasOwner bool
	owner    string
	seq, val int
}

// crashPutWriter owns its keys: expected holds the state after each
// acknowledged write; uncertain is the key whose write failed (it may or
// may not have been applied) and the state it would have left.
type crashPutWriter struct {
	expected  map[string]crashState
	uncertain string
	maybe     crashState
}

// crashXferResult records a transfer transaction's outcome.
type crashXferResult int

const (
	crashXferAcked    crashXferResult = iota // must be fully applied
	crashXferCanceled                        // must not be applied at all
	crashXferUnknown                         // either, but never half
)

const (
	crashTable    = "crash"
	crashAccounts = 16
	crashStartBal = 1000
)

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := startCrashChild(t, dir)
	c := benchClient(child.url)
	ctx := context.Background()
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(crashTable),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("owner"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("seq"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("byOwner"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("owner"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("seq"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	for a := range crashAccounts {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(crashTable), Item: map[string]types.AttributeValue{
			"pk": crashS(crashAccount(a)), "bal": crashN(crashStartBal)}})
		if err != nil {
			t.Fatalf("create account: %v", err)
		}
	}

	puts := map[string]crashState{}
	xfers := map[string]crashXferResult{}
	// Two crash cycles: the second one crashes a store that has itself
	// recovered from a crash.
	for cycle := range 2 {
		lp, lx := crashLoad(t, c, cycle, child.kill)
		child = startCrashChild(t, dir)
		c = benchClient(child.url)
		items := crashScanAll(t, c, &dynamodb.ScanInput{TableName: aws.String(crashTable), ConsistentRead: aws.Bool(true)})
		crashCheckPuts(t, items, puts, lp)
		crashCheckTransfers(t, items, xfers, lx)
		crashCheckIndex(t, c, items)
		if t.Failed() {
			return
		}
	}
}

// crashLoad runs put writers and transfer writers, kills the store once
// a few hundred writes have been acknowledged (so the kill lands mid-load,
// at a moment that varies from run to run), and returns what each writer
// knows once all of them have stopped on their first failed request.
func crashLoad(t *testing.T, c *dynamodb.Client, cycle int, kill func()) ([]*crashPutWriter, map[string]crashXferResult) {
	const putWriters, xferWriters = 8, 8
	var (
		acked  atomic.Int64
		killed atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		xfers  = map[string]crashXferResult{}
	)
	unexpected := func(what string, err error) {
		if !killed.Load() {
			t.Errorf("%s failed before the crash: %v", what, err)
		}
	}
	pws := make([]*crashPutWriter, putWriters)
	for w := range putWriters {
		pw := &crashPutWriter{expected: map[string]crashState{}}
		pws[w] = pw
		wg.Go(func() {
			for i := 0; ; i++ {
				k, next, op := crashPutOp(c, cycle, w, i, pw.expected)
				if err := op(); err != nil {
					pw.uncertain, pw.maybe = k, next
					unexpected("put writer", err)
					return
				}
				pw.expected[k] = next
				acked.Add(1)
			}
		})
	}
	for w := range xferWriters {
		rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(w)))
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("xfer#%d#%d#%d", cycle, w, i)
				from := rng.IntN(crashAccounts)
				to := (from + 1 + rng.IntN(crashAccounts-1)) % crashAccounts
				err := crashTransfer(c, id, (cycle*100+w)*1_000_000+i, from, to, 1+rng.IntN(50))
				var canceled *types.TransactionCanceledException
				result := crashXferAcked
				switch {
				case err == nil:
					acked.Add(1)
				case errors.As(err, &canceled):
					result = crashXferCanceled
				default:
					result = crashXferUnknown
				}
				mu.Lock()
				xfers[id] = result
				mu.Unlock()
				if result == crashXferUnknown {
					unexpected("crashTransfer writer", err)
					return
				}
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	target := int64(200 + rand.IntN(300))
	for acked.Load() < target && time.Now().Before(deadline) && !t.Failed() {
		time.Sleep(2 * time.Millisecond)
	}
	if acked.Load() < target && !t.Failed() {
		t.Errorf("only %d writes acknowledged in 30s", acked.Load())
	}
	killed.Store(true)
	kill()
	wg.Wait()
	t.Logf("cycle %d: killed the store after %d acknowledged writes", cycle, acked.Load())
	return pws, xfers
}

// crashPutOp returns writer w's i-th operation: mostly Puts of new items, with
// Updates that remove, restore or change the GSI key of earlier items and
// Deletes, so the index sees every kind of change. It returns the key, the
// item's state once the operation is applied, and the call.
func crashPutOp(c *dynamodb.Client, cycle, w, i int, expected map[string]crashState) (string, crashState, func() error) {
	key := func(j int) string { return fmt.Sprintf("put#%d#%d#%d", cycle, w, j) }
	ctx, table := context.Background(), aws.String(crashTable)
	update := func(k, expr string, names map[string]string, vals map[string]types.AttributeValue) func() error {
		return func() error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table,
				Key:              map[string]types.AttributeValue{"pk": crashS(k)},
				UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
			return err
		}
	}
	switch i % 10 {
	case 6: // drop out of the GSI
		k := key(i - 3)
		next := expected[k]
		next.hasOwner, next.owner = false, ""
		return k, next, update(k, "REMOVE #o", map[string]string{"#o": "owner"}, nil)
	case 7: // move to another GSI partition and sort key
		k := key(i - 2)
		next := expected[k]
		next.hasOwner, next.owner, next.seq, next.val = true, "p"+strconv.Itoa(w), i, next.val+1
		return k, next, update(k, "SET #o = :o, seq = :s, val = val + :one", map[string]string{"#o": "owner"},
			map[string]types.AttributeValue{":o": crashS(next.owner), ":s": crashN(i), ":one": crashN(1)})
	case 8:
		k := key(i - 4)
		return k, crashState{}, func() error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table,
				Key: map[string]types.AttributeValue{"pk": crashS(k)}})
			return err
		}
	case 9: // new GSI sort key, same partition
		k := key(i - 9)
		next := expected[k]
		next.seq = i
		return k, next, update(k, "SET seq = :s", nil, map[string]types.AttributeValue{":s": crashN(i)})
	}
	k := key(i)
	next := crashState{exists: true, hasOwner: true, owner: "o" + strconv.Itoa(w%4), seq: i, val: i * 7}
	return k, next, func() error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: map[string]types.AttributeValue{
			"pk": crashS(k), "owner": crashS(next.owner), "seq": crashN(next.seq), "val": crashN(next.val)}})
		return err
	}
}

// crashTransfer moves amt from one account to another and records the move,
// in one three-action transaction: the invariant is that the balances
// always equal the starting balances plus the recorded moves.
func crashTransfer(c *dynamodb.Client, id string, seq, from, to, amt int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	table := aws.String(crashTable)
	_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: table,
			Key:                       map[string]types.AttributeValue{"pk": crashS(crashAccount(from))},
			UpdateExpression:          aws.String("SET bal = bal - :x"),
			ConditionExpression:       aws.String("bal >= :x"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":x": crashN(amt)}}},
		{Update: &types.Update{TableName: table,
			Key:                       map[string]types.AttributeValue{"pk": crashS(crashAccount(to))},
			UpdateExpression:          aws.String("SET bal = bal + :x"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":x": crashN(amt)}}},
		{Put: &types.Put{TableName: table,
			Item: map[string]types.AttributeValue{"pk": crashS(id), "owner": crashS("xfer"), "seq": crashN(seq),
				"from": crashN(from), "to": crashN(to), "amt": crashN(amt)},
			ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	return err
}

// crashCheckPuts compares the put writers' items with what they were told, and
// folds the outcome into all (the state known across cycles).
func crashCheckPuts(t *testing.T, items map[string]map[string]types.AttributeValue, all map[string]crashState, pws []*crashPutWriter) {
	for k, want := range all { // written in earlier cycles, untouched since
		if got := crashStateOf(items[k]); got != want {
			t.Errorf("item %s from an earlier cycle is %+v, want %+v", k, got, want)
		}
	}
	for w, pw := range pws {
		for k, want := range pw.expected {
			if k == pw.uncertain {
				continue
			}
			if got := crashStateOf(items[k]); got != want {
				t.Errorf("acknowledged write lost: writer %d item %s is %+v, want %+v", w, k, got, want)
			}
			all[k] = want
		}
		if k := pw.uncertain; k != "" {
			got, before := crashStateOf(items[k]), pw.expected[k]
			if got != before && got != pw.maybe {
				t.Errorf("write in flight at the crash: item %s is %+v, want %+v (not applied) or %+v (applied)", k, got, before, pw.maybe)
			}
			all[k] = got
		}
	}
	for k, it := range items {
		if strings.HasPrefix(k, "put#") {
			if _, ok := all[k]; !ok {
				t.Errorf("item %s was never written: %v", k, crashCanon(it))
			}
		}
	}
}

// crashCheckTransfers checks that acknowledged transfers are recorded, canceled
// ones are not, and that the balances are exactly the starting balances
// plus the recorded moves: a half-applied transaction breaks the equality.
func crashCheckTransfers(t *testing.T, items map[string]map[string]types.AttributeValue, all, cycle map[string]crashXferResult) {
	applied := 0
	for id, r := range cycle {
		present := items[id] != nil
		switch {
		case r == crashXferAcked && !present:
			t.Errorf("acknowledged transaction %s lost", id)
		case r == crashXferCanceled && present:
			t.Errorf("canceled transaction %s applied", id)
		}
		all[id] = crashXferCanceled
		if present {
			all[id] = crashXferAcked
			applied++
		}
	}
	want := make([]int, crashAccounts)
	for i := range want {
		want[i] = crashStartBal
	}
	for k, it := range items {
		if !strings.HasPrefix(k, "xfer#") {
			continue
		}
		if all[k] != crashXferAcked {
			t.Errorf("transaction record %s was never written", k)
		}
		from, to, amt := crashNum(t, it, "from"), crashNum(t, it, "to"), crashNum(t, it, "amt")
		want[from] -= amt
		want[to] += amt
	}
	sum := 0
	for a := range crashAccounts {
		got := crashNum(t, items[crashAccount(a)], "bal")
		sum += got
		if got != want[a] {
			t.Errorf("account %d balance %d, want %d from the recorded transfers: a transaction is half applied", a, got, want[a])
		}
	}
	if sum != crashAccounts*crashStartBal {
		t.Errorf("balances sum to %d, want %d", sum, crashAccounts*crashStartBal)
	}
	t.Logf("%d transfers applied this cycle (%d attempted)", applied, len(cycle))
}

// crashCheckIndex checks that the GSI holds exactly the base items that have
// both of its key attributes, with the same attributes (projection ALL).
func crashCheckIndex(t *testing.T, c *dynamodb.Client, items map[string]map[string]types.AttributeValue) {
	want := map[string]string{}
	for k, it := range items {
		_, okO := it["owner"].(*types.AttributeValueMemberS)
		_, okS := it["seq"].(*types.AttributeValueMemberN)
		if okO && okS {
			want[k] = crashCanon(it)
		}
	}
	got := map[string]string{}
	for k, it := range crashScanAll(t, c, &dynamodb.ScanInput{TableName: aws.String(crashTable), IndexName: aws.String("byOwner")}) {
		got[k] = crashCanon(it)
	}
	bad := 0
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] && bad < 10 {
			bad++
			t.Errorf("GSI entry for %s is %q, want %q", k, got[k], want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok && bad < 10 {
			bad++
			t.Errorf("GSI has an entry for %s, which is not in the base table with its keys: %q", k, got[k])
		}
	}
}

// crashScanAll reads a whole table or index, keyed by pk. A GSI holds at most
// one entry per base item, so pk identifies entries there too.
func crashScanAll(t *testing.T, c *dynamodb.Client, in *dynamodb.ScanInput) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewScanPaginator(c, in)
	for p.HasMorePages() {
		// A connection kept from before a kill can fail one read ("use of
		// closed network connection"); the paginator retries the same page.
		var page *dynamodb.ScanOutput
		var err error
		for try := 0; try < 3; try++ {
			if page, err = p.NextPage(context.Background()); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, it := range page.Items {
			k := it["pk"].(*types.AttributeValueMemberS).Value
			if _, dup := out[k]; dup {
				t.Errorf("scan returned %s twice", k)
			}
			out[k] = it
		}
	}
	return out
}

// crashStateOf summarises a put writer's item.
func crashStateOf(it map[string]types.AttributeValue) crashState {
	if it == nil {
		return crashState{}
	}
	s := crashState{exists: true}
	if o, ok := it["owner"].(*types.AttributeValueMemberS); ok {
		s.hasOwner, s.owner = true, o.Value
	}
	if n, ok := it["seq"].(*types.AttributeValueMemberN); ok {
		s.seq, _ = strconv.Atoi(n.Value)
	}
	if n, ok := it["val"].(*types.AttributeValueMemberN); ok {
		s.val, _ = strconv.Atoi(n.Value)
	}
	return s
}

// crashCanon renders an item of S and N attributes canonically.
func crashCanon(it map[string]types.AttributeValue) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(it)) {
		switch v := it[k].(type) {
		case *types.AttributeValueMemberS:
			fmt.Fprintf(&b, "%s=S:%s;", k, v.Value)
		case *types.AttributeValueMemberN:
			fmt.Fprintf(&b, "%s=N:%s;", k, v.Value)
		default:
			fmt.Fprintf(&b, "%s=%T;", k, v)
		}
	}
	return b.String()
}

func crashNum(t *testing.T, it map[string]types.AttributeValue, name string) int {
	t.Helper()
	n, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("item %v has no number %s", crashCanon(it), name)
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		t.Fatalf("item %v: %s: %v", crashCanon(it), name, err)
	}
	return v
}

func crashAccount(a int) string { return "acct#" + strconv.Itoa(a) }

func crashS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func crashN(n int) types.AttributeValue    { return &types.AttributeValueMemberN{Value: strconv.Itoa(n)} }
