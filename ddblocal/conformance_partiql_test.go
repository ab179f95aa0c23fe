package ddblocal_test

// Conformance of the PartiQL API (ExecuteStatement, BatchExecuteStatement,
// ExecuteTransaction), through the SDK. Expected values and messages are
// DynamoDB's, as its documentation and suites recorded against it show.

import (
	"errors"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const notWellFormed = "Statement wasn't well formed, can't be processed: "

// exec runs one statement.
func (s *cfStore) exec(stmt string, params ...types.AttributeValue) (*dynamodb.ExecuteStatementOutput, error) {
	in := &dynamodb.ExecuteStatementInput{Statement: aws.String(stmt)}
	if len(params) > 0 {
		in.Parameters = params
	}
	return s.c.ExecuteStatement(bg, in)
}

// mustExec runs a statement that must succeed and returns its items.
func (s *cfStore) mustExec(stmt string, params ...types.AttributeValue) []avmap {
	s.t.Helper()
	out, err := s.exec(stmt, params...)
	if err != nil {
		s.t.Fatalf("%s: %v", stmt, err)
	}
	return out.Items
}

// selectAll follows NextToken to the end, with the given page Limit (0:
// none), and returns every item and the number of pages.
func (s *cfStore) selectAll(stmt string, limit int32) ([]avmap, int) {
	s.t.Helper()
	in := &dynamodb.ExecuteStatementInput{Statement: aws.String(stmt), ConsistentRead: aws.Bool(true)}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	var all []avmap
	for pages := 1; ; pages++ {
		out, err := s.c.ExecuteStatement(bg, in)
		if err != nil {
			s.t.Fatalf("%s: %v", stmt, err)
		}
		all = append(all, out.Items...)
		if out.NextToken == nil {
			return all, pages
		}
		in.NextToken = out.NextToken
		if pages > 1000 {
			s.t.Fatal("paging never ends")
		}
	}
}

// partiqlMusic creates a table with a composite key and a few items:
// pk a (sk 1..3) and b (sk 1..2), with assorted attributes.
func partiqlMusic(t *testing.T) *cfStore {
	s := newCF(t)
	table("Music", "pk:S", "sk:N").gsi("byGenre", "genre:S", "sk:N", types.ProjectionTypeInclude, "title").create(s)
	s.put("Music", avmap{"pk": vS("a"), "sk": vN("1"), "genre": vS("rock"), "title": vS("Alpha"), "tags": vSS("x", "y"),
		"info": vM(avmap{"yr": vN("1999"), "label": vS("L1")}), "n": vN("10")})
	s.put("Music", avmap{"pk": vS("a"), "sk": vN("2"), "genre": vS("jazz"), "title": vS("Beta"), "n": vN("20"),
		"nul": &types.AttributeValueMemberNULL{Value: true}, "flag": vBool(true)})
	s.put("Music", avmap{"pk": vS("a"), "sk": vN("3"), "title": vS("Gamma song"), "n": vN("30"), "lst": vL(vS("p"), vS("q"))})
	s.put("Music", avmap{"pk": vS("b"), "sk": vN("1"), "genre": vS("rock"), "title": vS("Delta"), "n": vN("5")})
	s.put("Music", avmap{"pk": vS("b"), "sk": vN("2"), "title": vS("Epsilon"), "n": vN("50")})
	return s
}

// keysOf renders pk/sk of each item, sorted unless ordered.
func keysOf(items []avmap, ordered bool) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = attrString(it["pk"]) + "/" + attrString(it["sk"])
	}
	if !ordered {
		sort.Strings(out)
	}
	return out
}

