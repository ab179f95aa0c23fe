package control

import (
	"context"
	"sort"

	"github.com/google/uuid"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// TableBeingDeleted is DynamoDB's refusal of a table name still DELETING.
func TableBeingDeleted(name string) *wire.APIError {
	return wire.ResourceInUse("Attempt to change a resource which is still in use: Table is being deleted: " + name)
}

// CreateTable answers a CreateTable request. It is one long function on
// purpose: its checks run in the order DynamoDB reports violations, the
// first refusal is the wire contract, and the sequence reads top to bottom
// in one place.
func (s *Store) CreateTable(ctx context.Context, body []byte) (any, error) {
	var in wire.CreateTableInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if in.TableName == nil {
		return nil, wire.Validation("The parameter 'TableName' is required but was not present in the request")
	}
	if err := createTableConstraints(&in); err != nil {
		return nil, err
	}
	d, err := s.CheckCreateTable(&in)
	if err != nil {
		return nil, err
	}
	if err := checkCreateTags(in.Tags); err != nil {
		return nil, err
	}
	now := s.Now()
	d.Name = *in.TableName
	d.Created = now
	d.TableID = uuid.NewString()
	d.TableClass = in.TableClass
	d.SSE = in.SSESpecification
	d.Tags = in.Tags
	if in.DeletionProtectionEnabled != nil {
		d.Protected = *in.DeletionProtectionEnabled
	}
	if d.BillingMode == "PAY_PER_REQUEST" {
		d.PayPerRequestAt = now
		d.OnDemand = in.OnDemandThroughput
		d.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
	} else {
		d.Throughput = *in.ProvisionedThroughput
		d.Warm.Raise(*d.Throughput.ReadCapacityUnits, *d.Throughput.WriteCapacityUnits)
	}
	if w := in.WarmThroughput; w != nil {
		d.Warm.Raise(engine.Deref(w.ReadUnitsPerSecond), engine.Deref(w.WriteUnitsPerSecond))
	}
	for i, ix := range d.Indexes {
		if ix.Local {
			continue
		}
		spec := in.GlobalSecondaryIndexes[i-len(in.LocalSecondaryIndexes)]
		if d.BillingMode == "PAY_PER_REQUEST" {
			ix.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
		} else {
			ix.Warm.Raise(*ix.Throughput.ReadCapacityUnits, *ix.Throughput.WriteCapacityUnits)
		}
		if w := spec.WarmThroughput; w != nil {
			ix.Warm.Raise(engine.Deref(w.ReadUnitsPerSecond), engine.Deref(w.WriteUnitsPerSecond))
		}
	}
	if sp := in.StreamSpecification; sp != nil && *sp.StreamEnabled {
		d.StreamEnabled = true
		d.StreamViewType = sp.StreamViewType
		d.StreamLabel = streamLabel(now)
	}

	s.Mu.Lock()
	defer s.Mu.Unlock()
	if _, ok := s.Tables[d.Name]; ok {
		return nil, wire.ResourceInUse("Table already exists: " + d.Name)
	}
	if s.Deleting[d.Name] {
		return nil, TableBeingDeleted(d.Name)
	}
	d.ID = s.NextID
	s.NextID++
	// The stream descriptor (streams.go) must exist before writers can see
	// the table.
	if err := s.StreamTransition(nil, d); err != nil {
		return nil, err
	}
	if err := s.PersistDef(d); err != nil {
		return nil, err
	}
	t := &engine.Table{}
	t.Def.Store(d)
	s.Tables[d.Name] = t
	desc := s.Describe(t, engine.DescOpts{Status: "CREATING", IndexStatus: "CREATING", Created: true})
	return map[string]any{"TableDescription": desc}, nil
}

// streamLabel is the label of a stream enabled at now.
func streamLabel(now interface{ Format(string) string }) string {
	return now.Format("2006-01-02T15:04:05.000")
}

// DescribeTable answers the DescribeTable operation.
func (s *Store) DescribeTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.LookupTable(body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": s.Describe(t, engine.DescOpts{})}, nil
}

// DeleteTable answers the DeleteTable operation.
func (s *Store) DeleteTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.LookupTable(body)
	if err != nil {
		return nil, err
	}
	s.Mu.Lock()
	d := t.Def.Load()
	if s.Tables[d.Name] != t {
		s.Mu.Unlock()
		return nil, engine.TableNotFound(d.Name)
	}
	if d.Protected {
		s.Mu.Unlock()
		return nil, wire.Validation("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	}
	delete(s.Tables, d.Name)
	s.Deleting[d.Name] = true
	s.Mu.Unlock()
	defer func() {
		s.Mu.Lock()
		delete(s.Deleting, d.Name)
		s.Mu.Unlock()
	}()
	// Writers that looked the table up before may still be committing:
	// those past this barrier are refused, those before it are covered by
	// the DeleteRange below.
	s.DB.Lock()
	t.Dropped.Store(true)
	s.DB.Unlock()
	desc := s.DescribeDef(t, d, engine.DescOpts{Status: "DELETING", Deleted: true})
	lo, hi := storage.TableSpan(d.ID)
	b := s.DB.NewBatch()
	defer b.Close()
	b.Delete(storage.TableKey(d.Name))
	b.DeleteRange(lo, hi)
	if err := b.Commit(); err != nil {
		return nil, err
	}
	// The table's stream is disabled but stays readable for 24 hours.
	if err := s.StreamTransition(d, nil); err != nil {
		return nil, err
	}
	return map[string]any{"TableDescription": desc}, nil
}

// ListTables answers the ListTables operation.
func (s *Store) ListTables(ctx context.Context, body []byte) (any, error) {
	var in wire.ListTablesInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	if in.ExclusiveStartTableName != nil {
		c.Name("exclusiveStartTableName", *in.ExclusiveStartTableName, 3)
	}
	c.Min("limit", in.Limit, 1)
	c.Max("limit", in.Limit, 100)
	if err := c.Err(); err != nil {
		return nil, err
	}
	s.Mu.RLock()
	names := make([]string, 0, len(s.Tables))
	for n := range s.Tables {
		names = append(names, n)
	}
	s.Mu.RUnlock()
	sort.Strings(names) // byte-wise, as DynamoDB orders them
	if in.ExclusiveStartTableName != nil {
		// The start name need not exist: listing resumes after it.
		i := sort.SearchStrings(names, *in.ExclusiveStartTableName)
		if i < len(names) && names[i] == *in.ExclusiveStartTableName {
			i++
		}
		names = names[i:]
	}
	limit := 100
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["LastEvaluatedTableName"] = names[limit-1]
	}
	out["TableNames"] = names
	return out, nil
}
