package ddblocal_test

// Conformance of on-demand backups: CreateBackup, DescribeBackup,
// ListBackups, DeleteBackup and RestoreTableFromBackup.

import (
	"fmt"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// backup creates a backup of tbl and returns its ARN.
func (s *cfStore) backup(tbl, name string) string {
	s.t.Helper()
	out, err := s.c.CreateBackup(bg, &dynamodb.CreateBackupInput{TableName: &tbl, BackupName: &name})
	if err != nil {
		s.t.Fatalf("backup %s: %v", tbl, err)
	}
	return aws.ToString(out.BackupDetails.BackupArn)
}

// restore restores a backup into a new table and returns its description.
func (s *cfStore) restore(arn, target string) *types.TableDescription {
	s.t.Helper()
	out, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: &target})
	if err != nil {
		s.t.Fatalf("restore %s into %s: %v", arn, target, err)
	}
	return out.TableDescription
}

// scanKeys scans a table (or index) and renders its items sorted.
func (s *cfStore) scanItems(tbl, index string) []string {
	s.t.Helper()
	in := &dynamodb.ScanInput{TableName: &tbl}
	if index != "" {
		in.IndexName = &index
	}
	var out []string
	for _, it := range s.scanAll(in) {
		out = append(out, itemString(it))
	}
	sort.Strings(out)
	return out
}

func (s *cfStore) describeTable(tbl string) *types.TableDescription {
	s.t.Helper()
	out, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: &tbl})
	if err != nil {
		s.t.Fatalf("describe %s: %v", tbl, err)
	}
	return out.Table
}

func listBackupARNs(t *testing.T, c *dynamodb.Client, in *dynamodb.ListBackupsInput) []string {
	t.Helper()
	out, err := c.ListBackups(bg, in)
	if err != nil {
		t.Fatal(err)
	}
	arns := []string{}
	for _, b := range out.BackupSummaries {
		arns = append(arns, aws.ToString(b.BackupArn))
	}
	return arns
}

