package ddblocal_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"lastro/ddblocal/ddbtest"
)

// Conformance tests of the legacy (pre-expression) request shapes:
// Expected, AttributeUpdates, KeyConditions, QueryFilter, ScanFilter and
// AttributesToGet, with DynamoDB's validation messages.

// lgWriteEnv is the envelope DynamoDB's request validation puts around the
// messages of PutItem, UpdateItem and DeleteItem.
const lgWriteEnv = "1 validation error detected: "

const lgInvalid = "One or more parameter values were invalid: "

const lgComparisonEnum = "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"

// Attribute value shorthands.
func lS(s string) types.AttributeValue     { return &types.AttributeValueMemberS{Value: s} }
func lN(n string) types.AttributeValue     { return &types.AttributeValueMemberN{Value: n} }
func lB(b string) types.AttributeValue     { return &types.AttributeValueMemberB{Value: []byte(b)} }
func lBool(b bool) types.AttributeValue    { return &types.AttributeValueMemberBOOL{Value: b} }
func lNull() types.AttributeValue          { return &types.AttributeValueMemberNULL{Value: true} }
func lSS(s ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: s} }
func lNS(n ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: n} }
func lBS(b ...string) types.AttributeValue {
	v := make([][]byte, len(b))
	for i, x := range b {
		v[i] = []byte(x)
	}
	return &types.AttributeValueMemberBS{Value: v}
}
func lL(v ...types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberL{Value: v}
}
func lM(m map[string]types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: m}
}

type lgList = []types.AttributeValue
type item = map[string]types.AttributeValue

// lgCond builds a legacy Condition.
func lgCond(op string, vals ...types.AttributeValue) types.Condition {
	return types.Condition{ComparisonOperator: types.ComparisonOperator(op), AttributeValueList: vals}
}

// lgExpect builds an Expected entry with a ComparisonOperator.
func lgExpect(op string, vals ...types.AttributeValue) types.ExpectedAttributeValue {
	return types.ExpectedAttributeValue{ComparisonOperator: types.ComparisonOperator(op), AttributeValueList: vals}
}

// lgNoValidation lets requests the SDK would refuse reach the store.
func lgNoValidation(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		_, err := s.Initialize.Remove("OperationInputValidation")
		return err
	})
}

// legacyTable creates an on-demand table; rangeKey may be empty. Extra
// attribute definitions and indexes come through more.
func legacyTable(t *testing.T, c *dynamodb.Client, name, hash, hashType, rangeKey, rangeType string, more ...func(*dynamodb.CreateTableInput)) {
	t.Helper()
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(hash), AttributeType: types.ScalarAttributeType(hashType)}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}},
	}
	if rangeKey != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(rangeKey), AttributeType: types.ScalarAttributeType(rangeType)})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(rangeKey), KeyType: types.KeyTypeRange})
	}
	for _, f := range more {
		f(in)
	}
	if _, err := c.CreateTable(context.Background(), in); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
}

func legacyPut(t *testing.T, c *dynamodb.Client, table string, it item) {
	t.Helper()
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
		t.Fatalf("put %v: %v", it, err)
	}
}

func legacyGet(t *testing.T, c *dynamodb.Client, table string, key item) item {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get %v: %v", key, err)
	}
	return out.Item
}

// lgWantError checks an error's code and exact message.
func lgWantError(t *testing.T, err error, code, msg string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got error %v, want %s: %s", err, code, msg)
	}
	if ae.ErrorCode() != code || ae.ErrorMessage() != msg {
		t.Fatalf("got %s: %q\nwant %s: %q", ae.ErrorCode(), ae.ErrorMessage(), code, msg)
	}
}

func lgWantValidation(t *testing.T, err error, msg string) {
	t.Helper()
	lgWantError(t, err, "ValidationException", msg)
}

func lgWantConditionFailed(t *testing.T, err error) {
	t.Helper()
	lgWantError(t, err, "ConditionalCheckFailedException", "The conditional request failed")
}

// lgRender prints attribute values canonically (sets sorted) for comparison.
func lgRender(v types.AttributeValue) string {
	sorted := func(x []string) string {
		x = slices.Clone(x)
		sort.Strings(x)
		return strings.Join(x, ",")
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + v.Value
	case *types.AttributeValueMemberB:
		return "B:" + string(v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL:%v", v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return "SS:{" + sorted(v.Value) + "}"
	case *types.AttributeValueMemberNS:
		return "NS:{" + sorted(v.Value) + "}"
	case *types.AttributeValueMemberBS:
		var s []string
		for _, b := range v.Value {
			s = append(s, string(b))
		}
		return "BS:{" + sorted(s) + "}"
	case *types.AttributeValueMemberL:
		var s []string
		for _, e := range v.Value {
			s = append(s, lgRender(e))
		}
		return "L:[" + strings.Join(s, ",") + "]"
	case *types.AttributeValueMemberM:
		return "M:" + lgRenderItem(v.Value)
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}

func lgRenderItem(it item) string {
	keys := make([]string, 0, len(it))
	for k := range it {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + lgRender(it[k]))
	}
	b.WriteByte('}')
	return b.String()
}

func lgWantItem(t *testing.T, got, want item) {
	t.Helper()
	if g, w := lgRenderItem(got), lgRenderItem(want); g != w {
		t.Fatalf("item\n got %s\nwant %s", g, w)
	}
}

// lgRenderItems renders a page of items, keeping their order.
func lgRenderItems(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = lgRenderItem(it)
	}
	return out
}

// lgSample is the item the Expected and filter conditions are
// evaluated against.
func lgSample(p string) item {
	return item{
		"p":   lS(p),
		"n":   lN("5"),
		"s":   lS("hello"),
		"bin": lB("hi there"),
		"ss":  lSS("a", "b"),
		"ns":  lNS("1", "2"),
		"l":   lL(lN("2"), lS("x")),
		"m":   lM(item{"k": lS("v")}),
		"bo":  lBool(true),
		"nu":  lNull(),
	}
}

