package ddblocal_test

// Conformance of the control plane (CreateTable, DescribeTable, ListTables,
// DeleteTable, UpdateTable): the TableDescription DynamoDB answers and its
// validation messages, checked in DynamoDB's order of evaluation.

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// js is a JSON object in a raw request.
type js = map[string]any

func attrDef(name, typ string) js { return js{"AttributeName": name, "AttributeType": typ} }
func keyElem(name, typ string) js { return js{"AttributeName": name, "KeyType": typ} }
func hashKey(name string) []js    { return []js{keyElem(name, "HASH")} }
func hashRange(h, r string) []js  { return []js{keyElem(h, "HASH"), keyElem(r, "RANGE")} }
func pt(r, w int) js              { return js{"ReadCapacityUnits": r, "WriteCapacityUnits": w} }

// rawErr sends a raw request and asserts DynamoDB's error type and exact
// message.
func (s *cfStore) rawErr(op string, body js, typ, msg string) {
	s.t.Helper()
	status, out := s.raw(op, body)
	if status != 400 {
		s.t.Fatalf("%s: status %d, body %v; want 400 %s", op, status, out, typ)
	}
	got, _ := out["__type"].(string)
	if !strings.HasSuffix(got, "#"+typ) {
		s.t.Fatalf("%s: __type %q (message %q), want %s", op, got, out["message"], typ)
	}
	if m, _ := out["message"].(string); m != msg {
		s.t.Fatalf("%s message:\n got %q\nwant %q", op, m, msg)
	}
}

// createBody is a valid PAY_PER_REQUEST CreateTable request for table
// name keyed on pk; edit modifies it.
func createBody(name string, edit func(js)) js {
	b := js{"TableName": name, "AttributeDefinitions": []js{attrDef("pk", "S")}, "KeySchema": hashKey("pk"),
		"BillingMode": "PAY_PER_REQUEST"}
	if edit != nil {
		edit(b)
	}
	return b
}

const (
	notNull  = "failed to satisfy constraint: Member must not be null"
	oneError = "1 validation error detected: "
	invalid  = "One or more parameter values were invalid: "
)