func TestBackupLifecycle(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("bk_src", "pk:S", "sk:N").gsi("by_g", "g:S", "", types.ProjectionTypeKeysOnly).lsi("by_l", "l:N", types.ProjectionTypeAll).create(s)
	other := table("bk_other", "pk:S").create(s)
	for i := range 5 {
		s.put(tbl, avmap{"pk": vS("p"), "sk": vN(fmt.Sprint(i)), "g": vS("g"), "data": vS("0123456789")})
	}
	if _, err := s.c.UpdateTimeToLive(bg, &dynamodb.UpdateTimeToLiveInput{TableName: &tbl,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	src := s.describeTable(tbl)

	out, err := s.c.CreateBackup(bg, &dynamodb.CreateBackupInput{TableName: &tbl, BackupName: aws.String("nightly.1")})
	if err != nil {
		t.Fatal(err)
	}
	d := out.BackupDetails
	arn := aws.ToString(d.BackupArn)
	if !regexpMatch(`^arn:aws:dynamodb:us-east-1:123456789012:table/bk_src/backup/\d{14}-[0-9a-f]{8}$`, arn) {
		t.Fatalf("BackupArn %s", arn)
	}
	if aws.ToString(d.BackupName) != "nightly.1" || d.BackupStatus != types.BackupStatusCreating || d.BackupType != types.BackupTypeUser ||
		aws.ToInt64(d.BackupSizeBytes) != aws.ToInt64(src.TableSizeBytes) || d.BackupCreationDateTime == nil {
		t.Fatalf("BackupDetails %+v", d)
	}

	desc, err := s.c.DescribeBackup(bg, &dynamodb.DescribeBackupInput{BackupArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	bd := desc.BackupDescription
	if bd.BackupDetails.BackupStatus != types.BackupStatusAvailable || aws.ToString(bd.BackupDetails.BackupArn) != arn {
		t.Fatalf("BackupDetails %+v", bd.BackupDetails)
	}
	sd := bd.SourceTableDetails
	if aws.ToString(sd.TableName) != tbl || aws.ToString(sd.TableArn) != aws.ToString(src.TableArn) || aws.ToString(sd.TableId) != aws.ToString(src.TableId) ||
		aws.ToInt64(sd.ItemCount) != 5 || aws.ToInt64(sd.TableSizeBytes) != aws.ToInt64(src.TableSizeBytes) || sd.BillingMode != types.BillingModePayPerRequest ||
		len(sd.KeySchema) != 2 || aws.ToString(sd.KeySchema[1].AttributeName) != "sk" || !sd.TableCreationDateTime.Equal(*src.CreationDateTime) ||
		aws.ToInt64(sd.ProvisionedThroughput.ReadCapacityUnits) != 0 {
		t.Fatalf("SourceTableDetails %+v", sd)
	}
	fd := bd.SourceTableFeatureDetails
	if len(fd.GlobalSecondaryIndexes) != 1 || aws.ToString(fd.GlobalSecondaryIndexes[0].IndexName) != "by_g" ||
		fd.GlobalSecondaryIndexes[0].Projection.ProjectionType != types.ProjectionTypeKeysOnly ||
		len(fd.LocalSecondaryIndexes) != 1 || aws.ToString(fd.LocalSecondaryIndexes[0].IndexName) != "by_l" ||
		fd.TimeToLiveDescription == nil || aws.ToString(fd.TimeToLiveDescription.AttributeName) != "exp" ||
		fd.StreamDescription != nil || fd.SSEDescription != nil {
		t.Fatalf("SourceTableFeatureDetails %+v", fd)
	}

	// A second backup, of another table; then listing and its filters.
	arn2 := s.backup(other, "other")
	sameList(t, "all backups", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{}), []string{arn, arn2})
	sameList(t, "by table", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{TableName: &tbl}), []string{arn})
	sameList(t, "by table ARN", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{TableName: src.TableArn}), []string{arn})
	sameList(t, "ALL", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{BackupType: types.BackupTypeFilterAll}), []string{arn, arn2})
	sameList(t, "SYSTEM", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{BackupType: types.BackupTypeFilterSystem}), []string{})
	created := *d.BackupCreationDateTime
	sameList(t, "upper bound is exclusive", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{TableName: &tbl, TimeRangeUpperBound: &created}), []string{})
	sameList(t, "lower bound is inclusive", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{TableName: &tbl, TimeRangeLowerBound: &created}), []string{arn})
	page, err := s.c.ListBackups(bg, &dynamodb.ListBackupsInput{Limit: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.BackupSummaries) != 1 || aws.ToString(page.LastEvaluatedBackupArn) != arn {
		t.Fatalf("first page %+v", page)
	}
	sum := page.BackupSummaries[0]
	if aws.ToString(sum.TableName) != tbl || aws.ToString(sum.BackupName) != "nightly.1" || sum.BackupStatus != types.BackupStatusAvailable ||
		sum.BackupType != types.BackupTypeUser || aws.ToString(sum.TableId) != aws.ToString(src.TableId) || aws.ToInt64(sum.BackupSizeBytes) == 0 {
		t.Fatalf("BackupSummary %+v", sum)
	}
	sameList(t, "second page", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{Limit: aws.Int32(1), ExclusiveStartBackupArn: page.LastEvaluatedBackupArn}), []string{arn2})

	// Deleting: the description says DELETED, then the backup is gone.
	del, err := s.c.DeleteBackup(bg, &dynamodb.DeleteBackupInput{BackupArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(del.BackupDescription.BackupDetails.BackupArn) != arn || del.BackupDescription.BackupDetails.BackupStatus != types.BackupStatusDeleted ||
		aws.ToString(del.BackupDescription.SourceTableDetails.TableName) != tbl {
		t.Fatalf("DeleteBackup %+v", del.BackupDescription)
	}
	_, err = s.c.DescribeBackup(bg, &dynamodb.DescribeBackupInput{BackupArn: &arn})
	apiErr(t, err, "BackupNotFoundException", "Backup not found: "+arn)
	_, err = s.c.DeleteBackup(bg, &dynamodb.DeleteBackupInput{BackupArn: &arn})
	apiErr(t, err, "BackupNotFoundException", "Backup not found: "+arn)
	_, err = s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: aws.String("bk_gone")})
	apiErr(t, err, "BackupNotFoundException", "Backup not found: "+arn)
	sameList(t, "after delete", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{}), []string{arn2})

	// A backup outlives its table.
	if _, err := s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: &other}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after its table's deletion", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{TableName: &other}), []string{arn2})
	s.restore(arn2, other)
	if n := aws.ToInt64(s.describeTable(other).ItemCount); n != 0 {
		t.Fatalf("restored empty table holds %d items", n)
	}
}

