package ddblocal

import (
	"fmt"
	"slices"
	"strings"

	"lastro/ddblocal/internal/av"
)

// CreateTable validation. DynamoDB checks a request in three passes, and
// the first pass that finds something wins: member constraints (all listed
// in one "N validation errors detected" message), then the table's key
// schema, then the indexes and the remaining settings. Within the passes
// the order below is the order DynamoDB reports.

const (
	maxLSIs             = 5
	maxGSIs             = 20
	maxNonKeyPerIndex   = 20
	maxProjectedNonKeys = 100
	maxCapacityUnits    = 40000
	maxKeyNameLen       = 255 // key attribute names; other attribute names may reach 64 KB
)

var (
	keyTypes        = []string{"HASH", "RANGE"}
	attributeTypes  = []string{"B", "N", "S"}
	projectionTypes = []string{"ALL", "INCLUDE", "KEYS_ONLY"}
	billingModes    = []string{"PROVISIONED", "PAY_PER_REQUEST"}
	streamViewTypes = []string{"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"}
	tableClasses    = []string{"STANDARD", "STANDARD_INFREQUENT_ACCESS"}
	sseTypes        = []string{"AES256", "KMS"}
)

// invalidParam is DynamoDB's "One or more parameter values were invalid"
// ValidationException.
func invalidParam(format string, args ...any) *apiError {
	return validation("%s", "One or more parameter values were invalid: "+fmt.Sprintf(format, args...))
}

// keySchemaString renders a key schema as DynamoDB echoes it in a
// constraint message.
func keySchemaString(ks []keySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("KeySchemaElement(attributeName=%s, keyType=%s)", k.AttributeName, k.KeyType)
	}
	return javaList(parts)
}

// keySchemaConstraints checks a KeySchema member.
func (c *constraints) keySchema(member string, ks []keySchemaElement, keyTypeEnum bool) {
	if ks == nil {
		c.notNull(member, true)
		return
	}
	c.minLen(member, keySchemaString(ks), len(ks), 1)
	c.maxLen(member, keySchemaString(ks), len(ks), 2)
	for i, k := range ks {
		m := fmt.Sprintf("%s.%d.member", member, i+1)
		c.notNull(m+".attributeName", k.AttributeName == "")
		c.maxLen(m+".attributeName", k.AttributeName, len(k.AttributeName), maxKeyNameLen)
		c.notNull(m+".keyType", k.KeyType == "")
		if keyTypeEnum {
			c.enum(m+".keyType", k.KeyType, keyTypes...)
		}
	}
}

// throughputConstraints checks a ProvisionedThroughput member.
func (c *constraints) throughput(member string, p *provisionedThroughput) {
	if p == nil {
		return
	}
	c.notNull(member+".writeCapacityUnits", p.WriteCapacityUnits == nil)
	c.min(member+".writeCapacityUnits", p.WriteCapacityUnits, 1)
	c.notNull(member+".readCapacityUnits", p.ReadCapacityUnits == nil)
	c.min(member+".readCapacityUnits", p.ReadCapacityUnits, 1)
}

// projectionConstraints checks a Projection member.
func (c *constraints) projection(member string, p *projection) {
	if p == nil {
		c.notNull(member, true)
		return
	}
	c.enum(member+".projectionType", p.ProjectionType, projectionTypes...)
	if p.NonKeyAttributes != nil {
		v := javaList(p.NonKeyAttributes)
		c.minLen(member+".nonKeyAttributes", v, len(p.NonKeyAttributes), 1)
		c.maxLen(member+".nonKeyAttributes", v, len(p.NonKeyAttributes), maxNonKeyPerIndex)
	}
}

// indexConstraints checks one LocalSecondaryIndexes or
// GlobalSecondaryIndexes (or GSI Create) member.
func (c *constraints) index(member string, ix indexSpec, global bool) {
	c.keySchema(member+".keySchema", ix.KeySchema, false)
	c.projection(member+".projection", ix.Projection)
	if ix.IndexName == nil {
		c.notNull(member+".indexName", true)
	} else {
		c.name(member+".indexName", *ix.IndexName, 3)
	}
	if global {
		c.throughput(member+".provisionedThroughput", ix.ProvisionedThroughput)
	}
}

func (c *constraints) streamSpec(member string, s *streamSpecification) {
	if s == nil {
		return
	}
	c.notNull(member+".streamEnabled", s.StreamEnabled == nil)
	c.enum(member+".streamViewType", s.StreamViewType, streamViewTypes...)
}

