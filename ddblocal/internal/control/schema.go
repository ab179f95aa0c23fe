package control

import (
	"fmt"
	"slices"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/wire"
)

// InvalidParam is DynamoDB's "One or more parameter values were invalid"
// ValidationException.
func InvalidParam(format string, args ...any) *wire.APIError {
	return wire.Validation("%s", "One or more parameter values were invalid: "+fmt.Sprintf(format, args...))
}

// createTableConstraints is the first validation pass of CreateTable.
func createTableConstraints(in *wire.CreateTableInput) error {
	var c wire.Constraints
	if in.AttributeDefinitions == nil {
		c.NotNull("attributeDefinitions", true)
	}
	for i, a := range in.AttributeDefinitions {
		m := fmt.Sprintf("attributeDefinitions.%d.member", i+1)
		c.NotNull(m+".attributeName", a.AttributeName == "")
		c.MaxLen(m+".attributeName", a.AttributeName, len(a.AttributeName), wire.MaxKeyNameLen)
		c.NotNull(m+".attributeType", a.AttributeType == "")
		c.Enum(m+".attributeType", a.AttributeType, wire.AttributeTypes...)
	}
	c.NewTableName("tableName", in.TableName)
	c.Enum("billingMode", in.BillingMode, wire.BillingModes...)
	c.Throughput("provisionedThroughput", in.ProvisionedThroughput)
	c.KeySchema("keySchema", in.KeySchema, true)
	for i, ix := range in.LocalSecondaryIndexes {
		c.Index(fmt.Sprintf("localSecondaryIndexes.%d.member", i+1), ix, false)
	}
	for i, ix := range in.GlobalSecondaryIndexes {
		c.Index(fmt.Sprintf("globalSecondaryIndexes.%d.member", i+1), ix, true)
	}
	c.StreamSpec("streamSpecification", in.StreamSpecification)
	if in.SSESpecification != nil {
		c.Enum("sSESpecification.sSEType", in.SSESpecification.SSEType, wire.SSETypes...)
	}
	c.Enum("tableClass", in.TableClass, wire.TableClasses...)
	return c.Err()
}

// attrDefs indexes attribute definitions by name, keeping request order.
type attrDefs struct {
	names []string
	types map[string]av.Type
}

func newAttrDefs(defs []wire.AttributeDefinition) attrDefs {
	d := attrDefs{types: make(map[string]av.Type, len(defs))}
	for _, a := range defs {
		t, _ := av.ParseType(a.AttributeType)
		if _, dup := d.types[a.AttributeName]; !dup {
			d.names = append(d.names, a.AttributeName)
		}
		d.types[a.AttributeName] = t
	}
	return d
}

func (d attrDefs) has(name string) bool { _, ok := d.types[name]; return ok }

func keyNamesOf(ks []wire.KeySchemaElement) []string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.AttributeName
	}
	return names
}

// undefinedKeys reports an index (or table) key attribute missing from the
// attribute definitions.
func (d attrDefs) undefinedKeys(ks []wire.KeySchemaElement, defs []wire.AttributeDefinition) error {
	for _, k := range ks {
		if !d.has(k.AttributeName) {
			all := make([]string, len(defs))
			for i, a := range defs {
				all[i] = a.AttributeName
			}
			return InvalidParam("Some index key attributes are not defined in AttributeDefinitions. Keys: %s, AttributeDefinitions: %s",
				wire.JavaList(keyNamesOf(ks)), wire.JavaList(all))
		}
	}
	return nil
}

// keyShape checks the HASH/RANGE shape of a key schema whose attributes
// are all defined.
func keyShape(ks []wire.KeySchemaElement) error {
	if len(ks) == 2 && ks[0].AttributeName == ks[1].AttributeName {
		return wire.Validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
	}
	if ks[0].KeyType != "HASH" {
		return wire.Validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
	}
	if len(ks) == 2 && ks[1].KeyType != "RANGE" {
		return wire.Validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
	}
	return nil
}

func keyDefsOf(ks []wire.KeySchemaElement, d attrDefs) (hash, rng engine.KeyDef) {
	hash = engine.KeyDef{Name: ks[0].AttributeName, Type: d.types[ks[0].AttributeName]}
	if len(ks) == 2 {
		rng = engine.KeyDef{Name: ks[1].AttributeName, Type: d.types[ks[1].AttributeName]}
	}
	return hash, rng
}