// TestRestoreFromBackup checks a restore creates a table holding exactly
// the items of the backup's moment, indexes included, and nothing of the
// source table's later writes.
func TestRestoreFromBackup(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("rs_src", "pk:S", "sk:N").gsi("by_g", "g:S", "sk:N", types.ProjectionTypeInclude, "data").lsi("by_l", "l:N", types.ProjectionTypeKeysOnly)
	ts.in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	ts.in.Tags = []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}
	ts.in.DeletionProtectionEnabled = aws.Bool(true)
	tbl := ts.create(s)
	for i := range 6 {
		it := avmap{"pk": vS(fmt.Sprint("p", i%2)), "sk": vN(fmt.Sprint(i)), "data": vS(fmt.Sprint("v", i)), "other": vL(vN("1"), vM(avmap{"x": vBool(true)}))}
		if i%3 != 0 {
			it["g"] = vS("g")
		}
		if i%2 == 0 {
			it["l"] = vN(fmt.Sprint(10 - i))
		}
		s.put(tbl, it)
	}
	before := s.scanItems(tbl, "")
	beforeGSI := s.scanItems(tbl, "by_g")
	beforeLSI := s.scanItems(tbl, "by_l")
	arn := s.backup(tbl, "snap")

	// Later writes reach the table, not the backup.
	s.put(tbl, avmap{"pk": vS("p9"), "sk": vN("9"), "g": vS("g")})
	if _, err := s.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: &tbl, Key: avmap{"pk": vS("p0"), "sk": vN("0")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.UpdateItem(bg, &dynamodb.UpdateItemInput{TableName: &tbl, Key: avmap{"pk": vS("p1"), "sk": vN("1")},
		UpdateExpression: aws.String("SET g = :h REMOVE #d"), ExpressionAttributeNames: map[string]string{"#d": "data"}, ExpressionAttributeValues: avmap{":h": vS("h")}}); err != nil {
		t.Fatal(err)
	}
	after := s.scanItems(tbl, "")

	td := s.restore(arn, "rs_copy")
	if aws.ToString(td.TableName) != "rs_copy" || td.TableStatus != types.TableStatusCreating || td.RestoreSummary == nil ||
		aws.ToString(td.RestoreSummary.SourceBackupArn) != arn || aws.ToString(td.RestoreSummary.SourceTableArn) != tableARN(tbl) ||
		!aws.ToBool(td.RestoreSummary.RestoreInProgress) || td.RestoreSummary.RestoreDateTime == nil {
		t.Fatalf("RestoreTableFromBackup: %+v %+v", td, td.RestoreSummary)
	}
	got := s.describeTable("rs_copy")
	if got.TableStatus != types.TableStatusActive || got.RestoreSummary == nil || aws.ToBool(got.RestoreSummary.RestoreInProgress) ||
		aws.ToInt64(got.ItemCount) != 6 || aws.ToString(got.TableArn) != tableARN("rs_copy") || aws.ToBool(got.DeletionProtectionEnabled) ||
		got.StreamSpecification != nil || got.LatestStreamArn != nil || got.BillingModeSummary.BillingMode != types.BillingModePayPerRequest ||
		len(got.GlobalSecondaryIndexes) != 1 || got.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusActive ||
		aws.ToInt64(got.GlobalSecondaryIndexes[0].ItemCount) != 4 || len(got.LocalSecondaryIndexes) != 1 ||
		aws.ToInt64(got.LocalSecondaryIndexes[0].ItemCount) != 3 || len(got.AttributeDefinitions) != 4 {
		t.Fatalf("restored table %+v", got)
	}
	sameList(t, "restored items", s.scanItems("rs_copy", ""), before)
	sameList(t, "restored GSI", s.scanItems("rs_copy", "by_g"), beforeGSI)
	sameList(t, "restored LSI", s.scanItems("rs_copy", "by_l"), beforeLSI)
	sameList(t, "source after the restore", s.scanItems(tbl, ""), after)
	q, _ := s.queryAll(&dynamodb.QueryInput{TableName: aws.String("rs_copy"), IndexName: aws.String("by_g"),
		KeyConditionExpression: aws.String("g = :g AND sk > :n"), ExpressionAttributeValues: avmap{":g": vS("g"), ":n": vN("2")}})
	sameList(t, "query of the restored GSI", attrsOf(q, "data"), []string{"S:v4", "S:v5"})
	tags, err := s.c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(tableARN("rs_copy"))})
	if err != nil || len(tags.Tags) != 0 {
		t.Fatalf("restored tags %v %v", tags, err)
	}
	// The restored table is a table like any other.
	s.put("rs_copy", avmap{"pk": vS("new"), "sk": vN("1")})
	if n := aws.ToInt64(s.describeTable("rs_copy").ItemCount); n != 7 {
		t.Fatalf("ItemCount after a put: %d", n)
	}

	// Restoring over an existing table.
	for _, name := range []string{"rs_copy", tbl} {
		_, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: aws.String(name)})
		apiErr(t, err, "TableAlreadyExistsException", "Table already exists: "+name)
	}
}

