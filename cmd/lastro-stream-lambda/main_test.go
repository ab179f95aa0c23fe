package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/stream"
)

func TestHandlerNeedsABus(t *testing.T) {
	t.Parallel()
	if _, err := handler(context.Background(), func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "LASTRO_EVENT_BUS") {
		t.Fatalf("handler without a bus: %v", err)
	}
}

func TestHandlerWiresFromTheEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	env := map[string]string{"LASTRO_EVENT_BUS": "lastro", "LASTRO_ARCHIVE_TABLE": "lastro-archive"}
	h, err := handler(context.Background(), func(k string) string { return env[k] })
	if err != nil || h == nil {
		t.Fatalf("handler: %v", err)
	}
}

// TestDeadLetterLogsKeysOnly: an image may hold personal data; the log
// line has the keys and the cause only.
func TestDeadLetterLogsKeysOnly(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := logDeadLetter{slog.New(slog.NewJSONHandler(&buf, nil))}
	r := stream.Record{Sequence: "42", Keys: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "T#t1#D#0123456789abcdef"}},
		New: map[string]types.AttributeValue{"name": &types.AttributeValueMemberS{Value: "Maria Silva"}}}
	if err := d.Dead(context.Background(), r, errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `"sequence":"42"`) || !strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "Maria") {
		t.Fatalf("log line %s", out)
	}
}
