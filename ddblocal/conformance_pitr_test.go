package ddblocal_test

// Conformance of the point-in-time-recovery window: exports of the past
// are served for the 35 days DynamoDB serves (from EarliestRestorableDateTime
// on), while DynamoDB Streams keeps showing only the last 24 hours.

import (
	"slices"
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