// TestRestoreOverrides checks the billing, throughput and index overrides
// of a restore.
func TestRestoreOverrides(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("ov_src", "pk:S").gsi("gi1", "a:S", "", types.ProjectionTypeAll).gsi("gi2", "b:N", "", types.ProjectionTypeKeysOnly)
	tp := &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(3)}
	ts.in.BillingMode = types.BillingModeProvisioned
	ts.in.ProvisionedThroughput = tp
	for i := range ts.in.GlobalSecondaryIndexes {
		ts.in.GlobalSecondaryIndexes[i].ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(2), WriteCapacityUnits: aws.Int64(1)}
	}
	tbl := ts.create(s)
	s.put(tbl, avmap{"pk": vS("x"), "a": vS("1"), "b": vN("2")})
	arn := s.backup(tbl, "ovr")

	// As is: provisioned, with each index's throughput.
	s.restore(arn, "ov_same")
	d := s.describeTable("ov_same")
	if d.BillingModeSummary != nil || aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits) != 5 || len(d.GlobalSecondaryIndexes) != 2 ||
		aws.ToInt64(d.GlobalSecondaryIndexes[0].ProvisionedThroughput.ReadCapacityUnits) != 2 {
		t.Fatalf("plain restore %+v", d)
	}
	// On demand, without the second index.
	out, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: aws.String("ov_ppr"),
		BillingModeOverride: types.BillingModePayPerRequest,
		GlobalSecondaryIndexOverride: []types.GlobalSecondaryIndex{{IndexName: aws.String("gi1"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("a"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}})
	if err != nil {
		t.Fatal(err)
	}
	d = s.describeTable("ov_ppr")
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest || len(d.GlobalSecondaryIndexes) != 1 ||
		aws.ToString(d.GlobalSecondaryIndexes[0].IndexName) != "gi1" || len(d.AttributeDefinitions) != 2 || aws.ToInt64(d.GlobalSecondaryIndexes[0].ItemCount) != 1 {
		t.Fatalf("on-demand restore %+v (response %+v)", d, out.TableDescription)
	}
	// No index at all, other throughput.
	if _, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: aws.String("ov_bare"),
		GlobalSecondaryIndexOverride:  []types.GlobalSecondaryIndex{},
		ProvisionedThroughputOverride: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(7), WriteCapacityUnits: aws.Int64(7)}}); err != nil {
		t.Fatal(err)
	}
	d = s.describeTable("ov_bare")
	if len(d.GlobalSecondaryIndexes) != 0 || len(d.AttributeDefinitions) != 1 || aws.ToInt64(d.ProvisionedThroughput.WriteCapacityUnits) != 7 || aws.ToInt64(d.ItemCount) != 1 {
		t.Fatalf("restore without indexes %+v", d)
	}
	// Back to provisioned from on demand needs throughput.
	ppr := s.backup("ov_ppr", "ppr")
	_, err = s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &ppr, TargetTableName: aws.String("ov_prov"),
		BillingModeOverride: types.BillingModeProvisioned})
	validationErr(t, err, "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
	_, err = s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: aws.String("ov_bad"),
		BillingModeOverride: types.BillingModePayPerRequest, ProvisionedThroughputOverride: tp})
	validationErr(t, err, "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
	if _, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &ppr, TargetTableName: aws.String("ov_prov"),
		BillingModeOverride: types.BillingModeProvisioned, ProvisionedThroughputOverride: tp}); err != nil {
		t.Fatal(err)
	}
	d = s.describeTable("ov_prov")
	if len(d.GlobalSecondaryIndexes) != 1 || aws.ToInt64(d.GlobalSecondaryIndexes[0].ProvisionedThroughput.ReadCapacityUnits) != 5 {
		t.Fatalf("provisioned restore of an on-demand backup %+v", d)
	}
}