// lgConditionCases are legacy conditions on lgSample, with whether they
// hold: each operator with its true and false cases, type mismatches (a
// false condition, not an error) and missing attributes.
var lgConditionCases = []struct {
	name string
	attr string
	op   string
	vals lgList
	want bool
}{
	{"EQ number", "n", "EQ", lgList{lN("5.0")}, true},
	{"EQ number false", "n", "EQ", lgList{lN("6")}, false},
	{"EQ other type", "n", "EQ", lgList{lS("5")}, false},
	{"EQ set in another order", "ss", "EQ", lgList{lSS("b", "a")}, true},
	{"EQ list", "l", "EQ", lgList{lL(lN("2"), lS("x"))}, true},
	{"EQ map", "m", "EQ", lgList{lM(item{"k": lS("v")})}, true},
	{"EQ bool", "bo", "EQ", lgList{lBool(true)}, true},
	{"EQ missing", "zz", "EQ", lgList{lN("5")}, false},
	{"NE", "n", "NE", lgList{lN("6")}, true},
	{"NE equal", "n", "NE", lgList{lN("5")}, false},
	{"NE missing", "zz", "NE", lgList{lN("5")}, true},
	{"NE other type", "n", "NE", lgList{lS("5")}, true},
	{"NE list", "l", "NE", lgList{lL(lN("2"))}, true},
	{"LT", "n", "LT", lgList{lN("6")}, true},
	{"LT equal", "n", "LT", lgList{lN("5")}, false},
	{"LE equal", "n", "LE", lgList{lN("5")}, true},
	{"GT", "n", "GT", lgList{lN("-4.5")}, true},
	{"GE false", "n", "GE", lgList{lN("6")}, false},
	{"LT string", "s", "LT", lgList{lS("world")}, true},
	{"GT binary", "bin", "GT", lgList{lB("a")}, true},
	{"LT other type", "n", "LT", lgList{lS("9")}, false},
	{"LT missing", "zz", "LT", lgList{lN("9")}, false},
	{"BETWEEN", "n", "BETWEEN", lgList{lN("1"), lN("5")}, true},
	{"BETWEEN outside", "n", "BETWEEN", lgList{lN("6"), lN("9")}, false},
	{"BETWEEN strings", "s", "BETWEEN", lgList{lS("a"), lS("z")}, true},
	{"BETWEEN missing", "zz", "BETWEEN", lgList{lN("1"), lN("9")}, false},
	{"BEGINS_WITH", "s", "BEGINS_WITH", lgList{lS("he")}, true},
	{"BEGINS_WITH false", "s", "BEGINS_WITH", lgList{lS("lo")}, false},
	{"BEGINS_WITH binary", "bin", "BEGINS_WITH", lgList{lB("hi")}, true},
	{"BEGINS_WITH on number", "n", "BEGINS_WITH", lgList{lS("5")}, false},
	{"CONTAINS substring", "s", "CONTAINS", lgList{lS("ell")}, true},
	{"CONTAINS substring false", "s", "CONTAINS", lgList{lS("xyz")}, false},
	{"CONTAINS set member", "ss", "CONTAINS", lgList{lS("a")}, true},
	{"CONTAINS number set member", "ns", "CONTAINS", lgList{lN("2")}, true},
	{"CONTAINS list element", "l", "CONTAINS", lgList{lN("2")}, true},
	{"CONTAINS list string", "l", "CONTAINS", lgList{lS("x")}, true},
	{"CONTAINS binary", "bin", "CONTAINS", lgList{lB("there")}, true},
	{"CONTAINS on number", "n", "CONTAINS", lgList{lN("5")}, false},
	{"CONTAINS missing", "zz", "CONTAINS", lgList{lS("a")}, false},
	{"NOT_CONTAINS", "s", "NOT_CONTAINS", lgList{lS("xyz")}, true},
	{"NOT_CONTAINS substring", "s", "NOT_CONTAINS", lgList{lS("ell")}, false},
	{"NOT_CONTAINS set", "ss", "NOT_CONTAINS", lgList{lS("c")}, true},
	{"NOT_CONTAINS set member", "ss", "NOT_CONTAINS", lgList{lS("a")}, false},
	{"NOT_CONTAINS missing", "zz", "NOT_CONTAINS", lgList{lS("a")}, false},
	{"IN", "n", "IN", lgList{lN("1"), lN("5"), lN("7")}, true},
	{"IN false", "n", "IN", lgList{lN("1"), lN("2")}, false},
	{"IN strings", "s", "IN", lgList{lS("x"), lS("hello")}, true},
	{"IN on a set", "ns", "IN", lgList{lN("1")}, false},
	{"IN missing", "zz", "IN", lgList{lN("1")}, false},
	{"NULL missing", "zz", "NULL", nil, true},
	{"NULL present", "n", "NULL", nil, false},
	{"NULL of a NULL value", "nu", "NULL", nil, false},
	{"NOT_NULL of a NULL value", "nu", "NOT_NULL", nil, true},
	{"NOT_NULL missing", "zz", "NOT_NULL", nil, false},
}

func TestLegacyExpectedConditions(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	legacyTable(t, c, "exp", "p", "S", "", "")
	legacyPut(t, c, "exp", lgSample("k"))
	key := item{"p": lS("k")}
	check := func(t *testing.T, expected map[string]types.ExpectedAttributeValue, condOp types.ConditionalOperator, want bool) {
		t.Helper()
		_, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName:           aws.String("exp"),
			Key:                 key,
			AttributeUpdates:    map[string]types.AttributeValueUpdate{"z": {Value: lN("1")}},
			Expected:            expected,
			ConditionalOperator: condOp,
		})
		if want && err != nil {
			t.Fatalf("condition should hold: %v", err)
		}
		if !want {
			lgWantConditionFailed(t, err)
		}
	}
	for _, tc := range lgConditionCases {
		t.Run("operator "+tc.name, func(t *testing.T) {
			t.Parallel()
			check(t, map[string]types.ExpectedAttributeValue{tc.attr: lgExpect(tc.op, tc.vals...)}, "", tc.want)
		})
	}
	five, six := lN("5"), lN("6")
	for _, tc := range []struct {
		name     string
		expected map[string]types.ExpectedAttributeValue
		condOp   types.ConditionalOperator
		want     bool
	}{
		{"Value", map[string]types.ExpectedAttributeValue{"n": {Value: five}}, "", true},
		{"Value differs", map[string]types.ExpectedAttributeValue{"n": {Value: six}}, "", false},
		{"Value of a missing attribute", map[string]types.ExpectedAttributeValue{"zz": {Value: five}}, "", false},
		{"Value with Exists true", map[string]types.ExpectedAttributeValue{"n": {Value: five, Exists: aws.Bool(true)}}, "", true},
		{"Exists false of a missing attribute", map[string]types.ExpectedAttributeValue{"zz": {Exists: aws.Bool(false)}}, "", true},
		{"Exists false of a present attribute", map[string]types.ExpectedAttributeValue{"n": {Exists: aws.Bool(false)}}, "", false},
		{"Value with ComparisonOperator", map[string]types.ExpectedAttributeValue{"n": {Value: six, ComparisonOperator: "LT"}}, "", true},
		{"AND by default", map[string]types.ExpectedAttributeValue{"n": {Value: five}, "s": lgExpect("BEGINS_WITH", lS("h")), "zz": {Exists: aws.Bool(false)}}, "", true},
		{"AND with one false", map[string]types.ExpectedAttributeValue{"n": {Value: five}, "s": lgExpect("BEGINS_WITH", lS("x"))}, "", false},
		{"explicit AND", map[string]types.ExpectedAttributeValue{"n": {Value: five}, "s": lgExpect("BEGINS_WITH", lS("x"))}, types.ConditionalOperatorAnd, false},
		{"OR with one true", map[string]types.ExpectedAttributeValue{"n": {Value: six}, "s": lgExpect("BEGINS_WITH", lS("h"))}, types.ConditionalOperatorOr, true},
		{"OR with none true", map[string]types.ExpectedAttributeValue{"n": {Value: six}, "zz": lgExpect("NOT_NULL")}, types.ConditionalOperatorOr, false},
		{"empty Expected", map[string]types.ExpectedAttributeValue{}, "", true},
		{"key attribute", map[string]types.ExpectedAttributeValue{"p": lgExpect("EQ", lS("k"))}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check(t, tc.expected, tc.condOp, tc.want)
		})
	}
}

