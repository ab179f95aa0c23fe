package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lastro/report"
)

// TestReadExportStaysInsideTheExport: a manifest naming a data file
// outside the export's own folder is refused, not read.
func TestReadExportStaysInsideTheExport(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "bucket", "p", "AWSDynamoDB", "01700000000000-abcd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("manifest-summary.json", `{"exportArn":"arn:aws:dynamodb:us-east-1:000000000000:table/lastro/export/01700000000000-abcd",`+
		`"exportTime":"2026-10-01T11:00:00Z","exportType":"FULL_EXPORT","outputFormat":"DYNAMODB_JSON",`+
		`"manifestFilesS3Key":"p/AWSDynamoDB/01700000000000-abcd/manifest-files.json"}`)
	for _, key := range []string{"p/AWSDynamoDB/01700000000000-abcd/../../../../secret.json.gz", "../outside.json.gz"} {
		write("manifest-files.json", `{"dataFileS3Key":"`+key+`"}`+"\n")
		if _, err := report.ReadExport(dir); err == nil || !strings.Contains(err.Error(), "outside the export") {
			t.Errorf("%s: %v", key, err)
		}
	}
}
