package ddblocal_test

// Conformance of the secondary operations: tagging, DescribeLimits,
// continuous backups (point-in-time recovery) and ListBackups.

import (
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// tagsOf lists a resource's tags as sorted "key=value" strings.
func (s *cfStore) tagsOf(arn string) []string {
	s.t.Helper()
	out, err := s.c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: &arn})
	if err != nil {
		s.t.Fatalf("list tags of %s: %v", arn, err)
	}
	if out.Tags == nil {
		s.t.Fatalf("list tags of %s: no Tags member", arn)
	}
	return tagStrings(out.Tags)
}

func tagStrings(tags []types.Tag) []string {
	list := make([]string, len(tags))
	for i, t := range tags {
		list[i] = aws.ToString(t.Key) + "=" + aws.ToString(t.Value)
	}
	sort.Strings(list)
	return list
}

func tagsN(from, to int) []types.Tag {
	var tags []types.Tag
	for i := from; i < to; i++ {
		tags = append(tags, types.Tag{Key: aws.String(fmt.Sprint("k", i)), Value: aws.String(fmt.Sprint(i))})
	}
	return tags
}

func tableARN(name string) string { return "arn:aws:dynamodb:us-east-1:123456789012:table/" + name }

func TestTagLifecycle(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	ts := table("tagged", "pk:S")
	ts.in.Tags = []types.Tag{{Key: aws.String("env"), Value: aws.String("dev")}, {Key: aws.String("team"), Value: aws.String("")}}
	tbl := ts.create(s)
	desc, err := s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: &tbl})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(desc.Table.TableArn)
	if arn != tableARN(tbl) {
		t.Fatalf("TableArn %q", arn)
	}
	// Tags given at creation are listed, empty values included.
	sameList(t, "tags from CreateTable", s.tagsOf(arn), []string{"env=dev", "team="})

	// TagResource upserts.
	if _, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: []types.Tag{
		{Key: aws.String("env"), Value: aws.String("prod")},
		{Key: aws.String("Env"), Value: aws.String("other case")},
		{Key: aws.String("cost center"), Value: aws.String("a+b-c=d.e_f:g/h@i")},
		{Key: aws.String("ключ"), Value: aws.String("café 表")},
	}}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after TagResource", s.tagsOf(arn), []string{"Env=other case", "cost center=a+b-c=d.e_f:g/h@i", "env=prod", "team=", "ключ=café 表"})

	// Removing an absent key is not an error.
	if _, err := s.c.UntagResource(bg, &dynamodb.UntagResourceInput{ResourceArn: &arn, TagKeys: []string{"env", "never-set", "ключ"}}); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after UntagResource", s.tagsOf(arn), []string{"Env=other case", "cost center=a+b-c=d.e_f:g/h@i", "team="})

	// A table without tags lists an empty set.
	bare := table("untagged", "pk:S").create(s)
	sameList(t, "untagged table", s.tagsOf(tableARN(bare)), []string{})

	// Tags go with the table: a table re-created under the name starts bare.
	if _, err := s.c.DeleteTable(bg, &dynamodb.DeleteTableInput{TableName: &tbl}); err != nil {
		t.Fatal(err)
	}
	_, err = s.c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: &arn})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found: ResourceArn: "+arn+" not found")
	table("tagged", "pk:S").create(s)
	sameList(t, "re-created table", s.tagsOf(arn), []string{})
}

