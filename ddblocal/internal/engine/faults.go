package engine

import (
	"encoding/json"
	"fmt"
	rand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"lastro/ddblocal/internal/wire"
)

// Fault injection lets tests see the failures DynamoDB produces under
// pressure: throughput and throttling errors, internal errors, transaction
// conflicts and unprocessed batch items. It is off by default; rules are
// set with SetFault or through the admin endpoint (see adminPrefix), so a
// standalone store can be driven by tests in other processes.

// FaultKind names an injectable failure.
type FaultKind string

const (
	// FaultThroughputExceeded answers ProvisionedThroughputExceededException.
	FaultThroughputExceeded FaultKind = "ProvisionedThroughputExceededException"
	// FaultThrottling answers ThrottlingException.
	FaultThrottling FaultKind = "ThrottlingException"
	// FaultInternalError answers InternalServerError (HTTP 500).
	FaultInternalError FaultKind = "InternalServerError"
	// FaultTransactionConflict cancels a TransactWriteItems with a
	// TransactionConflict reason, and answers single-item writes with
	// TransactionConflictException.
	FaultTransactionConflict FaultKind = "TransactionConflict"
	// FaultUnprocessed leaves batch items in UnprocessedItems or
	// UnprocessedKeys (the rate applies per item).
	FaultUnprocessed FaultKind = "UnprocessedItems"
)

// The names the request handlers use.
type faultKind = FaultKind

// FaultRule injects one kind of failure into matching requests.
type FaultRule struct {
	// Table limits the rule to requests on this table; empty matches all.
	Table string `json:"Table,omitempty"`
	// Index limits the rule to one index: reads that name it (Query, Scan)
	// and writes to its table, which must maintain it.
	Index string `json:"Index,omitempty"`
	// Operations limits the rule to these operations (e.g. "PutItem");
	// empty matches every data-plane operation.
	Operations []string  `json:"Operations,omitempty"`
	Kind       FaultKind `json:"Kind"`
	// Rate is the probability of injecting the fault into a matching
	// request (into each item, for FaultUnprocessed), from 0 to 1.
	Rate float64 `json:"Rate"`
	// Count retires the rule after that many injections; 0 never does.
	Count int `json:"Count,omitempty"`
}

// faults holds the active rules.
type faults struct {
	mu    sync.Mutex
	rules []*activeFault
	rng   *rand.Rand
}

type activeFault struct {
	FaultRule
	injected int
}

func (r *FaultRule) validate() error {
	switch r.Kind {
	case FaultThroughputExceeded, FaultThrottling, FaultInternalError, FaultTransactionConflict, FaultUnprocessed:
	default:
		return fmt.Errorf("ddblocal: unknown fault kind %q", r.Kind)
	}
	if r.Rate < 0 || r.Rate > 1 {
		return fmt.Errorf("ddblocal: fault rate %v is not between 0 and 1", r.Rate)
	}
	if r.Count < 0 {
		return fmt.Errorf("ddblocal: negative fault count %d", r.Count)
	}
	return nil
}

// SetFault adds a fault injection rule.
func (s *Store) SetFault(rule FaultRule) error {
	if err := rule.validate(); err != nil {
		return err
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	rule.Operations = slices.Clone(rule.Operations)
	s.faults.rules = append(s.faults.rules, &activeFault{FaultRule: rule})
	return nil
}

// ClearFaults removes every fault injection rule.
func (s *Store) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.rules = nil
}

// Faults lists the active rules (with Count reduced by what they already
// injected).
func (s *Store) Faults() []FaultRule {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make([]FaultRule, 0, len(s.faults.rules))
	for _, r := range s.faults.rules {
		rule := r.FaultRule
		if rule.Count > 0 {
			rule.Count -= r.injected
		}
		out = append(out, rule)
	}
	return out
}

// SetFaultSeed makes fault injection deterministic: the same seed and the
// same sequence of requests inject the same faults.
func (s *Store) SetFaultSeed(seed uint64) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.rng = rand.New(rand.NewPCG(seed, seed))
}

// roll decides whether a matching rule fires now, retiring exhausted
// rules. Callers hold s.faults.mu.
func (f *faults) roll(r *activeFault) bool {
	if r.Rate == 0 {
		return false
	}
	var x float64
	if f.rng != nil {
		x = f.rng.Float64()
	} else {
		x = rand.Float64()
	}
	if x >= r.Rate {
		return false
	}
	r.injected++
	if r.Count > 0 && r.injected >= r.Count {
		f.rules = slices.DeleteFunc(f.rules, func(x *activeFault) bool { return x == r })
	}
	return true
}

// matches reports whether a rule applies to a request on table (and index,
// for reads naming one).
func (r *activeFault) matches(op, table, index string, write bool) bool {
	if r.Table != "" && r.Table != table {
		return false
	}
	if r.Index != "" && !write && r.Index != index {
		return false
	}
	return len(r.Operations) == 0 || op == "" || slices.Contains(r.Operations, op)
}

// InjectFor reports whether a fault of the given kind should be injected
// now into operation op on table (called by the batch and transaction
// handlers).
func (s *Store) InjectFor(op, table string, kind faultKind) bool {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for _, r := range s.faults.rules {
		if r.Kind == kind && r.matches(op, table, "", writeOps[op] || op == "") && s.faults.roll(r) {
			return true
		}
	}
	return false
}

// writeOps are the data-plane operations that write items.
var writeOps = map[string]bool{
	"PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true, "TransactWriteItems": true,
}

// dataOps are the operations dispatch-level faults apply to.
var dataOps = map[string]bool{
	"GetItem": true, "PutItem": true, "UpdateItem": true, "DeleteItem": true, "Query": true, "Scan": true,
	"BatchGetItem": true, "BatchWriteItem": true, "TransactWriteItems": true, "TransactGetItems": true,
}