func TestPartiQLSelect(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	tests := []struct {
		name    string
		stmt    string
		params  []types.AttributeValue
		ordered bool
		want    []string
	}{
		{"partition", `SELECT * FROM "Music" WHERE pk = 'a'`, nil, true, []string{"S:a/N:1", "S:a/N:2", "S:a/N:3"}},
		{"unquoted table and keywords in any case", `select * from Music where pk = 'b'`, nil, true, []string{"S:b/N:1", "S:b/N:2"}},
		{"sort key range", `SELECT * FROM "Music" WHERE pk = 'a' AND sk > 1`, nil, true, []string{"S:a/N:2", "S:a/N:3"}},
		{"sort key between", `SELECT * FROM "Music" WHERE pk = 'a' AND sk BETWEEN 2 AND 3`, nil, true, []string{"S:a/N:2", "S:a/N:3"}},
		{"order by sort key desc", `SELECT * FROM "Music" WHERE pk = 'a' ORDER BY sk DESC`, nil, true, []string{"S:a/N:3", "S:a/N:2", "S:a/N:1"}},
		{"in on partition key", `SELECT * FROM "Music" WHERE pk IN ['a', 'b'] AND sk = 1`, nil, false, []string{"S:a/N:1", "S:b/N:1"}},
		{"or of partitions", `SELECT * FROM "Music" WHERE pk = 'b' OR pk = 'a' AND sk = 3`, nil, false, []string{"S:a/N:3", "S:b/N:1", "S:b/N:2"}},
		{"scan with filter", `SELECT * FROM "Music" WHERE genre = 'rock'`, nil, false, []string{"S:a/N:1", "S:b/N:1"}},
		{"scan everything", `SELECT * FROM "Music"`, nil, false, []string{"S:a/N:1", "S:a/N:2", "S:a/N:3", "S:b/N:1", "S:b/N:2"}},
		{"parameters", `SELECT * FROM "Music" WHERE pk = ? AND n >= ?`, []types.AttributeValue{vS("a"), vN("20")}, true, []string{"S:a/N:2", "S:a/N:3"}},
		{"not equal (absent counts)", `SELECT * FROM "Music" WHERE pk = 'a' AND genre <> 'rock'`, nil, true, []string{"S:a/N:2", "S:a/N:3"}},
		{"bang equal", `SELECT * FROM "Music" WHERE pk = 'a' AND n != 10`, nil, true, []string{"S:a/N:2", "S:a/N:3"}},
		{"begins_with", `SELECT * FROM "Music" WHERE pk = 'a' AND begins_with(title, 'Gam')`, nil, true, []string{"S:a/N:3"}},
		{"contains on a set", `SELECT * FROM "Music" WHERE pk = 'a' AND contains(tags, 'y')`, nil, true, []string{"S:a/N:1"}},
		{"size", `SELECT * FROM "Music" WHERE pk = 'a' AND size(title) > 5`, nil, true, []string{"S:a/N:3"}},
		{"attribute_type", `SELECT * FROM "Music" WHERE pk = 'a' AND attribute_type(lst, 'L')`, nil, true, []string{"S:a/N:3"}},
		{"is missing", `SELECT * FROM "Music" WHERE pk = 'a' AND genre IS MISSING`, nil, true, []string{"S:a/N:3"}},
		{"is not missing", `SELECT * FROM "Music" WHERE pk = 'a' AND "genre" IS NOT MISSING`, nil, true, []string{"S:a/N:1", "S:a/N:2"}},
		{"is null", `SELECT * FROM "Music" WHERE pk = 'a' AND nul IS NULL`, nil, true, []string{"S:a/N:2"}},
		{"is not null (absent counts)", `SELECT * FROM "Music" WHERE pk = 'a' AND nul IS NOT NULL`, nil, true, []string{"S:a/N:1", "S:a/N:3"}},
		{"is boolean", `SELECT * FROM "Music" WHERE pk = 'a' AND flag IS BOOLEAN`, nil, true, []string{"S:a/N:2"}},
		{"not and parentheses", `SELECT * FROM "Music" WHERE pk = 'a' AND NOT (n = 10 OR n = 30)`, nil, true, []string{"S:a/N:2"}},
		{"or inside and", `SELECT * FROM "Music" WHERE pk = 'a' AND (n = 10 OR n = 30) AND sk < 3`, nil, true, []string{"S:a/N:1"}},
		{"nested or and not", `SELECT * FROM "Music" WHERE (pk = 'a' AND (sk = 1 OR NOT (sk <> 2))) OR (pk = 'b' AND NOT n > 5)`, nil, false, []string{"S:a/N:1", "S:a/N:2", "S:b/N:1"}},
		{"in on a plain attribute", `SELECT * FROM "Music" WHERE n IN [5, 30]`, nil, false, []string{"S:a/N:3", "S:b/N:1"}},
		{"nested path", `SELECT * FROM "Music" WHERE info.yr = 1999`, nil, false, []string{"S:a/N:1"}},
		{"list index", `SELECT * FROM "Music" WHERE lst[1] = 'q'`, nil, false, []string{"S:a/N:3"}},
		{"function compared with true", `SELECT * FROM "Music" WHERE pk = 'a' AND attribute_exists(tags) = true`, nil, true, []string{"S:a/N:1"}},
		{"line comment", "SELECT * FROM \"Music\" -- note\nWHERE pk = 'b' AND sk = 2", nil, true, []string{"S:b/N:2"}},
		{"no match", `SELECT * FROM "Music" WHERE pk = 'zz'`, nil, true, []string{}},
		{"gsi query", `SELECT * FROM "Music"."byGenre" WHERE genre = 'rock'`, nil, false, []string{"S:a/N:1", "S:b/N:1"}},
		{"gsi scan", `SELECT * FROM "Music"."byGenre" WHERE title = 'Beta'`, nil, false, []string{"S:a/N:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(tt.stmt), Parameters: tt.params})
			if err != nil {
				t.Fatalf("%s: %v", tt.stmt, err)
			}
			sameList(t, tt.stmt, keysOf(out.Items, tt.ordered), tt.want)
		})
	}
}