func TestLegacyExpectedPutDelete(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	legacyTable(t, c, "lg_pd", "p", "S", "", "")
	key := item{"p": lS("k")}

	// A put that must not overwrite: Exists false on the key.
	notThere := map[string]types.ExpectedAttributeValue{"p": {Exists: aws.Bool(false)}}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lg_pd"), Item: item{"p": lS("k"), "a": lN("1")}, Expected: notThere}); err != nil {
		t.Fatalf("first put: %v", err)
	}
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lg_pd"), Item: item{"p": lS("k"), "a": lN("2")}, Expected: notThere})
	lgWantConditionFailed(t, err)

	// A conditional put on the current value.
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lg_pd"), Item: item{"p": lS("k"), "a": lN("3")},
		Expected: map[string]types.ExpectedAttributeValue{"a": {Value: lN("1")}}})
	if err != nil {
		t.Fatalf("conditional put: %v", err)
	}
	lgWantItem(t, legacyGet(t, c, "lg_pd", key), item{"p": lS("k"), "a": lN("3")})

	// A failed conditional delete returns the item when asked to.
	_, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("lg_pd"), Key: key,
		Expected:                            map[string]types.ExpectedAttributeValue{"a": lgExpect("GT", lN("3"))},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	lgWantConditionFailed(t, err)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("got %T, want ConditionalCheckFailedException", err)
	}
	lgWantItem(t, ccf.Item, item{"p": lS("k"), "a": lN("3")})

	out, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("lg_pd"), Key: key, ReturnValues: types.ReturnValueAllOld,
		Expected:            map[string]types.ExpectedAttributeValue{"a": lgExpect("GE", lN("3")), "b": lgExpect("NOT_NULL")},
		ConditionalOperator: types.ConditionalOperatorOr})
	if err != nil {
		t.Fatalf("conditional delete: %v", err)
	}
	lgWantItem(t, out.Attributes, item{"p": lS("k"), "a": lN("3")})
	if got := legacyGet(t, c, "lg_pd", key); got != nil {
		t.Fatalf("item still there: %s", lgRenderItem(got))
	}
}