// createTableConstraints is the first validation pass of CreateTable.
func createTableConstraints(in *createTableInput) error {
	var c constraints
	if in.AttributeDefinitions == nil {
		c.notNull("attributeDefinitions", true)
	}
	for i, a := range in.AttributeDefinitions {
		m := fmt.Sprintf("attributeDefinitions.%d.member", i+1)
		c.notNull(m+".attributeName", a.AttributeName == "")
		c.maxLen(m+".attributeName", a.AttributeName, len(a.AttributeName), maxKeyNameLen)
		c.notNull(m+".attributeType", a.AttributeType == "")
		c.enum(m+".attributeType", a.AttributeType, attributeTypes...)
	}
	c.newTableName("tableName", in.TableName)
	c.enum("billingMode", in.BillingMode, billingModes...)
	c.throughput("provisionedThroughput", in.ProvisionedThroughput)
	c.keySchema("keySchema", in.KeySchema, true)
	for i, ix := range in.LocalSecondaryIndexes {
		c.index(fmt.Sprintf("localSecondaryIndexes.%d.member", i+1), ix, false)
	}
	for i, ix := range in.GlobalSecondaryIndexes {
		c.index(fmt.Sprintf("globalSecondaryIndexes.%d.member", i+1), ix, true)
	}
	c.streamSpec("streamSpecification", in.StreamSpecification)
	if in.SSESpecification != nil {
		c.enum("sSESpecification.sSEType", in.SSESpecification.SSEType, sseTypes...)
	}
	c.enum("tableClass", in.TableClass, tableClasses...)
	return c.err()
}

// attrDefs indexes attribute definitions by name, keeping request order.
type attrDefs struct {
	names []string
	types map[string]av.Type
}

func newAttrDefs(defs []attributeDefinition) attrDefs {
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

func keyNamesOf(ks []keySchemaElement) []string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.AttributeName
	}
	return names
}

// undefinedKeys reports an index (or table) key attribute missing from the
// attribute definitions.
func (d attrDefs) undefinedKeys(ks []keySchemaElement, defs []attributeDefinition) error {
	for _, k := range ks {
		if !d.has(k.AttributeName) {
			all := make([]string, len(defs))
			for i, a := range defs {
				all[i] = a.AttributeName
			}
			return invalidParam("Some index key attributes are not defined in AttributeDefinitions. Keys: %s, AttributeDefinitions: %s",
				javaList(keyNamesOf(ks)), javaList(all))
		}
	}
	return nil
}

// keyShape checks the HASH/RANGE shape of a key schema whose attributes
// are all defined.
func keyShape(ks []keySchemaElement) error {
	if len(ks) == 2 && ks[0].AttributeName == ks[1].AttributeName {
		return validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
	}
	if ks[0].KeyType != "HASH" {
		return validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
	}
	if len(ks) == 2 && ks[1].KeyType != "RANGE" {
		return validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
	}
	return nil
}

func keyDefsOf(ks []keySchemaElement, d attrDefs) (hash, rng keyDef) {
	hash = keyDef{ks[0].AttributeName, d.types[ks[0].AttributeName]}
	if len(ks) == 2 {
		rng = keyDef{ks[1].AttributeName, d.types[ks[1].AttributeName]}
	}
	return hash, rng
}

