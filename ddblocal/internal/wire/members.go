package wire

import (
	"fmt"
	"unicode/utf8"

	"lastro/ddblocal/internal/av"
)

// CreateTable validation. DynamoDB checks a request in three passes, and
// the first pass that finds something wins: member constraints (all listed
// in one "N validation errors detected" message), then the table's key
// schema, then the indexes and the remaining settings. Within the passes
// the order below is the order DynamoDB reports.

const (
	MaxLSIs             = 5
	MaxGSIs             = 20
	maxNonKeyPerIndex   = 20
	MaxProjectedNonKeys = 100
	MaxCapacityUnits    = 40000
	MaxKeyNameLen       = 255 // key attribute names; other attribute names may reach 64 KB
)

var (
	keyTypes        = []string{"HASH", "RANGE"}
	AttributeTypes  = []string{"B", "N", "S"}
	projectionTypes = []string{"ALL", "INCLUDE", "KEYS_ONLY"}
	BillingModes    = []string{"PROVISIONED", "PAY_PER_REQUEST"}
	streamViewTypes = []string{"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"}
	TableClasses    = []string{"STANDARD", "STANDARD_INFREQUENT_ACCESS"}
	SSETypes        = []string{"AES256", "KMS"}
)

// keySchemaString renders a key schema as DynamoDB echoes it in a
// constraint message.
func keySchemaString(ks []KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("KeySchemaElement(attributeName=%s, keyType=%s)", k.AttributeName, k.KeyType)
	}
	return JavaList(parts)
}

// keySchemaConstraints checks a KeySchema member.
func (c *Constraints) KeySchema(member string, ks []KeySchemaElement, keyTypeEnum bool) {
	if ks == nil {
		c.NotNull(member, true)
		return
	}
	c.MinLen(member, keySchemaString(ks), len(ks), 1)
	c.MaxLen(member, keySchemaString(ks), len(ks), 2)
	for i, k := range ks {
		m := fmt.Sprintf("%s.%d.member", member, i+1)
		c.NotNull(m+".attributeName", k.AttributeName == "")
		c.MaxLen(m+".attributeName", k.AttributeName, len(k.AttributeName), MaxKeyNameLen)
		c.NotNull(m+".keyType", k.KeyType == "")
		if keyTypeEnum {
			c.Enum(m+".keyType", k.KeyType, keyTypes...)
		}
	}
}

// throughputConstraints checks a ProvisionedThroughput member.
func (c *Constraints) Throughput(member string, p *ProvisionedThroughput) {
	if p == nil {
		return
	}
	c.NotNull(member+".writeCapacityUnits", p.WriteCapacityUnits == nil)
	c.Min(member+".writeCapacityUnits", p.WriteCapacityUnits, 1)
	c.NotNull(member+".readCapacityUnits", p.ReadCapacityUnits == nil)
	c.Min(member+".readCapacityUnits", p.ReadCapacityUnits, 1)
}

// projectionConstraints checks a Projection member.
func (c *Constraints) projection(member string, p *Projection) {
	if p == nil {
		c.NotNull(member, true)
		return
	}
	c.Enum(member+".projectionType", p.ProjectionType, projectionTypes...)
	if p.NonKeyAttributes != nil {
		v := JavaList(p.NonKeyAttributes)
		c.MinLen(member+".nonKeyAttributes", v, len(p.NonKeyAttributes), 1)
		c.MaxLen(member+".nonKeyAttributes", v, len(p.NonKeyAttributes), maxNonKeyPerIndex)
	}
}

// indexConstraints checks one LocalSecondaryIndexes or
// GlobalSecondaryIndexes (or GSI Create) member.
func (c *Constraints) Index(member string, ix IndexSpec, global bool) {
	c.KeySchema(member+".keySchema", ix.KeySchema, false)
	c.projection(member+".projection", ix.Projection)
	if ix.IndexName == nil {
		c.NotNull(member+".indexName", true)
	} else {
		c.Name(member+".indexName", *ix.IndexName, 3)
	}
	if global {
		c.Throughput(member+".provisionedThroughput", ix.ProvisionedThroughput)
	}
}

func (c *Constraints) StreamSpec(member string, s *StreamSpecification) {
	if s == nil {
		return
	}
	c.NotNull(member+".streamEnabled", s.StreamEnabled == nil)
	c.Enum(member+".streamViewType", s.StreamViewType, streamViewTypes...)
}

// backupARNConstraints checks a BackupArn member.
func (c *Constraints) BackupARN(arn *string) {
	c.NotNull("backupArn", arn == nil)
	c.Length("backupArn", arn, 37, 1024)
}

// The PartiQL API: ExecuteStatement, BatchExecuteStatement and
// ExecuteTransaction. Statements are parsed by internal/partiql, their
// WHERE and SET clauses translated into expressions (partiql_translate.go),
// and run through the same machinery as the item, query and transaction
// operations.

const (
	maxStatementLen      = 8192
	MaxBatchStatements   = 25
	MsgMissingKeyInWhere = "Where clause does not contain a mandatory equality on all key attributes"
)

// checkStatement applies the member constraints of one statement.
func (c *Constraints) Statement(member string, s *string) {
	if s == nil {
		c.NotNull(member, true)
		return
	}
	n := utf8.RuneCountInString(*s)
	if n < 1 {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", *s, member)
	}
	if n > maxStatementLen {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", *s, member, maxStatementLen)
	}
}

func (c *Constraints) Parameters(member string, ps []*av.Wire) {
	if ps != nil && len(ps) == 0 {
		c.Add("Value '[]' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
	}
}

// ListLength checks the length of a list member.
func (c *Constraints) ListLength(member string, null bool, n, hi int) {
	switch {
	case null:
		c.NotNull(member, true)
	case n < 1:
		c.Add("Value '[]' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
	case n > hi:
		c.Add("Value '[...]' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", member, hi)
	}
}

// Length checks a string member's length bounds.
func (c *Constraints) Length(member string, v *string, lo, hi int) {
	if v == nil {
		return
	}
	if len(*v) < lo {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to %d", *v, member, lo)
	}
	if len(*v) > hi {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", *v, member, hi)
	}
}