func TestPartiQLProjection(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	tests := []struct {
		stmt string
		want string
	}{
		{`SELECT title, n FROM "Music" WHERE pk = 'a' AND sk = 1`, "{n=N:10 title=S:Alpha}"},
		{`SELECT info.label FROM "Music" WHERE pk = 'a' AND sk = 1`, "{label=S:L1}"},
		{`SELECT "title", missing_attr FROM "Music" WHERE pk = 'a' AND sk = 1`, "{title=S:Alpha}"},
		{`SELECT sk, title FROM "Music"."byGenre" WHERE genre = 'jazz'`, "{sk=N:2 title=S:Beta}"},
		{`SELECT * FROM "Music"."byGenre" WHERE genre = 'jazz'`, "{genre=S:jazz pk=S:a sk=N:2 title=S:Beta}"},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			items := s.mustExec(tt.stmt)
			if len(items) != 1 {
				t.Fatalf("got %d items", len(items))
			}
			if got := itemString(items[0]); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPartiQLPaging(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	for _, tt := range []struct {
		stmt  string
		limit int32
		want  []string
		pages int
	}{
		{`SELECT * FROM "Music" WHERE pk = 'a'`, 1, []string{"S:a/N:1", "S:a/N:2", "S:a/N:3"}, 4},
		{`SELECT * FROM "Music" WHERE pk = 'a' ORDER BY sk DESC`, 2, []string{"S:a/N:3", "S:a/N:2", "S:a/N:1"}, 2},
		{`SELECT * FROM "Music" WHERE pk IN ['a', 'b'] ORDER BY pk DESC`, 2, []string{"S:b/N:1", "S:b/N:2", "S:a/N:1", "S:a/N:2", "S:a/N:3"}, 3},
		{`SELECT * FROM "Music" WHERE n > 7`, 2, []string{"S:a/N:1", "S:a/N:2", "S:a/N:3", "S:b/N:2"}, 3},
	} {
		t.Run(tt.stmt, func(t *testing.T) {
			items, pages := s.selectAll(tt.stmt, tt.limit)
			ordered := tt.stmt[len(tt.stmt)-4:] == "DESC"
			sameList(t, "items", keysOf(items, ordered), tt.want)
			if pages != tt.pages {
				t.Fatalf("pages: got %d, want %d", pages, tt.pages)
			}
		})
	}
	t.Run("a token from another statement", func(t *testing.T) {
		out, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(`SELECT * FROM "Music"`), Limit: aws.Int32(1)})
		if err != nil || out.NextToken == nil {
			t.Fatalf("first page: %v", err)
		}
		_, err = s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(`SELECT pk FROM "Music"`), NextToken: out.NextToken})
		validationErr(t, err, "NextToken does not match request")
		_, err = s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(`SELECT * FROM "Music"`), NextToken: aws.String("not a token")})
		validationErr(t, err, "Invalid NextToken")
	})
}

