package ddblocal_test

// Index key values on every write path: DynamoDB refuses a secondary index
// key over the key size limits (2048 bytes for a partition key, 1024 for a
// sort key), of the wrong type or empty on write, so that no item holds a
// value its index could never be queried by. Attribute names that are the
// empty string are refused everywhere a value carries them.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// refusal returns the message a write was refused with: the error's own,
// or the first cancellation reason's when a transaction was cancelled; ""
// when the write succeeded.
func refusal(err error) string {
	if err == nil {
		return ""
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) != "None" {
				return aws.ToString(r.Message)
			}
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return err.Error()
}

// writePaths returns one writer per write path of the store; each writes
// attribute name = v (with the item's table key pk = "k") to tbl.
func writePaths(s *cfStore, tbl string) map[string]func(name string, v types.AttributeValue) error {
	item := func(name string, v types.AttributeValue) avmap {
		return avmap{"pk": vS("k"), "sk": vS("s"), name: v}
	}
	key := avmap{"pk": vS("k"), "sk": vS("s")}
	update := func(name string, v types.AttributeValue) *dynamodb.UpdateItemInput {
		return &dynamodb.UpdateItemInput{TableName: &tbl, Key: key, UpdateExpression: aws.String("SET #a = :v"),
			ExpressionAttributeNames: map[string]string{"#a": name}, ExpressionAttributeValues: avmap{":v": v}}
	}
	insert := func(name string) string {
		return fmt.Sprintf(`INSERT INTO "%s" VALUE {'pk': 'k', 'sk': 's', '%s': ?}`, tbl, name)
	}
	set := func(name string) string {
		return fmt.Sprintf(`UPDATE "%s" SET "%s" = ? WHERE pk = 'k' AND sk = 's'`, tbl, name)
	}
	batch := func(stmt string, v types.AttributeValue) error {
		out, err := s.c.BatchExecuteStatement(bg, &dynamodb.BatchExecuteStatementInput{
			Statements: []types.BatchStatementRequest{{Statement: aws.String(stmt), Parameters: []types.AttributeValue{v}}}})
		if err != nil {
			return err
		}
		if e := out.Responses[0].Error; e != nil {
			return errors.New(aws.ToString(e.Message))
		}
		return nil
	}
	return map[string]func(string, types.AttributeValue) error{
		"PutItem": func(n string, v types.AttributeValue) error {
			_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: item(n, v)})
			return err
		},
		"UpdateItem": func(n string, v types.AttributeValue) error {
			_, err := s.c.UpdateItem(bg, update(n, v))
			return err
		},
		"BatchWriteItem": func(n string, v types.AttributeValue) error {
			_, err := s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				tbl: {{PutRequest: &types.PutRequest{Item: item(n, v)}}}}})
			return err
		},
		"TransactWriteItems Put": func(n string, v types.AttributeValue) error {
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: &tbl, Item: item(n, v)}}}})
			return err
		},
		"TransactWriteItems Update": func(n string, v types.AttributeValue) error {
			u := update(n, v)
			_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: &types.Update{TableName: &tbl, Key: u.Key, UpdateExpression: u.UpdateExpression,
					ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues}}}})
			return err
		},
		"PartiQL INSERT": func(n string, v types.AttributeValue) error {
			_, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(insert(n)), Parameters: []types.AttributeValue{v}})
			return err
		},
		"PartiQL UPDATE": func(n string, v types.AttributeValue) error {
			_, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(set(n)), Parameters: []types.AttributeValue{v}})
			return err
		},
		"PartiQL batch INSERT": func(n string, v types.AttributeValue) error { return batch(insert(n), v) },
		"PartiQL batch UPDATE": func(n string, v types.AttributeValue) error { return batch(set(n), v) },
		"PartiQL transaction": func(n string, v types.AttributeValue) error {
			_, err := s.c.ExecuteTransaction(bg, &dynamodb.ExecuteTransactionInput{TransactStatements: []types.ParameterizedStatement{
				{Statement: aws.String(set(n)), Parameters: []types.AttributeValue{v}}}})
			return err
		},
	}
}