func TestBackupErrors(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("bk_err", "pk:S").create(s)
	arn := s.backup(tbl, "okay")
	missing := tableARN(tbl) + "/backup/01700000000000-0123abcd"
	foreign := "arn:aws:dynamodb:us-east-1:000000000000:table/" + tbl + "/backup/01700000000000-0123abcd"
	denied := func(action, arn string) string {
		return "User: arn:aws:iam::123456789012:root is not authorized to perform: dynamodb:" + action + " on resource: " + arn +
			" because no resource-based policy allows the dynamodb:" + action + " action"
	}
	create := func(tbl, name string) error {
		_, err := s.c.CreateBackup(bg, &dynamodb.CreateBackupInput{TableName: &tbl, BackupName: &name})
		return err
	}
	describe := func(arn string) error {
		_, err := s.c.DescribeBackup(bg, &dynamodb.DescribeBackupInput{BackupArn: &arn})
		return err
	}
	restore := func(arn, target string) error {
		_, err := s.c.RestoreTableFromBackup(bg, &dynamodb.RestoreTableFromBackupInput{BackupArn: &arn, TargetTableName: &target})
		return err
	}
	tests := []struct {
		name      string
		err       error
		code, msg string
	}{
		{"missing table", create("nope", "b1b"), "TableNotFoundException", "Table not found: nope"},
		{"foreign table ARN", create("arn:aws:dynamodb:us-east-1:000000000000:table/"+tbl, "bbb"), "AccessDeniedException",
			denied("CreateBackup", "arn:aws:dynamodb:us-east-1:000000000000:table/"+tbl)},
		{"short name", create(tbl, "b1"), "ValidationException",
			"1 validation error detected: Value 'b1' at 'backupName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
		{"bad name", create(tbl, "a b c"), "ValidationException",
			"1 validation error detected: Value 'a b c' at 'backupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"},
		{"missing backup", describe(missing), "BackupNotFoundException", "Backup not found: " + missing},
		{"foreign backup", describe(foreign), "AccessDeniedException", denied("DescribeBackup", foreign)},
		{"short ARN", describe("arn:aws:dynamodb:backup"), "ValidationException",
			"1 validation error detected: Value 'arn:aws:dynamodb:backup' at 'backupArn' failed to satisfy constraint: Member must have length greater than or equal to 37"},
		{"restore, missing backup", restore(missing, "target"), "BackupNotFoundException", "Backup not found: " + missing},
		{"restore, foreign backup", restore(foreign, "target"), "AccessDeniedException", denied("RestoreTableFromBackup", foreign)},
		{"restore, bad target", restore(arn, "t!"), "ValidationException",
			"2 validation errors detected: Value 't!' at 'targetTableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value 't!' at 'targetTableName' failed to satisfy constraint: Member must have length greater than or equal to 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { apiErr(t, tc.err, tc.code, tc.msg) })
	}
	s.rawErr("CreateBackup", js{"TableName": tbl}, "ValidationException",
		"1 validation error detected: Value null at 'backupName' failed to satisfy constraint: Member must not be null")
	s.rawErr("DeleteBackup", js{}, "ValidationException",
		"1 validation error detected: Value null at 'backupArn' failed to satisfy constraint: Member must not be null")
	s.rawErr("RestoreTableFromBackup", js{"BackupArn": arn, "TargetTableName": "tgt", "BillingModeOverride": "FREE"}, "ValidationException",
		"1 validation error detected: Value 'FREE' at 'billingModeOverride' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]")
}

// TestBackupIsPointInTime takes backups while transactions keep two items
// equal: every restore must find them equal, as they were at one moment.
func TestBackupIsPointInTime(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("pit", "pk:S").create(s)
	set := func(n int) error {
		_, err := s.c.TransactWriteItems(bg, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("a"), "n": vN(fmt.Sprint(n))}}},
			{Put: &types.Put{TableName: &tbl, Item: avmap{"pk": vS("b"), "n": vN(fmt.Sprint(n))}}},
		}})
		return err
	}
	if err := set(0); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; !stop.Load(); n++ {
			if err := set(n); err != nil {
				writeErr = err
				return
			}
		}
	}()
	var arns []string
	for i := range 5 {
		arns = append(arns, s.backup(tbl, fmt.Sprint("pit", i)))
	}
	stop.Store(true)
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	for i, arn := range arns {
		target := fmt.Sprint("pit_copy", i)
		s.restore(arn, target)
		a, b := s.get(target, avmap{"pk": vS("a")}), s.get(target, avmap{"pk": vS("b")})
		if attrString(a["n"]) != attrString(b["n"]) {
			t.Fatalf("backup %d: a.n %s, b.n %s", i, attrString(a["n"]), attrString(b["n"]))
		}
	}
}