func TestPartiQLWrites(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("Tbl", "pk:S").create(s)
	key := func(pk string) avmap { return avmap{"pk": vS(pk)} }
	seed := avmap{"pk": vS("k"), "a": vN("1"), "s": vS("str"), "ss": vSS("a", "b", "c"), "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"l": vL(vS("x"), vS("y"), vS("z")), "m": vM(avmap{"sub": vS("old"), "sib": vS("keep")})}
	tests := []struct {
		name    string
		stmt    string
		params  []types.AttributeValue
		after   string // the stored item, rendered ("<none>" when absent)
		items   string // the returned Items, rendered one after another
		errCode string
		errMsg  string
	}{
		{name: "insert", stmt: `INSERT INTO "T" VALUE {'pk': 'k', 'v': 1.50, 'm': {'x': [1, 'y']}, 's': <<'b', 'a'>>}`,
			after: "{m=M:{x=L:[N:1,S:y]} pk=S:k s=SS:a,b v=N:1.5}"},
		{name: "insert with parameters", stmt: `INSERT INTO "T" VALUE {'pk': ?, 'b': ?}`, params: []types.AttributeValue{vS("k"), vB([]byte{1})},
			after: "{b=B:01 pk=S:k}"},
		{name: "insert of an existing key", stmt: `INSERT INTO "T" VALUE {'pk': 'seeded'}`,
			errCode: "DuplicateItemException", errMsg: "Duplicate primary key exists in table"},
		{name: "update set and remove", stmt: `UPDATE "T" SET a = a + 5 SET b = 'new' REMOVE s WHERE pk = 'k'`,
			after: "{a=N:6 b=S:new l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:1,2 pk=S:k ss=SS:a,b,c}"},
		{name: "update list_append and nested path", stmt: `UPDATE "T" SET l = list_append(l, ['w']), m.sub = 'new' WHERE pk = 'k'`,
			after: "{a=N:1 l=L:[S:x,S:y,S:z,S:w] m=M:{sib=S:keep sub=S:new} ns=NS:1,2 pk=S:k s=S:str ss=SS:a,b,c}"},
		{name: "set_add and set_delete", stmt: `UPDATE "T" SET ss = set_add(ss, <<'d'>>) SET ns = SET_DELETE(ns, <<1>>) WHERE pk = 'k'`,
			after: "{a=N:1 l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:2 pk=S:k s=S:str ss=SS:a,b,c,d}"},
		{name: "set_delete of every member removes the attribute", stmt: `UPDATE "T" SET ss = set_delete(ss, <<'a', 'b', 'c'>>) WHERE pk = 'k'`,
			after: "{a=N:1 l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:1,2 pk=S:k s=S:str}"},
		{name: "update with a true predicate", stmt: `UPDATE "T" SET a = 2 WHERE pk = 'k' AND s = 'str'`,
			after: "{a=N:2 l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:1,2 pk=S:k s=S:str ss=SS:a,b,c}"},
		{name: "update with a false predicate", stmt: `UPDATE "T" SET a = 2 WHERE pk = 'k' AND attribute_exists(nope)`,
			errCode: "ConditionalCheckFailedException", errMsg: "The conditional request failed"},
		{name: "update of a missing item is no upsert", stmt: `UPDATE "T" SET a = 2 WHERE pk = 'absent'`,
			errCode: "ConditionalCheckFailedException", errMsg: "The conditional request failed"},
		{name: "returning all old", stmt: `UPDATE "T" SET a = 9 WHERE pk = 'k' RETURNING ALL OLD *`,
			items: "{a=N:1 l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:1,2 pk=S:k s=S:str ss=SS:a,b,c}"},
		{name: "returning all new", stmt: `UPDATE "T" SET a = 9 REMOVE l, m, ns, ss WHERE pk = 'k' RETURNING ALL NEW *`,
			items: "{a=N:9 pk=S:k s=S:str}"},
		{name: "returning modified old of a nested path", stmt: `UPDATE "T" SET m.sub = 'new' WHERE pk = 'k' RETURNING MODIFIED OLD *`,
			items: "{m=M:{sub=S:old}}"},
		{name: "returning modified new of list indexes", stmt: `UPDATE "T" SET l[2] = 'c', l[0] = 'a' WHERE pk = 'k' RETURNING MODIFIED NEW *`,
			items: "{l=L:[S:a,S:c]}"},
		{name: "returning modified new of a removal is empty", stmt: `UPDATE "T" REMOVE s WHERE pk = 'k' RETURNING MODIFIED NEW *`},
		{name: "delete", stmt: `DELETE FROM "T" WHERE pk = 'k'`, after: "<none>"},
		{name: "delete returning all old", stmt: `DELETE FROM "T" WHERE pk = 'k' AND a = 1 RETURNING ALL OLD *`, after: "<none>",
			items: "{a=N:1 l=L:[S:x,S:y,S:z] m=M:{sib=S:keep sub=S:old} ns=NS:1,2 pk=S:k s=S:str ss=SS:a,b,c}"},
		{name: "delete with a false predicate", stmt: `DELETE FROM "T" WHERE pk = 'k' AND NOT begins_with(s, 'st')`,
			errCode: "ConditionalCheckFailedException", errMsg: "The conditional request failed"},
		{name: "delete of a missing item with a predicate is a no-op", stmt: `DELETE FROM "T" WHERE pk = 'absent' AND a = 1`},
		{name: "update of a key attribute", stmt: `UPDATE "T" SET pk = 'x' WHERE pk = 'k'`,
			errCode: "ValidationException", errMsg: "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"},
		{name: "set_add of the wrong type", stmt: `UPDATE "T" SET ss = set_add(ss, <<1>>) WHERE pk = 'k'`,
			errCode: "ValidationException", errMsg: "An operand in the update expression has an incorrect data type"},
		{name: "list index on a missing attribute", stmt: `UPDATE "T" SET newlist[0] = 'x' WHERE pk = 'k'`,
			errCode: "ValidationException", errMsg: "The document path provided in the update expression is invalid for update"},
		{name: "where without the key", stmt: `DELETE FROM "T" WHERE a = 1`,
			errCode: "ValidationException", errMsg: "Where clause does not contain a mandatory equality on all key attributes"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case works on its own table, seeded the same way.
			name := "W" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			table(name, "pk:S").create(s)
			if tt.name != "insert" && tt.name != "insert with parameters" {
				s.put(name, seed)
			}
			s.put(name, avmap{"pk": vS("seeded")})
			stmt := replaceTable(tt.stmt, name)
			out, err := s.exec(stmt, tt.params...)
			if tt.errCode != "" {
				apiErr(t, err, tt.errCode, tt.errMsg)
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			got := ""
			for _, it := range out.Items {
				got += itemString(it)
			}
			if got != tt.items {
				t.Fatalf("items:\n got %s\nwant %s", got, tt.items)
			}
			if tt.after != "" {
				if got := itemString(s.get(name, key("k"))); got != tt.after {
					t.Fatalf("stored:\n got %s\nwant %s", got, tt.after)
				}
			}
		})
	}
	t.Run("a failed condition returns the old item when asked", func(t *testing.T) {
		s.put("Tbl", avmap{"pk": vS("rv"), "a": vN("1")})
		_, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{
			Statement:                           aws.String(`UPDATE "Tbl" SET a = 2 WHERE pk = 'rv' AND a = 5`),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			t.Fatalf("want ConditionalCheckFailedException, got %v", err)
		}
		sameItem(t, ccf.Item, avmap{"pk": vS("rv"), "a": vN("1")})
	})
	t.Run("writes answer an empty Items list and their capacity", func(t *testing.T) {
		out, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{
			Statement: aws.String(`INSERT INTO "Tbl" VALUE {'pk': 'cap'}`), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		if out.Items == nil || len(out.Items) != 0 {
			t.Fatalf("Items = %v, want an empty list", out.Items)
		}
		if out.ConsumedCapacity == nil || aws.ToFloat64(out.ConsumedCapacity.CapacityUnits) != 1 || aws.ToString(out.ConsumedCapacity.TableName) != "Tbl" {
			t.Fatalf("ConsumedCapacity = %+v", out.ConsumedCapacity)
		}
	})
}

// replaceTable points a statement written for table "T" at name.
func replaceTable(stmt, name string) string {
	const from = `"T"`
	for i := 0; i+len(from) <= len(stmt); i++ {
		if stmt[i:i+len(from)] == from {
			return stmt[:i] + `"` + name + `"` + stmt[i+len(from):]
		}
	}
	return stmt
}

func TestPartiQLErrors(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	table("Num", "pk:N").create(s)
	tests := []struct {
		stmt   string
		params []types.AttributeValue
		code   string
		msg    string
	}{
		{`SLECT * FROM "Music"`, nil, "", notWellFormed + "Expected data manipulation"},
		{`SELECT * FROM "Music" WHERE pk = 'a' foo`, nil, "", notWellFormed + "Unexpected token after expression"},
		{`SELECT * FROM "Music" WHERE`, nil, "", notWellFormed + "Unexpected term"},
		{`SELECT * FROM "Music" WHERE pk = 'a' AND`, nil, "", notWellFormed + "Missing right-hand side expression of infix operator"},
		{`SELECT * FROM "Music" t WHERE pk = 'x'`, nil, "", "Aliasing is not supported"},
		{`SELECT * FROM "Num" WHERE pk = 1e126`, nil, "", "Number overflow. Attempting to store a number with magnitude larger than supported range under root"},
		{`INSERT INTO "Num" VALUE {'pk': 1, 'm': {'x': 1e-131}}`, nil, "", "Number underflow. Attempting to store a number with magnitude smaller than supported range under root.x"},
		{`SELECT * FROM "Music" WHERE pk = ? AND sk = ?`, []types.AttributeValue{vS("a")}, "", "Number of parameters in request and statement don't match."},
		{`SELECT * FROM "Num" WHERE pk = ?`, []types.AttributeValue{vN("1e99999999999")}, "", "The parameter cannot be converted to a numeric value: 1e99999999999"},
		{`SELECT * FROM "Num" WHERE pk = 1 AND x = ?`, []types.AttributeValue{vL(vN("1"), vM(avmap{"y": vN("-1e2147483648")}))}, "", "The parameter cannot be converted to a numeric value: -1e2147483648"},
		{`SELECT * FROM "Music" WHERE pk = 'a' AND n < ?`, []types.AttributeValue{vBool(true)}, "", "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL"},
		{`SELECT * FROM "Music" WHERE pk = 'a' AND attribute_exists('n')`, nil, "", "Operator or function requires a document path; operator or function: attribute_exists"},
		{`SELECT * FROM "Music" WHERE pk = 'a' AND EXISTS(n)`, nil, "", "Unrecognized function: exists at 1:42:6"},
		{`SELECT * FROM "Missing" WHERE pk = 'a'`, nil, "ResourceNotFoundException", "Requested resource not found"},
		{`SELECT * FROM "Music"."nope" WHERE pk = 'a'`, nil, "", "The table does not have the specified index"},
		{`SELECT * FROM "Music".x.y WHERE pk = 'a'`, nil, "", "A path may contain at most 2 components in the FROM clause"},
		{`SELECT n FROM "Music"."byGenre" WHERE genre = 'rock'`, nil, "", "One or more parameter values were invalid: Global secondary index byGenre does not project [n]"},
		{`SELECT * FROM "Music"."byGenre" WHERE genre = 'rock' AND n = 1`, nil, "", "One or more parameter values were invalid: Secondary index byGenre does not project one or more filter attributes: [n]"},
		{`SELECT * FROM "Music" ORDER BY sk`, nil, "", "Must have WHERE clause in the statement when using ORDER BY clause."},
		{`SELECT * FROM "Music" WHERE pk = 'a' ORDER BY n`, nil, "", "Attribute n in ORDER BY clause must be part of the primary key"},
		{`SELECT * FROM "Music" WHERE pk IN ['a', 'b'] ORDER BY sk`, nil, "", "Must have hash key in ORDER BY clause when more than one hash key condition specified in WHERE clause."},
		{`DELETE FROM "Music" WHERE pk = 'a' RETURNING ALL NEW *`, nil, "", "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements."},
		{`UPDATE "Music" SET t = set_add(tags, <<'x'>>) WHERE pk = 'a' AND sk = 1`, nil, "", "The first argument to SET_ADD must equal the assignment value at 1:24:7"},
		{`UPDATE "Music" SET x = 1 WHERE pk = 'a'`, nil, "", "Where clause does not contain a mandatory equality on all key attributes"},
		{`EXISTS(SELECT * FROM "Music" WHERE pk = 'a' AND sk = 1 AND n IS MISSING)`, nil, "", "EXISTS can only be used in ExecuteTransaction write requests."},
		{`INSERT INTO "Music" VALUE {'pk': 'z'}`, nil, "", "One or more parameter values were invalid: Missing the key sk in the item"},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			_, err := s.exec(tt.stmt, tt.params...)
			code := tt.code
			if code == "" {
				code = "ValidationException"
			}
			apiErr(t, err, code, tt.msg)
		})
	}
	t.Run("request constraints", func(t *testing.T) {
		_, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(`SELECT * FROM "Music"`), Limit: aws.Int32(0)})
		validationErr(t, err, "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
	})
}

