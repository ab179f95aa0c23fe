// Command lastro-stream-lambda is the stream's AWS Lambda handler: a
// DynamoDB event source mapping on the table's stream (with
// ReportBatchItemFailures and a filter on the item types the translator
// reads) invokes it with batches of records; it translates them into
// domain events, publishes them to EventBridge and archives the TTL's
// deletions (ADR 0047).
//
// Configuration, from the environment:
//
//	LASTRO_EVENT_BUS      the EventBridge bus (required)
//	LASTRO_ARCHIVE_TABLE  the archive table; unset: nothing is archived
//
// Poison records are logged by sequence number and keys only (keys hold
// no personal data, images may): the record itself stays in the stream
// for 24 hours to be inspected.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/kit"
	"lastro/stream"
)

func main() {
	h, err := handler(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lastro-stream-lambda:", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// handler wires the handler from the environment.
func handler(ctx context.Context, env func(string) string) (*stream.Lambda, error) {
	bus := env("LASTRO_EVENT_BUS")
	if bus == "" {
		return nil, errors.New("LASTRO_EVENT_BUS is required")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	var archive *kit.Kit
	if name := env("LASTRO_ARCHIVE_TABLE"); name != "" {
		archive = kit.New(kit.NewClient(cfg, ""), name)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	return stream.NewLambda(stream.LambdaConfig{Translate: stream.Translate, Publisher: stream.NewEventBridge(cfg, bus),
		DeadLetter: logDeadLetter{log}, Archive: archive})
}

// logDeadLetter logs a poison record's position and keys.
type logDeadLetter struct{ log *slog.Logger }

func (d logDeadLetter) Dead(ctx context.Context, r stream.Record, cause error) error {
	keys := map[string]string{}
	for k, v := range r.Keys {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			keys[k] = s.Value
		}
	}
	k, _ := json.Marshal(keys)
	d.log.ErrorContext(ctx, "poison stream record", "sequence", r.Sequence, "eventId", r.EventID, "keys", string(k), "err", cause)
	return nil
}
