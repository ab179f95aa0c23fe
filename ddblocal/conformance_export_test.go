package ddblocal_test

// Conformance of table exports: ExportTableToPointInTime (full, at a past
// ExportTime, incremental), DescribeExport and ListExports, through the
// SDK, with the export's files read back from the folder standing for the
// bucket.

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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

// testClock is a settable clock for the store.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type exportEnv struct {
	t     testing.TB
	srv   *ddbtest.Server
	c     *dynamodb.Client
	clock *testClock
	root  string
	arn   string // the table's ARN
}

var exportT0 = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// newExportEnv opens a store on a manual clock with table "orders" (PK S,
// SK S; stream NEW_AND_OLD_IMAGES; point-in-time recovery on).
func newExportEnv(t *testing.T) *exportEnv { return newExportEnvTB(t) }

func newExportEnvTB(t testing.TB) *exportEnv {
	t.Helper()
	clk := &testClock{now: exportT0}
	root := t.TempDir()
	srv := ddbtest.Start(t, ddblocal.Options{Now: clk.Now, ExportDir: root, TTLSweepInterval: -1})
	e := &exportEnv{t: t, srv: srv, c: srv.Client(), clock: clk, root: root}
	out, err := e.c.CreateTable(bg, &dynamodb.CreateTableInput{
		TableName: aws.String("orders"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}, {AttributeName: aws.String("SK"), KeyType: "RANGE"}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.arn = aws.ToString(out.TableDescription.TableArn)
	if _, err := e.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("orders"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *exportEnv) put(pk, sk, v string) {
	e.t.Helper()
	if _, err := e.c.PutItem(bg, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: avmap{"PK": vS(pk), "SK": vS(sk), "v": vS(v)}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *exportEnv) del(pk, sk string) {
	e.t.Helper()
	if _, err := e.c.DeleteItem(bg, &dynamodb.DeleteItemInput{TableName: aws.String("orders"), Key: avmap{"PK": vS(pk), "SK": vS(sk)}}); err != nil {
		e.t.Fatal(err)
	}
}

// export starts an export and waits for it to complete.
func (e *exportEnv) export(in *dynamodb.ExportTableToPointInTimeInput) *types.ExportDescription {
	e.t.Helper()
	in.TableArn = aws.String(e.arn)
	if in.S3Bucket == nil {
		in.S3Bucket = aws.String("analytics")
	}
	out, err := e.c.ExportTableToPointInTime(bg, in)
	if err != nil {
		e.t.Fatalf("export: %v", err)
	}
	return e.wait(aws.ToString(out.ExportDescription.ExportArn))
}

func (e *exportEnv) wait(arn string) *types.ExportDescription {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := e.c.DescribeExport(bg, &dynamodb.DescribeExportInput{ExportArn: aws.String(arn)})
		if err != nil {
			e.t.Fatal(err)
		}
		switch out.ExportDescription.ExportStatus {
		case types.ExportStatusCompleted:
			return out.ExportDescription
		case types.ExportStatusFailed:
			e.t.Fatalf("export failed: %s", aws.ToString(out.ExportDescription.FailureMessage))
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.t.Fatal("export did not complete in 30 s")
	return nil
}

// lines reads every data line of a completed export through its
// manifests, checking the manifests' counts.
func (e *exportEnv) lines(d *types.ExportDescription) []map[string]map[string]map[string]any {
	e.t.Helper()
	bucket := filepath.Join(e.root, aws.ToString(d.S3Bucket))
	manifest := filepath.Join(bucket, filepath.FromSlash(aws.ToString(d.ExportManifest)))
	summaryRaw, err := os.ReadFile(filepath.Join(filepath.Dir(manifest), "manifest-summary.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var summary struct {
		ExportArn          string `json:"exportArn"`
		ItemCount          int64  `json:"itemCount"`
		ManifestFilesS3Key string `json:"manifestFilesS3Key"`
		OutputFormat       string `json:"outputFormat"`
		ExportType         string `json:"exportType"`
	}
	if err := json.Unmarshal(summaryRaw, &summary); err != nil {
		e.t.Fatal(err)
	}
	if summary.ExportArn != aws.ToString(d.ExportArn) || summary.ManifestFilesS3Key != aws.ToString(d.ExportManifest) ||
		summary.OutputFormat != "DYNAMODB_JSON" || summary.ExportType != string(d.ExportType) {
		e.t.Fatalf("manifest-summary.json = %s, description %+v", summaryRaw, d)
	}
	f, err := os.Open(manifest)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]map[string]map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var entry struct {
			ItemCount     int    `json:"itemCount"`
			DataFileS3Key string `json:"dataFileS3Key"`
			MD5           string `json:"md5Checksum"`
		}
		if err := json.Unmarshal(sc.Bytes(), &entry); err != nil {
			e.t.Fatal(err)
		}
		got := e.dataFile(filepath.Join(bucket, filepath.FromSlash(entry.DataFileS3Key)))
		if len(got) != entry.ItemCount || entry.MD5 == "" {
			e.t.Fatalf("%s: %d lines, manifest says %d (md5 %q)", entry.DataFileS3Key, len(got), entry.ItemCount, entry.MD5)
		}
		out = append(out, got...)
	}
	if int64(len(out)) != summary.ItemCount || int64(len(out)) != aws.ToInt64(d.ItemCount) {
		e.t.Fatalf("%d lines, summary says %d, description %d", len(out), summary.ItemCount, aws.ToInt64(d.ItemCount))
	}
	return out
}

func (e *exportEnv) dataFile(path string) []map[string]map[string]map[string]any {
	e.t.Helper()
	f, err := os.Open(path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []map[string]map[string]map[string]any
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		var line map[string]map[string]map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			e.t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// renderExport summarizes lines as "PK/SK=v" strings, sorted; member names one
// image of each line ("Item", "NewImage", "OldImage").
func renderExport(lines []map[string]map[string]map[string]any, member string) []string {
	var out []string
	for _, l := range lines {
		img := l[member]
		keys := l["Keys"]
		if keys == nil {
			keys = img
		}
		s := fmt.Sprintf("%v/%v=", keys["PK"]["S"], keys["SK"]["S"])
		if img != nil {
			s += fmt.Sprint(img["v"]["S"])
		} else {
			s += "-"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestExportFullNowAndInThePast(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.clock.Add(time.Minute)
	e.put("a", "1", "first")
	e.put("b", "1", "first")
	e.put("c", "1", "first")
	pit := e.clock.Now()
	e.clock.Add(time.Hour)
	e.put("a", "1", "second") // changed after pit
	e.del("b", "1")           // deleted after pit
	e.put("d", "1", "new")    // created after pit
	e.put("d", "1", "newer")

	now := e.export(&dynamodb.ExportTableToPointInTimeInput{S3Prefix: aws.String("monthly/2026-09")})
	if got, want := renderExport(e.lines(now), "Item"), []string{"a/1=second", "c/1=first", "d/1=newer"}; !slices.Equal(got, want) {
		t.Errorf("export now = %v, want %v", got, want)
	}
	if !strings.HasPrefix(aws.ToString(now.ExportManifest), "monthly/2026-09/AWSDynamoDB/") {
		t.Errorf("manifest key %q lacks the prefix", aws.ToString(now.ExportManifest))
	}
	past := e.export(&dynamodb.ExportTableToPointInTimeInput{ExportTime: aws.Time(pit)})
	if got, want := renderExport(e.lines(past), "Item"), []string{"a/1=first", "b/1=first", "c/1=first"}; !slices.Equal(got, want) {
		t.Errorf("export at %s = %v, want %v", pit, got, want)
	}
	if !aws.ToTime(past.ExportTime).Equal(pit) {
		t.Errorf("ExportTime = %v, want %v", aws.ToTime(past.ExportTime), pit)
	}
	// Exports are listed, newest included, and the folder has DynamoDB's objects.
	list, err := e.c.ListExports(bg, &dynamodb.ListExportsInput{TableArn: aws.String(e.arn)})
	if err != nil || len(list.ExportSummaries) != 2 {
		t.Fatalf("ListExports = %+v, %v", list, err)
	}
	dir, err := e.srv.Store.ExportDir(aws.ToString(now.ExportArn))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"_started", "manifest-summary.json", "manifest-summary.md5", "manifest-files.json", "manifest-files.md5"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("export folder lacks %s: %v", name, err)
		}
	}
}

func TestExportIncrementalHoldsExactlyTheWindow(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.put("before", "1", "v0") // before the window: not exported
	e.put("mod", "1", "v0")
	e.put("gone", "1", "v0")
	e.clock.Add(time.Hour)
	from := e.clock.Now()
	e.put("mod", "1", "v1")
	e.clock.Add(10 * time.Minute)
	e.put("mod", "1", "v2")
	e.del("gone", "1")
	e.put("born", "1", "v1")
	e.put("flash", "1", "v1") // created and deleted inside the window
	e.del("flash", "1")
	e.clock.Add(50 * time.Minute)
	to := e.clock.Now()
	e.put("after", "1", "v1") // at the exclusive end: not exported
	e.put("mod", "1", "v3")
	e.clock.Add(time.Minute)

	spec := &types.IncrementalExportSpecification{ExportFromTime: aws.Time(from), ExportToTime: aws.Time(to)}
	d := e.export(&dynamodb.ExportTableToPointInTimeInput{ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: spec})
	lines := e.lines(d)
	if got, want := renderExport(lines, "NewImage"), []string{"born/1=v1", "flash/1=-", "gone/1=-", "mod/1=v2"}; !slices.Equal(got, want) {
		t.Errorf("new images = %v, want %v", got, want)
	}
	if got, want := renderExport(lines, "OldImage"), []string{"born/1=-", "flash/1=-", "gone/1=v0", "mod/1=v0"}; !slices.Equal(got, want) {
		t.Errorf("old images = %v, want %v", got, want)
	}
	for _, l := range lines {
		if l["Metadata"]["WriteTimestampMicros"]["N"] == nil {
			t.Errorf("line without WriteTimestampMicros: %v", l)
		}
	}
	spec.ExportViewType = types.ExportViewTypeNewImage
	d = e.export(&dynamodb.ExportTableToPointInTimeInput{ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: spec})
	for _, l := range e.lines(d) {
		if l["OldImage"] != nil {
			t.Errorf("NEW_IMAGE export has an old image: %v", l)
		}
	}
}

func TestExportValidation(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.put("a", "1", "v")
	e.clock.Add(2 * time.Hour)
	now := e.clock.Now()
	incr := func(from, to time.Time) *types.IncrementalExportSpecification {
		return &types.IncrementalExportSpecification{ExportFromTime: aws.Time(from), ExportToTime: aws.Time(to)}
	}
	cases := []struct {
		name      string
		in        dynamodb.ExportTableToPointInTimeInput
		code, in2 string // error code and a fragment of its message
	}{
		{"name, not ARN", dynamodb.ExportTableToPointInTimeInput{TableArn: aws.String("orders"), S3Bucket: aws.String("bkt")}, "ValidationException", "Invalid TableArn"},
		{"another account's table", dynamodb.ExportTableToPointInTimeInput{TableArn: aws.String(strings.Replace(e.arn, ":123456789012:", ":999999999999:", 1)), S3Bucket: aws.String("bkt")}, "AccessDeniedException", "not authorized"},
		{"bare arn", dynamodb.ExportTableToPointInTimeInput{TableArn: aws.String("arn:"), S3Bucket: aws.String("bkt")}, "ValidationException", "Invalid TableArn"},
		{"no table name", dynamodb.ExportTableToPointInTimeInput{TableArn: aws.String(strings.TrimSuffix(e.arn, "orders")), S3Bucket: aws.String("bkt")}, "ValidationException", "Invalid TableArn"},
		{"unknown table", dynamodb.ExportTableToPointInTimeInput{TableArn: aws.String(strings.TrimSuffix(e.arn, "orders") + "nope"), S3Bucket: aws.String("bkt")}, "TableNotFoundException", "nope"},
		{"ION", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportFormat: types.ExportFormatIon}, "ValidationException", "ION"},
		{"bad format", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportFormat: "CSV"}, "ValidationException", "exportFormat"},
		{"bad bucket", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("../etc")}, "ValidationException", "S3Bucket"},
		{"bad prefix", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), S3Prefix: aws.String("a/../../b")}, "ValidationException", "S3Prefix"},
		{"future", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportTime: aws.Time(now.Add(time.Minute))}, "InvalidExportTimeException", "future"},
		{"before history", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportTime: aws.Time(exportT0.Add(-time.Hour))}, "InvalidExportTimeException", "covers"},
		{"full with spec", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), IncrementalExportSpecification: incr(now.Add(-time.Hour), now)}, "ValidationException", "INCREMENTAL_EXPORT"},
		{"incremental without from", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport}, "ValidationException", "ExportFromTime"},
		{"incremental with ExportTime", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport, ExportTime: aws.Time(now)}, "ValidationException", "ExportTime"},
		{"window too short", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: incr(now.Add(-time.Minute), now)}, "ValidationException", "15 minutes"},
		{"window reversed", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: incr(now, now.Add(-time.Hour))}, "ValidationException", "before"},
		{"window too long", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: incr(now.Add(-25*time.Hour), now)}, "ValidationException", "24 hours"},
		{"window in the future", dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt"), ExportType: types.ExportTypeIncrementalExport, IncrementalExportSpecification: incr(now.Add(-time.Hour), now.Add(time.Hour))}, "InvalidExportTimeException", "future"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.c.ExportTableToPointInTime(bg, &tc.in)
			apiErrContains(t, err, tc.code, tc.in2)
		})
	}
	// Point-in-time recovery off: DynamoDB's own error.
	if _, err := e.c.UpdateContinuousBackups(bg, &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String("orders"),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.ExportTableToPointInTime(bg, &dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String("bkt")})
	var pitr *types.PointInTimeRecoveryUnavailableException
	if !errors.As(err, &pitr) {
		t.Errorf("export without PITR: %v, want PointInTimeRecoveryUnavailableException", err)
	}
	_, err = e.c.DescribeExport(bg, &dynamodb.DescribeExportInput{ExportArn: aws.String(e.arn + "/export/01790000000000-00000000")})
	var nf *types.ExportNotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("DescribeExport of an unknown ARN: %v, want ExportNotFoundException", err)
	}
}

