package ddblocal_test

// Conformance of the point-in-time-recovery window: exports of the past
// are served for the 35 days DynamoDB serves (from EarliestRestorableDateTime
// on), while DynamoDB Streams keeps showing only the last 24 hours.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// streamKeys reads the table's stream from TRIM_HORIZON and renders each
// record as "EVENT PK/SK".
func (e *exportEnv) streamKeys(sc *dynamodbstreams.Client) (keys []string, seqs []string) {
	e.t.Helper()
	desc, err := e.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if err != nil {
		e.t.Fatal(err)
	}
	arn := desc.Table.LatestStreamArn
	sd, err := sc.DescribeStream(bg, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	if err != nil || len(sd.StreamDescription.Shards) != 1 {
		e.t.Fatalf("DescribeStream: %v %+v", err, sd)
	}
	it, err := sc.GetShardIterator(bg, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn,
		ShardId: sd.StreamDescription.Shards[0].ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := sc.GetRecords(bg, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range out.Records {
		k := r.Dynamodb.Keys
		keys = append(keys, string(r.EventName)+" "+k["PK"].(*st.AttributeValueMemberS).Value+"/"+k["SK"].(*st.AttributeValueMemberS).Value)
		seqs = append(seqs, aws.ToString(r.Dynamodb.SequenceNumber))
	}
	return keys, seqs
}

func (e *exportEnv) earliestRestorable() time.Time {
	e.t.Helper()
	out, err := e.c.DescribeContinuousBackups(bg, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String("orders")})
	if err != nil {
		e.t.Fatal(err)
	}
	return aws.ToTime(out.ContinuousBackupsDescription.PointInTimeRecoveryDescription.EarliestRestorableDateTime)
}

func (e *exportEnv) setPITR(on bool) {
	e.t.Helper()
	if _, err := e.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("orders"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(on)}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *exportEnv) sweep() {
	e.t.Helper()
	if _, err := e.srv.Store.SweepExpired(); err != nil {
		e.t.Fatal(err)
	}
}

func incremental(from, to time.Time) *dynamodb.ExportTableToPointInTimeInput {
	return &dynamodb.ExportTableToPointInTimeInput{ExportType: types.ExportTypeIncrementalExport,
		IncrementalExportSpecification: &types.IncrementalExportSpecification{ExportFromTime: aws.Time(from), ExportToTime: aws.Time(to)}}
}

// TestPITRExportsOutliveStreamRetention: three days after a write, the
// Streams API no longer shows it (TRIM_HORIZON starts after it, its
// sequence number is trimmed), but an incremental export of its window
// and a full export at an instant after it still see it.
func TestPITRExportsOutliveStreamRetention(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	sc := streamsClient(e.srv.URL)
	e.clock.Add(time.Hour)
	at := e.clock.Now()
	e.put("a", "1", "first")
	e.put("b", "1", "first")
	_, oldSeqs := e.streamKeys(sc)
	if len(oldSeqs) != 2 {
		t.Fatalf("stream after the first writes: %v", oldSeqs)
	}
	e.clock.Add(3 * 24 * time.Hour)
	e.put("a", "1", "second")
	e.put("c", "1", "new")
	e.sweep() // the sweeper's trim, besides the one of every Streams read

	keys, _ := e.streamKeys(sc)
	if want := []string{"MODIFY a/1", "INSERT c/1"}; !slices.Equal(keys, want) {
		t.Errorf("stream from TRIM_HORIZON three days later = %v, want %v", keys, want)
	}
	desc, err := e.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	sd, err := sc.DescribeStream(bg, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.GetShardIterator(bg, &dynamodbstreams.GetShardIteratorInput{StreamArn: desc.Table.LatestStreamArn,
		ShardId: sd.StreamDescription.Shards[0].ShardId, ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(oldSeqs[0])})
	apiErrContains(t, err, "TrimmedDataAccessException", "")

	inc := e.export(incremental(at.Add(-10*time.Minute), at.Add(20*time.Minute)))
	lines := e.lines(inc)
	if got, want := renderExport(lines, "NewImage"), []string{"a/1=first", "b/1=first"}; !slices.Equal(got, want) {
		t.Errorf("incremental export of the first writes' window: new images %v, want %v", got, want)
	}
	if got, want := renderExport(lines, "OldImage"), []string{"a/1=-", "b/1=-"}; !slices.Equal(got, want) {
		t.Errorf("incremental export of the first writes' window: old images %v, want %v", got, want)
	}
	full := e.export(&dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(at.Add(time.Hour))})
	if got, want := renderExport(e.lines(full), "Item"), []string{"a/1=first", "b/1=first"}; !slices.Equal(got, want) {
		t.Errorf("full export an hour after the first writes = %v, want %v", got, want)
	}
	if got := e.earliestRestorable(); !got.Equal(exportT0) {
		t.Errorf("EarliestRestorableDateTime = %v, want when PITR was enabled (%v)", got, exportT0)
	}
}

// TestPITRExportWindowBounds: the export's earliest bound is
// EarliestRestorableDateTime, max(PITR enabled, now - 35 days), and
// DescribeContinuousBackups says the same.
func TestPITRExportWindowBounds(t *testing.T) {
	t.Parallel()
	t.Run("before PITR was enabled", func(t *testing.T) {
		t.Parallel()
		e := newExportEnv(t)
		e.setPITR(false)
		e.clock.Add(10 * time.Minute)
		e.put("a", "1", "off")
		e.clock.Add(50 * time.Minute)
		e.setPITR(true)
		since := e.clock.Now()
		e.clock.Add(2 * time.Hour)
		if got := e.earliestRestorable(); !got.Equal(since) {
			t.Errorf("EarliestRestorableDateTime = %v, want %v", got, since)
		}
		_, err := e.c.ExportTableToPointInTime(bg, withTarget(e, incremental(exportT0.Add(5*time.Minute), exportT0.Add(35*time.Minute))))
		apiErrContains(t, err, "InvalidExportTimeException", since.Format(time.RFC3339Nano))
		_, err = e.c.ExportTableToPointInTime(bg, withTarget(e, &dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(since.Add(-time.Minute))}))
		apiErrContains(t, err, "InvalidExportTimeException", "earliest")
		// From the instant PITR was enabled on, the past is served.
		d := e.export(&dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(since)})
		if got, want := renderExport(e.lines(d), "Item"), []string{"a/1=off"}; !slices.Equal(got, want) {
			t.Errorf("full export at PITR's start = %v, want %v", got, want)
		}
	})
	t.Run("older than 35 days", func(t *testing.T) {
		t.Parallel()
		e := newExportEnv(t)
		e.clock.Add(time.Hour)
		at := e.clock.Now()
		e.put("a", "1", "old")
		e.clock.Add(36 * 24 * time.Hour)
		e.put("b", "1", "recent")
		e.clock.Add(time.Minute)
		e.sweep()
		now := e.clock.Now()
		if got, want := e.earliestRestorable(), now.AddDate(0, 0, -35); !got.Equal(want) {
			t.Errorf("EarliestRestorableDateTime = %v, want now - 35 days (%v)", got, want)
		}
		_, err := e.c.ExportTableToPointInTime(bg, withTarget(e, incremental(at.Add(-10*time.Minute), at.Add(20*time.Minute))))
		apiErrContains(t, err, "InvalidExportTimeException", "earliest")
		_, err = e.c.ExportTableToPointInTime(bg, withTarget(e, &dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(at.Add(time.Hour))}))
		apiErrContains(t, err, "InvalidExportTimeException", "earliest")
		// Inside the window, 34 days ago, the table held the old item only.
		d := e.export(&dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(now.AddDate(0, 0, -34))})
		if got, want := renderExport(e.lines(d), "Item"), []string{"a/1=old"}; !slices.Equal(got, want) {
			t.Errorf("full export 34 days ago = %v, want %v", got, want)
		}
		inc := e.export(incremental(now.Add(-20*time.Hour), now))
		if got, want := renderExport(e.lines(inc), "NewImage"), []string{"b/1=recent"}; !slices.Equal(got, want) {
			t.Errorf("incremental export of the last 20 hours = %v, want %v", got, want)
		}
	})
}