func TestTagLimits(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	arn := tableARN(table("limits", "pk:S").create(s))
	if _, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: tagsN(0, 30)}); err != nil {
		t.Fatal(err)
	}
	// 20 more, 10 of them overwriting: 40 in all.
	if _, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: tagsN(20, 40)}); err != nil {
		t.Fatal(err)
	}
	// The limit applies to the merged set, and a refused request changes nothing.
	_, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: tagsN(35, 51)})
	validationErr(t, err, "Number of Tags exceed the current limit for the provided ResourceArn")
	if n := len(s.tagsOf(arn)); n != 40 {
		t.Fatalf("%d tags after a refused TagResource, want 40", n)
	}
	if _, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: tagsN(35, 50)}); err != nil {
		t.Fatalf("reaching exactly 50 tags: %v", err)
	}
	if n := len(s.tagsOf(arn)); n != 50 {
		t.Fatalf("%d tags, want 50", n)
	}
	var keys []string
	for i := 0; i < 51; i++ {
		keys = append(keys, fmt.Sprint("k", i))
	}
	_, err = s.c.UntagResource(bg, &dynamodb.UntagResourceInput{ResourceArn: &arn, TagKeys: keys})
	validationErr(t, err, "Number of Tags exceed the current limit for the provided ResourceArn")

	// CreateTable checks its Tags the same way, and creates nothing when
	// they are refused.
	ts := table("too-many-tags", "pk:S")
	ts.in.Tags = tagsN(0, 51)
	names := []string{"pk"}
	ts.in.AttributeDefinitions = []types.AttributeDefinition{{AttributeName: &names[0], AttributeType: types.ScalarAttributeTypeS}}
	_, err = s.c.CreateTable(bg, ts.in)
	validationErr(t, err, "Number of Tags exceed the current limit for the provided ResourceArn")
	_, err = s.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("too-many-tags")})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found: Table: too-many-tags not found")
	ts.in.Tags = []types.Tag{{Key: aws.String("aws:reserved"), Value: aws.String("x")}}
	_, err = s.c.CreateTable(bg, ts.in)
	validationErr(t, err, "Tag Key cannot be prefixed with aws:, Key: aws:reserved")
}