func TestLegacyExpectedValidation(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	legacyTable(t, c, "lg_ev", "p", "S", "", "")
	legacyPut(t, c, "lg_ev", item{"p": lS("k"), "a": lN("1")})
	// The refused puts wrote nothing (checked once the parallel cases are
	// done).
	t.Cleanup(func() {
		lgWantItem(t, legacyGet(t, c, "lg_ev", item{"p": lS("k")}), item{"p": lS("k"), "a": lN("1")})
	})
	type exp = map[string]types.ExpectedAttributeValue
	for _, tc := range []struct {
		name     string
		expected exp
		condOp   types.ConditionalOperator
		msg      string
	}{
		{"no Value nor Exists", exp{"a": {}}, "", lgWriteEnv + lgInvalid + "Value must be provided when Exists is null for Attribute: a"},
		{"Exists true without Value", exp{"a": {Exists: aws.Bool(true)}}, "", lgWriteEnv + lgInvalid + "Value must be provided when Exists is true for Attribute: a"},
		{"Exists false with Value", exp{"a": {Exists: aws.Bool(false), Value: lS("a")}}, "", lgWriteEnv + lgInvalid + "Value cannot be used when Exists is false for Attribute: a"},
		{"operator alone", exp{"a": {ComparisonOperator: "LT"}}, "", lgWriteEnv + lgInvalid + "Value or AttributeValueList must be used with ComparisonOperator: LT for Attribute: a"},
		{"operator and Exists", exp{"a": {Exists: aws.Bool(true), ComparisonOperator: "LT"}}, "", lgWriteEnv + lgInvalid + "Exists and ComparisonOperator cannot be used together for Attribute: a"},
		{"Value and list", exp{"a": {Value: lS("a"), AttributeValueList: lgList{lS("a")}, ComparisonOperator: "LT"}}, "", lgWriteEnv + lgInvalid + "Value and AttributeValueList cannot be used together for Attribute: a"},
		{"list without operator", exp{"a": {AttributeValueList: lgList{lS("a")}}}, "", lgWriteEnv + lgInvalid + "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"},
		{"list with Exists", exp{"a": {Exists: aws.Bool(true), AttributeValueList: lgList{lS("a")}}}, "", lgWriteEnv + lgInvalid + "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"},
		{"EQ without values", exp{"a": {ComparisonOperator: "EQ", AttributeValueList: lgList{}}}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the EQ ComparisonOperator"},
		{"NULL with a value", exp{"a": lgExpect("NULL", lS("a"))}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the NULL ComparisonOperator"},
		{"NULL with Value", exp{"a": {ComparisonOperator: "NULL", Value: lS("a")}}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the NULL ComparisonOperator"},
		{"IN without values", exp{"a": {ComparisonOperator: "IN", AttributeValueList: lgList{}}}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the IN ComparisonOperator"},
		{"BETWEEN with three", exp{"a": lgExpect("BETWEEN", lN("1"), lN("10"), lN("12"))}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
		{"BETWEEN with Value", exp{"a": {ComparisonOperator: "BETWEEN", Value: lS("a")}}, "", lgWriteEnv + lgInvalid + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
		{"CONTAINS a list", exp{"a": lgExpect("CONTAINS", lL(lN("1")))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator CONTAINS is not valid for L AttributeValue type"},
		{"NOT_CONTAINS a map", exp{"a": lgExpect("NOT_CONTAINS", lM(item{}))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator NOT_CONTAINS is not valid for M AttributeValue type"},
		{"CONTAINS a set", exp{"a": lgExpect("CONTAINS", lSS("a"))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator CONTAINS is not valid for SS AttributeValue type"},
		{"LT a bool", exp{"a": lgExpect("LT", lBool(true))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator LT is not valid for BOOL AttributeValue type"},
		{"IN lists", exp{"a": lgExpect("IN", lL(lN("1")), lL(lN("2")))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator IN is not valid for L AttributeValue type"},
		{"BETWEEN sets", exp{"a": lgExpect("BETWEEN", lNS("1"), lNS("2"))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator BETWEEN is not valid for NS AttributeValue type"},
		{"BEGINS_WITH a number", exp{"a": lgExpect("BEGINS_WITH", lN("1"))}, "", lgWriteEnv + lgInvalid + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"},
		{"IN mixed types", exp{"a": lgExpect("IN", lN("3"), lS("dog"))}, "", lgWriteEnv + lgInvalid + "AttributeValues inside AttributeValueList must be of same type"},
		{"BETWEEN mixed types", exp{"a": lgExpect("BETWEEN", lN("4"), lS("dog"))}, "", lgWriteEnv + lgInvalid + "AttributeValues inside AttributeValueList must be of same type"},
		{"BETWEEN reversed", exp{"a": lgExpect("BETWEEN", lN("4"), lN("3"))}, "", lgWriteEnv + "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"},
		{"BETWEEN reversed strings", exp{"a": lgExpect("BETWEEN", lS("dog"), lS("aardvark"))}, "", lgWriteEnv + "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"},
		{"invalid Value", exp{"a": {Value: &types.AttributeValueMemberSS{Value: []string{}}}}, "", lgWriteEnv + lgInvalid + "An string set  may not be empty"},
		{"unknown operator", exp{"a": lgExpect("eq", lN("1"))}, "", lgWriteEnv + "Value 'eq' at 'expected.a.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: " + lgComparisonEnum},
		{"ConditionalOperator without Expected", nil, types.ConditionalOperatorAnd, "ConditionalOperator cannot be used without Filter or Expected"},
		{"ConditionalOperator with empty Expected", exp{}, types.ConditionalOperatorOr, "ConditionalOperator cannot be used without Filter or Expected"},
		{"ConditionalOperator with one condition", exp{"a": {Value: lN("1")}}, types.ConditionalOperatorAnd, "ConditionalOperator can only be used when Filter or Expected has two or more elements"},
		// With the required members present DynamoDB reports an unknown
		// ConditionalOperator alone, in its newer wording.
		{"unknown ConditionalOperator", exp{"a": {Value: lN("1")}, "b": {Value: lN("1")}}, "XOR", "Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{
				TableName: aws.String("lg_ev"), Item: item{"p": lS("k"), "a": lN("2")},
				Expected: tc.expected, ConditionalOperator: tc.condOp,
			}, lgNoValidation)
			lgWantValidation(t, err, tc.msg)
		})
	}
}

func TestLegacyAttributeUpdates(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	legacyTable(t, c, "lg_au", "p", "S", "", "")
	type upd = map[string]types.AttributeValueUpdate
	for _, tc := range []struct {
		name    string
		before  item // nil: no item yet
		updates upd
		rv      types.ReturnValue
		after   item
		attrs   item // returned Attributes, without the key for ALL_NEW
	}{
		{
			name:    "PUT is the default action",
			updates: upd{"b": {Value: lS("a")}},
			after:   item{"b": lS("a")},
		},
		{
			name:    "PUT replaces",
			before:  item{"b": lS("a"), "c": lN("1")},
			updates: upd{"b": {Action: types.AttributeActionPut, Value: lM(item{"x": lL()})}},
			rv:      types.ReturnValueUpdatedOld,
			after:   item{"b": lM(item{"x": lL()}), "c": lN("1")},
			attrs:   item{"b": lS("a")},
		},
		{
			name:    "no updates creates the item",
			updates: upd{},
			after:   item{},
		},
		{
			name: "ADD and DELETE on missing attributes",
			updates: upd{
				"b": {Action: types.AttributeActionDelete},
				"c": {Action: types.AttributeActionDelete, Value: lSS("a", "b")},
				"d": {Action: types.AttributeActionAdd, Value: lN("5")},
				"e": {Action: types.AttributeActionAdd, Value: lSS("a", "b")},
				"f": {Action: types.AttributeActionAdd, Value: lL(lS("a"), lN("1"))},
			},
			rv:    types.ReturnValueUpdatedNew,
			after: item{"d": lN("5"), "e": lSS("a", "b"), "f": lL(lS("a"), lN("1"))},
			attrs: item{"d": lN("5"), "e": lSS("a", "b"), "f": lL(lS("a"), lN("1"))},
		},
		{
			name:    "ADD a number",
			before:  item{"b": lN("1")},
			updates: upd{"b": {Action: types.AttributeActionAdd, Value: lN("3")}},
			rv:      types.ReturnValueUpdatedNew,
			after:   item{"b": lN("4")},
			attrs:   item{"b": lN("4")},
		},
		{
			name:    "ADD to a set",
			before:  item{"b": lSS("a", "b"), "c": lNS("1", "2"), "d": lBS("x")},
			updates: upd{"b": {Action: types.AttributeActionAdd, Value: lSS("b", "c", "d")}, "c": {Action: types.AttributeActionAdd, Value: lNS("2", "3")}, "d": {Action: types.AttributeActionAdd, Value: lBS("y")}},
			after:   item{"b": lSS("a", "b", "c", "d"), "c": lNS("1", "2", "3"), "d": lBS("x", "y")},
		},
		{
			name:    "ADD to a list appends",
			before:  item{"b": lL(lS("a"), lN("1"))},
			updates: upd{"b": {Action: types.AttributeActionAdd, Value: lL(lS("b"), lN("2"))}},
			rv:      types.ReturnValueUpdatedNew,
			after:   item{"b": lL(lS("a"), lN("1"), lS("b"), lN("2"))},
			attrs:   item{"b": lL(lS("a"), lN("1"), lS("b"), lN("2"))},
		},
		{
			name:    "DELETE without a value removes",
			before:  item{"b": lS("a"), "c": lS("a")},
			updates: upd{"b": {Action: types.AttributeActionDelete}},
			rv:      types.ReturnValueAllNew,
			after:   item{"c": lS("a")},
			attrs:   item{"c": lS("a")},
		},
		{
			name:    "DELETE from a set",
			before:  item{"b": lNS("1", "2", "3")},
			updates: upd{"b": {Action: types.AttributeActionDelete, Value: lNS("1", "4")}},
			rv:      types.ReturnValueUpdatedNew,
			after:   item{"b": lNS("2", "3")},
			attrs:   item{"b": lNS("2", "3")},
		},
		{
			name:    "DELETE of the whole set removes it",
			before:  item{"b": lSS("a", "b"), "c": lS("a")},
			updates: upd{"b": {Action: types.AttributeActionDelete, Value: lSS("a", "b")}},
			rv:      types.ReturnValueUpdatedOld,
			after:   item{"c": lS("a")},
			attrs:   item{"b": lSS("a", "b")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := strings.ReplaceAll(tc.name, " ", "_")
			key := item{"p": lS(k)}
			if tc.before != nil {
				it := item{"p": lS(k)}
				for n, v := range tc.before {
					it[n] = v
				}
				legacyPut(t, c, "lg_au", it)
			}
			out, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("lg_au"), Key: key, AttributeUpdates: tc.updates, ReturnValues: tc.rv})
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			want := item{"p": lS(k)}
			for n, v := range tc.after {
				want[n] = v
			}
			lgWantItem(t, legacyGet(t, c, "lg_au", key), want)
			attrs := tc.attrs
			if tc.rv == types.ReturnValueAllNew {
				attrs = item{"p": lS(k)}
				for n, v := range tc.attrs {
					attrs[n] = v
				}
			}
			if lgRenderItem(out.Attributes) != lgRenderItem(attrs) {
				t.Fatalf("Attributes\n got %s\nwant %s", lgRenderItem(out.Attributes), lgRenderItem(attrs))
			}
		})
	}

	t.Run("with Expected", func(t *testing.T) {
		t.Parallel()
		key := item{"p": lS("counter")}
		add := map[string]types.AttributeValueUpdate{"n": {Action: types.AttributeActionAdd, Value: lN("1")}}
		// Only while n < 2: the third increment fails.
		for i := 0; i < 3; i++ {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("lg_au"), Key: key, AttributeUpdates: add,
				Expected:            map[string]types.ExpectedAttributeValue{"n": lgExpect("LT", lN("2")), "p": {Exists: aws.Bool(false)}},
				ConditionalOperator: types.ConditionalOperatorOr})
			if i < 2 && err != nil {
				t.Fatalf("increment %d: %v", i, err)
			}
			if i == 2 {
				lgWantConditionFailed(t, err)
			}
		}
		lgWantItem(t, legacyGet(t, c, "lg_au", key), item{"p": lS("counter"), "n": lN("2")})
	})
}

func TestLegacyAttributeUpdatesValidation(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	legacyTable(t, c, "lg_uv", "p", "S", "r", "S")
	key := item{"p": lS("k"), "r": lS("r")}
	legacyPut(t, c, "lg_uv", item{"p": lS("k"), "r": lS("r"), "b": lSS("1"), "c": lN("1"), "d": lNS("1")})
	// The refused updates changed nothing (checked once the parallel
	// cases are done).
	t.Cleanup(func() {
		lgWantItem(t, legacyGet(t, c, "lg_uv", key), item{"p": lS("k"), "r": lS("r"), "b": lSS("1"), "c": lN("1"), "d": lNS("1")})
	})
	type upd = map[string]types.AttributeValueUpdate
	big := strings.Repeat("a", 400*1024)
	for _, tc := range []struct {
		name    string
		updates upd
		msg     string
	}{
		{"no value and no action", upd{"a": {}}, lgWriteEnv + lgInvalid + "Only DELETE action is allowed when no attribute value is specified"},
		{"PUT without a value", upd{"a": {Action: types.AttributeActionPut}}, lgWriteEnv + lgInvalid + "Only DELETE action is allowed when no attribute value is specified"},
		{"ADD without a value", upd{"a": {Action: types.AttributeActionAdd}}, lgWriteEnv + lgInvalid + "Only DELETE action is allowed when no attribute value is specified"},
		{"DELETE a string", upd{"a": {Action: types.AttributeActionDelete, Value: lS("1")}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type S"},
		{"DELETE a number", upd{"a": {Action: types.AttributeActionDelete, Value: lN("1")}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type N"},
		{"DELETE a binary", upd{"a": {Action: types.AttributeActionDelete, Value: lB("1")}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type B"},
		{"DELETE a null", upd{"a": {Action: types.AttributeActionDelete, Value: lNull()}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type NULL"},
		{"DELETE a bool", upd{"a": {Action: types.AttributeActionDelete, Value: lBool(true)}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type BOOL"},
		{"DELETE a map", upd{"a": {Action: types.AttributeActionDelete, Value: lM(item{})}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type M"},
		{"DELETE a list", upd{"a": {Action: types.AttributeActionDelete, Value: lL()}}, lgWriteEnv + lgInvalid + "DELETE action with value is not supported for the type L"},
		{"ADD a string", upd{"a": {Action: types.AttributeActionAdd, Value: lS("1")}}, lgWriteEnv + lgInvalid + "ADD action is not supported for the type S"},
		{"ADD a binary", upd{"a": {Action: types.AttributeActionAdd, Value: lB("1")}}, lgWriteEnv + lgInvalid + "ADD action is not supported for the type B"},
		{"ADD a null", upd{"a": {Action: types.AttributeActionAdd, Value: lNull()}}, lgWriteEnv + lgInvalid + "ADD action is not supported for the type NULL"},
		{"ADD a bool", upd{"a": {Action: types.AttributeActionAdd, Value: lBool(true)}}, lgWriteEnv + lgInvalid + "ADD action is not supported for the type BOOL"},
		{"ADD a map", upd{"a": {Action: types.AttributeActionAdd, Value: lM(item{})}}, lgWriteEnv + lgInvalid + "ADD action is not supported for the type M"},
		{"unknown action", upd{"a": {Action: "MERGE", Value: lN("1")}}, lgWriteEnv + "Value 'MERGE' at 'attributeUpdates.a.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]"},
		{"invalid value", upd{"a": {Value: &types.AttributeValueMemberSS{Value: []string{}}}}, lgWriteEnv + lgInvalid + "An string set  may not be empty"},
		{"too big", upd{"a": {Value: lS(big)}}, lgWriteEnv + "Item size to update has exceeded the maximum allowed size"},
		{"hash key", upd{"p": {Value: lS("x")}}, lgInvalid + "Cannot update attribute p. This attribute is part of the key"},
		{"range key", upd{"d": {Value: lN("1")}, "r": {Action: types.AttributeActionDelete}}, lgInvalid + "Cannot update attribute r. This attribute is part of the key"},
		{"DELETE a number set from a string set", upd{"b": {Action: types.AttributeActionDelete, Value: lNS("1")}}, "Type mismatch for attribute to update"},
		{"DELETE a binary set from a string set", upd{"b": {Action: types.AttributeActionDelete, Value: lBS("a")}}, "Type mismatch for attribute to update"},
		{"DELETE a set from a number", upd{"c": {Action: types.AttributeActionDelete, Value: lNS("1")}}, "Type mismatch for attribute to update"},
		{"ADD a number set to a string set", upd{"b": {Action: types.AttributeActionAdd, Value: lNS("1")}}, "Type mismatch for attribute to update"},
		{"ADD a number to a number set", upd{"d": {Action: types.AttributeActionAdd, Value: lN("1")}}, "Type mismatch for attribute to update"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("lg_uv"), Key: key, AttributeUpdates: tc.updates}, lgNoValidation)
			lgWantValidation(t, err, tc.msg)
		})
	}
}

// lgQueryTable creates a table with a numeric sort key, a local index on s
// and a global index on g, and fills partition "a" with r = 1..10.
func lgQueryTable(t *testing.T, c *dynamodb.Client, name string) {
	t.Helper()
	legacyTable(t, c, name, "p", "S", "r", "N", func(in *dynamodb.CreateTableInput) {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("s"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		in.LocalSecondaryIndexes = []types.LocalSecondaryIndex{{
			IndexName:  aws.String("lsi1"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("p"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("s"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}}
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("gsi1"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("r"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}}
	})
	for i := 1; i <= 10; i++ {
		it := item{"p": lS("a"), "r": lN(fmt.Sprint(i)), "s": lS(fmt.Sprintf("s%02d", i)), "odd": lBool(i%2 == 1)}
		if i%2 == 0 {
			it["g"] = lS("even")
		}
		legacyPut(t, c, name, it)
	}
	legacyPut(t, c, name, item{"p": lS("b"), "r": lN("1"), "s": lS("s01")})
}

// lgSortKeys returns the r values of a page, in order.
func lgSortKeys(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = lgRender(it["r"])
	}
	return out
}

func lgNums(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "N:" + fmt.Sprint(n)
	}
	return out
}

func TestLegacyKeyConditions(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	lgQueryTable(t, c, "lg_kc")
	legacyTable(t, c, "lg_kh", "p", "S", "", "")
	legacyPut(t, c, "lg_kh", item{"p": lS("x"), "v": lN("1")})
	type kcs = map[string]types.Condition
	a := lgCond("EQ", lS("a"))
	for _, tc := range []struct {
		name    string
		table   string
		index   string
		kc      kcs
		forward *bool
		want    []string
	}{
		{"partition", "lg_kc", "", kcs{"p": a}, nil, lgNums(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
		{"partition backwards", "lg_kc", "", kcs{"p": a}, aws.Bool(false), lgNums(10, 9, 8, 7, 6, 5, 4, 3, 2, 1)},
		{"EQ", "lg_kc", "", kcs{"p": a, "r": lgCond("EQ", lN("3"))}, nil, lgNums(3)},
		{"LT", "lg_kc", "", kcs{"p": a, "r": lgCond("LT", lN("3"))}, nil, lgNums(1, 2)},
		{"LE", "lg_kc", "", kcs{"p": a, "r": lgCond("LE", lN("3"))}, nil, lgNums(1, 2, 3)},
		{"GT", "lg_kc", "", kcs{"p": a, "r": lgCond("GT", lN("8"))}, nil, lgNums(9, 10)},
		{"GE", "lg_kc", "", kcs{"p": a, "r": lgCond("GE", lN("9"))}, nil, lgNums(9, 10)},
		{"BETWEEN", "lg_kc", "", kcs{"p": a, "r": lgCond("BETWEEN", lN("4"), lN("6"))}, nil, lgNums(4, 5, 6)},
		{"other partition", "lg_kc", "", kcs{"p": lgCond("EQ", lS("b"))}, nil, lgNums(1)},
		{"missing partition", "lg_kc", "", kcs{"p": lgCond("EQ", lS("zz"))}, nil, []string{}},
		{"local index BEGINS_WITH", "lg_kc", "lsi1", kcs{"p": a, "s": lgCond("BEGINS_WITH", lS("s0"))}, nil, lgNums(1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"global index", "lg_kc", "gsi1", kcs{"g": lgCond("EQ", lS("even")), "r": lgCond("GT", lN("4"))}, nil, lgNums(6, 8, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := &dynamodb.QueryInput{TableName: aws.String(tc.table), KeyConditions: tc.kc, ScanIndexForward: tc.forward}
			if tc.index != "" {
				in.IndexName = aws.String(tc.index)
			}
			out, err := c.Query(context.Background(), in)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if got := lgSortKeys(out.Items); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("hash-only table", func(t *testing.T) {
		t.Parallel()
		out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("lg_kh"), KeyConditions: kcs{"p": lgCond("EQ", lS("x"))}})
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		if len(out.Items) != 1 {
			t.Fatalf("got %d items", len(out.Items))
		}
		lgWantItem(t, out.Items[0], item{"p": lS("x"), "v": lN("1")})
	})
	t.Run("with FilterExpression and ProjectionExpression", func(t *testing.T) {
		t.Parallel()
		// KeyConditions may go with expressions other than a
		// KeyConditionExpression.
		out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("lg_kc"), KeyConditions: kcs{"p": a},
			FilterExpression: aws.String("#o = :t"), ProjectionExpression: aws.String("r"),
			ExpressionAttributeNames: map[string]string{"#o": "odd"}, ExpressionAttributeValues: item{":t": lBool(true)}})
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		if got, want := lgRenderItems(out.Items), []string{"{r=N:1}", "{r=N:3}", "{r=N:5}", "{r=N:7}", "{r=N:9}"}; !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func TestLegacyKeyConditionsValidation(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	lgQueryTable(t, c, "lg_kv")
	legacyTable(t, c, "kvh", "p", "S", "", "")
	type kcs = map[string]types.Condition
	a := lgCond("EQ", lS("a"))
	const notIndexable = "Attempted conditional constraint is not an indexable operation"
	const typeMismatch = lgInvalid + "Condition parameter type does not match schema type"
	for _, tc := range []struct {
		name  string
		table string
		index string
		kc    kcs
		msg   string
	}{
		{"no partition key", "lg_kv", "", kcs{"r": lgCond("EQ", lN("1"))}, "Query condition missed key schema element: p"},
		{"non-key attribute", "lg_kv", "", kcs{"zz": lgCond("NULL")}, "Query condition missed key schema element: p"},
		{"non-key attribute with partition key", "lg_kv", "", kcs{"p": a, "x": lgCond("EQ", lN("1"))}, "Query condition missed key schema element: r"},
		{"three conditions", "lg_kv", "", kcs{"p": a, "r": lgCond("EQ", lN("1")), "x": lgCond("EQ", lN("1"))}, "Conditions can be of length 1 or 2 only"},
		{"no conditions", "lg_kv", "", kcs{}, "Conditions can be of length 1 or 2 only"},
		{"LT on the partition key", "lg_kv", "", kcs{"p": lgCond("LT", lS("a"))}, "Query key condition not supported"},
		{"BEGINS_WITH on the partition key", "lg_kv", "", kcs{"p": lgCond("BEGINS_WITH", lS("a"))}, "Query key condition not supported"},
		{"BETWEEN on the partition key", "lg_kv", "", kcs{"p": lgCond("BETWEEN", lS("a"), lS("b"))}, "Query key condition not supported"},
		{"two conditions on a hash-only table", "kvh", "", kcs{"p": a, "q": a}, "Query key condition not supported"},
		{"NULL on the partition key", "kvh", "", kcs{"p": lgCond("NULL")}, notIndexable},
		{"NE on the partition key", "kvh", "", kcs{"p": lgCond("NE", lS("a"))}, notIndexable},
		{"IN on the partition key", "kvh", "", kcs{"p": lgCond("IN", lS("a"))}, notIndexable},
		{"NE on the sort key", "lg_kv", "", kcs{"p": a, "r": lgCond("NE", lN("1"))}, notIndexable},
		{"NOT_NULL on the sort key", "lg_kv", "", kcs{"p": a, "r": lgCond("NOT_NULL")}, notIndexable},
		{"CONTAINS on the sort key", "lg_kv", "", kcs{"p": a, "r": lgCond("CONTAINS", lN("1"))}, notIndexable},
		{"NOT_CONTAINS on the sort key", "lg_kv", "", kcs{"p": a, "r": lgCond("NOT_CONTAINS", lN("1"))}, notIndexable},
		{"IN on the sort key", "lg_kv", "", kcs{"p": a, "r": lgCond("IN", lN("1"))}, notIndexable},
		{"NULL on an index sort key", "lg_kv", "lsi1", kcs{"p": a, "s": lgCond("NULL")}, notIndexable},
		{"partition key type", "lg_kv", "", kcs{"p": lgCond("EQ", lN("1"))}, typeMismatch},
		{"sort key type", "lg_kv", "", kcs{"p": a, "r": lgCond("GT", lS("1"))}, typeMismatch},
		{"BEGINS_WITH a number", "lg_kv", "", kcs{"p": a, "r": lgCond("BEGINS_WITH", lN("1"))}, lgInvalid + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"},
		{"LT a bool", "lg_kv", "", kcs{"p": a, "r": lgCond("LT", lBool(true))}, lgInvalid + "ComparisonOperator LT is not valid for BOOL AttributeValue type"},
		{"EQ without values", "lg_kv", "", kcs{"p": lgCond("EQ")}, lgInvalid + "Invalid number of argument(s) for the EQ ComparisonOperator"},
		{"EQ with two values", "lg_kv", "", kcs{"p": lgCond("EQ", lS("a"), lS("b"))}, lgInvalid + "Invalid number of argument(s) for the EQ ComparisonOperator"},
		{"count before length", "lg_kv", "", kcs{"p": lgCond("EQ"), "r": lgCond("NULL"), "x": lgCond("NULL")}, lgInvalid + "Invalid number of argument(s) for the EQ ComparisonOperator"},
		{"IN of mixed types", "lg_kv", "", kcs{"p": lgCond("IN", lS("b"), lN("1"))}, lgInvalid + "AttributeValues inside AttributeValueList must be of same type"},
		{"BETWEEN reversed", "lg_kv", "", kcs{"p": a, "r": lgCond("BETWEEN", lN("5"), lN("1"))}, "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"},
		{"unknown operator", "lg_kv", "", kcs{"p": lgCond("eq", lS("a"))}, "1 validation error detected: Value 'eq' at 'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: " + lgComparisonEnum},
		{"missing operator", "lg_kv", "", kcs{"p": {AttributeValueList: lgList{lS("a")}}}, "1 validation error detected: Value null at 'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: Member must not be null"},
		{"invalid value", "lg_kv", "", kcs{"p": lgCond("EQ", &types.AttributeValueMemberSS{Value: []string{}})}, lgInvalid + "An string set  may not be empty"},
		{"unknown table", "nope", "", kcs{"zz": lgCond("NULL")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := &dynamodb.QueryInput{TableName: aws.String(tc.table), KeyConditions: tc.kc}
			if tc.index != "" {
				in.IndexName = aws.String(tc.index)
			}
			_, err := c.Query(context.Background(), in, lgNoValidation)
			if tc.msg == "" {
				lgWantError(t, err, "ResourceNotFoundException", "Requested resource not found")
				return
			}
			lgWantValidation(t, err, tc.msg)
		})
	}
	t.Run("with KeyConditionExpression", func(t *testing.T) {
		t.Parallel()
		_, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("lg_kv"), KeyConditions: kcs{"p": a},
			KeyConditionExpression: aws.String("p = :p"), ExpressionAttributeValues: item{":p": lS("a")}})
		lgWantValidation(t, err, "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {KeyConditions} Expression parameters: {KeyConditionExpression}")
	})
}

func TestLegacyQueryFilter(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	lgQueryTable(t, c, "lg_qf")
	type kcs = map[string]types.Condition
	a := kcs{"p": lgCond("EQ", lS("a"))}
	for _, tc := range []struct {
		name    string
		filter  kcs
		condOp  types.ConditionalOperator
		want    []string
		scanned int32
	}{
		{"EQ", kcs{"odd": lgCond("EQ", lBool(true))}, "", lgNums(1, 3, 5, 7, 9), 10},
		{"NOT_NULL", kcs{"g": lgCond("NOT_NULL")}, "", lgNums(2, 4, 6, 8, 10), 10},
		{"NULL", kcs{"g": lgCond("NULL")}, "", lgNums(1, 3, 5, 7, 9), 10},
		{"AND", kcs{"g": lgCond("NOT_NULL"), "s": lgCond("GT", lS("s05"))}, "", lgNums(6, 8, 10), 10},
		{"OR", kcs{"g": lgCond("NOT_NULL"), "s": lgCond("LT", lS("s03"))}, types.ConditionalOperatorOr, lgNums(1, 2, 4, 6, 8, 10), 10},
		{"IN", kcs{"s": lgCond("IN", lS("s02"), lS("s07"), lS("zz"))}, "", lgNums(2, 7), 10},
		{"nothing matches", kcs{"zz": lgCond("EQ", lN("3"))}, "", []string{}, 10},
		{"empty filter", kcs{}, "", lgNums(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String("lg_qf"), KeyConditions: a, QueryFilter: tc.filter, ConditionalOperator: tc.condOp})
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if got := lgSortKeys(out.Items); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if out.Count != int32(len(tc.want)) || out.ScannedCount != tc.scanned {
				t.Fatalf("Count %d ScannedCount %d, want %d %d", out.Count, out.ScannedCount, len(tc.want), tc.scanned)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		index  string
		kc     kcs
		filter kcs
		condOp types.ConditionalOperator
		msg    string
	}{
		{"partition key", "", a, kcs{"p": lgCond("EQ", lS("a"))}, "", "QueryFilter can only contain non-primary key attributes: Primary key attribute: p"},
		{"sort key", "", a, kcs{"r": lgCond("EQ", lN("3")), "odd": lgCond("EQ", lBool(true))}, "", "QueryFilter can only contain non-primary key attributes: Primary key attribute: r"},
		{"index sort key", "lsi1", a, kcs{"s": lgCond("EQ", lS("s01"))}, "", "QueryFilter can only contain non-primary key attributes: Primary key attribute: s"},
		{"without KeyConditions", "", nil, kcs{"p": lgCond("EQ", lS("a"))}, "", "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."},
		{"ConditionalOperator with one condition", "", a, kcs{"odd": lgCond("EQ", lBool(true))}, types.ConditionalOperatorAnd, "ConditionalOperator can only be used when Filter or Expected has two or more elements"},
		{"ConditionalOperator without a filter", "", a, nil, types.ConditionalOperatorOr, "ConditionalOperator cannot be used without Filter or Expected"},
		{"ConditionalOperator before KeyConditions", "", nil, nil, types.ConditionalOperatorAnd, "ConditionalOperator cannot be used without Filter or Expected"},
		{"unknown ConditionalOperator", "", a, kcs{"g": lgCond("NULL"), "s": lgCond("NULL")}, "and", "Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"},
		{"unknown operator", "", a, kcs{"g": lgCond("DOG", lN("3"))}, "", "1 validation error detected: Value 'DOG' at 'queryFilter.g.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: " + lgComparisonEnum},
		{"CONTAINS a set", "", a, kcs{"g": lgCond("CONTAINS", lSS("a"))}, "", lgInvalid + "ComparisonOperator CONTAINS is not valid for SS AttributeValue type"},
		{"NULL with a value", "", a, kcs{"g": lgCond("NULL", lS("a"))}, "", lgInvalid + "Invalid number of argument(s) for the NULL ComparisonOperator"},
		{"filter checked before KeyConditions", "", kcs{"p": lgCond("EQ")}, kcs{"g": lgCond("BETWEEN", lN("2"), lN("1"))}, "", "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"},
		{"with FilterExpression", "", a, kcs{"g": lgCond("NULL")}, "", "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {QueryFilter} Expression parameters: {FilterExpression}"},
		{"FilterExpression on the sort key", "", a, nil, "", "Filter Expression can only contain non-primary key attributes: Primary key attribute: r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := &dynamodb.QueryInput{TableName: aws.String("lg_qf"), KeyConditions: tc.kc, QueryFilter: tc.filter, ConditionalOperator: tc.condOp}
			if tc.index != "" {
				in.IndexName = aws.String(tc.index)
			}
			switch tc.name {
			case "with FilterExpression":
				in.FilterExpression = aws.String("attribute_exists(g)")
			case "FilterExpression on the sort key":
				// KeyConditions go with a FilterExpression, which is
				// checked the same way.
				in.FilterExpression = aws.String("odd = :t AND r > :n")
				in.ExpressionAttributeValues = item{":t": lBool(true), ":n": lN("3")}
			}
			_, err := c.Query(context.Background(), in, lgNoValidation)
			lgWantValidation(t, err, tc.msg)
		})
	}
}

func TestLegacyScanFilter(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	legacyTable(t, c, "lg_sf", "p", "S", "", "")
	legacyPut(t, c, "lg_sf", lgSample("k"))
	legacyPut(t, c, "lg_sf", item{"p": lS("other")})
	for _, tc := range lgConditionCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("lg_sf"),
				ScanFilter: map[string]types.Condition{tc.attr: lgCond(tc.op, tc.vals...), "p": lgCond("EQ", lS("k"))}})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if got := len(out.Items) == 1; got != tc.want || out.ScannedCount != 2 {
				t.Fatalf("matched %d of %d items, want match %v", len(out.Items), out.ScannedCount, tc.want)
			}
		})
	}
	t.Run("IN with many values", func(t *testing.T) {
		t.Parallel()
		// More values than one expression IN takes.
		var vals lgList
		for i := 0; i < 250; i++ {
			vals = append(vals, lN(fmt.Sprint(1000-i*4)))
		}
		out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("lg_sf"),
			ScanFilter: map[string]types.Condition{"n": lgCond("IN", vals...)}})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if len(out.Items) != 0 {
			t.Fatalf("got %v", lgRenderItems(out.Items))
		}
		vals[200] = lN("5")
		out, err = c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("lg_sf"),
			ScanFilter: map[string]types.Condition{"n": lgCond("IN", vals...)}})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if len(out.Items) != 1 || lgRender(out.Items[0]["p"]) != "S:k" {
			t.Fatalf("got %v", lgRenderItems(out.Items))
		}
	})
	t.Run("OR", func(t *testing.T) {
		t.Parallel()
		out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("lg_sf"), ConditionalOperator: types.ConditionalOperatorOr,
			ScanFilter: map[string]types.Condition{"n": lgCond("NULL"), "s": lgCond("EQ", lS("nope"))}})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if got := lgRenderItems(out.Items); !slices.Equal(got, []string{"{p=S:other}"}) {
			t.Fatalf("got %v", got)
		}
	})
	for _, tc := range []struct {
		name   string
		filter map[string]types.Condition
		condOp types.ConditionalOperator
		msg    string
	}{
		{"ConditionalOperator alone", nil, types.ConditionalOperatorAnd, "ConditionalOperator cannot be used without Filter or Expected"},
		{"ConditionalOperator with an empty filter", map[string]types.Condition{}, types.ConditionalOperatorAnd, "ConditionalOperator cannot be used without Filter or Expected"},
		{"ConditionalOperator with one condition", map[string]types.Condition{"a": lgCond("EQ", lS("x"))}, types.ConditionalOperatorAnd, "ConditionalOperator can only be used when Filter or Expected has two or more elements"},
		{"GE a list", map[string]types.Condition{"a": lgCond("GE", lL())}, "", lgInvalid + "ComparisonOperator GE is not valid for L AttributeValue type"},
		{"IN a set", map[string]types.Condition{"a": lgCond("IN", lNS("1"))}, "", lgInvalid + "ComparisonOperator IN is not valid for NS AttributeValue type"},
		{"BEGINS_WITH a bool", map[string]types.Condition{"a": lgCond("BEGINS_WITH", lBool(true))}, "", lgInvalid + "ComparisonOperator BEGINS_WITH is not valid for BOOL AttributeValue type"},
		{"NOT_CONTAINS a binary set", map[string]types.Condition{"a": lgCond("NOT_CONTAINS", lBS("x"))}, "", lgInvalid + "ComparisonOperator NOT_CONTAINS is not valid for BS AttributeValue type"},
		{"BETWEEN of one", map[string]types.Condition{"a": lgCond("BETWEEN", lN("1"))}, "", lgInvalid + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"},
		{"NOT_NULL with a value", map[string]types.Condition{"a": lgCond("NOT_NULL", lN("1"))}, "", lgInvalid + "Invalid number of argument(s) for the NOT_NULL ComparisonOperator"},
		{"IN of mixed types", map[string]types.Condition{"a": lgCond("IN", lS("a"), lN("3"))}, "", lgInvalid + "AttributeValues inside AttributeValueList must be of same type"},
		{"BETWEEN reversed", map[string]types.Condition{"a": lgCond("BETWEEN", lB("b"), lB("a"))}, "", "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"},
		{"missing operator", map[string]types.Condition{"a": {}}, "", "1 validation error detected: Value null at 'scanFilter.a.member.comparisonOperator' failed to satisfy constraint: Member must not be null"},
		{"empty value", map[string]types.Condition{"a": lgCond("EQ", &types.AttributeValueMemberSS{Value: []string{}})}, "", lgInvalid + "An string set  may not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("lg_sf"), ScanFilter: tc.filter, ConditionalOperator: tc.condOp}, lgNoValidation)
			lgWantValidation(t, err, tc.msg)
		})
	}
}

func TestLegacyAttributesToGet(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	ctx := context.Background()
	lgQueryTable(t, c, "lg_ag")
	legacyPut(t, c, "lg_ag", item{"p": lS("dots"), "r": lN("1"), "a.b": lS("literal"), "a": lM(item{"b": lS("nested")})})
	kc := map[string]types.Condition{"p": lgCond("EQ", lS("a")), "r": lgCond("EQ", lN("2"))}

	t.Run("GetItem takes names literally", func(t *testing.T) {
		t.Parallel()
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("lg_ag"), Key: item{"p": lS("dots"), "r": lN("1")}, AttributesToGet: []string{"a.b", "zz"}})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		lgWantItem(t, out.Item, item{"a.b": lS("literal")})
	})
	t.Run("Query", func(t *testing.T) {
		t.Parallel()
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("lg_ag"), KeyConditions: kc, AttributesToGet: []string{"s", "g"}, Select: types.SelectSpecificAttributes})
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		if got := lgRenderItems(out.Items); !slices.Equal(got, []string{"{g=S:even s=S:s02}"}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("Scan", func(t *testing.T) {
		t.Parallel()
		out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("lg_ag"), AttributesToGet: []string{"a.b"},
			ScanFilter: map[string]types.Condition{"a.b": lgCond("NOT_NULL")}})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if got := lgRenderItems(out.Items); !slices.Equal(got, []string{"{a.b=S:literal}"}) {
			t.Fatalf("got %v", got)
		}
	})

	const queryEnv = "1 validation error detected: "
	for _, tc := range []struct {
		name  string
		query bool
		sel   types.Select
		attrs []string
		proj  string
		msg   string
		index string
	}{
		{name: "Query COUNT", query: true, sel: types.SelectCount, attrs: []string{"s"}, msg: queryEnv + "Cannot specify the AttributesToGet when choosing to get only the Count"},
		{name: "Query ALL_ATTRIBUTES", query: true, sel: types.SelectAllAttributes, attrs: []string{"s"}, msg: queryEnv + "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"},
		{name: "Query ALL_PROJECTED_ATTRIBUTES", query: true, sel: types.SelectAllProjectedAttributes, attrs: []string{"s"}, index: "lsi1", msg: queryEnv + "Cannot specify the AttributesToGet when choosing to get ALL_PROJECTED_ATTRIBUTES"},
		{name: "Query COUNT with ProjectionExpression", query: true, sel: types.SelectCount, proj: "s", msg: queryEnv + "Cannot specify the ProjectionExpression when choosing to get only the Count"},
		{name: "Query SPECIFIC_ATTRIBUTES alone", query: true, sel: types.SelectSpecificAttributes, msg: queryEnv + "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"},
		{name: "Query ALL_PROJECTED_ATTRIBUTES of a table", query: true, sel: types.SelectAllProjectedAttributes, msg: queryEnv + "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"},
		{name: "Scan COUNT", sel: types.SelectCount, attrs: []string{"s"}, msg: "Cannot specify the AttributesToGet when choosing to get only the Count"},
		{name: "Scan ALL_ATTRIBUTES", sel: types.SelectAllAttributes, attrs: []string{"s"}, msg: "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"},
		{name: "Scan ALL_ATTRIBUTES with ProjectionExpression", sel: types.SelectAllAttributes, proj: "s", msg: "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"},
		{name: "Scan SPECIFIC_ATTRIBUTES alone", sel: types.SelectSpecificAttributes, msg: "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"},
		{name: "Scan ALL_PROJECTED_ATTRIBUTES of a table", sel: types.SelectAllProjectedAttributes, msg: "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"},
		{name: "Scan duplicate", attrs: []string{"a", "s", "a"}, msg: lgInvalid + "Duplicate value in attribute name: a"},
		{name: "Scan empty", attrs: []string{}, msg: "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "Scan with ProjectionExpression", attrs: []string{"s"}, proj: "s", msg: "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var proj *string
			if tc.proj != "" {
				proj = aws.String(tc.proj)
			}
			var err error
			if tc.query {
				in := &dynamodb.QueryInput{TableName: aws.String("lg_ag"), KeyConditions: kc, Select: tc.sel, AttributesToGet: tc.attrs, ProjectionExpression: proj}
				if tc.index != "" {
					in.IndexName = aws.String(tc.index)
					in.KeyConditions = map[string]types.Condition{"p": lgCond("EQ", lS("a"))}
				}
				_, err = c.Query(ctx, in, lgNoValidation)
			} else {
				_, err = c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("lg_ag"), Select: tc.sel, AttributesToGet: tc.attrs, ProjectionExpression: proj}, lgNoValidation)
			}
			lgWantValidation(t, err, tc.msg)
		})
	}
}