func apiErrContains(t *testing.T, err error, code, fragment string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if !strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), fragment) {
		t.Fatalf("error %v, want %s mentioning %q", err, code, fragment)
	}
}

// TestExportRawValidation sends requests the SDK would refuse before
// sending them (other clients may not): the store validates too.
func TestExportRawValidation(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	cases := []struct {
		name, op, body, code, fragment string
	}{
		{"nothing", "ExportTableToPointInTime", `{}`, "ValidationException", "2 validation errors detected"},
		{"no bucket", "ExportTableToPointInTime", `{"TableArn":"` + e.arn + `"}`, "ValidationException", "'s3Bucket' failed to satisfy constraint: Member must not be null"},
		{"time as text", "ExportTableToPointInTime", `{"TableArn":"` + e.arn + `","S3Bucket":"bkt","ExportTime":"yesterday"}`, "SerializationException", "ExportTime"},
		// Past int64 seconds: read as some other year unless clamped.
		{"time past int64", "ExportTableToPointInTime", `{"TableArn":"` + e.arn + `","S3Bucket":"bkt","ExportTime":1e300}`, "InvalidExportTimeException", "9999-12-31T23:59:59Z is in the future"},
		{"describe nothing", "DescribeExport", `{}`, "ValidationException", "exportArn"},
		{"list too many", "ListExports", `{"MaxResults":26}`, "ValidationException", "maxResults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.srv.URL, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+tc.op)
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.HasSuffix(out.Type, "#"+tc.code) || !strings.Contains(out.Message, tc.fragment) {
				t.Errorf("%d %s %q, want 400 %s mentioning %q", resp.StatusCode, out.Type, out.Message, tc.code, tc.fragment)
			}
		})
	}
}