func TestCreateTableValidation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 256)
	lsi := func(name string, ks []js, p js) js { return js{"IndexName": name, "KeySchema": ks, "Projection": p} }
	gsi := func(name string, ks []js, p js) js { return js{"IndexName": name, "KeySchema": ks, "Projection": p} }
	all := js{"ProjectionType": "ALL"}
	composite := func(b js) {
		b["AttributeDefinitions"] = []js{attrDef("a", "S"), attrDef("b", "S")}
		b["KeySchema"] = hashRange("a", "b")
	}
	cases := []struct {
		name string
		body js
		msg  string
	}{
		{"missing table name", createBody("", func(b js) { delete(b, "TableName") }),
			"The parameter 'TableName' is required but was not present in the request"},
		{"short table name", createBody("ab", nil),
			oneError + "Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
		{"long table name", createBody(long, nil),
			oneError + "Value '" + long + "' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"bad characters and short", createBody("a;", nil),
			"2 validation errors detected: Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
		{"null members in member order", js{"TableName": "abc;"},
			"3 validation errors detected: Value null at 'attributeDefinitions' " + notNull +
				"; Value 'abc;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" +
				"; Value null at 'keySchema' " + notNull},
		{"empty provisioned throughput", js{"TableName": "abc", "AttributeDefinitions": []js{}, "ProvisionedThroughput": js{}},
			"3 validation errors detected: Value null at 'provisionedThroughput.writeCapacityUnits' " + notNull +
				"; Value null at 'provisionedThroughput.readCapacityUnits' " + notNull + "; Value null at 'keySchema' " + notNull},
		{"zero throughput", createBody("tbl", func(b js) { delete(b, "BillingMode"); b["ProvisionedThroughput"] = pt(0, 0) }),
			"2 validation errors detected: Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1" +
				"; Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"empty key schema", createBody("tbl", func(b js) { b["KeySchema"] = []js{} }),
			oneError + "Value '[]' at 'keySchema' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{"three key elements", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("sk", "S"), attrDef("extra", "S")}
			b["KeySchema"] = []js{keyElem("pk", "HASH"), keyElem("sk", "RANGE"), keyElem("extra", "RANGE")}
		}), oneError + "Value '[KeySchemaElement(attributeName=pk, keyType=HASH), KeySchemaElement(attributeName=sk, keyType=RANGE), KeySchemaElement(attributeName=extra, keyType=RANGE)]' at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2"},
		{"invalid key type", createBody("tbl", func(b js) { b["KeySchema"] = []js{keyElem("pk", "INVALID")} }),
			oneError + "Value 'INVALID' at 'keySchema.1.member.keyType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]"},
		{"invalid attribute type", createBody("tbl", func(b js) { b["AttributeDefinitions"] = []js{attrDef("pk", "SS")} }),
			oneError + "Value 'SS' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]"},
		{"attribute definition nulls", createBody("tbl", func(b js) { b["AttributeDefinitions"] = []js{{}} }),
			"2 validation errors detected: Value null at 'attributeDefinitions.1.member.attributeName' " + notNull +
				"; Value null at 'attributeDefinitions.1.member.attributeType' " + notNull},
		{"invalid billing mode", createBody("tbl", func(b js) { b["BillingMode"] = "pay_per_request" }),
			oneError + "Value 'pay_per_request' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"},
		{"hash and range same attribute", createBody("tbl", func(b js) { b["KeySchema"] = hashRange("pk", "pk") }),
			"Invalid KeySchema: Some index key attribute have no definition"},
		{"no attribute definitions", createBody("tbl", func(b js) { b["AttributeDefinitions"] = []js{} }),
			"Invalid KeySchema: Some index key attribute have no definition"},
		{"undefined key attribute", createBody("tbl", func(b js) { b["AttributeDefinitions"] = []js{attrDef("other", "S")} }),
			invalid + "Some index key attributes are not defined in AttributeDefinitions. Keys: [pk], AttributeDefinitions: [other]"},
		{"same name when defined twice", createBody("tbl", func(b js) {
			composite(b)
			b["KeySchema"] = []js{keyElem("a", "HASH"), keyElem("a", "HASH")}
		}), "Both the Hash Key and the Range Key element in the KeySchema have the same name"},
		{"second key not range", createBody("tbl", func(b js) { composite(b); b["KeySchema"] = []js{keyElem("a", "HASH"), keyElem("b", "HASH")} }),
			"Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"},
		{"first key not hash", createBody("tbl", func(b js) { composite(b); b["KeySchema"] = []js{keyElem("a", "RANGE"), keyElem("b", "HASH")} }),
			"Invalid KeySchema: The first KeySchemaElement is not a HASH key type"},
		{"unused attribute definition", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("extra", "N")}
		}), invalid + "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"},
		{"duplicate attribute definition", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("pk", "N")}
		}), "Attribute Name is duplicated: pk"},
		{"on-demand with throughput", createBody("tbl", func(b js) { b["ProvisionedThroughput"] = pt(1, 1) }),
			invalid + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"},
		{"provisioned without throughput", createBody("tbl", func(b js) { delete(b, "BillingMode") }),
			invalid + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED"},
		{"provisioned with on-demand maxima", createBody("tbl", func(b js) {
			b["BillingMode"] = "PROVISIONED"
			b["ProvisionedThroughput"] = pt(1, 1)
			b["OnDemandThroughput"] = js{"MaxReadRequestUnits": 10}
		}), invalid + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when table BillingMode is PROVISIONED."},
		{"LSI without table range key", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("l", "S")}
			b["LocalSecondaryIndexes"] = []js{lsi("lsi1", hashRange("pk", "l"), all)}
		}), invalid + "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex"},
		{"empty LSI list", createBody("tbl", func(b js) { composite(b); b["LocalSecondaryIndexes"] = []js{} }),
			invalid + "List of LocalSecondaryIndexes is empty"},
		{"empty GSI list", createBody("tbl", func(b js) { composite(b); b["GlobalSecondaryIndexes"] = []js{} }),
			invalid + "List of GlobalSecondaryIndexes is empty"},
		{"LSI undefined keys", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", []js{keyElem("c", "RANGE"), keyElem("d", "RANGE")}, js{})}
		}), invalid + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c, d], AttributeDefinitions: [a, b]"},
		{"LSI first key not hash", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", []js{keyElem("a", "RANGE")}, js{})}
		}), "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"},
		{"LSI without range key", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", hashKey("b"), js{})}
		}), invalid + "Index KeySchema does not have a range key for index: abc"},
		{"LSI with another hash key", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", hashRange("b", "a"), js{})}
		}), invalid + "Index KeySchema does not have the same leading hash key as table KeySchema for index: abc. index hash key: b, table hash key: a"},
		{"LSI without projection type", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", hashRange("a", "b"), js{"NonKeyAttributes": []string{"a"}})}
		}), invalid + "Unknown ProjectionType: null"},
		{"LSI keys-only with non-key attributes", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("abc", hashRange("a", "b"), js{"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": []string{"x"}})}
		}), invalid + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified"},
		{"GSI include without non-key attributes", createBody("tbl", func(b js) {
			composite(b)
			b["BillingMode"] = "PAY_PER_REQUEST"
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("b"), js{"ProjectionType": "INCLUDE"})}
		}), invalid + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified"},
		{"duplicate non-key attribute", createBody("tbl", func(b js) {
			composite(b)
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("b"), js{"ProjectionType": "INCLUDE", "NonKeyAttributes": []string{"x", "x"}})}
		}), invalid + "Duplicate element in NonKeyAttributes: x"},
		{"too many non-key attributes in one index", createBody("tbl", func(b js) {
			composite(b)
			nk := make([]string, 21)
			for i := range nk {
				nk[i] = fmt.Sprintf("n%d", i)
			}
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("b"), js{"ProjectionType": "INCLUDE", "NonKeyAttributes": nk})}
		}), oneError + "Value '[n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, n10, n11, n12, n13, n14, n15, n16, n17, n18, n19, n20]' at 'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed to satisfy constraint: Member must have length less than or equal to 20"},
		{"too many non-key attributes in all indexes", createBody("tbl", func(b js) {
			defs := []js{attrDef("a", "S"), attrDef("b", "S")}
			var gsis []js
			for g := range 6 {
				nk := make([]string, 17)
				for i := range nk {
					nk[i] = fmt.Sprintf("n%d_%d", g, i)
				}
				gsis = append(gsis, gsi(fmt.Sprintf("gsi%d", g), hashKey("b"), js{"ProjectionType": "INCLUDE", "NonKeyAttributes": nk}))
			}
			b["AttributeDefinitions"], b["KeySchema"], b["GlobalSecondaryIndexes"] = defs, hashRange("a", "b"), gsis
		}), invalid + "The number of projected attributes in all secondary indexes of the table exceeds the limit of 100"},
		{"duplicate index names", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("g1", "S"), attrDef("g2", "S")}
			b["GlobalSecondaryIndexes"] = []js{gsi("same", hashKey("g1"), all), gsi("same", hashKey("g2"), all)}
		}), invalid + "Duplicate index name: same"},
		{"LSI and GSI with one name", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("same", hashRange("a", "b"), all)}
			b["GlobalSecondaryIndexes"] = []js{gsi("same", hashRange("a", "b"), all)}
		}), invalid + "Duplicate index name: same"},
		{"six LSIs", createBody("tbl", func(b js) {
			composite(b)
			var l []js
			for i := range 6 {
				l = append(l, lsi(fmt.Sprintf("l%d_", i), hashRange("a", "b"), all))
			}
			b["LocalSecondaryIndexes"] = l
		}), invalid + "Number of LocalSecondaryIndexes exceeds per-table limit of 5"},
		{"twenty-one GSIs", createBody("tbl", func(b js) {
			composite(b)
			var g []js
			for i := range 21 {
				g = append(g, gsi(fmt.Sprintf("g%d_", i), hashRange("a", "b"), all))
			}
			b["GlobalSecondaryIndexes"] = g
		}), invalid + "GlobalSecondaryIndex count exceeds the per-table limit of 20"},
		{"GSI undefined key", createBody("tbl", func(b js) {
			composite(b)
			b["KeySchema"] = hashKey("a")
			b["GlobalSecondaryIndexes"] = []js{gsi("abc", []js{keyElem("c", "RANGE")}, js{})}
		}), invalid + "Some index key attributes are not defined in AttributeDefinitions. Keys: [c], AttributeDefinitions: [a, b]"},
		{"GSI projection type enum", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("g", "S"), attrDef("extra", "N")}
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("g"), js{"ProjectionType": "BOGUS_IGNORED"})}
		}), oneError + "Value 'BOGUS_IGNORED' at 'globalSecondaryIndexes.1.member.projection.projectionType' failed to satisfy constraint: Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]"},
		{"unused attribute masks later index errors", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("g", "S"), attrDef("extra", "N")}
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("g"), js{})}
		}), invalid + "Some AttributeDefinitions are not used. AttributeDefinitions: [pk, g, extra], keys used: [g, pk]"},
		{"on-demand GSI with throughput", createBody("tbl", func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("g", "S")}
			b["GlobalSecondaryIndexes"] = []js{{"IndexName": "gi1", "KeySchema": hashKey("g"), "Projection": all, "ProvisionedThroughput": pt(1, 1)}}
		}), invalid + "ProvisionedThroughput should not be specified for index: gi1 when BillingMode is PAY_PER_REQUEST"},
		{"provisioned GSI without throughput", createBody("tbl", func(b js) {
			delete(b, "BillingMode")
			b["ProvisionedThroughput"] = pt(1, 1)
			b["AttributeDefinitions"] = []js{attrDef("pk", "S"), attrDef("g", "S")}
			b["GlobalSecondaryIndexes"] = []js{gsi("gi1", hashKey("g"), all)}
		}), invalid + "ProvisionedThroughput is not specified for index: gi1"},
		{"index name constraints in member order", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{lsi("h;", []js{}, js{}), lsi(long, hashKey("a"), js{})}
		}), "4 validation errors detected: Value '[]' at 'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: Member must have length greater than or equal to 1" +
			"; Value 'h;' at 'localSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" +
			"; Value 'h;' at 'localSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member must have length greater than or equal to 3" +
			"; Value '" + long + "' at 'localSecondaryIndexes.2.member.indexName' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"at most ten violations are reported", createBody("tbl", func(b js) {
			composite(b)
			b["LocalSecondaryIndexes"] = []js{{}, {}, {}, {}, {}, {}, {}, {}, {}}
		}), "10 validation errors detected: " + strings.Join([]string{
			"Value null at 'localSecondaryIndexes.1.member.keySchema' " + notNull,
			"Value null at 'localSecondaryIndexes.1.member.projection' " + notNull,
			"Value null at 'localSecondaryIndexes.1.member.indexName' " + notNull,
			"Value null at 'localSecondaryIndexes.2.member.keySchema' " + notNull,
			"Value null at 'localSecondaryIndexes.2.member.projection' " + notNull,
			"Value null at 'localSecondaryIndexes.2.member.indexName' " + notNull,
			"Value null at 'localSecondaryIndexes.3.member.keySchema' " + notNull,
			"Value null at 'localSecondaryIndexes.3.member.projection' " + notNull,
			"Value null at 'localSecondaryIndexes.3.member.indexName' " + notNull,
			"Value null at 'localSecondaryIndexes.4.member.keySchema' " + notNull,
		}, "; ")},
		{"stream disabled with a view type", createBody("tbl", func(b js) {
			b["StreamSpecification"] = js{"StreamEnabled": false, "StreamViewType": "NEW_IMAGE"}
		}), invalid + "Table is being created with a stream disabled, UpdateViewType should not be specified"},
		{"stream enabled without a view type", createBody("tbl", func(b js) { b["StreamSpecification"] = js{"StreamEnabled": true} }),
			invalid + "Table is being created with a stream enabled, UpdateViewType is required"},
		{"stream specification without StreamEnabled", createBody("tbl", func(b js) { b["StreamSpecification"] = js{} }),
			oneError + "Value null at 'streamSpecification.streamEnabled' " + notNull},
		{"SSE type without encryption", createBody("tbl", func(b js) { b["SSESpecification"] = js{"Enabled": false, "SSEType": "KMS"} }),
			invalid + "SSEType can not be specified if Enabled is false"},
	}
	s := newCF(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &cfStore{t: t, c: s.c, url: s.url}
			s.rawErr("CreateTable", tc.body, "ValidationException", tc.msg)
		})
	}
	// Nothing was created by the rejected requests.
	out, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 0 {
		t.Fatalf("tables after rejected creates: %v, %v", out.TableNames, err)
	}
}