// TestBackupsPersist reopens a persistent store and finds its backups,
// which restore as before.
func TestBackupsPersist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() (*cfStore, func()) {
		st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(st.Handler())
		return &cfStore{t: t, c: ddbtest.NewClient(hs.URL, aws.NopRetryer{}), url: hs.URL}, func() {
			hs.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, closeStore := open()
	tbl := table("persist", "pk:S").gsi("by_g", "g:S", "", types.ProjectionTypeAll).create(s)
	for i := range 20 {
		s.put(tbl, avmap{"pk": vS(fmt.Sprint(i)), "g": vS(fmt.Sprint(i % 3))})
	}
	want := s.scanItems(tbl, "")
	arn := s.backup(tbl, "kept")
	gone := s.backup(tbl, "dropped")
	if _, err := s.c.DeleteBackup(bg, &dynamodb.DeleteBackupInput{BackupArn: &gone}); err != nil {
		t.Fatal(err)
	}
	s.restore(arn, "persist_copy1")
	closeStore()

	s, closeStore = open()
	sameList(t, "backups after reopening", listBackupARNs(t, s.c, &dynamodb.ListBackupsInput{}), []string{arn})
	sameList(t, "restored table after reopening", s.scanItems("persist_copy1", ""), want)
	if d := s.describeTable("persist_copy1"); aws.ToInt64(d.ItemCount) != 20 || d.RestoreSummary == nil || aws.ToString(d.RestoreSummary.SourceBackupArn) != arn {
		t.Fatalf("restored table after reopening %+v", d)
	}
	s.restore(arn, "persist_copy2")
	sameList(t, "restore after reopening", s.scanItems("persist_copy2", ""), want)
	sameList(t, "its index", s.scanItems("persist_copy2", "by_g"), want)
	closeStore()
}