func TestPartiQLIndexesAndCapacity(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	table("Idx", "pk:S", "sk:S").lsi("byRank", "rank:N", types.ProjectionTypeKeysOnly).
		gsi("byCity", "city:S", "", types.ProjectionTypeAll).create(s)
	s.put("Idx", avmap{"pk": vS("p"), "sk": vS("1"), "rank": vN("3"), "city": vS("Oslo"), "data": vS("one")})
	s.put("Idx", avmap{"pk": vS("p"), "sk": vS("2"), "rank": vN("1"), "city": vS("Rome"), "data": vS("two")})
	s.put("Idx", avmap{"pk": vS("p"), "sk": vS("3"), "rank": vN("2"), "data": vS("three")})
	t.Run("an LSI orders by its sort key and reads unprojected attributes from the table", func(t *testing.T) {
		out, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{
			Statement: aws.String(`SELECT data FROM "Idx"."byRank" WHERE pk = 'p'`), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, "data", attrsOf(out.Items, "data"), []string{"S:two", "S:three", "S:one"})
	})
	t.Run("a GSI is sparse", func(t *testing.T) {
		items := s.mustExec(`SELECT sk FROM "Idx"."byCity"`)
		sameList(t, "sk", keysOf(items, false), []string{"<nil>/S:1", "<nil>/S:2"})
	})
	t.Run("a consistent read of a GSI", func(t *testing.T) {
		_, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{
			Statement: aws.String(`SELECT * FROM "Idx"."byCity" WHERE city = 'Oslo'`), ConsistentRead: aws.Bool(true)})
		validationErr(t, err, "Strongly consistent read is not supported on Global Secondary Indexes")
	})
	t.Run("writes to an index", func(t *testing.T) {
		_, err := s.exec(`DELETE FROM "Idx"."byCity" WHERE pk = 'p' AND sk = '1'`)
		validationErr(t, err, "This operation is not supported on an index")
	})
	t.Run("read capacity", func(t *testing.T) {
		for _, tt := range []struct {
			stmt       string
			consistent bool
			units      float64
		}{
			{`SELECT * FROM "Idx" WHERE pk = 'p' AND sk = '1'`, false, 0.5},
			{`SELECT * FROM "Idx" WHERE pk = 'p' AND sk = '1'`, true, 1},
			{`SELECT * FROM "Idx" WHERE pk IN ['p', 'q']`, true, 2},
		} {
			out, err := s.c.ExecuteStatement(bg, &dynamodb.ExecuteStatementInput{Statement: aws.String(tt.stmt),
				ConsistentRead: aws.Bool(tt.consistent), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			if err != nil {
				t.Fatal(err)
			}
			if cc := out.ConsumedCapacity; cc == nil || aws.ToFloat64(cc.CapacityUnits) != tt.units {
				t.Errorf("%s: ConsumedCapacity = %+v, want %v units", tt.stmt, cc, tt.units)
			}
		}
	})
}

func TestPartiQLBatch(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	stmt := func(st string, params ...types.AttributeValue) types.BatchStatementRequest {
		r := types.BatchStatementRequest{Statement: aws.String(st)}
		if len(params) > 0 {
			r.Parameters = params
		}
		return r
	}
	out, err := s.c.BatchExecuteStatement(bg, &dynamodb.BatchExecuteStatementInput{
		Statements: []types.BatchStatementRequest{
			stmt(`SELECT title FROM "Music" WHERE pk = 'a' AND sk = 1`),
			stmt(`SELECT * FROM "Music" WHERE pk = ? AND sk = ?`, vS("zz"), vN("1")),
			stmt(`SELECT * FROM "Music" WHERE pk = 'a'`),
			stmt(`INSERT INTO "Music" VALUE {'pk': 'c', 'sk': 1}`),
			stmt(`INSERT INTO "Music" VALUE {'pk': 'a', 'sk': 1}`),
			stmt(`UPDATE "Music" SET n = n + 1 WHERE pk = 'b' AND sk = 1 RETURNING MODIFIED NEW *`),
			stmt(`UPDATE "Music" SET n = 1 WHERE pk = 'b' AND sk = 9`),
			stmt(`SLECT * FROM "Music"`),
			stmt(`SELECT * FROM "Nope" WHERE pk = 'a' AND sk = 1`),
			stmt(`DELETE FROM "Music" WHERE pk = 'b' AND sk = 2 RETURNING ALL OLD *`),
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ table, item, code, msg string }
	wants := []want{
		{table: "Music", item: "{title=S:Alpha}"},
		{table: "Music"},
		{code: "ValidationError", msg: "Select statements within BatchExecuteStatement must specify the primary key in the where clause."},
		{table: "Music"},
		{table: "Music", code: "DuplicateItem", msg: "Duplicate primary key exists in table"},
		{table: "Music", item: "{n=N:6}"},
		{table: "Music", code: "ConditionalCheckFailed", msg: "The conditional request failed"},
		{code: "ValidationError", msg: notWellFormed + "Expected data manipulation"},
		{code: "ResourceNotFound", msg: "Requested resource not found"},
		{table: "Music", item: "{n=N:50 pk=S:b sk=N:2 title=S:Epsilon}"},
	}
	if len(out.Responses) != len(wants) {
		t.Fatalf("got %d responses", len(out.Responses))
	}
	for i, w := range wants {
		r := out.Responses[i]
		var got want
		got.table = aws.ToString(r.TableName)
		if r.Item != nil {
			got.item = itemString(r.Item)
		}
		if r.Error != nil {
			got.code, got.msg = string(r.Error.Code), aws.ToString(r.Error.Message)
		}
		if got != w {
			t.Errorf("response %d: got %+v, want %+v", i, got, w)
		}
	}
	if len(out.ConsumedCapacity) != 1 || aws.ToString(out.ConsumedCapacity[0].TableName) != "Music" {
		t.Errorf("ConsumedCapacity = %+v", out.ConsumedCapacity)
	}
	if it := s.get("Music", avmap{"pk": vS("c"), "sk": vN("1")}); it == nil {
		t.Error("the INSERT of the batch was not applied")
	}
	t.Run("empty batch", func(t *testing.T) {
		_, err := s.c.BatchExecuteStatement(bg, &dynamodb.BatchExecuteStatementInput{Statements: []types.BatchStatementRequest{}})
		validationErr(t, err, "1 validation error detected: Value '[]' at 'statements' failed to satisfy constraint: Member must have length greater than or equal to 1")
	})
}

func TestPartiQLTransaction(t *testing.T) {
	t.Parallel()
	s := partiqlMusic(t)
	tx := func(stmts ...string) (*dynamodb.ExecuteTransactionOutput, error) {
		in := &dynamodb.ExecuteTransactionInput{}
		for _, st := range stmts {
			in.TransactStatements = append(in.TransactStatements, types.ParameterizedStatement{Statement: aws.String(st)})
		}
		return s.c.ExecuteTransaction(bg, in)
	}
	reasons := func(err error) []string {
		var tc *types.TransactionCanceledException
		if !errors.As(err, &tc) {
			t.Fatalf("want TransactionCanceledException, got %v", err)
		}
		var out []string
		for _, r := range tc.CancellationReasons {
			out = append(out, aws.ToString(r.Code)+":"+aws.ToString(r.Message))
		}
		return out
	}
	t.Run("writes apply together", func(t *testing.T) {
		out, err := tx(`INSERT INTO "Music" VALUE {'pk': 't', 'sk': 1}`,
			`UPDATE "Music" SET n = 99 WHERE pk = 'a' AND sk = 1 AND n = 10`,
			`DELETE FROM "Music" WHERE pk = 'b' AND sk = 2`,
			`EXISTS(SELECT * FROM "Music" WHERE pk = 'a' AND sk = 2 AND genre = 'jazz')`)
		if err != nil {
			t.Fatal(err)
		}
		if out.Responses == nil || len(out.Responses) != 0 {
			t.Fatalf("Responses = %v, want an empty list", out.Responses)
		}
		if s.get("Music", avmap{"pk": vS("t"), "sk": vN("1")}) == nil || s.get("Music", avmap{"pk": vS("b"), "sk": vN("2")}) != nil {
			t.Fatal("writes not applied")
		}
		if got := attrString(s.get("Music", avmap{"pk": vS("a"), "sk": vN("1")})["n"]); got != "N:99" {
			t.Fatalf("n = %s", got)
		}
	})
	t.Run("a failed check cancels everything", func(t *testing.T) {
		_, err := tx(`EXISTS(SELECT * FROM "Music" WHERE pk = 'a' AND sk = 3 AND genre IS NOT MISSING)`,
			`UPDATE "Music" SET n = 0 WHERE pk = 'b' AND sk = 1`,
			`INSERT INTO "Music" VALUE {'pk': 'a', 'sk': 2}`,
			`UPDATE "Music" SET n = 0 WHERE pk = 'q' AND sk = 1`)
		sameList(t, "reasons", reasons(err), []string{"ConditionalCheckFailed:The conditional request failed", "None:",
			"DuplicateItem:Duplicate primary key exists in table", "ConditionalCheckFailed:The conditional request failed"})
		if got := attrString(s.get("Music", avmap{"pk": vS("b"), "sk": vN("1")})["n"]); got != "N:5" {
			t.Fatalf("n = %s, the transaction was applied", got)
		}
	})
	t.Run("reads", func(t *testing.T) {
		out, err := tx(`SELECT title FROM "Music" WHERE pk = 'a' AND sk = 2`, `SELECT * FROM "Music" WHERE pk = 'zz' AND sk = 1`)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Responses) != 2 || itemString(out.Responses[0].Item) != "{title=S:Beta}" || out.Responses[1].Item != nil {
			t.Fatalf("Responses = %+v", out.Responses)
		}
	})
	for _, tt := range []struct {
		name  string
		stmts []string
		msg   string
	}{
		{"returning", []string{`UPDATE "Music" SET n = 1 WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *`},
			"Validation failed in TransactStatements[0]: RETURNING clause is not supported in ExecuteTransaction."},
		{"syntax", []string{`DELETE FROM "Music" WHERE pk = 'a' AND sk = 1`, `SELECT * FROM "Music" WHERE`},
			"Validation failed in TransactStatements[1]: " + notWellFormed + "Unexpected term"},
		{"reads and writes", []string{`SELECT * FROM "Music" WHERE pk = 'a' AND sk = 1`, `DELETE FROM "Music" WHERE pk = 'a' AND sk = 2`},
			"ExecuteTransaction API does not support both read and write operations in the same request."},
		{"partial key read", []string{`SELECT * FROM "Music" WHERE pk = 'a'`},
			"Validation failed in TransactStatements[0]: Select statements within ExecuteTransaction must specify the primary key in the where clause."},
		{"index read", []string{`SELECT * FROM "Music"."byGenre" WHERE genre = 'rock'`},
			"Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions."},
		{"exists without a condition", []string{`EXISTS(SELECT * FROM "Music" WHERE pk = 'a' AND sk = 1)`, `DELETE FROM "Music" WHERE pk = 'a' AND sk = 2`},
			"Validation failed in TransactStatements[0]: EXISTS() must contain a single item read with additional condition"},
		{"one item twice", []string{`DELETE FROM "Music" WHERE pk = 'a' AND sk = 2`, `UPDATE "Music" SET n = 1 WHERE pk = 'a' AND sk = 2`},
			"Transaction request cannot include multiple operations on one item"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tx(tt.stmts...)
			validationErr(t, err, tt.msg)
		})
	}
}