func TestCreateTableExisting(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("dup", "pk:S").create(s)
	s.rawErr("CreateTable", createBody("dup", nil), "ResourceInUseException", "Table already exists: dup")
	// Validation comes before the existence check.
	s.rawErr("CreateTable", createBody("dup", func(b js) { b["KeySchema"] = hashRange("pk", "pk") }), "ValidationException",
		"Invalid KeySchema: Some index key attribute have no definition")
	// Table names are case-sensitive.
	table("DUP", "pk:S").create(s)
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCreateAndDescribeProvisionedTable(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	before := time.Now().Add(-time.Second)
	out, err := s.c.CreateTable(bg, &dynamodb.CreateTableInput{
		TableName: aws.String("prov"),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(4)},
	})
	if err != nil {
		t.Fatal(err)
	}
	td := out.TableDescription
	if td.TableStatus != types.TableStatusCreating {
		t.Errorf("CreateTable TableStatus %s, want CREATING", td.TableStatus)
	}
	if td.WarmThroughput != nil {
		t.Errorf("CreateTable response carries WarmThroughput %+v", td.WarmThroughput)
	}
	if td.BillingModeSummary != nil {
		t.Errorf("provisioned table has BillingModeSummary %+v", td.BillingModeSummary)
	}
	if !uuidPattern.MatchString(aws.ToString(td.TableId)) {
		t.Errorf("TableId %q is not a UUID", aws.ToString(td.TableId))
	}
	if got := aws.ToString(td.TableArn); got != "arn:aws:dynamodb:us-east-1:123456789012:table/prov" {
		t.Errorf("TableArn %s", got)
	}
	if td.CreationDateTime == nil || td.CreationDateTime.Before(before) || td.CreationDateTime.After(time.Now().Add(time.Second)) {
		t.Errorf("CreationDateTime %v", td.CreationDateTime)
	}

	desc, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("prov")})
	if err != nil {
		t.Fatal(err)
	}
	d := desc.Table
	if d.TableStatus != types.TableStatusActive || aws.ToString(d.TableId) != aws.ToString(td.TableId) ||
		!d.CreationDateTime.Equal(*td.CreationDateTime) {
		t.Errorf("describe: status %s id %s created %v", d.TableStatus, aws.ToString(d.TableId), d.CreationDateTime)
	}
	p := d.ProvisionedThroughput
	if aws.ToInt64(p.ReadCapacityUnits) != 5 || aws.ToInt64(p.WriteCapacityUnits) != 4 || aws.ToInt64(p.NumberOfDecreasesToday) != 0 ||
		p.LastIncreaseDateTime != nil || p.LastDecreaseDateTime != nil {
		t.Errorf("ProvisionedThroughput %+v", p)
	}
	if w := d.WarmThroughput; w == nil || aws.ToInt64(w.ReadUnitsPerSecond) != 5 || aws.ToInt64(w.WriteUnitsPerSecond) != 4 || w.Status != types.TableStatusActive {
		t.Errorf("WarmThroughput %+v", d.WarmThroughput)
	}
	// AttributeDefinitions come back sorted by name.
	if got := fmt.Sprint(attrDefNames(d.AttributeDefinitions)); got != "[pk:S sk:N]" {
		t.Errorf("AttributeDefinitions %s", got)
	}
	if aws.ToInt64(d.ItemCount) != 0 || aws.ToInt64(d.TableSizeBytes) != 0 || d.DeletionProtectionEnabled == nil || *d.DeletionProtectionEnabled {
		t.Errorf("counts %v %v protection %v", d.ItemCount, d.TableSizeBytes, d.DeletionProtectionEnabled)
	}
	if d.StreamSpecification != nil || d.SSEDescription != nil || d.TableClassSummary != nil || d.GlobalSecondaryIndexes != nil || d.LocalSecondaryIndexes != nil {
		t.Errorf("unexpected members in %+v", d)
	}
	// A table ARN designates the table too.
	if _, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: td.TableArn}); err != nil {
		t.Errorf("describe by ARN: %v", err)
	}
}

func attrDefNames(defs []types.AttributeDefinition) []string {
	out := make([]string, len(defs))
	for i, a := range defs {
		out[i] = aws.ToString(a.AttributeName) + ":" + string(a.AttributeType)
	}
	return out
}