func TestTagValidation(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("tagval", "pk:S", "sk:S").lsi("lsi", "x:S", types.ProjectionTypeKeysOnly).create(s)
	arn := tableARN(tbl)
	missing := tableARN("no-such-table")
	one := []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}
	tag := func(arn string, tags []types.Tag) error {
		_, err := s.c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: aws.String(arn), Tags: tags})
		return err
	}
	untag := func(arn string, keys ...string) error {
		if keys == nil {
			keys = []string{}
		}
		_, err := s.c.UntagResource(bg, &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: keys})
		return err
	}
	list := func(arn string) error {
		_, err := s.c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)})
		return err
	}
	kv := func(k, v string) []types.Tag { return []types.Tag{{Key: aws.String(k), Value: aws.String(v)}} }
	foreign := func(name string) string { return "arn:aws:dynamodb:us-east-1:000000000000:table/" + name }
	denied := func(action, arn string) string {
		return "User: arn:aws:iam::123456789012:root is not authorized to perform: dynamodb:" + action + " on resource: " + arn +
			" because no resource-based policy allows the dynamodb:" + action + " action"
	}
	const invalid = "One or more parameter values were invalid: "
	tests := []struct {
		name string
		err  error
		typ  string
		want string
	}{
		{"no tags", tag(arn, []types.Tag{}), "ValidationException", "Atleast one Tag needs to be provided as Input."},
		{"no tag keys", untag(arn), "ValidationException", "Atleast one Tag Key needs to be provided as Input."},
		{"bare table name", tag(tbl, one), "ValidationException", invalid + "ARNs must start with 'arn:': " + tbl},
		{"bare name, list", list("not-an-arn"), "ValidationException", invalid + "ARNs must start with 'arn:': not-an-arn"},
		{"missing table", tag(missing, one), "ResourceNotFoundException", "Requested resource not found: ResourceArn: " + missing + " not found"},
		{"missing table, list", list(missing), "ResourceNotFoundException", "Requested resource not found: ResourceArn: " + missing + " not found"},
		{"missing table, untag", untag(missing, "k"), "ResourceNotFoundException", "Requested resource not found: ResourceArn: " + missing + " not found"},
		{"other region", tag("arn:aws:dynamodb:eu-west-2:123456789012:table/"+tbl, one), "ValidationException",
			"Invalid TableArn: Invalid ResourceArn provided as input arn:aws:dynamodb:eu-west-2:123456789012:table/" + tbl},
		{"short table name", list(tableARN("ab")), "ValidationException", "Invalid TableArn: Invalid ResourceArn provided as input " + tableARN("ab")},
		{"index ARN", list(arn + "/index/lsi"), "ValidationException",
			invalid + "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: " + arn + "/index/lsi"},
		{"not a DynamoDB ARN", tag("arn:aws:s3:::bucket", one), "ValidationException", invalid + "Provided Arn is not a DynamoDB resource arn: arn:aws:s3:::bucket"},
		{"backup ARN", list(arn + "/backup/01700000000000-abcdef12"), "ValidationException",
			invalid + "Provided Arn is not a DynamoDB resource arn: " + arn + "/backup/01700000000000-abcdef12"},
		{"key of 129 characters", tag(arn, kv(strings.Repeat("k", 129), "v")), "ValidationException", "The Tag Key provided is invalid, Key: " + strings.Repeat("k", 129)},
		{"value of 257 characters", tag(arn, kv("k", strings.Repeat("v", 257))), "ValidationException", "The Tag Value provided is invalid, Value: " + strings.Repeat("v", 257)},
		{"empty key", tag(arn, kv("", "v")), "ValidationException", "The Tag Key provided is invalid, Key: "},
		{"key with #", tag(arn, kv("bad#char", "v")), "ValidationException", "The Tag Key provided is invalid, Key: bad#char"},
		{"value with %", tag(arn, kv("k", "100%")), "ValidationException", "The Tag Value provided is invalid, Value: 100%"},
		{"aws: prefix", tag(arn, kv("aws:foo", "v")), "ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:foo"},
		{"AWS: prefix", tag(arn, kv("AWS:foo", "v")), "ValidationException", "Tag Key cannot be prefixed with aws:, Key: AWS:foo"},
		{"aws: prefix, untag", untag(arn, "aws:foo"), "ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:foo"},
		{"empty key, untag", untag(arn, ""), "ValidationException", "The Tag Key provided is invalid, Key: "},
		{"duplicate keys", tag(arn, append(kv("dup", "1"), kv("dup", "2")...)), "ValidationException",
			"Duplicate Tag Keys provided as input: Duplicate Tag Key found dup"},
		{"bad tag before missing table", tag(missing, kv("aws:x", "v")), "ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:x"},
		// Another account's table, existing or not, is not the caller's to
		// tag or list: refused before the tags are looked at.
		{"other account, list", list(foreign("no-such-table")), "AccessDeniedException", denied("ListTagsOfResource", foreign("no-such-table"))},
		{"other account, existing name", tag(foreign(tbl), one), "AccessDeniedException", denied("TagResource", foreign(tbl))},
		{"other account, bad tag", tag(foreign(tbl), kv("aws:x", "v")), "AccessDeniedException", denied("TagResource", foreign(tbl))},
		{"other account, untag", untag(foreign(tbl), "k"), "AccessDeniedException", denied("UntagResource", foreign(tbl))},
		{"other account, short name", list("arn:aws:dynamodb:us-east-1:000000000000:table/ab"), "ValidationException",
			"Invalid TableArn: Invalid ResourceArn provided as input arn:aws:dynamodb:us-east-1:000000000000:table/ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { apiErr(t, tc.err, tc.typ, tc.want) })
	}
	// All or nothing: a good tag beside a bad one is not applied.
	validationErr(t, tag(arn, append(kv("good", "1"), kv("aws:bad", "2")...)), "Tag Key cannot be prefixed with aws:, Key: aws:bad")
	sameList(t, "tags after refused requests", s.tagsOf(arn), []string{})
	// A key of 128 characters and a value of 256 fit; "myaws:" is not reserved.
	if err := tag(arn, append(kv(strings.Repeat("k", 128), strings.Repeat("v", 256)), kv("myaws:foo", "v")...)); err != nil {
		t.Fatal(err)
	}

	// Members the SDK always sends, checked on the wire.
	s.rawErr("TagResource", js{}, "ValidationException", "Invalid TableArn")
	s.rawErr("ListTagsOfResource", js{}, "ValidationException", "Invalid TableArn")
	s.rawErr("TagResource", js{"ResourceArn": arn}, "ValidationException",
		"1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null")
	s.rawErr("UntagResource", js{"ResourceArn": arn}, "ValidationException",
		"1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null")
	s.rawErr("TagResource", js{"ResourceArn": arn, "Tags": []js{{"Key": "k"}}}, "ValidationException", "The Tag Value provided is invalid, Value: null")
	s.rawErr("TagResource", js{"ResourceArn": arn, "Tags": []js{{"Value": "v"}}}, "ValidationException", "The Tag Key provided is invalid, Key: null")
	s.rawErr("TagResource", js{"ResourceArn": "", "Tags": []js{{"Key": "k", "Value": "v"}}}, "ValidationException",
		"1 validation error detected: Value '' at 'resourceArn' failed to satisfy constraint: Member must have length greater than or equal to 1")
}

