package ddblocal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"lastro/ddblocal/internal/av"
)

func (s *Store) tableARN(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", s.opts.Region, s.opts.AccountID, name)
}

// persistDef writes a table definition to the catalog.
func (s *Store) persistDef(d *tableDef) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Set(metaTableKey(d.Name), raw, nil)
	b.Set(metaNextIDKey, binary.BigEndian.AppendUint32(nil, s.nextID), nil)
	return b.Commit(s.writeOpts())
}

func (s *Store) writeOpts() *pebble.WriteOptions {
	if s.sync {
		return pebble.Sync
	}
	return pebble.NoSync
}

// checkKeySchema validates a key schema against the attribute definitions
// and returns its key definitions.
func checkKeySchema(ks []keySchemaElement, defs map[string]av.Type, what string) (hash, rng keyDef, err error) {
	if len(ks) == 0 {
		return hash, rng, validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", what)
	}
	if len(ks) > 2 {
		return hash, rng, validation("1 validation error detected: Value '%v' at '%s' failed to satisfy constraint: Member must have length less than or equal to 2", ks, what)
	}
	if ks[0].KeyType != "HASH" {
		return hash, rng, validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
	}
	if len(ks) == 2 {
		if ks[1].KeyType != "RANGE" {
			return hash, rng, validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
		}
		if ks[0].AttributeName == ks[1].AttributeName {
			return hash, rng, validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
		}
	}
	for i, k := range ks {
		t, ok := defs[k.AttributeName]
		if !ok {
			names := make([]string, 0, len(defs))
			for n := range defs {
				names = append(names, n)
			}
			sort.Strings(names)
			keys := make([]string, len(ks))
			for j, kk := range ks {
				keys[j] = kk.AttributeName
			}
			return hash, rng, validation("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
				strings.Join(keys, ", "), strings.Join(names, ", "))
		}
		if i == 0 {
			hash = keyDef{k.AttributeName, t}
		} else {
			rng = keyDef{k.AttributeName, t}
		}
	}
	return hash, rng, nil
}

func checkProjection(p *projection, idx string) (string, []string, error) {
	if p == nil {
		return "", nil, validation("1 validation error detected: Value null at '%s.projection' failed to satisfy constraint: Member must not be null", idx)
	}
	switch p.ProjectionType {
	case "ALL", "KEYS_ONLY":
		if len(p.NonKeyAttributes) > 0 {
			return "", nil, validation("One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified", p.ProjectionType)
		}
		return p.ProjectionType, nil, nil
	case "INCLUDE":
		if len(p.NonKeyAttributes) == 0 {
			return "", nil, validation("One or more parameter values were invalid: NonKeyAttributes must not be empty")
		}
		return "INCLUDE", slices.Clone(p.NonKeyAttributes), nil
	case "":
		return "", nil, validation("One or more parameter values were invalid: Unknown ProjectionType: null")
	}
	return "", nil, validation("1 validation error detected: Value '%s' at '%s.projection.projectionType' failed to satisfy constraint: Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]", p.ProjectionType, idx)
}