func TestDescribeOnDemandTableWithIndexes(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("idx", "pk:S", "sk:S").
		lsi("lsi1", "lsk:N", types.ProjectionTypeAll).
		lsi("lsi2", "lsk2:S", types.ProjectionTypeInclude, "zz", "aa").
		gsi("gsi_z", "gk:S", "", types.ProjectionTypeKeysOnly).
		gsi("gsi_a", "gk:S", "gs:N", types.ProjectionTypeInclude, "mm", "bb")
	ts.in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	ts.in.TableClass = types.TableClassStandardInfrequentAccess
	ts.in.DeletionProtectionEnabled = aws.Bool(true)
	ts.in.SSESpecification = &types.SSESpecification{Enabled: aws.Bool(true)}
	ts.in.OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(10), MaxWriteRequestUnits: aws.Int64(5)}
	for _, n := range []string{"pk:S", "sk:S", "lsk:N", "lsk2:S", "gk:S", "gs:N"} {
		name, typ := keyAttr(n)
		ts.in.AttributeDefinitions = append(ts.in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ})
	}
	out, err := s.c.CreateTable(bg, ts.in)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range out.TableDescription.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusCreating || g.WarmThroughput != nil || g.Backfilling != nil {
			t.Errorf("CreateTable response GSI %s: status %s warm %v backfilling %v", aws.ToString(g.IndexName), g.IndexStatus, g.WarmThroughput, g.Backfilling)
		}
	}
	if b := out.TableDescription.BillingModeSummary; b == nil || b.BillingMode != types.BillingModePayPerRequest || b.LastUpdateToPayPerRequestDateTime != nil {
		t.Errorf("CreateTable BillingModeSummary %+v", b)
	}

	desc, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("idx")})
	if err != nil {
		t.Fatal(err)
	}
	d := desc.Table
	if b := d.BillingModeSummary; b == nil || b.BillingMode != types.BillingModePayPerRequest || !b.LastUpdateToPayPerRequestDateTime.Equal(*d.CreationDateTime) {
		t.Errorf("BillingModeSummary %+v", b)
	}
	if p := d.ProvisionedThroughput; aws.ToInt64(p.ReadCapacityUnits) != 0 || aws.ToInt64(p.WriteCapacityUnits) != 0 || aws.ToInt64(p.NumberOfDecreasesToday) != 0 {
		t.Errorf("on-demand ProvisionedThroughput %+v", p)
	}
	if w := d.WarmThroughput; w == nil || aws.ToInt64(w.ReadUnitsPerSecond) != 12000 || aws.ToInt64(w.WriteUnitsPerSecond) != 4000 {
		t.Errorf("WarmThroughput %+v", w)
	}
	if got := fmt.Sprint(attrDefNames(d.AttributeDefinitions)); got != "[gk:S gs:N lsk:N lsk2:S pk:S sk:S]" {
		t.Errorf("AttributeDefinitions %s", got)
	}
	if len(d.LocalSecondaryIndexes) != 2 || len(d.GlobalSecondaryIndexes) != 2 {
		t.Fatalf("indexes %d LSIs %d GSIs", len(d.LocalSecondaryIndexes), len(d.GlobalSecondaryIndexes))
	}
	arn := aws.ToString(d.TableArn)
	// Index lists keep the submitted order; NonKeyAttributes are sorted.
	l2 := d.LocalSecondaryIndexes[1]
	if aws.ToString(d.LocalSecondaryIndexes[0].IndexName) != "lsi1" || aws.ToString(l2.IndexName) != "lsi2" ||
		aws.ToString(l2.IndexArn) != arn+"/index/lsi2" || fmt.Sprint(l2.Projection.NonKeyAttributes) != "[aa zz]" ||
		fmt.Sprint(keyNames(l2.KeySchema)) != "[pk:HASH lsk2:RANGE]" || aws.ToInt64(l2.ItemCount) != 0 || aws.ToInt64(l2.IndexSizeBytes) != 0 {
		t.Errorf("LSI %+v", l2)
	}
	g := d.GlobalSecondaryIndexes[1]
	if aws.ToString(d.GlobalSecondaryIndexes[0].IndexName) != "gsi_z" || aws.ToString(g.IndexName) != "gsi_a" ||
		g.IndexStatus != types.IndexStatusActive || aws.ToString(g.IndexArn) != arn+"/index/gsi_a" ||
		fmt.Sprint(g.Projection.NonKeyAttributes) != "[bb mm]" || g.Backfilling != nil {
		t.Errorf("GSI %+v", g)
	}
	if p := g.ProvisionedThroughput; p == nil || aws.ToInt64(p.ReadCapacityUnits) != 0 || aws.ToInt64(p.NumberOfDecreasesToday) != 0 {
		t.Errorf("GSI throughput %+v", p)
	}
	if w := g.WarmThroughput; w == nil || aws.ToInt64(w.ReadUnitsPerSecond) != 12000 || w.Status != types.IndexStatusActive {
		t.Errorf("GSI warm %+v", w)
	}
	if d.StreamSpecification == nil || !aws.ToBool(d.StreamSpecification.StreamEnabled) || d.StreamSpecification.StreamViewType != types.StreamViewTypeNewImage ||
		!strings.HasPrefix(aws.ToString(d.LatestStreamArn), arn+"/stream/") || d.LatestStreamLabel == nil {
		t.Errorf("stream %+v %v %v", d.StreamSpecification, aws.ToString(d.LatestStreamArn), d.LatestStreamLabel)
	}
	if d.TableClassSummary == nil || d.TableClassSummary.TableClass != types.TableClassStandardInfrequentAccess {
		t.Errorf("TableClassSummary %+v", d.TableClassSummary)
	}
	if !aws.ToBool(d.DeletionProtectionEnabled) {
		t.Error("deletion protection not reported")
	}
	if e := d.SSEDescription; e == nil || e.Status != types.SSEStatusEnabled || e.SSEType != types.SSETypeKms || !strings.HasPrefix(aws.ToString(e.KMSMasterKeyArn), "arn:aws:kms:") {
		t.Errorf("SSEDescription %+v", e)
	}
	if o := d.OnDemandThroughput; o == nil || aws.ToInt64(o.MaxReadRequestUnits) != 10 || aws.ToInt64(o.MaxWriteRequestUnits) != 5 {
		t.Errorf("OnDemandThroughput %+v", o)
	}

	// Item counts follow writes, per index too (sparse).
	s.put("idx", avmap{"pk": vS("a"), "sk": vS("1"), "lsk": vN("1"), "gk": vS("g")})
	s.put("idx", avmap{"pk": vS("a"), "sk": vS("2")})
	d2, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("idx")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(d2.Table.ItemCount) != 2 || aws.ToInt64(d2.Table.TableSizeBytes) <= 0 ||
		aws.ToInt64(d2.Table.LocalSecondaryIndexes[0].ItemCount) != 1 || aws.ToInt64(d2.Table.LocalSecondaryIndexes[1].ItemCount) != 0 ||
		aws.ToInt64(d2.Table.GlobalSecondaryIndexes[0].ItemCount) != 1 {
		t.Errorf("counts: table %d/%d lsi %d/%d gsi %d", aws.ToInt64(d2.Table.ItemCount), aws.ToInt64(d2.Table.TableSizeBytes),
			aws.ToInt64(d2.Table.LocalSecondaryIndexes[0].ItemCount), aws.ToInt64(d2.Table.LocalSecondaryIndexes[1].ItemCount),
			aws.ToInt64(d2.Table.GlobalSecondaryIndexes[0].ItemCount))
	}
}

func keyNames(ks []types.KeySchemaElement) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = aws.ToString(k.AttributeName) + ":" + string(k.KeyType)
	}
	return out
}

func TestDescribeAndDeleteErrors(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	cases := []struct {
		op, name, typ, msg string
	}{
		{"DescribeTable", "nope", "ResourceNotFoundException", "Requested resource not found: Table: nope not found"},
		{"DescribeTable", "ab", "ResourceNotFoundException", "Requested resource not found: Table: ab not found"},
		{"DeleteTable", "nope", "ResourceNotFoundException", "Requested resource not found: Table: nope not found"},
		{"DescribeTable", "arn:aws:dynamodb:us-east-1:123456789012:table/gone", "ResourceNotFoundException", "Requested resource not found: Table: gone not found"},
		{"DescribeTable", "bad name!", "ValidationException", oneError + "Value 'bad name!' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"},
		{"DeleteTable", strings.Repeat("x", 256), "ValidationException", oneError + "Value '" + strings.Repeat("x", 256) + "' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255"},
		{"DescribeTable", "", "ValidationException", "2 validation errors detected: Value '' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1"},
	}
	for _, tc := range cases {
		s.rawErr(tc.op, js{"TableName": tc.name}, tc.typ, tc.msg)
	}
	s.rawErr("DescribeTable", js{}, "ValidationException", oneError+"Value null at 'tableName' "+notNull)
}

func TestDeleteTable(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("doomed", "pk:S", "sk:N").lsi("li1", "x:S", types.ProjectionTypeAll).create(s)
	s.put("doomed", avmap{"pk": vS("a"), "sk": vN("1"), "x": vS("y")})
	out, err := s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: aws.String("doomed")})
	if err != nil {
		t.Fatal(err)
	}
	td := out.TableDescription
	if td.TableStatus != types.TableStatusDeleting || aws.ToString(td.TableName) != "doomed" || td.KeySchema != nil ||
		td.AttributeDefinitions != nil || td.LocalSecondaryIndexes != nil || td.CreationDateTime != nil || aws.ToInt64(td.ItemCount) != 1 {
		t.Errorf("DeleteTable response %+v", td)
	}
	_, err = s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("doomed")})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found: Table: doomed not found")
	_, err = s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: aws.String("doomed")})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found: Table: doomed not found")
	// The name can be reused at once; the new table is empty and has a new id.
	table("doomed", "pk:S", "sk:N").create(s)
	if it := s.get("doomed", avmap{"pk": vS("a"), "sk": vN("1")}); it != nil {
		t.Errorf("recreated table still holds %v", itemString(it))
	}
}

func TestDeletionProtection(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("guarded", "pk:S")
	ts.in.DeletionProtectionEnabled = aws.Bool(true)
	ts.create(s)
	_, err := s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: aws.String("guarded")})
	validationErr(t, err, "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	if _, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("guarded")}); err != nil {
		t.Fatalf("protected table gone: %v", err)
	}
	up, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("guarded"), DeletionProtectionEnabled: aws.Bool(false)})
	if err != nil {
		t.Fatal(err)
	}
	if up.TableDescription.TableStatus != types.TableStatusActive || aws.ToBool(up.TableDescription.DeletionProtectionEnabled) {
		t.Errorf("UpdateTable response %s protection %v", up.TableDescription.TableStatus, up.TableDescription.DeletionProtectionEnabled)
	}
	if _, err := s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: aws.String("guarded")}); err != nil {
		t.Fatal(err)
	}
}