func TestDescribeLimits(t *testing.T) {
	t.Parallel()
	c := ddbtest.New(t)
	out, err := c.DescribeLimits(bg, &dynamodb.DescribeLimitsInput{})
	if err != nil {
		t.Fatal(err)
	}
	got := []int64{aws.ToInt64(out.AccountMaxReadCapacityUnits), aws.ToInt64(out.AccountMaxWriteCapacityUnits),
		aws.ToInt64(out.TableMaxReadCapacityUnits), aws.ToInt64(out.TableMaxWriteCapacityUnits)}
	if fmt.Sprint(got) != "[80000 80000 40000 40000]" {
		t.Fatalf("limits %v", got)
	}
}

// pitrOf describes a table's continuous backups.
func pitrOf(t *testing.T, c *dynamodb.Client, tbl string) *types.ContinuousBackupsDescription {
	t.Helper()
	out, err := c.DescribeContinuousBackups(bg, &dynamodb.DescribeContinuousBackupsInput{TableName: &tbl})
	if err != nil {
		t.Fatal(err)
	}
	return out.ContinuousBackupsDescription
}

func TestContinuousBackups(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("pitr", "pk:S").create(s)

	d := pitrOf(t, s.c, tbl)
	if d.ContinuousBackupsStatus != types.ContinuousBackupsStatusEnabled {
		t.Fatalf("ContinuousBackupsStatus %q", d.ContinuousBackupsStatus)
	}
	p := d.PointInTimeRecoveryDescription
	if p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusDisabled || p.EarliestRestorableDateTime != nil || p.RecoveryPeriodInDays != nil {
		t.Fatalf("fresh table PITR %+v", p)
	}

	enable := func(days *int32) *types.ContinuousBackupsDescription {
		t.Helper()
		out, err := s.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: &tbl,
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: days}})
		if err != nil {
			t.Fatal(err)
		}
		return out.ContinuousBackupsDescription
	}
	d = enable(nil)
	p = d.PointInTimeRecoveryDescription
	if p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled || aws.ToInt32(p.RecoveryPeriodInDays) != 35 ||
		p.EarliestRestorableDateTime == nil || p.LatestRestorableDateTime == nil || p.LatestRestorableDateTime.Before(*p.EarliestRestorableDateTime) {
		t.Fatalf("enabled PITR %+v", p)
	}
	// Describe reads what Update answered; the period changes in place.
	if got := pitrOf(t, s.c, tbl).PointInTimeRecoveryDescription; got.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled {
		t.Fatalf("describe after enable: %+v", got)
	}
	if got := enable(aws.Int32(7)).PointInTimeRecoveryDescription; aws.ToInt32(got.RecoveryPeriodInDays) != 7 {
		t.Fatalf("period %v, want 7", got.RecoveryPeriodInDays)
	}
	if got := pitrOf(t, s.c, tbl).PointInTimeRecoveryDescription; aws.ToInt32(got.RecoveryPeriodInDays) != 7 {
		t.Fatalf("described period %v, want 7", got.RecoveryPeriodInDays)
	}

	update := func(enabled *bool, days *int32) error {
		_, err := s.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: &tbl,
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: enabled, RecoveryPeriodInDays: days}})
		return err
	}
	validationErr(t, update(aws.Bool(false), aws.Int32(7)), "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.")
	validationErr(t, update(aws.Bool(true), aws.Int32(36)),
		"1 validation error detected: Value '36' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy constraint: Member must have value less than or equal to 35")
	s.rawErr("UpdateContinuousBackups", js{"TableName": tbl, "PointInTimeRecoverySpecification": js{"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 0}},
		"ValidationException", "1 validation error detected: Value '0' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed to satisfy constraint: Member must have value greater than or equal to 1")
	s.rawErr("UpdateContinuousBackups", js{"TableName": tbl, "PointInTimeRecoverySpecification": js{}},
		"ValidationException", "1 validation error detected: Value null at 'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' failed to satisfy constraint: Member must not be null")
	s.rawErr("UpdateContinuousBackups", js{"TableName": tbl},
		"ValidationException", "1 validation error detected: Value null at 'pointInTimeRecoverySpecification' failed to satisfy constraint: Member must not be null")

	// Disabling forgets the period: re-enabling starts again from 35 days.
	if err := update(aws.Bool(false), nil); err != nil {
		t.Fatal(err)
	}
	if p := pitrOf(t, s.c, tbl).PointInTimeRecoveryDescription; p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusDisabled || p.RecoveryPeriodInDays != nil {
		t.Fatalf("disabled PITR %+v", p)
	}
	if got := enable(nil).PointInTimeRecoveryDescription; aws.ToInt32(got.RecoveryPeriodInDays) != 35 {
		t.Fatalf("re-enabled period %v, want 35", got.RecoveryPeriodInDays)
	}

	// The table may be named by its ARN; a missing table is TableNotFound.
	if p := pitrOf(t, s.c, tableARN(tbl)).PointInTimeRecoveryDescription; p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled {
		t.Fatalf("by ARN: %+v", p)
	}
	_, err := s.c.DescribeContinuousBackups(bg, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String("nope")})
	apiErr(t, err, "TableNotFoundException", "Table not found: nope")
	_, err = s.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("nope"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}})
	apiErr(t, err, "TableNotFoundException", "Table not found: nope")
}

