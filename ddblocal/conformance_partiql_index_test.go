package ddblocal_test

// Conformance of PartiQL reads and writes that name a secondary index
// ("table"."index"), and of ExecuteTransaction retries, through the SDK.
// Expected behaviour is DynamoDB's, as suites recorded against it show.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pqIndexTable creates a table with a KEYS_ONLY local index and an
// INCLUDE global index, and three items in partition "p", each with an
// attribute ("np") that neither index projects.
func pqIndexTable(t *testing.T) (*cfStore, string) {
	s := newCF(t)
	tbl := table("pq_ix", "pk:S", "sk:S").
		lsi("lsi-keys", "lsiSk:S", types.ProjectionTypeKeysOnly).
		gsi("gsi-inc", "gpk:S", "", types.ProjectionTypeInclude, "projattr").
		create(s)
	for i := 1; i <= 3; i++ {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vS(fmt.Sprintf("s%d", i)), "lsiSk": vS(fmt.Sprintf("l%d", i)),
			"gpk": vS("y"), "projattr": vS(fmt.Sprintf("proj%d", i)), "np": vS(fmt.Sprintf("np%d", i))})
	}
	return s, tbl
}

func TestPartiQLIndexQualifierConformance(t *testing.T) {
	t.Parallel()
	s, tbl := pqIndexTable(t)

	t.Run("unprojected filter", func(t *testing.T) {
		tests := []struct {
			name, stmt string
			rejected   bool
			items      int
		}{
			// Keyed on the index's partition key, a filter the index cannot
			// evaluate is refused, on a global and a local index alike.
			{"keyed GSI", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE gpk = 'y' AND np = 'np1'`, true, 0},
			{"keyed LSI", `SELECT pk FROM "` + tbl + `"."lsi-keys" WHERE pk = 'p' AND np = 'np1'`, true, 0},
			{"keyed IS MISSING", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE gpk = 'y' AND np IS MISSING`, true, 0},
			// Unkeyed, the read scans the index, whose entries lack the
			// attribute: the filter matches nothing instead of failing.
			{"unkeyed GSI", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE np = 'np1'`, false, 0},
			{"unkeyed LSI", `SELECT pk FROM "` + tbl + `"."lsi-keys" WHERE np = 'np1'`, false, 0},
			{"unkeyed twice", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE np = 'np1' AND np = 'np2'`, false, 0},
			{"keyed OR is not keyed", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE gpk = 'y' OR np = 'np1'`, false, 3},
			{"keyed on a projected attribute", `SELECT pk FROM "` + tbl + `"."gsi-inc" WHERE gpk = 'y' AND projattr = 'proj1'`, false, 1},
		}
		for _, tt := range tests {
			out, err := s.exec(tt.stmt)
			if tt.rejected {
				apiErr(t, err, "ValidationException", "")
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if len(out.Items) != tt.items {
				t.Errorf("%s: %d items, want %d", tt.name, len(out.Items), tt.items)
			}
		}
	})

	t.Run("INSERT with a qualifier", func(t *testing.T) {
		// INSERT's grammar has no room for an index: refused at parse time,
		// the same whether or not the index exists.
		for _, ix := range []string{"gsi-inc", "no-such-index"} {
			stmt := `INSERT INTO "` + tbl + `"."` + ix + `" VALUE {'pk': 'w', 'sk': 'w'}`
			_, err := s.exec(stmt)
			span := len(`"` + tbl + `"."` + ix + `"`)
			errContains(t, err, "ValidationException",
				fmt.Sprintf("FROM clause may only contain a single table name in data manipulation statements at 1:13:%d", span))
		}
		if it := s.get(tbl, avmap{"pk": vS("w"), "sk": vS("w")}); it != nil {
			t.Fatalf("refused INSERT wrote %v", it)
		}
	})

	t.Run("bounded reach-back", func(t *testing.T) {
		// A local index serves an unprojected attribute from the table,
		// charged per row fetched: Limit 1 fetches one row, so it costs
		// less than the whole partition.
		tableUnits := func(limit int32) (float64, int) {
			in := &dynamodb.ExecuteStatementInput{Statement: aws.String(`SELECT np FROM "` + tbl + `"."lsi-keys" WHERE pk = 'p'`),
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
			if limit > 0 {
				in.Limit = aws.Int32(limit)
			}
			out, err := s.c.ExecuteStatement(bg, in)
			if err != nil {
				t.Fatal(err)
			}
			if out.ConsumedCapacity == nil || out.ConsumedCapacity.Table == nil {
				t.Fatalf("no table capacity in %+v", out.ConsumedCapacity)
			}
			return *out.ConsumedCapacity.Table.CapacityUnits, len(out.Items)
		}
		one, n1 := tableUnits(1)
		all, n3 := tableUnits(0)
		if n1 != 1 || n3 != 3 {
			t.Fatalf("items: %d and %d, want 1 and 3", n1, n3)
		}
		if one != 0.5 || all != 1.5 {
			t.Fatalf("table arm: Limit 1 %v, all %v; want 0.5 and 1.5", one, all)
		}
	})
}

// A statement whose WHERE clause applies an operator to an operand of the
// wrong type is refused for that before its table is looked up.
func TestPartiQLOperandTypeBeforeTable(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	_, err := s.exec(`SELECT pk FROM "missing_table" WHERE pk = ? AND val < ?`, vS("x"), vBool(true))
	errContains(t, err, "ValidationException", "Incorrect operand type")
	_, err = s.exec(`SELECT pk FROM "missing_table" WHERE pk = ?`, vS("x"))
	apiErr(t, err, "ResourceNotFoundException", "")
}

// A retried ExecuteTransaction (same ClientRequestToken and statements)
// is not applied again; it reports the capacity of reading the items (a
// transactional read per statement) where the first call reported writing
// them.
func TestExecuteTransactionReplayCapacity(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("pq_replay", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a"), "n": vN("0")})
	s.put(tbl, avmap{"pk": vS("b"), "n": vN("0"), "pad": vS(strings.Repeat("x", 5000))})
	in := &dynamodb.ExecuteTransactionInput{
		TransactStatements: []types.ParameterizedStatement{
			{Statement: aws.String(`UPDATE "` + tbl + `" SET n = n + 1 WHERE pk = 'a'`)},
			{Statement: aws.String(`UPDATE "` + tbl + `" SET n = n + 1 WHERE pk = 'b'`)},
		},
		ClientRequestToken:     aws.String("replay-token"),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
	}
	tests := []struct {
		name        string
		read, write *float64
	}{
		// Writing: 2 × 1 WCU for the small item, 2 × 5 WCU for the 5 KB one.
		{"first", nil, aws.Float64(12)},
		// Reading: 2 × 1 RCU and 2 × 2 RCU.
		{"replay", aws.Float64(6), nil},
		{"second replay", aws.Float64(6), nil},
	}
	for _, tt := range tests {
		out, err := s.c.ExecuteTransaction(bg, in)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(out.ConsumedCapacity) != 1 {
			t.Fatalf("%s: capacity %+v", tt.name, out.ConsumedCapacity)
		}
		cc := out.ConsumedCapacity[0]
		if !sameUnits(cc.ReadCapacityUnits, tt.read) || !sameUnits(cc.WriteCapacityUnits, tt.write) {
			t.Errorf("%s: read %v write %v, want read %v write %v", tt.name,
				deref(cc.ReadCapacityUnits), deref(cc.WriteCapacityUnits), deref(tt.read), deref(tt.write))
		}
	}
	for _, pk := range []string{"a", "b"} {
		if n := s.get(tbl, avmap{"pk": vS(pk)})["n"].(*types.AttributeValueMemberN).Value; n != "1" {
			t.Errorf("item %s: n = %s after a replayed transaction, want 1", pk, n)
		}
	}
}

func sameUnits(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