func TestListTables(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	for _, n := range []string{"beta", "Alpha", "alpha", "gamma", "delta"} {
		table(n, "pk:S").create(s)
	}
	all, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	// Byte-wise order: upper case first.
	sameList(t, "tables", all.TableNames, []string{"Alpha", "alpha", "beta", "delta", "gamma"})
	if all.LastEvaluatedTableName != nil {
		t.Errorf("LastEvaluatedTableName %q on a complete list", *all.LastEvaluatedTableName)
	}
	var pages [][]string
	var start *string
	for {
		out, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{Limit: aws.Int32(2), ExclusiveStartTableName: start})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, out.TableNames)
		if out.LastEvaluatedTableName == nil {
			break
		}
		if *out.LastEvaluatedTableName != out.TableNames[len(out.TableNames)-1] {
			t.Fatalf("LastEvaluatedTableName %s is not the page's last name %v", *out.LastEvaluatedTableName, out.TableNames)
		}
		start = out.LastEvaluatedTableName
	}
	if got := fmt.Sprint(pages); got != "[[Alpha alpha] [beta delta] [gamma]]" {
		t.Errorf("pages %s", got)
	}
	// The final page of exactly Limit names carries no LastEvaluatedTableName.
	out, err := s.c.ListTables(bg, &dynamodb.ListTablesInput{Limit: aws.Int32(1), ExclusiveStartTableName: aws.String("delta")})
	if err != nil || fmt.Sprint(out.TableNames) != "[gamma]" || out.LastEvaluatedTableName != nil {
		t.Errorf("last page %v %v %v", out.TableNames, out.LastEvaluatedTableName, err)
	}
	// The start name need not exist.
	out, err = s.c.ListTables(bg, &dynamodb.ListTablesInput{ExclusiveStartTableName: aws.String("c_missing")})
	if err != nil || fmt.Sprint(out.TableNames) != "[delta gamma]" {
		t.Errorf("from missing start %v %v", out.TableNames, err)
	}
	s.rawErr("ListTables", js{"Limit": 0}, "ValidationException", oneError+"Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
	s.rawErr("ListTables", js{"Limit": 101}, "ValidationException", oneError+"Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100")
	s.rawErr("ListTables", js{"ExclusiveStartTableName": "a!"}, "ValidationException",
		"2 validation errors detected: Value 'a!' at 'exclusiveStartTableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value 'a!' at 'exclusiveStartTableName' failed to satisfy constraint: Member must have length greater than or equal to 3")
}

// updateErr sends a raw UpdateTable and asserts its error.
func updateErr(s *cfStore, name string, edit func(js), typ, msg string) {
	s.t.Helper()
	b := js{"TableName": name}
	edit(b)
	s.rawErr("UpdateTable", b, typ, msg)
}

func TestUpdateTableValidation(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ppr := table("ppr", "pk:S").gsi("gi1", "gk:S", "", types.ProjectionTypeAll).create(s)
	provTS := table("prov", "pk:S", "sk:S").lsi("li1", "lk:S", types.ProjectionTypeAll)
	provTS.in.BillingMode = ""
	provTS.in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)}
	prov := provTS.create(s)
	atLeastOne := "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
	create := func(name string, ks []js) js {
		return js{"Create": js{"IndexName": name, "KeySchema": ks, "Projection": js{"ProjectionType": "ALL"}}}
	}
	cases := []struct {
		name, table string
		edit        func(js)
		typ, msg    string
	}{
		{"nothing to change", ppr, func(b js) {}, "ValidationException", atLeastOne},
		{"nothing to change on a missing table", "missing", func(b js) {}, "ValidationException", atLeastOne},
		{"attribute definitions alone", ppr, func(b js) { b["AttributeDefinitions"] = []js{attrDef("pk", "S")} }, "ValidationException", atLeastOne},
		{"empty index update list alone", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{} }, "ValidationException", atLeastOne},
		{"empty index update list with a change", ppr, func(b js) {
			b["GlobalSecondaryIndexUpdates"] = []js{}
			b["DeletionProtectionEnabled"] = true
		}, "ValidationException", invalid + "List of GlobalSecondaryIndexUpdates is empty"},
		{"missing table", "missing", func(b js) { b["ProvisionedThroughput"] = pt(10, 10) },
			"ResourceNotFoundException", "Requested resource not found: Table: missing not found"},
		{"zero throughput", prov, func(b js) { b["ProvisionedThroughput"] = pt(0, 5) },
			"ValidationException", oneError + "Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"partial throughput", prov, func(b js) { b["ProvisionedThroughput"] = js{"ReadCapacityUnits": 4} },
			"ValidationException", oneError + "Value null at 'provisionedThroughput.writeCapacityUnits' " + notNull},
		{"unchanged throughput", prov, func(b js) { b["ProvisionedThroughput"] = pt(5, 5); b["BillingMode"] = "PROVISIONED" },
			"ValidationException", "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. Current WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."},
		{"provisioned billing without throughput", prov, func(b js) { b["BillingMode"] = "PROVISIONED" },
			"ValidationException", invalid + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"},
		{"switch to on-demand with throughput", prov, func(b js) { b["BillingMode"] = "PAY_PER_REQUEST"; b["ProvisionedThroughput"] = pt(5, 5) },
			"ValidationException", invalid + "ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST"},
		{"throughput on an on-demand table", ppr, func(b js) { b["ProvisionedThroughput"] = pt(5, 5) },
			"ValidationException", invalid + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"},
		{"switch to provisioned without index throughput", ppr, func(b js) { b["BillingMode"] = "PROVISIONED"; b["ProvisionedThroughput"] = pt(5, 5) },
			"ValidationException", invalid + "ProvisionedThroughput must be specified for index: gi1"},
		{"on-demand maxima on a provisioned table", prov, func(b js) { b["OnDemandThroughput"] = js{"MaxReadRequestUnits": 100} },
			"ValidationException", invalid + "MaxReadRequestUnits for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED"},
		{"deletion protection with another change", ppr, func(b js) { b["DeletionProtectionEnabled"] = true; b["BillingMode"] = "PAY_PER_REQUEST" },
			"ValidationException", invalid + "DeletionProtection modification must be the only operation in the request"},
		{"table class with another change", ppr, func(b js) { b["TableClass"] = "STANDARD"; b["DeletionProtectionEnabled"] = true },
			"ValidationException", invalid + "TableClass modification must be the only operation in the request"},
		{"encryption with another change", ppr, func(b js) { b["SSESpecification"] = js{"Enabled": true}; b["DeletionProtectionEnabled"] = true },
			"ValidationException", invalid + "Server-Side Encryption modification must be the only operation in the request"},
		{"on-demand maxima with a stream", ppr, func(b js) {
			b["OnDemandThroughput"] = js{"MaxReadRequestUnits": 100}
			b["StreamSpecification"] = js{"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}
		}, "ValidationException", invalid + "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"},
		{"stream with throughput", prov, func(b js) {
			b["ProvisionedThroughput"] = pt(6, 6)
			b["StreamSpecification"] = js{"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}
		}, "ValidationException", invalid + "You cannot modify stream status while updating table IOPS"},
		{"index creation with throughput", prov, func(b js) {
			b["ProvisionedThroughput"] = pt(6, 6)
			b["AttributeDefinitions"] = []js{attrDef("x", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gsx", hashKey("x"))}
		}, "ValidationException", invalid + "You cannot create or delete index while updating table IOPS"},
		{"stream enabled without view type", ppr, func(b js) { b["StreamSpecification"] = js{"StreamEnabled": true} },
			"ValidationException", invalid + "If stream is being enabled then UpdateViewType is required"},
		{"stream disabled with view type", ppr, func(b js) { b["StreamSpecification"] = js{"StreamEnabled": false, "StreamViewType": "KEYS_ONLY"} },
			"ValidationException", invalid + "If stream is being disabled, then UpdateViewType must not be specified"},
		{"disable a missing stream", ppr, func(b js) { b["StreamSpecification"] = js{"StreamEnabled": false} },
			"ValidationException", "Table has no stream to disable: TableName: ppr"},
		{"disable default encryption", ppr, func(b js) { b["SSESpecification"] = js{"Enabled": false} },
			"ValidationException", invalid + "Table is already encrypted by default"},
		{"empty index action", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{{}} },
			"ValidationException", invalid + "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null"},
		{"two actions in one entry", ppr, func(b js) {
			b["GlobalSecondaryIndexUpdates"] = []js{{"Delete": js{"IndexName": "gi1"}, "Update": js{"IndexName": "gi1"}}}
		}, "ValidationException", invalid + "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object"},
		{"one index twice", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("gk", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{{"Delete": js{"IndexName": "gi1"}}, create("gi1", hashKey("gk"))}
		}, "ValidationException", invalid + "Only one global secondary index update per index is allowed simultaneously. Index: gi1"},
		{"two creations", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("a", "S"), attrDef("b", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gsa", hashKey("a")), create("gsb", hashKey("b"))}
		}, "LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"},
		{"creation and deletion", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("a", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gsa", hashKey("a")), {"Delete": js{"IndexName": "gi1"}}}
		}, "LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"},
		{"index name constraint", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{{"Delete": js{"IndexName": "x"}}} },
			"ValidationException", oneError + "Value 'x' at 'globalSecondaryIndexUpdates.1.member.delete.indexName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
		{"create without attribute definitions", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{create("gsx", hashKey("x"))} },
			"ValidationException", invalid + "AttributeDefinitions is not specified for index: gsx"},
		{"create keyed on an attribute the request does not define", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("g3", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gsx", hashRange("pk", "g3"))}
		}, "ValidationException", invalid + "Some index key attributes are not defined in AttributeDefinitions. Keys: [pk, g3], AttributeDefinitions: [g3]"},
		{"create an existing index", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("gk", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gi1", hashKey("gk"))}
		}, "ValidationException", "Attempting to create an index which already exists"},
		{"create with throughput on an on-demand table", ppr, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("x", "S")}
			c := create("gsx", hashKey("x"))
			c["Create"].(js)["ProvisionedThroughput"] = pt(1, 1)
			b["GlobalSecondaryIndexUpdates"] = []js{c}
		}, "ValidationException", invalid + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: gsx when BillingMode is PAY_PER_REQUEST"},
		{"create without throughput on a provisioned table", prov, func(b js) {
			b["AttributeDefinitions"] = []js{attrDef("x", "S")}
			b["GlobalSecondaryIndexUpdates"] = []js{create("gsx", hashKey("x"))}
		}, "ValidationException", invalid + "Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: gsx"},
		{"delete a missing index", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{{"Delete": js{"IndexName": "nope"}}} },
			"ResourceNotFoundException", "Requested resource not found: Index nope for table ppr"},
		{"update a missing index", ppr, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{{"Update": js{"IndexName": "nope"}}} },
			"ResourceNotFoundException", "Requested resource not found: Index nope for table ppr"},
		{"delete a local index", prov, func(b js) { b["GlobalSecondaryIndexUpdates"] = []js{{"Delete": js{"IndexName": "li1"}}} },
			"ValidationException", "Cannot delete an index that is not a GlobalSecondaryIndex: li1"},
		{"index throughput on an on-demand table", ppr, func(b js) {
			b["GlobalSecondaryIndexUpdates"] = []js{{"Update": js{"IndexName": "gi1", "ProvisionedThroughput": pt(2, 2)}}}
		}, "ValidationException", invalid + "The only Updates for index: gi1 when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"},
		{"on-demand maxima out of range", ppr, func(b js) { b["OnDemandThroughput"] = js{"MaxWriteRequestUnits": 0} },
			"ValidationException", invalid + "Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of valid range"},
		{"lower warm throughput", ppr, func(b js) { b["WarmThroughput"] = js{"ReadUnitsPerSecond": 100} },
			"ValidationException", invalid + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than current WarmThroughput, decreasing WarmThroughput is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &cfStore{t: t, c: s.c, url: s.url}
			updateErr(s, tc.table, tc.edit, tc.typ, tc.msg)
		})
	}
	// Rejected requests changed nothing.
	d, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String(ppr)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.GlobalSecondaryIndexes) != 1 || aws.ToBool(d.Table.DeletionProtectionEnabled) || d.Table.StreamSpecification != nil ||
		d.Table.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("rejected updates left a trace: %+v", d.Table)
	}
}

