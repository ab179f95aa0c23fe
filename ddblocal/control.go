package ddblocal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"lastro/ddblocal/internal/storage"
	"sort"

	"github.com/google/uuid"
)

// Table operations run synchronously: a table, an index or a change is
// usable as soon as the call returns. Responses still carry the transient
// states DynamoDB reports in them (CREATING, UPDATING, DELETING), while
// DescribeTable reports the settled state.

// persistDef writes a table definition to the catalog.
func (s *Store) persistDef(d *tableDef) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Set(storage.TableKey(d.Name), raw)
	b.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.nextID))
	return b.Commit()
}

// tableBeingDeleted is DynamoDB's refusal of a table name still DELETING.
func tableBeingDeleted(name string) *apiError {
	return resourceInUse("Attempt to change a resource which is still in use: Table is being deleted: " + name)
}

func tableNotFound(name string) *apiError {
	return notFound("Requested resource not found: Table: " + tableNameOf(name) + " not found")
}

func (s *Store) createTable(ctx context.Context, body []byte) (any, error) {
	var in createTableInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.TableName == nil {
		return nil, validation("The parameter 'TableName' is required but was not present in the request")
	}
	if err := createTableConstraints(&in); err != nil {
		return nil, err
	}
	d, err := s.checkCreateTable(&in)
	if err != nil {
		return nil, err
	}
	if err := checkCreateTags(in.Tags); err != nil {
		return nil, err
	}
	now := s.now()
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
		d.Warm.raise(onDemandWarmRead, onDemandWarmWrite)
	} else {
		d.Throughput = *in.ProvisionedThroughput
		d.Warm.raise(*d.Throughput.ReadCapacityUnits, *d.Throughput.WriteCapacityUnits)
	}
	if w := in.WarmThroughput; w != nil {
		d.Warm.raise(deref(w.ReadUnitsPerSecond), deref(w.WriteUnitsPerSecond))
	}
	for i, ix := range d.Indexes {
		if ix.Local {
			continue
		}
		spec := in.GlobalSecondaryIndexes[i-len(in.LocalSecondaryIndexes)]
		if d.BillingMode == "PAY_PER_REQUEST" {
			ix.Warm.raise(onDemandWarmRead, onDemandWarmWrite)
		} else {
			ix.Warm.raise(*ix.Throughput.ReadCapacityUnits, *ix.Throughput.WriteCapacityUnits)
		}
		if w := spec.WarmThroughput; w != nil {
			ix.Warm.raise(deref(w.ReadUnitsPerSecond), deref(w.WriteUnitsPerSecond))
		}
	}
	if sp := in.StreamSpecification; sp != nil && *sp.StreamEnabled {
		d.StreamEnabled = true
		d.StreamViewType = sp.StreamViewType
		d.StreamLabel = streamLabel(now)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[d.Name]; ok {
		return nil, resourceInUse("Table already exists: " + d.Name)
	}
	if s.deleting[d.Name] {
		return nil, tableBeingDeleted(d.Name)
	}
	d.ID = s.nextID
	s.nextID++
	// The stream descriptor (streams.go) must exist before writers can see
	// the table.
	if err := s.streamTransition(nil, d); err != nil {
		return nil, err
	}
	if err := s.persistDef(d); err != nil {
		return nil, err
	}
	t := &table{}
	t.def.Store(d)
	s.tables[d.Name] = t
	desc := s.describe(t, descOpts{status: "CREATING", indexStatus: "CREATING", created: true})
	return map[string]any{"TableDescription": desc}, nil
}

// streamLabel is the label of a stream enabled at now.
func streamLabel(now interface{ Format(string) string }) string {
	return now.Format("2006-01-02T15:04:05.000")
}

// lookupTable validates a TableName-only request and finds its table.
func (s *Store) lookupTable(body []byte) (*table, error) {
	var in tableNameInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.tableName("tableName", in.TableName)
	if err := c.err(); err != nil {
		return nil, err
	}
	t := s.table(*in.TableName)
	if t == nil {
		return nil, tableNotFound(*in.TableName)
	}
	return t, nil
}

func (s *Store) describeTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupTable(body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": s.describe(t, descOpts{})}, nil
}

func (s *Store) deleteTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupTable(body)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	d := t.def.Load()
	if s.tables[d.Name] != t {
		s.mu.Unlock()
		return nil, tableNotFound(d.Name)
	}
	if d.Protected {
		s.mu.Unlock()
		return nil, validation("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	}
	delete(s.tables, d.Name)
	s.deleting[d.Name] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.deleting, d.Name)
		s.mu.Unlock()
	}()
	// Writers that looked the table up before may still be committing:
	// those past this barrier are refused, those before it are covered by
	// the DeleteRange below.
	s.db.Lock()
	t.dropped.Store(true)
	s.db.Unlock()
	desc := s.describeDef(t, d, descOpts{status: "DELETING", deleted: true})
	lo, hi := storage.TableSpan(d.ID)
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete(storage.TableKey(d.Name))
	b.DeleteRange(lo, hi)
	if err := b.Commit(); err != nil {
		return nil, err
	}
	// The table's stream is disabled but stays readable for 24 hours.
	if err := s.streamTransition(d, nil); err != nil {
		return nil, err
	}
	return map[string]any{"TableDescription": desc}, nil
}

func (s *Store) listTables(ctx context.Context, body []byte) (any, error) {
	var in listTablesInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	if in.ExclusiveStartTableName != nil {
		c.name("exclusiveStartTableName", *in.ExclusiveStartTableName, 3)
	}
	c.min("limit", in.Limit, 1)
	c.max("limit", in.Limit, 100)
	if err := c.err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	s.mu.RUnlock()
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

// lookupForDescribe is lookupTable under the name other operations use.
func (s *Store) lookupForDescribe(body []byte) (*table, error) { return s.lookupTable(body) }