// withTarget fills the table and bucket of a request sent without export's
// waiting (for the ones expected to fail).
func withTarget(e *exportEnv, in *dynamodb.ExportTableToPointInTimeInput) *dynamodb.ExportTableToPointInTimeInput {
	in.TableArn = aws.String(e.arn)
	in.S3Bucket = aws.String("analytics")
	return in
}

// newLedger creates table "ledger" (PK, SK; a GSI "byOwner" on owner and
// SK; stream NEW_AND_OLD_IMAGES; point-in-time recovery on) in e's store.
func (e *exportEnv) newLedger() {
	e.t.Helper()
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: "S"}
	}
	key := func(h, r string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(h), KeyType: "HASH"}, {AttributeName: aws.String(r), KeyType: "RANGE"}}
	}
	if _, err := e.c.CreateTable(bg, &dynamodb.CreateTableInput{
		TableName: aws.String("ledger"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s("PK"), s("SK"), s("owner")},
		KeySchema:            key("PK", "SK"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("byOwner"), KeySchema: key("owner", "SK"),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("ledger"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *exportEnv) ledgerPut(pk, owner, v string) {
	e.t.Helper()
	if _, err := e.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("ledger"),
		Item: avmap{"PK": vS(pk), "SK": vS("A"), "owner": vS(owner), "v": vS(v)}}); err != nil {
		e.t.Fatal(err)
	}
}

// ledgerState renders a table's items as sorted "PK=v" and its GSI's
// entries for owner as sorted "PK=v".
func (e *exportEnv) ledgerState(tbl, owner string) (items, byOwner []string) {
	e.t.Helper()
	out, err := e.c.Scan(bg, &dynamodb.ScanInput{TableName: aws.String(tbl), ConsistentRead: aws.Bool(true)})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range out.Items {
		items = append(items, it["PK"].(*types.AttributeValueMemberS).Value+"="+it["v"].(*types.AttributeValueMemberS).Value)
	}
	q, err := e.c.Query(bg, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("byOwner"),
		KeyConditionExpression: aws.String("#o = :o"), ExpressionAttributeNames: map[string]string{"#o": "owner"},
		ExpressionAttributeValues: avmap{":o": vS(owner)}})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range q.Items {
		byOwner = append(byOwner, it["PK"].(*types.AttributeValueMemberS).Value+"="+it["v"].(*types.AttributeValueMemberS).Value)
	}
	slices.Sort(items)
	slices.Sort(byOwner)
	return items, byOwner
}