// fixedClock is a settable clock for a store.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fixedClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestUpdateTableThroughput(t *testing.T) {
	t.Parallel()
	clock := &fixedClock{t: time.Date(2026, 10, 8, 23, 10, 0, 0, time.UTC)}
	srv := ddbtest.Start(t, ddblocal.Options{Now: clock.now})
	s := &cfStore{t: t, c: srv.Client(), url: srv.URL}
	ts := table("tpt", "pk:S").gsi("gi1", "gk:S", "", types.ProjectionTypeAll)
	ts.in.BillingMode = types.BillingModeProvisioned
	ts.in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(10), WriteCapacityUnits: aws.Int64(10)}
	ts.in.GlobalSecondaryIndexes[0].ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(2), WriteCapacityUnits: aws.Int64(2)}
	ts.create(s)
	update := func(r, w int64) (*types.TableDescription, error) {
		out, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("tpt"),
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(r), WriteCapacityUnits: aws.Int64(w)}})
		if err != nil {
			return nil, err
		}
		return out.TableDescription, nil
	}
	describe := func() *types.TableDescription {
		out, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("tpt")})
		if err != nil {
			t.Fatal(err)
		}
		return out.Table
	}

	// An increase: the response still echoes the old units, with UPDATING.
	resp, err := update(20, 10)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TableStatus != types.TableStatusUpdating || aws.ToInt64(resp.ProvisionedThroughput.ReadCapacityUnits) != 10 ||
		resp.ProvisionedThroughput.LastIncreaseDateTime == nil {
		t.Errorf("increase response %s %+v", resp.TableStatus, resp.ProvisionedThroughput)
	}
	d := describe()
	if d.TableStatus != types.TableStatusActive || aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits) != 20 ||
		!d.ProvisionedThroughput.LastIncreaseDateTime.Equal(clock.now()) || aws.ToInt64(d.WarmThroughput.ReadUnitsPerSecond) != 20 {
		t.Errorf("after increase %+v warm %+v", d.ProvisionedThroughput, d.WarmThroughput)
	}
	// Four decreases a day, then one an hour after the last one.
	for i := 1; i <= 4; i++ {
		clock.advance(time.Minute)
		resp, err := update(20-int64(i), 10)
		if err != nil {
			t.Fatalf("decrease %d: %v", i, err)
		}
		if got := aws.ToInt64(resp.ProvisionedThroughput.NumberOfDecreasesToday); got != int64(i-1) {
			t.Errorf("decrease %d response counter %d", i, got)
		}
		if got := aws.ToInt64(describe().ProvisionedThroughput.NumberOfDecreasesToday); got != int64(i) {
			t.Errorf("decrease %d counter %d", i, got)
		}
	}
	_, err = update(10, 10)
	apiErr(t, err, "LimitExceededException", "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 seconds. Number of decreases today: 4. Last decrease at Thursday, October 8, 2026 at 11:14:00 PM Coordinated Universal Time. Next decrease can be made at Friday, October 9, 2026 at 12:00:00 AM Coordinated Universal Time.")
	if _, err := update(30, 30); err != nil {
		t.Errorf("increases stay allowed: %v", err)
	}
	// The budget resets at midnight UTC; WarmThroughput keeps its high-water mark.
	clock.advance(time.Hour)
	if _, err := update(10, 10); err != nil {
		t.Fatalf("decrease after midnight: %v", err)
	}
	d = describe()
	if aws.ToInt64(d.ProvisionedThroughput.NumberOfDecreasesToday) != 1 || aws.ToInt64(d.WarmThroughput.ReadUnitsPerSecond) != 30 {
		t.Errorf("after midnight %+v warm %+v", d.ProvisionedThroughput, d.WarmThroughput)
	}

	// Index throughput: unchanged is an error, a change echoes the old values.
	gsiUpdate := func(r, w int64) (*types.TableDescription, error) {
		out, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("tpt"),
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Update: &types.UpdateGlobalSecondaryIndexAction{
				IndexName: aws.String("gi1"), ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(r), WriteCapacityUnits: aws.Int64(w)}}}}})
		if err != nil {
			return nil, err
		}
		return out.TableDescription, nil
	}
	_, err = gsiUpdate(2, 2)
	validationErr(t, err, "The provisioned throughput for the index gi1 will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for index gi1: 2. Requested ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for index gi1: 2. Requested WriteCapacityUnits: 2. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.")
	resp, err = gsiUpdate(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := resp.GlobalSecondaryIndexes[0]
	if resp.TableStatus != types.TableStatusActive || g.IndexStatus != types.IndexStatusUpdating || aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits) != 2 {
		t.Errorf("index update response %s %s %+v", resp.TableStatus, g.IndexStatus, g.ProvisionedThroughput)
	}
	g = describe().GlobalSecondaryIndexes[0]
	if g.IndexStatus != types.IndexStatusActive || aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits) != 3 || aws.ToInt64(g.WarmThroughput.WriteUnitsPerSecond) != 3 {
		t.Errorf("index after update %s %+v", g.IndexStatus, g.ProvisionedThroughput)
	}
}