func (s *Store) createTable(ctx context.Context, body []byte) (any, error) {
	var in createTableInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraints
	c.notNull("attributeDefinitions", in.AttributeDefinitions == nil)
	c.tableName("tableName", in.TableName)
	c.notNull("keySchema", in.KeySchema == nil)
	c.enum("billingMode", in.BillingMode, "PROVISIONED", "PAY_PER_REQUEST")
	for i, a := range in.AttributeDefinitions {
		c.enum(fmt.Sprintf("attributeDefinitions.%d.member.attributeType", i+1), a.AttributeType, "B", "N", "S")
	}
	for i, k := range in.KeySchema {
		c.enum(fmt.Sprintf("keySchema.%d.member.keyType", i+1), k.KeyType, "HASH", "RANGE")
	}
	if in.ProvisionedThroughput != nil {
		c.min("provisionedThroughput.writeCapacityUnits", in.ProvisionedThroughput.WriteCapacityUnits, 1)
		c.min("provisionedThroughput.readCapacityUnits", in.ProvisionedThroughput.ReadCapacityUnits, 1)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	defs := map[string]av.Type{}
	for _, a := range in.AttributeDefinitions {
		t, _ := av.ParseType(a.AttributeType)
		if _, dup := defs[a.AttributeName]; dup {
			return nil, validation("Cannot have two attributes with the same name")
		}
		defs[a.AttributeName] = t
	}
	hash, rng, err := checkKeySchema(in.KeySchema, defs, "keySchema")
	if err != nil {
		return nil, err
	}
	billing := in.BillingMode
	if billing == "" {
		billing = "PROVISIONED"
	}
	d := &tableDef{
		Name: *in.TableName, Hash: hash, Range: rng, AttrDefs: in.AttributeDefinitions,
		Created: s.now(), BillingMode: billing, TableClass: in.TableClass, SSE: in.SSESpecification,
		Tags: in.Tags, TableID: uuid.NewString(), OnDemand: in.OnDemandThroughput,
	}
	if in.DeletionProtectionEnabled != nil {
		d.Protected = *in.DeletionProtectionEnabled
	}
	if err := checkThroughput(billing, in.ProvisionedThroughput, "", &d.Throughput); err != nil {
		return nil, err
	}
	used := map[string]bool{hash.Name: true, rng.Name: true}
	names := map[string]bool{}
	if len(in.LocalSecondaryIndexes) > 0 && rng.Name == "" {
		return nil, validation("One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex")
	}
	if len(in.LocalSecondaryIndexes) > 5 {
		return nil, validation("One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds per-table limit of 5")
	}
	if len(in.GlobalSecondaryIndexes) > 20 {
		return nil, validation("One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of 20")
	}
	for i, spec := range in.LocalSecondaryIndexes {
		ix, err := buildIndex(spec, defs, true, fmt.Sprintf("localSecondaryIndexes.%d.member", i+1))
		if err != nil {
			return nil, err
		}
		if ix.Hash.Name != hash.Name {
			return nil, validation("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s", ix.Name, ix.Hash.Name, hash.Name)
		}
		if names[ix.Name] {
			return nil, validation("One or more parameter values were invalid: Duplicate index name: %s", ix.Name)
		}
		names[ix.Name] = true
		d.NextIndexID++
		ix.ID = d.NextIndexID
		d.Indexes = append(d.Indexes, ix)
		used[ix.Range.Name] = true
	}
	for i, spec := range in.GlobalSecondaryIndexes {
		ix, err := buildIndex(spec, defs, false, fmt.Sprintf("globalSecondaryIndexes.%d.member", i+1))
		if err != nil {
			return nil, err
		}
		if names[ix.Name] {
			return nil, validation("One or more parameter values were invalid: Duplicate index name: %s", ix.Name)
		}
		if err := checkThroughput(billing, spec.ProvisionedThroughput, ix.Name, nil); err != nil {
			return nil, err
		}
		names[ix.Name] = true
		d.NextIndexID++
		ix.ID = d.NextIndexID
		d.Indexes = append(d.Indexes, ix)
		used[ix.Hash.Name] = true
		used[ix.Range.Name] = true
	}
	for n := range defs {
		if !used[n] {
			return nil, validation("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
		}
	}
	if err := applyStreamSpec(d, in.StreamSpecification, s.now()); err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[d.Name]; ok {
		return nil, resourceInUse("Table already exists: " + d.Name)
	}
	d.ID = s.nextID
	s.nextID++
	if err := s.persistDef(d); err != nil {
		return nil, err
	}
	t := &table{}
	t.def.Store(d)
	s.tables[d.Name] = t
	desc := s.describe(t)
	return map[string]any{"TableDescription": desc}, nil
}

func checkThroughput(billing string, p *provisionedThroughput, index string, out *provisionedThroughput) error {
	if billing == "PAY_PER_REQUEST" {
		if p != nil && (p.ReadCapacityUnits != nil || p.WriteCapacityUnits != nil) {
			return validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
		return nil
	}
	if p == nil || p.ReadCapacityUnits == nil || p.WriteCapacityUnits == nil {
		if index != "" {
			return validation("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", index)
		}
		return validation("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
	}
	if out != nil {
		*out = *p
	}
	return nil
}

func buildIndex(spec indexSpec, defs map[string]av.Type, local bool, member string) (*indexDef, error) {
	var c constraints
	c.name(member+".indexName", spec.IndexName, 3)
	if err := c.err(); err != nil {
		return nil, err
	}
	hash, rng, err := checkKeySchema(spec.KeySchema, defs, member+".keySchema")
	if err != nil {
		return nil, err
	}
	if local && rng.Name == "" {
		return nil, validation("One or more parameter values were invalid: Index KeySchema does not have a range key for index: %s", spec.IndexName)
	}
	pt, nonKey, err := checkProjection(spec.Projection, member)
	if err != nil {
		return nil, err
	}
	return &indexDef{Name: spec.IndexName, Local: local, Hash: hash, Range: rng, ProjectionType: pt, NonKey: nonKey,
		Throughput: spec.ProvisionedThroughput, OnDemand: spec.OnDemandThroughput}, nil
}

func applyStreamSpec(d *tableDef, spec *streamSpecification, now interface{ Format(string) string }) error {
	if spec == nil || spec.StreamEnabled == nil {
		return nil
	}
	if !*spec.StreamEnabled {
		if spec.StreamViewType != "" {
			return validation("One or more parameter values were invalid: StreamViewType may not be specified when StreamEnabled is false")
		}
		d.StreamEnabled = false
		return nil
	}
	switch spec.StreamViewType {
	case "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY":
	default:
		return validation("One or more parameter values were invalid: You must specify a StreamViewType when StreamEnabled is true")
	}
	d.StreamEnabled = true
	d.StreamViewType = spec.StreamViewType
	d.StreamLabel = now.Format("2006-01-02T15:04:05.000")
	return nil
}

func (s *Store) lookupForDescribe(body []byte) (*table, error) {
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
		return nil, notFound("Requested resource not found: Table: " + *in.TableName + " not found")
	}
	return t, nil
}

func (s *Store) describeTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupForDescribe(body)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": s.describe(t)}, nil
}

func (s *Store) deleteTable(ctx context.Context, body []byte) (any, error) {
	t, err := s.lookupForDescribe(body)
	if err != nil {
		return nil, err
	}
	d := t.def.Load()
	if d.Protected {
		return nil, validation("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	}
	s.mu.Lock()
	if s.tables[d.Name] != t {
		s.mu.Unlock()
		return nil, notFound("Requested resource not found: Table: " + d.Name + " not found")
	}
	delete(s.tables, d.Name)
	s.mu.Unlock()
	desc := s.describe(t)
	desc["TableStatus"] = "DELETING"
	lo, hi := tableSpan(d.ID)
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete(metaTableKey(d.Name), nil)
	b.DeleteRange(lo, hi, nil)
	if err := b.Commit(s.writeOpts()); err != nil {
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
	sort.Strings(names)
	if in.ExclusiveStartTableName != nil {
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

func keySchemaOf(h, r keyDef) []keySchemaElement {
	ks := []keySchemaElement{{h.Name, "HASH"}}
	if r.Name != "" {
		ks = append(ks, keySchemaElement{r.Name, "RANGE"})
	}
	return ks
}

// describe builds a TableDescription.
func (s *Store) describe(t *table) map[string]any {
	d := t.def.Load()
	arn := s.tableARN(d.Name)
	desc := map[string]any{
		"TableName":            d.Name,
		"TableStatus":          "ACTIVE",
		"TableArn":             arn,
		"TableId":              d.TableID,
		"AttributeDefinitions": d.AttrDefs,
		"KeySchema":            keySchemaOf(d.Hash, d.Range),
		"CreationDateTime":     float64(d.Created.UnixMilli()) / 1000,
		"ItemCount":            t.items.Load(),
		"TableSizeBytes":       t.bytes.Load(),
		"ProvisionedThroughput": map[string]any{
			"NumberOfDecreasesToday": 0,
			"ReadCapacityUnits":      deref(d.Throughput.ReadCapacityUnits),
			"WriteCapacityUnits":     deref(d.Throughput.WriteCapacityUnits),
		},
		"DeletionProtectionEnabled": d.Protected,
	}
	if d.BillingMode == "PAY_PER_REQUEST" {
		desc["BillingModeSummary"] = map[string]any{"BillingMode": "PAY_PER_REQUEST",
			"LastUpdateToPayPerRequestDateTime": float64(d.Created.UnixMilli()) / 1000}
	}
	if d.TableClass != "" {
		desc["TableClassSummary"] = map[string]any{"TableClass": d.TableClass}
	}
	if d.OnDemand != nil {
		desc["OnDemandThroughput"] = d.OnDemand
	}
	if d.SSE != nil && d.SSE.Enabled != nil && *d.SSE.Enabled {
		desc["SSEDescription"] = map[string]any{"Status": "ENABLED", "SSEType": "KMS",
			"KMSMasterKeyArn": fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", s.opts.Region, s.opts.AccountID, d.TableID)}
	}
	if d.StreamLabel != "" {
		desc["LatestStreamLabel"] = d.StreamLabel
		desc["LatestStreamArn"] = arn + "/stream/" + d.StreamLabel
	}
	if d.StreamEnabled {
		desc["StreamSpecification"] = map[string]any{"StreamEnabled": true, "StreamViewType": d.StreamViewType}
	}
	var gsis, lsis []map[string]any
	for _, ix := range d.Indexes {
		p := map[string]any{"ProjectionType": ix.ProjectionType}
		if len(ix.NonKey) > 0 {
			p["NonKeyAttributes"] = ix.NonKey
		}
		m := map[string]any{
			"IndexName":      ix.Name,
			"KeySchema":      keySchemaOf(ix.Hash, ix.Range),
			"Projection":     p,
			"IndexSizeBytes": t.idxBytes[ix.ID].Load(),
			"ItemCount":      t.idxItems[ix.ID].Load(),
			"IndexArn":       arn + "/index/" + ix.Name,
		}
		if ix.Local {
			lsis = append(lsis, m)
			continue
		}
		m["IndexStatus"] = "ACTIVE"
		if ix.Backfilling {
			m["IndexStatus"] = "CREATING"
			m["Backfilling"] = true
		}
		var r, w int64
		if ix.Throughput != nil {
			r, w = deref(ix.Throughput.ReadCapacityUnits), deref(ix.Throughput.WriteCapacityUnits)
		}
		m["ProvisionedThroughput"] = map[string]any{"NumberOfDecreasesToday": 0, "ReadCapacityUnits": r, "WriteCapacityUnits": w}
		if ix.OnDemand != nil {
			m["OnDemandThroughput"] = ix.OnDemand
		}
		gsis = append(gsis, m)
	}
	if gsis != nil {
		desc["GlobalSecondaryIndexes"] = gsis
	}
	if lsis != nil {
		desc["LocalSecondaryIndexes"] = lsis
	}
	return desc
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