// TestRestoreTableToPointInTime: items written, an instant noted, then
// overwritten, deleted and added; a restore to the instant holds exactly
// the old items, in the table and in its GSI, with a RestoreSummary; a
// restore to the latest restorable time holds the current ones; and
// DescribeContinuousBackups' window is the one the restore accepts.
func TestRestoreTableToPointInTime(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.newLedger()
	e.clock.Add(time.Minute)
	e.ledgerPut("a", "ana", "1")
	e.ledgerPut("b", "ana", "1")
	e.ledgerPut("c", "bia", "1")
	e.clock.Add(time.Minute)
	noted := e.clock.Now()
	e.clock.Add(time.Minute)
	e.ledgerPut("a", "bia", "2") // overwritten, moved to another GSI key
	if _, err := e.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: aws.String("ledger"), Key: avmap{"PK": vS("b"), "SK": vS("A")}}); err != nil {
		t.Fatal(err)
	}
	e.ledgerPut("d", "ana", "2")
	e.clock.Add(10 * time.Minute)
	now := e.clock.Now()

	cb, err := e.c.DescribeContinuousBackups(bg, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String("ledger")})
	if err != nil {
		t.Fatal(err)
	}
	p := cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription
	if !aws.ToTime(p.EarliestRestorableDateTime).Equal(exportT0) || !aws.ToTime(p.LatestRestorableDateTime).Equal(now.Add(-5*time.Minute)) {
		t.Fatalf("restorable window %v..%v, want %v..%v", p.EarliestRestorableDateTime, p.LatestRestorableDateTime, exportT0, now.Add(-5*time.Minute))
	}

	out, err := e.c.RestoreTableToPointInTime(bg, &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: aws.String("ledger"),
		TargetTableName: aws.String("ledger_then"), RestoreDateTime: aws.Time(noted)})
	if err != nil {
		t.Fatal(err)
	}
	td := out.TableDescription
	rs := td.RestoreSummary
	if td.TableStatus != types.TableStatusCreating || rs == nil || !aws.ToBool(rs.RestoreInProgress) ||
		aws.ToString(rs.SourceTableArn) != strings.Replace(e.arn, "orders", "ledger", 1) || !aws.ToTime(rs.RestoreDateTime).Equal(noted) || rs.SourceBackupArn != nil {
		t.Fatalf("restore answered %s %+v", td.TableStatus, rs)
	}
	d, err := e.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("ledger_then")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Table.TableStatus != types.TableStatusActive || aws.ToBool(d.Table.RestoreSummary.RestoreInProgress) ||
		len(d.Table.GlobalSecondaryIndexes) != 1 || d.Table.StreamSpecification != nil || aws.ToInt64(d.Table.ItemCount) != 3 {
		t.Fatalf("restored table %+v", d.Table)
	}
	items, ana := e.ledgerState("ledger_then", "ana")
	if want := []string{"a=1", "b=1", "c=1"}; !slices.Equal(items, want) {
		t.Errorf("restored at the noted time: items %v, want %v", items, want)
	}
	if want := []string{"a=1", "b=1"}; !slices.Equal(ana, want) {
		t.Errorf("restored at the noted time: GSI entries of ana %v, want %v", ana, want)
	}

	if _, err := e.c.RestoreTableToPointInTime(bg, &dynamodb.RestoreTableToPointInTimeInput{SourceTableArn: aws.String(strings.Replace(e.arn, "orders", "ledger", 1)),
		TargetTableName: aws.String("ledger_now"), UseLatestRestorableTime: aws.Bool(true),
		GlobalSecondaryIndexOverride: []types.GlobalSecondaryIndex{}}); err != nil {
		t.Fatal(err)
	}
	d, err = e.c.DescribeTable(bg, &dynamodb.DescribeTableInput{TableName: aws.String("ledger_now")})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Table.GlobalSecondaryIndexes) != 0 || !aws.ToTime(d.Table.RestoreSummary.RestoreDateTime).Equal(now.Add(-5*time.Minute)) {
		t.Fatalf("latest restore: %+v", d.Table)
	}
	sc, err := e.c.Scan(bg, &dynamodb.ScanInput{TableName: aws.String("ledger_now")})
	if err != nil {
		t.Fatal(err)
	}
	var latest []string
	for _, it := range sc.Items {
		latest = append(latest, it["PK"].(*types.AttributeValueMemberS).Value+"="+it["v"].(*types.AttributeValueMemberS).Value)
	}
	slices.Sort(latest)
	if want := []string{"a=2", "c=1", "d=2"}; !slices.Equal(latest, want) {
		t.Errorf("restored at the latest time: %v, want %v", latest, want)
	}
	// The source is untouched.
	if items, _ := e.ledgerState("ledger", "ana"); !slices.Equal(items, []string{"a=2", "c=1", "d=2"}) {
		t.Errorf("source after the restores: %v", items)
	}
}

