package table_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/table"
	"lastro/ddblocal/ddbtest"
)

// TestCloudFormationHasTheArchiveInStandardIA: the template holds the
// table and its archive, the archive in the Standard-IA class, with the
// same keys and no stream or index of its own.
func TestCloudFormationHasTheArchiveInStandardIA(t *testing.T) {
	t.Parallel()
	raw, err := table.CloudFormation("lastro")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	main, arch := tmpl.Resources["LastroTable"], tmpl.Resources["LastroArchiveTable"]
	if main.Properties["StreamSpecification"] == nil || main.Properties["TableClass"] != nil {
		t.Errorf("main table: %v", main.Properties)
	}
	p := arch.Properties
	if arch.Type != "AWS::DynamoDB::Table" || p["TableName"] != "lastro-archive" || p["TableClass"] != "STANDARD_INFREQUENT_ACCESS" ||
		p["StreamSpecification"] != nil || p["GlobalSecondaryIndexes"] != nil || p["BillingMode"] != "PAY_PER_REQUEST" {
		t.Errorf("archive table: %s %v", arch.Type, p)
	}
}

// TestEnsureArchiveCreatesItOnce: the archive is created in Standard-IA
// with the table's keys, and a second call finds it.
func TestEnsureArchiveCreatesItOnce(t *testing.T) {
	t.Parallel()
	db := ddbtest.New(t)
	ctx := context.Background()
	for i, want := range []bool{true, false} {
		created, err := table.EnsureArchive(ctx, db, "lastro-archive")
		if err != nil || created != want {
			t.Fatalf("call %d: created %v %v, want %v", i, created, err, want)
		}
	}
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("lastro-archive")})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if len(d.KeySchema) != 2 || aws.ToString(d.KeySchema[0].AttributeName) != "PK" || len(d.GlobalSecondaryIndexes) != 0 {
		t.Errorf("archive keys %v, indexes %d", d.KeySchema, len(d.GlobalSecondaryIndexes))
	}
	if d.TableClassSummary != nil && d.TableClassSummary.TableClass != types.TableClassStandardInfrequentAccess {
		t.Errorf("class %v", d.TableClassSummary.TableClass)
	}
	if in := table.ArchiveInput("x"); in.TableClass != types.TableClassStandardInfrequentAccess || in.StreamSpecification != nil {
		t.Errorf("ArchiveInput: %+v", in)
	}
}

// TestEnsureTurnsPITROn: the table Ensure creates has point-in-time
// recovery on (exports read it), and so does the CloudFormation
// definition; a table that exists is left as it is.
func TestEnsureTurnsPITROn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pitr := func(t *testing.T, db *dynamodb.Client, name string) types.PointInTimeRecoveryStatus {
		t.Helper()
		out, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return out.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus
	}
	tests := []struct {
		name        string
		preexisting bool // created before Ensure, without PITR
		wantCreated bool
		want        types.PointInTimeRecoveryStatus
	}{
		{"fresh", false, true, types.PointInTimeRecoveryStatusEnabled},
		{"created before", true, false, types.PointInTimeRecoveryStatusDisabled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := ddbtest.New(t)
			if tc.preexisting {
				in := table.CreateInput("lastro")
				in.DeletionProtectionEnabled = aws.Bool(false)
				if _, err := db.CreateTable(ctx, in); err != nil {
					t.Fatal(err)
				}
			}
			created, err := table.Ensure(ctx, db, "lastro")
			if err != nil || created != tc.wantCreated {
				t.Fatalf("Ensure: created %v, %v; want %v", created, err, tc.wantCreated)
			}
			if got := pitr(t, db, "lastro"); got != tc.want {
				t.Errorf("PITR %s, want %s", got, tc.want)
			}
			if tc.preexisting {
				if err := table.EnablePITR(ctx, db, "lastro"); err != nil {
					t.Fatal(err)
				}
				if got := pitr(t, db, "lastro"); got != types.PointInTimeRecoveryStatusEnabled {
					t.Errorf("after EnablePITR: %s", got)
				}
			}
		})
	}
	raw, err := table.CloudFormation("lastro")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Properties struct {
				PointInTimeRecoverySpecification struct{ PointInTimeRecoveryEnabled bool }
			}
		}
	}
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"LastroTable", "LastroArchiveTable"} {
		if !tmpl.Resources[r].Properties.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled {
			t.Errorf("%s: PITR not enabled in the definition", r)
		}
	}
}