func TestListExportsPages(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.put("a", "1", "v")
	var want []string
	for range 3 {
		want = append(want, aws.ToString(e.export(&dynamodb.ExportTableToPointInTimeInput{}).ExportArn))
		e.clock.Add(time.Second)
	}
	var got []string
	var token *string
	for {
		out, err := e.c.ListExports(bg, &dynamodb.ListExportsInput{MaxResults: aws.Int32(2), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ExportSummaries) > 2 {
			t.Fatalf("page of %d, MaxResults 2", len(out.ExportSummaries))
		}
		for _, s := range out.ExportSummaries {
			got = append(got, aws.ToString(s.ExportArn))
			if s.ExportStatus != types.ExportStatusCompleted || s.ExportType != types.ExportTypeFullExport {
				t.Errorf("summary %+v", s)
			}
		}
		if token = out.NextToken; token == nil {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("ListExports = %v, want %v (oldest first)", got, want)
	}
	// Filtered by table: this table's ARN lists them; another account's
	// table of the same name is not this store's to list.
	if out, err := e.c.ListExports(bg, &dynamodb.ListExportsInput{TableArn: &e.arn}); err != nil || len(out.ExportSummaries) != len(want) {
		t.Errorf("ListExports of the table: %v %v", out, err)
	}
	foreign := strings.Replace(e.arn, ":123456789012:", ":999999999999:", 1)
	_, err := e.c.ListExports(bg, &dynamodb.ListExportsInput{TableArn: &foreign})
	apiErrContains(t, err, "AccessDeniedException", "not authorized to perform: dynamodb:ListExports")
}

func TestExportClientTokenIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.put("a", "1", "v")
	in := func(bucket string) *dynamodb.ExportTableToPointInTimeInput {
		return &dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn, S3Bucket: aws.String(bucket), ClientToken: aws.String("monthly-2026-09")}
	}
	first, err := e.c.ExportTableToPointInTime(bg, in("bkt"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.c.ExportTableToPointInTime(bg, in("bkt"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := aws.ToString(first.ExportDescription.ExportArn), aws.ToString(again.ExportDescription.ExportArn); a != b {
		t.Errorf("same token, two exports: %s and %s", a, b)
	}
	_, err = e.c.ExportTableToPointInTime(bg, in("other-bucket"))
	var mismatch *types.IdempotentParameterMismatchException
	if !errors.As(err, &mismatch) {
		t.Errorf("same token, other bucket: %v, want IdempotentParameterMismatchException", err)
	}
	e.wait(aws.ToString(first.ExportDescription.ExportArn))
}

// TestExportConsumesNoReadCapacity exports 100,000 items and checks the
// store's meter: the export reads storage, never the data plane.
func TestExportConsumesNoReadCapacity(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	const n = exportVolume
	writeItems(t, e.c, n)
	before := e.srv.Store.ConsumedCapacity("orders")
	d := e.export(&dynamodb.ExportTableToPointInTimeInput{})
	after := e.srv.Store.ConsumedCapacity("orders")
	if after.ReadCapacityUnits != 0 || after.ReadCapacityUnits != before.ReadCapacityUnits {
		t.Errorf("export consumed capacity: before %+v, after %+v", before, after)
	}
	if got := aws.ToInt64(d.ItemCount); got != n {
		t.Errorf("ItemCount = %d, want %d", got, n)
	}
	if lines := e.lines(d); len(lines) != n {
		t.Errorf("%d lines, want %d", len(lines), n)
	}
}

// writeItems writes n small items with BatchWriteItem from 4 writers.
func writeItems(t testing.TB, c *dynamodb.Client, n int) {
	t.Helper()
	const writers = 4
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			errs <- func() error {
				for start := w * 25; start < n; start += writers * 25 {
					var reqs []types.WriteRequest
					for i := start; i < min(start+25, n); i++ {
						reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: avmap{
							"PK": vS(fmt.Sprintf("p%06d", i)), "SK": vS("x"), "v": vS("item")}}})
					}
					out, err := c.BatchWriteItem(bg, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"orders": reqs}})
					if err != nil {
						return err
					}
					if len(out.UnprocessedItems) > 0 {
						return fmt.Errorf("unprocessed items")
					}
				}
				return nil
			}()
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestExportClientTokenConcurrent: the same request with the same
// ClientToken sent at once from eight clients starts one export, and
// every caller is answered that export, as a retrying SDK expects.
func TestExportClientTokenConcurrent(t *testing.T) {
	t.Parallel()
	e := newExportEnv(t)
	e.put("a", "1", "v")
	const n = 8
	arns := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			out, err := e.c.ExportTableToPointInTime(bg, &dynamodb.ExportTableToPointInTimeInput{TableArn: &e.arn,
				S3Bucket: aws.String("bkt"), ClientToken: aws.String("concurrent-token")})
			if err == nil {
				arns[i] = aws.ToString(out.ExportDescription.ExportArn)
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if arns[i] != arns[0] {
			t.Errorf("call %d answered %s, call 0 %s: one token, two exports", i, arns[i], arns[0])
		}
	}
	list, err := e.c.ListExports(bg, &dynamodb.ListExportsInput{TableArn: &e.arn})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.ExportSummaries) != 1 {
		t.Errorf("ListExports holds %d exports, want 1", len(list.ExportSummaries))
	}
	e.wait(arns[0])
}