// checkProjection validates an index projection and returns its type and
// non-key attributes (sorted, as DynamoDB reports them).
func checkProjection(p *wire.Projection) (string, []string, error) {
	switch p.ProjectionType {
	case "":
		return "", nil, InvalidParam("Unknown ProjectionType: null")
	case "ALL", "KEYS_ONLY":
		if p.NonKeyAttributes != nil {
			return "", nil, InvalidParam("ProjectionType is %s, but NonKeyAttributes is specified", p.ProjectionType)
		}
		return p.ProjectionType, nil, nil
	}
	if p.NonKeyAttributes == nil {
		return "", nil, InvalidParam("ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
	}
	seen := map[string]bool{}
	for _, n := range p.NonKeyAttributes {
		if seen[n] {
			return "", nil, InvalidParam("Duplicate element in NonKeyAttributes: %s", n)
		}
		seen[n] = true
	}
	nk := slices.Clone(p.NonKeyAttributes)
	slices.Sort(nk)
	return "INCLUDE", nk, nil
}

// checkTableThroughput applies the billing-mode rules to the table's
// throughput members of CreateTable.
func checkTableThroughput(in *wire.CreateTableInput, billing string) error {
	if billing == "PAY_PER_REQUEST" {
		if in.ProvisionedThroughput != nil {
			return InvalidParam("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
		return checkOnDemand(in.OnDemandThroughput, "table")
	}
	if in.ProvisionedThroughput == nil {
		return InvalidParam("ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
	}
	if o := in.OnDemandThroughput; o != nil && (o.MaxReadRequestUnits != nil || o.MaxWriteRequestUnits != nil) {
		member := "MaxReadRequestUnits"
		if o.MaxReadRequestUnits == nil {
			member = "MaxWriteRequestUnits"
		}
		return InvalidParam("%s for OnDemandThroughput cannot be specified when table BillingMode is PROVISIONED.", member)
	}
	return nil
}

// checkOnDemand validates OnDemandThroughput maxima at creation: positive.
func checkOnDemand(o *wire.OnDemandThroughput, what string) error {
	if o == nil {
		return nil
	}
	if o.MaxReadRequestUnits != nil && *o.MaxReadRequestUnits < 1 {
		return InvalidParam("Requested MaxReadRequestUnits for OnDemandThroughput for %s is outside of valid range", what)
	}
	if o.MaxWriteRequestUnits != nil && *o.MaxWriteRequestUnits < 1 {
		return InvalidParam("Requested MaxWriteRequestUnits for OnDemandThroughput for %s is outside of valid range", what)
	}
	return nil
}

// capacityLimit is the LimitExceededException for throughput above the
// per-table (or per-index) maximum.
func (s *Store) capacityLimit(p *wire.ProvisionedThroughput, index string) error {
	if p == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"ReadCapacityUnits", p.ReadCapacityUnits}, {"WriteCapacityUnits", p.WriteCapacityUnits}} {
		if f.v == nil || *f.v <= wire.MaxCapacityUnits {
			continue
		}
		what := fmt.Sprintf("The requested %s, %d, is above the per table maximum", f.name, *f.v)
		if index != "" {
			what = fmt.Sprintf("The requested %s for index %s, %d, is above the per index maximum", f.name, index, *f.v)
		}
		return &wire.APIError{Type: "LimitExceededException", Status: 400, Message: fmt.Sprintf(
			"%s for the account in %s. Per table maximum: %d. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
			what, s.Opts.Region, wire.MaxCapacityUnits)}
	}
	return nil
}

// CheckCreateTable runs the second and third validation passes of
// CreateTable and returns the new table's definition. The steps run in
// the order DynamoDB reports violations: throughput, attribute
// definitions, the table's keys, the indexes' keys, the indexes, then
// streams, encryption and capacity limits.
func (s *Store) CheckCreateTable(in *wire.CreateTableInput) (*engine.TableDef, error) {
	billing := in.BillingMode
	if billing == "" {
		billing = "PROVISIONED"
	}
	if err := checkTableThroughput(in, billing); err != nil {
		return nil, err
	}
	seenAttr := map[string]bool{}
	for _, a := range in.AttributeDefinitions {
		if seenAttr[a.AttributeName] {
			return nil, wire.Validation("Attribute Name is duplicated: %s", a.AttributeName)
		}
		seenAttr[a.AttributeName] = true
	}
	defs := newAttrDefs(in.AttributeDefinitions)

	hash, rng, err := checkTableKeys(in, defs)
	if err != nil {
		return nil, err
	}
	if err := checkIndexKeys(in, defs, hash, rng); err != nil {
		return nil, err
	}
	d := &engine.TableDef{Hash: hash, Range: rng, BillingMode: billing}
	if err := addCreateIndexes(in, defs, d); err != nil {
		return nil, err
	}
	if err := checkCreateStream(in.StreamSpecification); err != nil {
		return nil, err
	}
	if err := checkSSE(in.SSESpecification); err != nil {
		return nil, err
	}
	if err := s.capacityLimit(in.ProvisionedThroughput, ""); err != nil {
		return nil, err
	}
	for _, ix := range in.GlobalSecondaryIndexes {
		if err := s.capacityLimit(ix.ProvisionedThroughput, *ix.IndexName); err != nil {
			return nil, err
		}
	}
	// AttributeDefinitions are reported sorted by name.
	d.AttrDefs = slices.Clone(in.AttributeDefinitions)
	sortAttrDefs(d.AttrDefs)
	return d, nil
}

// checkTableKeys checks the table's key schema against the attribute
// definitions and the index lists' presence, and returns its keys.
func checkTableKeys(in *wire.CreateTableInput, defs attrDefs) (hash, rng engine.KeyDef, err error) {
	ks := in.KeySchema
	if len(ks) > len(in.AttributeDefinitions) {
		return hash, rng, wire.Validation("Invalid KeySchema: Some index key attribute have no definition")
	}
	if err = defs.undefinedKeys(ks, in.AttributeDefinitions); err != nil {
		return hash, rng, err
	}
	if err = keyShape(ks); err != nil {
		return hash, rng, err
	}
	hash, rng = keyDefsOf(ks, defs)
	lsis, gsis := in.LocalSecondaryIndexes, in.GlobalSecondaryIndexes
	if lsis == nil && gsis == nil && len(ks) != len(in.AttributeDefinitions) {
		return hash, rng, InvalidParam("Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
	}
	if lsis != nil && len(lsis) == 0 {
		return hash, rng, InvalidParam("List of LocalSecondaryIndexes is empty")
	}
	if gsis != nil && len(gsis) == 0 {
		return hash, rng, InvalidParam("List of GlobalSecondaryIndexes is empty")
	}
	if len(lsis) > 0 && rng.Name == "" {
		return hash, rng, InvalidParam("Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex")
	}
	return hash, rng, nil
}

// checkIndexKeys checks the indexes' key schemas and that every attribute
// definition is some key's.
func checkIndexKeys(in *wire.CreateTableInput, defs attrDefs, hash, rng engine.KeyDef) error {
	lsis, gsis := in.LocalSecondaryIndexes, in.GlobalSecondaryIndexes
	used := javaHashSet{}
	used.add(hash.Name)
	if rng.Name != "" {
		used.add(rng.Name)
	}
	for _, ix := range lsis {
		if err := defs.undefinedKeys(ix.KeySchema, in.AttributeDefinitions); err != nil {
			return err
		}
		if err := keyShape(ix.KeySchema); err != nil {
			return err
		}
		if len(ix.KeySchema) != 2 {
			return InvalidParam("Index KeySchema does not have a range key for index: %s", *ix.IndexName)
		}
		if h := ix.KeySchema[0].AttributeName; h != hash.Name {
			return InvalidParam("Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s",
				*ix.IndexName, h, hash.Name)
		}
		for _, k := range ix.KeySchema {
			used.add(k.AttributeName)
		}
	}
	for _, ix := range gsis {
		if err := defs.undefinedKeys(ix.KeySchema, in.AttributeDefinitions); err != nil {
			return err
		}
		if err := keyShape(ix.KeySchema); err != nil {
			return err
		}
		for _, k := range ix.KeySchema {
			used.add(k.AttributeName)
		}
	}
	if len(used.order) != len(defs.names) {
		return InvalidParam("Some AttributeDefinitions are not used. AttributeDefinitions: %s, keys used: %s",
			wire.JavaList(defs.names), wire.JavaList(used.elements()))
	}

	return nil
}

// addCreateIndexes builds the indexes into d, checking their projections,
// names, throughput and counts.
func addCreateIndexes(in *wire.CreateTableInput, defs attrDefs, d *engine.TableDef) error {
	billing := d.BillingMode
	lsis, gsis := in.LocalSecondaryIndexes, in.GlobalSecondaryIndexes
	names := map[string]bool{}
	nonKeys := 0
	for _, spec := range lsis {
		ix, err := buildIndex(spec, defs, true)
		if err != nil {
			return err
		}
		if names[ix.Name] {
			return InvalidParam("Duplicate index name: %s", ix.Name)
		}
		names[ix.Name] = true
		nonKeys += len(ix.NonKey)
		d.AddIndex(ix)
	}
	if len(lsis) > wire.MaxLSIs {
		return InvalidParam("Number of LocalSecondaryIndexes exceeds per-table limit of %d", wire.MaxLSIs)
	}
	for _, spec := range gsis {
		ix, err := buildIndex(spec, defs, false)
		if err != nil {
			return err
		}
		if err := checkIndexThroughput(billing, spec, ix.Name); err != nil {
			return err
		}
		if names[ix.Name] {
			return InvalidParam("Duplicate index name: %s", ix.Name)
		}
		names[ix.Name] = true
		nonKeys += len(ix.NonKey)
		d.AddIndex(ix)
	}
	if len(gsis) > wire.MaxGSIs {
		return InvalidParam("GlobalSecondaryIndex count exceeds the per-table limit of %d", wire.MaxGSIs)
	}
	if nonKeys > wire.MaxProjectedNonKeys {
		return InvalidParam("The number of projected attributes in all secondary indexes of the table exceeds the limit of %d", wire.MaxProjectedNonKeys)
	}
	return nil
}

func sortAttrDefs(defs []wire.AttributeDefinition) {
	slices.SortFunc(defs, func(a, b wire.AttributeDefinition) int { return strings.Compare(a.AttributeName, b.AttributeName) })
}

// checkIndexThroughput applies the billing-mode rules to a GSI of
// CreateTable.
func checkIndexThroughput(billing string, spec wire.IndexSpec, name string) error {
	if billing == "PAY_PER_REQUEST" {
		if spec.ProvisionedThroughput != nil {
			return InvalidParam("ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name)
		}
		return checkOnDemand(spec.OnDemandThroughput, "index : "+name)
	}
	if spec.ProvisionedThroughput == nil {
		return InvalidParam("ProvisionedThroughput is not specified for index: %s", name)
	}
	if o := spec.OnDemandThroughput; o != nil && (o.MaxReadRequestUnits != nil || o.MaxWriteRequestUnits != nil) {
		member := "MaxReadRequestUnits"
		if o.MaxReadRequestUnits == nil {
			member = "MaxWriteRequestUnits"
		}
		return InvalidParam("%s for OnDemandThroughput for index: %s cannot be specified when table BillingMode is PROVISIONED.", member, name)
	}
	return nil
}

// buildIndex turns a validated index specification into its definition,
// checking its projection.
func buildIndex(spec wire.IndexSpec, defs attrDefs, local bool) (*engine.IndexDef, error) {
	pt, nonKey, err := checkProjection(spec.Projection)
	if err != nil {
		return nil, err
	}
	hash, rng := keyDefsOf(spec.KeySchema, defs)
	ix := &engine.IndexDef{Name: *spec.IndexName, Local: local, Hash: hash, Range: rng, ProjectionType: pt, NonKey: nonKey}
	if !local {
		ix.Throughput = spec.ProvisionedThroughput
		ix.OnDemand = spec.OnDemandThroughput
	}
	return ix, nil
}

func checkCreateStream(spec *wire.StreamSpecification) error {
	if spec == nil {
		return nil
	}
	if *spec.StreamEnabled && spec.StreamViewType == "" {
		return InvalidParam("Table is being created with a stream enabled, UpdateViewType is required")
	}
	if !*spec.StreamEnabled && spec.StreamViewType != "" {
		return InvalidParam("Table is being created with a stream disabled, UpdateViewType should not be specified")
	}
	return nil
}

// checkSSE validates an SSESpecification (CreateTable and UpdateTable).
func checkSSE(spec *wire.SSESpecification) error {
	if spec == nil {
		return nil
	}
	enabled := spec.Enabled == nil || *spec.Enabled
	if spec.Enabled != nil && !*spec.Enabled {
		if spec.SSEType != "" {
			return InvalidParam("SSEType can not be specified if Enabled is false")
		}
		if spec.KMSMasterKeyId != "" {
			return InvalidParam("KMSMasterKeyId can not be specified if Enabled is false")
		}
	}
	if enabled && spec.SSEType == "AES256" {
		return InvalidParam("SSEType AES256 is not supported")
	}
	if spec.KMSMasterKeyId != "" && spec.SSEType != "KMS" {
		return InvalidParam("SSEType KMS is required if KMSMasterKeyId is specified")
	}
	return nil
}

// javaHashSet reproduces the iteration order of a java.util.HashSet of
// strings, in which DynamoDB lists some attribute names in its messages.
type javaHashSet struct {
	order []string
}

func (h *javaHashSet) add(s string) {
	if !slices.Contains(h.order, s) {
		h.order = append(h.order, s)
	}
}

// elements returns the members in HashSet iteration order: by bucket of
// the spread String.hashCode in a table sized for the element count, and
// by insertion order within a bucket.
func (h *javaHashSet) elements() []string {
	n := 16
	for float64(len(h.order)) > float64(n)*0.75 {
		n *= 2
	}
	bucket := func(s string) int {
		var hc int32
		for _, r := range utf16Units(s) {
			hc = 31*hc + int32(r)
		}
		u := uint32(hc)
		return int((u ^ (u >> 16)) & uint32(n-1))
	}
	out := slices.Clone(h.order)
	slices.SortStableFunc(out, func(a, b string) int { return bucket(a) - bucket(b) })
	return out
}

func utf16Units(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}