func TestIndexKeyLimitsOnEveryWritePath(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("idxlimits", "pk:S", "sk:S").
		gsi("byG", "g:S", "gs:S", types.ProjectionTypeAll).
		gsi("byB", "gb:B", "", types.ProjectionTypeKeysOnly).
		lsi("byL", "ls:S", types.ProjectionTypeAll).create(s)
	key := avmap{"pk": vS("k"), "sk": vS("s")}
	const (
		tooLarge = "One or more parameter values were invalid: Size limit exceeded for Index Key %s Actual Size: %d bytes Max Size: %d bytes IndexName: %s"
		mismatch = "One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s"
		empty    = "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s"
		// An update that empties an index key words it its own way.
		emptyByUpdate = "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty string value."
	)
	long := func(n int) types.AttributeValue { return vS(strings.Repeat("x", n)) }
	cases := []struct {
		name, attr string
		v          types.AttributeValue
		want       string
	}{
		{"GSI partition key of 2049 bytes", "g", long(2049), fmt.Sprintf(tooLarge, "g", 2049, 2048, "byG")},
		{"GSI partition key of 100000 bytes", "g", long(100000), fmt.Sprintf(tooLarge, "g", 100000, 2048, "byG")},
		{"GSI binary partition key of 2049 bytes", "gb", vB(make([]byte, 2049)), fmt.Sprintf(tooLarge, "gb", 2049, 2048, "byB")},
		{"GSI sort key of 1025 bytes", "gs", long(1025), fmt.Sprintf(tooLarge, "gs", 1025, 1024, "byG")},
		{"LSI sort key of 1025 bytes", "ls", long(1025), fmt.Sprintf(tooLarge, "ls", 1025, 1024, "byL")},
		{"GSI key of the wrong type", "g", vN("1"), fmt.Sprintf(mismatch, "g", "S", "N", "byG")},
		{"LSI key of the wrong type", "ls", vN("1"), fmt.Sprintf(mismatch, "ls", "S", "N", "byL")},
		{"empty GSI key", "g", vS(""), fmt.Sprintf(empty, "string", "byG", "g")},
		{"empty LSI key", "ls", vS(""), fmt.Sprintf(empty, "string", "byL", "ls")},
	}
	for path, write := range writePaths(s, tbl) {
		byUpdate := strings.Contains(path, "Update") || strings.Contains(path, "UPDATE") || strings.Contains(path, "transaction")
		for _, tc := range cases {
			// The item exists for the updates, without the attribute.
			s.put(tbl, key)
			want := tc.want
			if byUpdate && strings.HasPrefix(tc.name, "empty") {
				want = emptyByUpdate
			}
			got := refusal(write(tc.attr, tc.v))
			if got != want {
				t.Errorf("%s, %s:\n got %q\nwant %q", path, tc.name, got, want)
			}
			if it := s.get(tbl, key); it[tc.attr] != nil {
				t.Errorf("%s, %s: the refused value was stored", path, tc.name)
			}
		}
	}
	// At the limits the values are accepted and can be queried for.
	at := map[string]types.AttributeValue{"g": long(2048), "gs": long(1024), "ls": long(1024)}
	s.put(tbl, avmap{"pk": vS("k"), "sk": vS("s"), "g": at["g"], "gs": at["gs"], "ls": at["ls"]})
	for _, q := range []struct{ index, cond string }{{"byG", "g = :g AND gs = :gs"}, {"byL", "pk = :pk AND ls = :ls"}} {
		values := avmap{}
		for _, name := range []string{"g", "gs", "ls"} {
			if strings.Contains(q.cond, ":"+name+" ") || strings.HasSuffix(q.cond, ":"+name) {
				values[":"+name] = at[name]
			}
		}
		if strings.Contains(q.cond, ":pk") {
			values[":pk"] = vS("k")
		}
		items, _ := s.queryAll(&dynamodb.QueryInput{TableName: &tbl, IndexName: aws.String(q.index),
			KeyConditionExpression: aws.String(q.cond), ExpressionAttributeValues: values})
		if len(items) != 1 {
			t.Errorf("query %s at the limits: %d items, want 1", q.index, len(items))
		}
	}
}

func TestEmptyAttributeNamesRefused(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("emptynames", "pk:S", "sk:S").create(s)
	key := avmap{"pk": vS("k"), "sk": vS("s")}
	nested := vM(avmap{"a": vL(vM(avmap{"": vS("x")}))})
	for path, write := range writePaths(s, tbl) {
		s.put(tbl, key)
		// A nested empty name, in a value.
		if got := refusal(write("doc", nested)); !strings.Contains(got, "Empty attribute name") {
			t.Errorf("%s, nested empty name: got %q, want Empty attribute name", path, got)
		}
		if it := s.get(tbl, key); it["doc"] != nil {
			t.Errorf("%s: the refused value was stored: %s", path, itemString(it))
		}
	}
	// A top-level empty name in an item.
	_, err := s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: avmap{"pk": vS("k"), "sk": vS("s"), "": vS("x")}})
	validationErr(t, err, one("Empty attribute name"))
	_, err = s.c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		tbl: {{PutRequest: &types.PutRequest{Item: avmap{"pk": vS("k"), "sk": vS("s"), "": vS("x")}}}}}})
	validationErr(t, err, "Empty attribute name")
	// The legacy members and PartiQL literals name attributes too.
	_, err = s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: key,
		AttributeUpdates: map[string]types.AttributeValueUpdate{"": {Value: vS("x")}}})
	validationErr(t, err, one("Empty attribute name"))
	_, err = s.c.PutItem(bg, &dynamodb.PutItemInput{TableName: &tbl, Item: key,
		Expected: map[string]types.ExpectedAttributeValue{"": {Exists: aws.Bool(false)}}})
	validationErr(t, err, one("Empty attribute name"))
	_, err = s.c.GetItem(bg, &dynamodb.GetItemInput{TableName: &tbl, Key: key, AttributesToGet: []string{""}})
	validationErr(t, err, "Empty attribute name")
	for _, stmt := range []string{`INSERT INTO "%s" VALUE {'pk': 'k2', 'sk': 's', '': 1}`, `INSERT INTO "%s" VALUE {'pk': 'k2', 'sk': 's', 'm': {'': 1}}`} {
		_, err = s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(fmt.Sprintf(stmt, tbl))})
		validationErr(t, err, "Empty attribute name")
	}
	if it := s.get(tbl, key); len(it) != 2 {
		t.Fatalf("refused writes stored %s", itemString(it))
	}
	if it := s.get(tbl, avmap{"pk": vS("k2"), "sk": vS("s")}); it != nil {
		t.Fatalf("refused PartiQL inserts stored %s", itemString(it))
	}
}
