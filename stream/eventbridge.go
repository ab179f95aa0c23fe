package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"lastro/collections/kit"
)

// PutEvents' limits: entries per call, and bytes per call as EventBridge
// counts them (docs: "Calculating PutEvents event entry size").
const (
	MaxEventBridgeEntries = 10
	MaxEventBridgeBytes   = 256 * 1024
)

// ErrEventTooLarge is returned for an event whose entry alone exceeds
// PutEvents' size limit: no retry can deliver it.
var ErrEventTooLarge = errors.New("stream: event exceeds the EventBridge entry size limit")

// EventBridgeAPI is the part of the EventBridge client the publisher uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridge publishes events to an event bus with batched PutEvents:
// each entry's source is Source, its detail-type the event type and its
// detail the event's JSON. PutEvents accepts a batch partially; only the
// entries it failed are sent again, with Backoff between attempts.
type EventBridge struct {
	API     EventBridgeAPI
	Bus     string // event bus name or ARN; "" is the account's default bus
	Source  string // "lastro" unless set
	Backoff kit.Backoff
}

// NewEventBridge returns a publisher to bus through the SDK client built
// from cfg, retrying failed entries up to 6 times over a few seconds. The
// engine's only EventBridge client is built here.
func NewEventBridge(cfg aws.Config, bus string, opts ...func(*eventbridge.Options)) *EventBridge {
	return &EventBridge{API: eventbridge.NewFromConfig(cfg, opts...), Bus: bus,
		Backoff: kit.Backoff{Attempts: 6, Base: 100 * time.Millisecond, Max: 2 * time.Second}}
}

func (p *EventBridge) source() string {
	if p.Source == "" {
		return "lastro"
	}
	return p.Source
}

// entrySize is an entry's size as EventBridge counts it.
func entrySize(e ebtypes.PutEventsRequestEntry) int {
	n := 14 // a Time
	for _, s := range []*string{e.Source, e.DetailType, e.Detail} {
		if s != nil {
			n += len(*s)
		}
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// Publish sends the events in batches within PutEvents' limits and
// returns once every entry was accepted, or the error of the first batch
// that could not be.
func (p *EventBridge) Publish(ctx context.Context, events []Event) error {
	var batch []ebtypes.PutEventsRequestEntry
	size := 0
	for i := range events {
		e := &events[i]
		detail, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("eventbridge: encode %s: %w", e.ID, err)
		}
		entry := ebtypes.PutEventsRequestEntry{Source: aws.String(p.source()), DetailType: aws.String(e.Type),
			Detail: aws.String(string(detail)), Time: aws.Time(e.At)}
		if p.Bus != "" {
			entry.EventBusName = aws.String(p.Bus)
		}
		n := entrySize(entry)
		if n > MaxEventBridgeBytes {
			return fmt.Errorf("%w: %s is %d bytes", ErrEventTooLarge, e.ID, n)
		}
		if len(batch) == MaxEventBridgeEntries || size+n > MaxEventBridgeBytes {
			if err := p.put(ctx, batch); err != nil {
				return err
			}
			batch, size = nil, 0
		}
		batch, size = append(batch, entry), size+n
	}
	if len(batch) == 0 {
		return nil
	}
	return p.put(ctx, batch)
}

// put sends one batch until every entry is accepted: a failed call is
// repeated whole, a partial failure repeats only its failed entries.
func (p *EventBridge) put(ctx context.Context, entries []ebtypes.PutEventsRequestEntry) error {
	pending := entries
	err := p.Backoff.Retry(ctx, func(int) (bool, error) {
		out, err := p.API.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: pending})
		if err != nil {
			if ctx.Err() != nil {
				return false, err
			}
			return true, err
		}
		if out.FailedEntryCount == 0 {
			return false, nil
		}
		if len(out.Entries) != len(pending) {
			return true, fmt.Errorf("%d results for %d entries", len(out.Entries), len(pending))
		}
		var failed []ebtypes.PutEventsRequestEntry
		code := ""
		for i, r := range out.Entries {
			if r.ErrorCode != nil && *r.ErrorCode != "" {
				failed, code = append(failed, pending[i]), *r.ErrorCode
			}
		}
		if len(failed) == 0 { // a count without the entries: resend them all
			return true, fmt.Errorf("%d entries failed without an error code", out.FailedEntryCount)
		}
		pending = failed
		return true, fmt.Errorf("%d entries failed (%s)", len(pending), code)
	})
	if err != nil {
		return fmt.Errorf("eventbridge: put events: %w", err)
	}
	return nil
}