// checkProjection validates an index projection and returns its type and
// non-key attributes (sorted, as DynamoDB reports them).
func checkProjection(p *projection) (string, []string, error) {
	switch p.ProjectionType {
	case "":
		return "", nil, invalidParam("Unknown ProjectionType: null")
	case "ALL", "KEYS_ONLY":
		if p.NonKeyAttributes != nil {
			return "", nil, invalidParam("ProjectionType is %s, but NonKeyAttributes is specified", p.ProjectionType)
		}
		return p.ProjectionType, nil, nil
	}
	if p.NonKeyAttributes == nil {
		return "", nil, invalidParam("ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
	}
	seen := map[string]bool{}
	for _, n := range p.NonKeyAttributes {
		if seen[n] {
			return "", nil, invalidParam("Duplicate element in NonKeyAttributes: %s", n)
		}
		seen[n] = true
	}
	nk := slices.Clone(p.NonKeyAttributes)
	slices.Sort(nk)
	return "INCLUDE", nk, nil
}

// checkTableThroughput applies the billing-mode rules to the table's
// throughput members of CreateTable.
func checkTableThroughput(in *createTableInput, billing string) error {
	if billing == "PAY_PER_REQUEST" {
		if in.ProvisionedThroughput != nil {
			return invalidParam("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
		return checkOnDemand(in.OnDemandThroughput, "table")
	}
	if in.ProvisionedThroughput == nil {
		return invalidParam("ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
	}
	if o := in.OnDemandThroughput; o != nil && (o.MaxReadRequestUnits != nil || o.MaxWriteRequestUnits != nil) {
		member := "MaxReadRequestUnits"
		if o.MaxReadRequestUnits == nil {
			member = "MaxWriteRequestUnits"
		}
		return invalidParam("%s for OnDemandThroughput cannot be specified when table BillingMode is PROVISIONED.", member)
	}
	return nil
}

// checkOnDemand validates OnDemandThroughput maxima at creation: positive.
func checkOnDemand(o *onDemandThroughput, what string) error {
	if o == nil {
		return nil
	}
	if o.MaxReadRequestUnits != nil && *o.MaxReadRequestUnits < 1 {
		return invalidParam("Requested MaxReadRequestUnits for OnDemandThroughput for %s is outside of valid range", what)
	}
	if o.MaxWriteRequestUnits != nil && *o.MaxWriteRequestUnits < 1 {
		return invalidParam("Requested MaxWriteRequestUnits for OnDemandThroughput for %s is outside of valid range", what)
	}
	return nil
}

// capacityLimit is the LimitExceededException for throughput above the
// per-table (or per-index) maximum.
func (s *Store) capacityLimit(p *provisionedThroughput, index string) error {
	if p == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"ReadCapacityUnits", p.ReadCapacityUnits}, {"WriteCapacityUnits", p.WriteCapacityUnits}} {
		if f.v == nil || *f.v <= maxCapacityUnits {
			continue
		}
		what := fmt.Sprintf("The requested %s, %d, is above the per table maximum", f.name, *f.v)
		if index != "" {
			what = fmt.Sprintf("The requested %s for index %s, %d, is above the per index maximum", f.name, index, *f.v)
		}
		return &apiError{Type: "LimitExceededException", Status: 400, Message: fmt.Sprintf(
			"%s for the account in %s. Per table maximum: %d. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
			what, s.opts.Region, maxCapacityUnits)}
	}
	return nil
}

// checkCreateTable runs the second and third validation passes of
// CreateTable and returns the new table's definition.
func (s *Store) checkCreateTable(in *createTableInput) (*tableDef, error) {
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
			return nil, validation("Attribute Name is duplicated: %s", a.AttributeName)
		}
		seenAttr[a.AttributeName] = true
	}
	defs := newAttrDefs(in.AttributeDefinitions)

	// The table's key schema.
	ks := in.KeySchema
	if len(ks) > len(in.AttributeDefinitions) {
		return nil, validation("Invalid KeySchema: Some index key attribute have no definition")
	}
	if err := defs.undefinedKeys(ks, in.AttributeDefinitions); err != nil {
		return nil, err
	}
	if err := keyShape(ks); err != nil {
		return nil, err
	}
	hash, rng := keyDefsOf(ks, defs)
	lsis, gsis := in.LocalSecondaryIndexes, in.GlobalSecondaryIndexes
	if lsis == nil && gsis == nil && len(ks) != len(in.AttributeDefinitions) {
		return nil, invalidParam("Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
	}
	if lsis != nil && len(lsis) == 0 {
		return nil, invalidParam("List of LocalSecondaryIndexes is empty")
	}
	if gsis != nil && len(gsis) == 0 {
		return nil, invalidParam("List of GlobalSecondaryIndexes is empty")
	}
	if len(lsis) > 0 && rng.Name == "" {
		return nil, invalidParam("Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex")
	}

	// Index key schemas.
	used := javaHashSet{}
	used.add(hash.Name)
	if rng.Name != "" {
		used.add(rng.Name)
	}
	for _, ix := range lsis {
		if err := defs.undefinedKeys(ix.KeySchema, in.AttributeDefinitions); err != nil {
			return nil, err
		}
		if err := keyShape(ix.KeySchema); err != nil {
			return nil, err
		}
		if len(ix.KeySchema) != 2 {
			return nil, invalidParam("Index KeySchema does not have a range key for index: %s", *ix.IndexName)
		}
		if h := ix.KeySchema[0].AttributeName; h != hash.Name {
			return nil, invalidParam("Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s",
				*ix.IndexName, h, hash.Name)
		}
		for _, k := range ix.KeySchema {
			used.add(k.AttributeName)
		}
	}
	for _, ix := range gsis {
		if err := defs.undefinedKeys(ix.KeySchema, in.AttributeDefinitions); err != nil {
			return nil, err
		}
		if err := keyShape(ix.KeySchema); err != nil {
			return nil, err
		}
		for _, k := range ix.KeySchema {
			used.add(k.AttributeName)
		}
	}
	if len(used.order) != len(defs.names) {
		return nil, invalidParam("Some AttributeDefinitions are not used. AttributeDefinitions: %s, keys used: %s",
			javaList(defs.names), javaList(used.elements()))
	}

	// Projections, names, throughput and counts.
	d := &tableDef{Hash: hash, Range: rng, BillingMode: billing}
	names := map[string]bool{}
	nonKeys := 0
	for _, spec := range lsis {
		ix, err := buildIndex(spec, defs, true)
		if err != nil {
			return nil, err
		}
		if names[ix.Name] {
			return nil, invalidParam("Duplicate index name: %s", ix.Name)
		}
		names[ix.Name] = true
		nonKeys += len(ix.NonKey)
		d.addIndex(ix)
	}
	if len(lsis) > maxLSIs {
		return nil, invalidParam("Number of LocalSecondaryIndexes exceeds per-table limit of %d", maxLSIs)
	}
	for _, spec := range gsis {
		ix, err := buildIndex(spec, defs, false)
		if err != nil {
			return nil, err
		}
		if err := checkIndexThroughput(billing, spec, ix.Name); err != nil {
			return nil, err
		}
		if names[ix.Name] {
			return nil, invalidParam("Duplicate index name: %s", ix.Name)
		}
		names[ix.Name] = true
		nonKeys += len(ix.NonKey)
		d.addIndex(ix)
	}
	if len(gsis) > maxGSIs {
		return nil, invalidParam("GlobalSecondaryIndex count exceeds the per-table limit of %d", maxGSIs)
	}
	if nonKeys > maxProjectedNonKeys {
		return nil, invalidParam("The number of projected attributes in all secondary indexes of the table exceeds the limit of %d", maxProjectedNonKeys)
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
	for _, ix := range gsis {
		if err := s.capacityLimit(ix.ProvisionedThroughput, *ix.IndexName); err != nil {
			return nil, err
		}
	}
	// AttributeDefinitions are reported sorted by name.
	d.AttrDefs = slices.Clone(in.AttributeDefinitions)
	sortAttrDefs(d.AttrDefs)
	return d, nil
}

func sortAttrDefs(defs []attributeDefinition) {
	slices.SortFunc(defs, func(a, b attributeDefinition) int { return strings.Compare(a.AttributeName, b.AttributeName) })
}

// checkIndexThroughput applies the billing-mode rules to a GSI of
// CreateTable.
func checkIndexThroughput(billing string, spec indexSpec, name string) error {
	if billing == "PAY_PER_REQUEST" {
		if spec.ProvisionedThroughput != nil {
			return invalidParam("ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", name)
		}
		return checkOnDemand(spec.OnDemandThroughput, "index : "+name)
	}
	if spec.ProvisionedThroughput == nil {
		return invalidParam("ProvisionedThroughput is not specified for index: %s", name)
	}
	if o := spec.OnDemandThroughput; o != nil && (o.MaxReadRequestUnits != nil || o.MaxWriteRequestUnits != nil) {
		member := "MaxReadRequestUnits"
		if o.MaxReadRequestUnits == nil {
			member = "MaxWriteRequestUnits"
		}
		return invalidParam("%s for OnDemandThroughput for index: %s cannot be specified when table BillingMode is PROVISIONED.", member, name)
	}
	return nil
}

// buildIndex turns a validated index specification into its definition,
// checking its projection.
func buildIndex(spec indexSpec, defs attrDefs, local bool) (*indexDef, error) {
	pt, nonKey, err := checkProjection(spec.Projection)
	if err != nil {
		return nil, err
	}
	hash, rng := keyDefsOf(spec.KeySchema, defs)
	ix := &indexDef{Name: *spec.IndexName, Local: local, Hash: hash, Range: rng, ProjectionType: pt, NonKey: nonKey}
	if !local {
		ix.Throughput = spec.ProvisionedThroughput
		ix.OnDemand = spec.OnDemandThroughput
	}
	return ix, nil
}

func checkCreateStream(spec *streamSpecification) error {
	if spec == nil {
		return nil
	}
	if *spec.StreamEnabled && spec.StreamViewType == "" {
		return invalidParam("Table is being created with a stream enabled, UpdateViewType is required")
	}
	if !*spec.StreamEnabled && spec.StreamViewType != "" {
		return invalidParam("Table is being created with a stream disabled, UpdateViewType should not be specified")
	}
	return nil
}

// checkSSE validates an SSESpecification (CreateTable and UpdateTable).
func checkSSE(spec *sseSpecification) error {
	if spec == nil {
		return nil
	}
	enabled := spec.Enabled == nil || *spec.Enabled
	if spec.Enabled != nil && !*spec.Enabled {
		if spec.SSEType != "" {
			return invalidParam("SSEType can not be specified if Enabled is false")
		}
		if spec.KMSMasterKeyId != "" {
			return invalidParam("KMSMasterKeyId can not be specified if Enabled is false")
		}
	}
	if enabled && spec.SSEType == "AES256" {
		return invalidParam("SSEType AES256 is not supported")
	}
	if spec.KMSMasterKeyId != "" && spec.SSEType != "KMS" {
		return invalidParam("SSEType KMS is required if KMSMasterKeyId is specified")
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

// addIndex appends an index, assigning it the next index ID.
func (d *tableDef) addIndex(ix *indexDef) {
	d.NextIndexID++
	ix.ID = d.NextIndexID
	d.Indexes = append(d.Indexes, ix)
}