func TestUpdateTableBillingMode(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("bmt", "pk:S").gsi("gi1", "gk:S", "", types.ProjectionTypeAll)
	ts.in.BillingMode = types.BillingModeProvisioned
	ts.in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)}
	ts.in.GlobalSecondaryIndexes[0].ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}
	ts.create(s)
	out, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("bmt"), BillingMode: types.BillingModePayPerRequest})
	if err != nil {
		t.Fatal(err)
	}
	td := out.TableDescription
	if td.TableStatus != types.TableStatusUpdating || td.BillingModeSummary == nil || td.BillingModeSummary.BillingMode != types.BillingModePayPerRequest ||
		td.BillingModeSummary.LastUpdateToPayPerRequestDateTime != nil || aws.ToInt64(td.ProvisionedThroughput.ReadCapacityUnits) != 0 {
		t.Errorf("switch response %s %+v %+v", td.TableStatus, td.BillingModeSummary, td.ProvisionedThroughput)
	}
	d, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("bmt")})
	if err != nil {
		t.Fatal(err)
	}
	switched := d.Table.BillingModeSummary.LastUpdateToPayPerRequestDateTime
	if d.Table.BillingModeSummary.BillingMode != types.BillingModePayPerRequest || switched == nil ||
		aws.ToInt64(d.Table.GlobalSecondaryIndexes[0].ProvisionedThroughput.ReadCapacityUnits) != 0 ||
		aws.ToInt64(d.Table.WarmThroughput.ReadUnitsPerSecond) != 12000 {
		t.Errorf("after switch %+v", d.Table)
	}
	// Re-sending the mode is a no-op that still answers UPDATING.
	out, err = s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("bmt"), BillingMode: types.BillingModePayPerRequest})
	if err != nil || out.TableDescription.TableStatus != types.TableStatusUpdating {
		t.Errorf("re-send: %v %v", err, out)
	}
	// Back to provisioned: the table and every index need throughput.
	_, err = s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("bmt"), BillingMode: types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(3)},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Update: &types.UpdateGlobalSecondaryIndexAction{IndexName: aws.String("gi1"),
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(2), WriteCapacityUnits: aws.Int64(2)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err = s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("bmt")})
	if err != nil {
		t.Fatal(err)
	}
	b := d.Table.BillingModeSummary
	if b == nil || b.BillingMode != types.BillingModeProvisioned || !b.LastUpdateToPayPerRequestDateTime.Equal(*switched) ||
		aws.ToInt64(d.Table.ProvisionedThroughput.ReadCapacityUnits) != 3 || aws.ToInt64(d.Table.GlobalSecondaryIndexes[0].ProvisionedThroughput.ReadCapacityUnits) != 2 {
		t.Errorf("back to provisioned %+v %+v", b, d.Table.ProvisionedThroughput)
	}
}

func TestUpdateTableSettings(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("cfg", "pk:S")
	ts.in.OnDemandThroughput = &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(10), MaxWriteRequestUnits: aws.Int64(5)}
	ts.create(s)
	name := aws.String("cfg")
	describe := func() *types.TableDescription {
		out, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: name})
		if err != nil {
			t.Fatal(err)
		}
		return out.Table
	}
	// Stream: enable, re-enable fails, disable keeps the latest ARN, re-enable rotates it.
	up, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	if err != nil {
		t.Fatal(err)
	}
	if up.TableDescription.TableStatus != types.TableStatusUpdating || up.TableDescription.StreamSpecification == nil {
		t.Errorf("stream response %+v", up.TableDescription)
	}
	first := aws.ToString(describe().LatestStreamArn)
	_, err = s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	validationErr(t, err, "Table already has an enabled stream: TableName: cfg")
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name, StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	d := describe()
	if d.StreamSpecification != nil || aws.ToString(d.LatestStreamArn) != first {
		t.Errorf("after disable %+v %s", d.StreamSpecification, aws.ToString(d.LatestStreamArn))
	}
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}}); err != nil {
		t.Fatal(err)
	}
	if d := describe(); aws.ToString(d.LatestStreamArn) == first || d.StreamSpecification.StreamViewType != types.StreamViewTypeKeysOnly {
		t.Errorf("re-enabled stream %s %+v", aws.ToString(d.LatestStreamArn), d.StreamSpecification)
	}
	// Table class.
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name, TableClass: types.TableClassStandardInfrequentAccess}); err != nil {
		t.Fatal(err)
	}
	if c := describe().TableClassSummary; c == nil || c.TableClass != types.TableClassStandardInfrequentAccess || c.LastUpdateDateTime == nil {
		t.Errorf("TableClassSummary %+v", c)
	}
	// On-demand maxima merge member by member; -1 removes one.
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name,
		OnDemandThroughput: &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(20)}}); err != nil {
		t.Fatal(err)
	}
	if o := describe().OnDemandThroughput; o == nil || aws.ToInt64(o.MaxReadRequestUnits) != 20 || aws.ToInt64(o.MaxWriteRequestUnits) != 5 {
		t.Errorf("merged maxima %+v", o)
	}
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name,
		OnDemandThroughput: &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(-1), MaxWriteRequestUnits: aws.Int64(-1)}}); err != nil {
		t.Fatal(err)
	}
	if o := describe().OnDemandThroughput; o != nil {
		t.Errorf("cleared maxima %+v", o)
	}
	// Encryption.
	if _, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: name, SSESpecification: &types.SSESpecification{Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if e := describe().SSEDescription; e == nil || e.Status != types.SSEStatusEnabled {
		t.Errorf("SSEDescription %+v", e)
	}
}

// gsiCreate is an UpdateTable adding a hash-only GSI on attribute gk.
func gsiCreate(tbl, index, attr string, typ types.ScalarAttributeType, extra ...types.AttributeDefinition) *dynamodb.UpdateTableInput {
	return &dynamodb.UpdateTableInput{TableName: aws.String(tbl),
		AttributeDefinitions: append([]types.AttributeDefinition{{AttributeName: aws.String(attr), AttributeType: typ}}, extra...),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: aws.String(index), KeySchema: []types.KeySchemaElement{{AttributeName: aws.String(attr), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}}}
}

