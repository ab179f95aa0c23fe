package returns_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"lastro/boleto/cnabtest"
	"lastro/engine/enginetest"
)

// TestConcurrentImportsApplyEachLiquidationOnce: the same return file
// posted by four clients at once (an operator double-clicking, a retrying
// uploader) applies each liquidation once over all the answers, and the
// counts of every answer add up: across them, two applied, one in
// suspense and the rest repeats.
func TestConcurrentImportsApplyEachLiquidationOnce(t *testing.T) {
	t.Parallel()
	env, keys, dk, chs := fixture(t)
	file := cnabtest.Return("001", paid(chs[0]), unknown, paid(chs[1])).CRLF()
	const n = 4
	type answer struct {
		status int
		out    map[string]any
		err    error
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i].status, answers[i].out, answers[i].err = post(env, keys["supervisor"], file)
		})
	}
	close(start)
	wg.Wait()
	sum := map[string]float64{}
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("import %d: %d %v %v", i, a.status, a.out, a.err)
		}
		for _, k := range []string{"applied", "suspense", "alreadyApplied", "alreadyInSuspense", "repeated", "conflicts"} {
			sum[k] += a.out[k].(float64)
		}
	}
	want := map[string]float64{"applied": 2, "suspense": 1, "alreadyApplied": 2 * (n - 1), "alreadyInSuspense": n - 1, "repeated": 3 * (n - 1), "conflicts": 0}
	if fmt.Sprint(sum) != fmt.Sprint(want) {
		t.Errorf("counts over %d concurrent imports %v, want %v", n, sum, want)
	}
	if seqs := paidSeqs(t, env, keys, dk); fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("paid instalments %v, want 1 and 2", seqs)
	}
	if s := suspended(t, env, keys); len(s) != 1 {
		t.Fatalf("suspense %v, want one", s)
	}
}

// post imports a return file from any goroutine.
func post(env *enginetest.Env, token, file string) (int, map[string]any, error) {
	req, err := http.NewRequest(http.MethodPost, env.URL+"/v1/boletos/returns", strings.NewReader(file))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := env.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	err = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, err
}