// TestTagsAndPITRPersist reopens a persistent store and finds the tags and
// the PITR setting it was closed with.
func TestTagsAndPITRPersist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() (*dynamodb.Client, func()) {
		st, err := ddblocal.Open(ddblocal.Options{Dir: dir, TTLSweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(st.Handler())
		return ddbtest.NewClient(hs.URL, aws.NopRetryer{}), func() {
			hs.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, closeStore := open()
	s := &cfStore{t: t, c: c}
	tbl := table("durable", "pk:S").create(s)
	arn := tableARN(tbl)
	if _, err := c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: &tbl,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true), RecoveryPeriodInDays: aws.Int32(3)}}); err != nil {
		t.Fatal(err)
	}
	closeStore()

	c, closeStore = open()
	defer closeStore()
	s.c = c
	sameList(t, "tags after reopening", s.tagsOf(arn), []string{"k=v"})
	if p := pitrOf(t, c, tbl).PointInTimeRecoveryDescription; aws.ToInt32(p.RecoveryPeriodInDays) != 3 {
		t.Fatalf("PITR after reopening: %+v", p)
	}
}

func TestBackupOperations(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("backups", "pk:S").create(s)
	out, err := s.c.ListBackups(bg, &dynamodb.ListBackupsInput{TableName: &tbl, BackupType: types.BackupTypeFilterAll})
	if err != nil {
		t.Fatal(err)
	}
	if out.BackupSummaries == nil || len(out.BackupSummaries) != 0 || out.LastEvaluatedBackupArn != nil {
		t.Fatalf("ListBackups %+v", out)
	}
	s.rawErr("ListBackups", js{"Limit": 0}, "ValidationException",
		"1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
	s.rawErr("ListBackups", js{"BackupType": "NEW"}, "ValidationException",
		"1 validation error detected: Value 'NEW' at 'backupType' failed to satisfy constraint: Member must satisfy enum value set: [USER, SYSTEM, AWS_BACKUP, ALL]")
	s.rawErr("ListBackups", js{"TimeRangeLowerBound": 20, "TimeRangeUpperBound": 10}, "ValidationException",
		"One or more parameter values were invalid: Time range lower bound must be less than or equal to upper bound")
	// A point-in-time restore needs point-in-time recovery on the source
	// (restores themselves: conformance_backup_test.go, conformance_pitr_test.go).
	_, err = s.c.RestoreTableToPointInTime(bg, &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: &tbl,
		TargetTableName: aws.String("pitr_target"), UseLatestRestorableTime: aws.Bool(true)})
	apiErr(t, err, "PointInTimeRecoveryUnavailableException", "")
}