func TestUpdateTableCreateIndexBackfills(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("bft", "pk:S", "sk:S").create(s)
	for i := range 50 {
		it := avmap{"pk": vS(fmt.Sprintf("p%d", i%5)), "sk": vS(fmt.Sprintf("s%02d", i)), "data": vN(fmt.Sprint(i))}
		switch {
		case i%10 == 0: // no index key: not in the index
		case i%10 == 1: // index key of the wrong type: not in the index
			it["gk"] = vN("1")
		default:
			it["gk"] = vS(fmt.Sprintf("g%d", i%3))
		}
		s.put("bft", it)
	}
	// The stored type of a redeclared table key stays as it is.
	out, err := s.c.UpdateTable(bg, gsiCreate("bft", "byG", "gk", types.ScalarAttributeTypeS,
		types.AttributeDefinition{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeN}))
	if err != nil {
		t.Fatal(err)
	}
	td := out.TableDescription
	g := td.GlobalSecondaryIndexes[0]
	if td.TableStatus != types.TableStatusUpdating || g.IndexStatus != types.IndexStatusCreating || g.Backfilling == nil || *g.Backfilling {
		t.Errorf("create response %s %s %v", td.TableStatus, g.IndexStatus, g.Backfilling)
	}
	if got := fmt.Sprint(attrDefNames(td.AttributeDefinitions)); got != "[gk:S pk:S sk:S]" {
		t.Errorf("merged AttributeDefinitions %s", got)
	}
	d, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("bft")})
	if err != nil {
		t.Fatal(err)
	}
	g = d.Table.GlobalSecondaryIndexes[0]
	if d.Table.TableStatus != types.TableStatusActive || g.IndexStatus != types.IndexStatusActive || g.Backfilling != nil || aws.ToInt64(g.ItemCount) != 40 {
		t.Errorf("after backfill %s %s %v count %d", d.Table.TableStatus, g.IndexStatus, g.Backfilling, aws.ToInt64(g.ItemCount))
	}
	var total int
	for k := range 3 {
		items, _ := s.queryAll(&dynamodb.QueryInput{TableName: aws.String("bft"), IndexName: aws.String("byG"),
			KeyConditionExpression: aws.String("gk = :g"), ExpressionAttributeValues: avmap{":g": vS(fmt.Sprintf("g%d", k))}})
		for _, it := range items {
			if attrString(it["gk"]) != fmt.Sprintf("S:g%d", k) || it["data"] == nil {
				t.Fatalf("index item %s", itemString(it))
			}
		}
		total += len(items)
	}
	if total != 40 {
		t.Errorf("index holds %d items, want 40", total)
	}
	// Writes after the backfill maintain the index.
	s.put("bft", avmap{"pk": vS("new"), "sk": vS("1"), "gk": vS("g9")})
	items, _ := s.queryAll(&dynamodb.QueryInput{TableName: aws.String("bft"), IndexName: aws.String("byG"),
		KeyConditionExpression: aws.String("gk = :g"), ExpressionAttributeValues: avmap{":g": vS("g9")}})
	if len(items) != 1 {
		t.Errorf("new write in index: %d items", len(items))
	}
	// A second index keyed on a new attribute; the union of definitions is kept.
	if _, err := s.c.UpdateTable(bg, gsiCreate("bft", "byData", "data", types.ScalarAttributeTypeN)); err != nil {
		t.Fatal(err)
	}
	d, err = s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("bft")})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(attrDefNames(d.Table.AttributeDefinitions)); got != "[data:N gk:S pk:S sk:S]" || len(d.Table.GlobalSecondaryIndexes) != 2 ||
		aws.ToInt64(d.Table.GlobalSecondaryIndexes[1].ItemCount) != 50 {
		t.Errorf("second index: %s, %d indexes", got, len(d.Table.GlobalSecondaryIndexes))
	}

	// Deleting an index: the response shows it DELETING, then it is gone
	// with its attribute definition.
	del, err := s.c.UpdateTable(bg, &dynamodb.UpdateTableInput{TableName: aws.String("bft"),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("byG")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if del.TableDescription.TableStatus != types.TableStatusUpdating || len(del.TableDescription.GlobalSecondaryIndexes) != 2 ||
		del.TableDescription.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusDeleting {
		t.Errorf("delete response %+v", del.TableDescription.GlobalSecondaryIndexes)
	}
	d, err = s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("bft")})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(attrDefNames(d.Table.AttributeDefinitions)); got != "[data:N pk:S sk:S]" || len(d.Table.GlobalSecondaryIndexes) != 1 {
		t.Errorf("after delete: %s, %d indexes", got, len(d.Table.GlobalSecondaryIndexes))
	}
	_, err = s.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String("bft"), IndexName: aws.String("byG"),
		KeyConditionExpression: aws.String("gk = :g"), ExpressionAttributeValues: avmap{":g": vS("g1")}})
	validationErr(t, err, "The table does not have the specified index: byG")
	// The same name can be created again, with another projection.
	if _, err := s.c.UpdateTable(bg, gsiCreate("bft", "byG", "gk", types.ScalarAttributeTypeS)); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateTableIndexLimit(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("many", "pk:S")
	for i := range 20 {
		ts.gsi(fmt.Sprintf("g%02d", i), fmt.Sprintf("k%02d:S", i), "", types.ProjectionTypeKeysOnly)
	}
	ts.create(s)
	_, err := s.c.UpdateTable(bg, gsiCreate("many", "gsi20", "k20", types.ScalarAttributeTypeS))
	apiErr(t, err, "LimitExceededException", "Subscriber limit exceeded: Number of global secondary indexes exceeds per-table limit of 20")
}

// TestBackfillWithConcurrentWrites adds an index while writers insert,
// change and delete items, then checks the index holds exactly the items
// of the table that have its key, and that its item count agrees.
func TestBackfillWithConcurrentWrites(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("race", "pk:S").create(s)
	const n = 600
	key := func(i int) string { return fmt.Sprintf("k%04d", i) }
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				it := avmap{"pk": vS(key(i))}
				if i%3 != 0 {
					it["gk"] = vS(fmt.Sprintf("g%d", i%7))
				}
				if _, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("race"), Item: it}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (round*4 + w) % n
				var err error
				switch round % 3 {
				case 0: // move the item to another index partition (or into the index)
					_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("race"),
						Item: avmap{"pk": vS(key(i)), "gk": vS(fmt.Sprintf("g%d", round%7)), "v": vN(fmt.Sprint(round))}})
				case 1: // take it out of the index
					_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: aws.String("race"), Key: avmap{"pk": vS(key(i))},
						UpdateExpression: aws.String("REMOVE gk")})
				case 2: // delete it, or add a brand new item
					if round%2 == 0 {
						_, err = s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: aws.String("race"), Key: avmap{"pk": vS(key(i))}})
					} else {
						_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("race"),
							Item: avmap{"pk": vS(fmt.Sprintf("new%d_%d", w, round)), "gk": vS("g0")}})
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if _, err := s.c.UpdateTable(bg, gsiCreate("race", "byG", "gk", types.ScalarAttributeTypeS)); err != nil {
		t.Error(err)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()

	want := map[string]string{}
	for _, it := range s.scanAll(&dynamodb.ScanInput{TableName: aws.String("race"), ConsistentRead: aws.Bool(true)}) {
		if g, ok := it["gk"]; ok {
			want[attrString(it["pk"])] = attrString(g)
		}
	}
	got := map[string]string{}
	for _, it := range s.scanAll(&dynamodb.ScanInput{TableName: aws.String("race"), IndexName: aws.String("byG")}) {
		pk := attrString(it["pk"])
		if _, dup := got[pk]; dup {
			t.Fatalf("item %s twice in the index", pk)
		}
		got[pk] = attrString(it["gk"])
	}
	if len(got) != len(want) {
		t.Errorf("index holds %d items, table has %d with the key", len(got), len(want))
	}
	for pk, g := range want {
		if got[pk] != g {
			t.Errorf("item %s: index key %q, table %q", pk, got[pk], g)
		}
	}
	d, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("race")})
	if err != nil {
		t.Fatal(err)
	}
	gsi := d.Table.GlobalSecondaryIndexes[0]
	if gsi.IndexStatus != types.IndexStatusActive || aws.ToInt64(gsi.ItemCount) != int64(len(want)) {
		t.Errorf("index %s ItemCount %d, want %d", gsi.IndexStatus, aws.ToInt64(gsi.ItemCount), len(want))
	}
}