// faultPeek is the part of a request body that names its tables.
type faultPeek struct {
	TableName     *string                                 `json:"TableName"`
	IndexName     *string                                 `json:"IndexName"`
	RequestItems  map[string]json.RawMessage              `json:"RequestItems"`
	TransactItems []map[string]struct{ TableName string } `json:"TransactItems"`
}

// InjectDispatch decides, before a data-plane request runs, whether it
// fails with an injected throughput, throttling, internal or conflict
// error. It returns nil (cheaply) when no rule is set.
func (s *Store) InjectDispatch(op string, body []byte) *wire.APIError {
	if !dataOps[op] {
		return nil
	}
	s.faults.mu.Lock()
	n := len(s.faults.rules)
	s.faults.mu.Unlock()
	if n == 0 {
		return nil
	}
	var p faultPeek
	if json.Unmarshal(body, &p) != nil {
		return nil // the handler reports malformed requests
	}
	var tables []string
	if p.TableName != nil {
		tables = append(tables, *p.TableName)
	}
	for name := range p.RequestItems {
		tables = append(tables, name)
	}
	for _, ti := range p.TransactItems {
		for _, x := range ti {
			tables = append(tables, x.TableName)
		}
	}
	slices.Sort(tables)
	tables = slices.Compact(tables)
	index := ""
	if p.IndexName != nil {
		index = *p.IndexName
	}
	write := writeOps[op]
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for _, r := range s.faults.rules {
		switch r.Kind {
		case FaultUnprocessed:
			continue
		case FaultTransactionConflict:
			// Transactions get theirs as a cancellation reason.
			if op != "PutItem" && op != "UpdateItem" && op != "DeleteItem" {
				continue
			}
		}
		for _, table := range tables {
			if r.matches(op, table, index, write) && s.faults.roll(r) {
				return faultError(r.Kind, r.Index != "")
			}
		}
	}
	return nil
}

func faultError(kind FaultKind, onIndex bool) *wire.APIError {
	switch kind {
	case FaultThroughputExceeded:
		msg := "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."
		if onIndex {
			msg = "The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes with the UpdateTable API"
		}
		return &wire.APIError{Type: "ProvisionedThroughputExceededException", Status: 400, Message: msg}
	case FaultThrottling:
		return &wire.APIError{Type: "ThrottlingException", Status: 400, Message: "Rate of requests exceeds the allowed throughput."}
	case FaultTransactionConflict:
		return &wire.APIError{Type: "TransactionConflictException", Status: 400, Message: "Transaction is ongoing for the item"}
	}
	return wire.Internal(nil)
}

// The admin endpoint, for tests driving a store in another process:
//
//	GET    /_ddblocal/faults            list the active rules: {"Rules": [...]}
//	POST   /_ddblocal/faults            add a rule: a FaultRule as JSON
//	DELETE /_ddblocal/faults            remove every rule
//	POST   /_ddblocal/faults/seed       make injection deterministic: {"Seed": 42}
//	GET    /_ddblocal/consumed?table=T  capacity consumed by T (all tables without table=)
//	DELETE /_ddblocal/consumed          reset the capacity meters
//	POST   /_ddblocal/ttl/sweep         run the TTL sweeper now: {"Deleted": n}
const AdminPrefix = "/_ddblocal/"

// ServeAdmin answers an admin request.
func (s *Store) ServeAdmin(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, v any) {
		out, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
	}
	fail := func(status int, err error) { reply(status, map[string]string{"message": err.Error()}) }
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, AdminPrefix), "/")
	switch {
	case path == "faults" && r.Method == http.MethodGet:
		reply(http.StatusOK, map[string]any{"Rules": s.Faults()})
	case path == "faults" && r.Method == http.MethodPost:
		var rule FaultRule
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&rule); err != nil {
			fail(http.StatusBadRequest, fmt.Errorf("decode fault rule: %w", err))
			return
		}
		if err := s.SetFault(rule); err != nil {
			fail(http.StatusBadRequest, err)
			return
		}
		reply(http.StatusOK, map[string]any{"Rules": s.Faults()})
	case path == "faults" && r.Method == http.MethodDelete:
		s.ClearFaults()
		reply(http.StatusOK, map[string]any{"Rules": []FaultRule{}})
	case path == "faults/seed" && r.Method == http.MethodPost:
		var in struct{ Seed uint64 }
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			fail(http.StatusBadRequest, fmt.Errorf("decode seed: %w", err))
			return
		}
		s.SetFaultSeed(in.Seed)
		reply(http.StatusOK, map[string]any{"Seed": in.Seed})
	case path == "consumed" && r.Method == http.MethodGet:
		if t := r.URL.Query().Get("table"); t != "" {
			reply(http.StatusOK, s.ConsumedCapacity(t))
			return
		}
		all := map[string]Consumed{}
		for _, t := range s.consumedTables() {
			all[t] = s.ConsumedCapacity(t)
		}
		reply(http.StatusOK, all)
	case path == "consumed" && r.Method == http.MethodDelete:
		s.ResetConsumedCapacity()
		reply(http.StatusOK, map[string]any{})
	case path == "ttl/sweep" && r.Method == http.MethodPost:
		start := time.Now()
		n, err := s.SweepExpired()
		if err != nil {
			fail(http.StatusInternalServerError, err)
			return
		}
		reply(http.StatusOK, map[string]any{"Deleted": n, "Millis": time.Since(start).Milliseconds()})
	default:
		fail(http.StatusNotFound, fmt.Errorf("no admin resource %s %s", r.Method, r.URL.Path))
	}
}