// TestGetItemEmptyProjection checks GetItem answers an empty Item, not
// none, when the item exists but has none of the projected attributes.
func TestGetItemEmptyProjection(t *testing.T) {
	t.Parallel()
	s := newCF(t)
	tbl := table("emptyproj", "pk:S").create(s)
	s.put(tbl, avmap{"pk": vS("a"), "x": vS("1")})
	_, body := s.raw("GetItem", js{"TableName": tbl, "Key": js{"pk": js{"S": "a"}}, "ProjectionExpression": "nothere"})
	if item, ok := body["Item"].(map[string]any); !ok || len(item) != 0 {
		t.Fatalf("existing item, empty projection: body %v, want an empty Item", body)
	}
	_, body = s.raw("GetItem", js{"TableName": tbl, "Key": js{"pk": js{"S": "b"}}, "ProjectionExpression": "nothere"})
	if _, ok := body["Item"]; ok {
		t.Fatalf("missing item: body %v, want no Item member", body)
	}
}

// TestTagAccount checks the account a store is opened with is the one its
// ARNs carry and the only one its tag operations accept.
func TestTagAccount(t *testing.T) {
	t.Parallel()
	c := ddbtest.Start(t, ddblocal.Options{AccountID: "000000000000"}).Client()
	out, err := c.CreateTable(bg, &dynamodb.CreateTableInput{TableName: aws.String("acct"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.TableDescription.TableArn)
	if arn != "arn:aws:dynamodb:us-east-1:000000000000:table/acct" {
		t.Fatalf("TableArn %s", arn)
	}
	if _, err := c.TagResource(bg, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}); err != nil {
		t.Fatal(err)
	}
	missing := "arn:aws:dynamodb:us-east-1:000000000000:table/missing"
	_, err = c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: &missing})
	apiErr(t, err, "ResourceNotFoundException", "Requested resource not found: ResourceArn: "+missing+" not found")
	other := "arn:aws:dynamodb:us-east-1:123456789012:table/acct"
	_, err = c.ListTagsOfResource(bg, &dynamodb.ListTagsOfResourceInput{ResourceArn: &other})
	apiErr(t, err, "AccessDeniedException", "User: arn:aws:iam::000000000000:root is not authorized to perform: dynamodb:ListTagsOfResource on resource: "+
		other+" because no resource-based policy allows the dynamodb:ListTagsOfResource action")
}