// TestRestoreTableToPointInTimeErrors: each refusal DynamoDB documents,
// and none of them creates a table.
func TestRestoreTableToPointInTimeErrors(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.newLedger()
	e.ledgerPut("a", "ana", "1")
	e.clock.Add(time.Hour)
	now := e.clock.Now()
	in := func(mod func(*dynamodb.RestoreTableToPointInTimeInput)) *dynamodb.RestoreTableToPointInTimeInput {
		r := &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: aws.String("ledger"), TargetTableName: aws.String("target"),
			RestoreDateTime: aws.Time(now.Add(-30 * time.Minute))}
		mod(r)
		return r
	}
	for _, tt := range []struct {
		name     string
		mod      func(*dynamodb.RestoreTableToPointInTimeInput)
		code, in string
	}{
		{"after the latest restorable time", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.RestoreDateTime = aws.Time(now.Add(-time.Minute)) },
			"InvalidRestoreTimeException", "LatestRestorableDateTime"},
		{"before the earliest", func(r *dynamodb.RestoreTableToPointInTimeInput) {
			r.RestoreDateTime = aws.Time(exportT0.Add(-time.Minute))
		},
			"InvalidRestoreTimeException", "EarliestRestorableDateTime"},
		{"in the future", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.RestoreDateTime = aws.Time(now.Add(time.Hour)) },
			"InvalidRestoreTimeException", ""},
		{"target exists", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.TargetTableName = aws.String("orders") },
			"TableAlreadyExistsException", "orders"},
		{"no source", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.SourceTableName = aws.String("nothing") },
			"TableNotFoundException", "nothing"},
		{"no PITR", func(r *dynamodb.RestoreTableToPointInTimeInput) {}, "PointInTimeRecoveryUnavailableException", "orders"},
		{"name and ARN", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.SourceTableArn = aws.String(e.arn) },
			"ValidationException", "Exactly one of"},
		{"time and latest", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.UseLatestRestorableTime = aws.Bool(true) },
			"ValidationException", "Only one of"},
		{"no time", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.RestoreDateTime = nil },
			"ValidationException", "Either RestoreDateTime"},
		{"bad target name", func(r *dynamodb.RestoreTableToPointInTimeInput) { r.TargetTableName = aws.String("a b") },
			"ValidationException", "targetTableName"},
		{"bad ARN", func(r *dynamodb.RestoreTableToPointInTimeInput) {
			r.SourceTableName, r.SourceTableArn = nil, aws.String(e.arn+"/stream/x")
		}, "ValidationException", "Invalid SourceTableArn"},
	} {
		r := in(tt.mod)
		if tt.name == "no PITR" {
			r.SourceTableName = aws.String("orders")
			e.setPITR(false)
		}
		_, err := e.c.RestoreTableToPointInTime(bg, r)
		if tt.name == "no PITR" {
			e.setPITR(true)
		}
		if err == nil || !strings.Contains(err.Error(), tt.code) || !strings.Contains(err.Error(), tt.in) {
			t.Errorf("%s: %v, want %s mentioning %q", tt.name, err, tt.code, tt.in)
		}
	}
	tables, err := e.c.ListTables(bg, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ledger", "orders"}; !slices.Equal(tables.TableNames, want) {
		t.Errorf("tables after the refusals: %v, want %v", tables.TableNames, want)
	}
}
