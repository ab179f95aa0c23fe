package stream

import (
	"context"
	"errors"
	"fmt"
)

// ReplayReport counts what a replay of a dead letter did.
type ReplayReport struct {
	Read     int `json:"read"`      // records or events read from the dead letter
	Replayed int `json:"replayed"`  // records published, or events delivered, this time
	Dead     int `json:"stillDead"` // kept in the survivors' dead letter
	Events   int `json:"events"`    // events published (the records' replay) or posted (the events')
}

// ErrNoWebhook is the cause kept with a dead event whose tenant takes no
// events webhook any more (or is gone): there is nowhere to post it, and
// dropping it silently would lose it.
var ErrNoWebhook = errors.New("stream: the tenant takes no events webhook")

// ReplayRecords sends dead records on once their cause is fixed: each is
// translated again with translate and its events published through pub,
// one record at a time, so one that still fails costs only itself. A
// record that still does not translate, or whose events pub does not
// accept, goes to dead with the new cause — never dropped. Event ids are
// deterministic (the record's sequence number and the event's position),
// so a record published before, or replayed twice, yields the same ids and
// consumers drop the duplicates.
//
// Archiving and the bucket counters are not replayed: the consumer did
// both for a poison record when it committed past it (ADR 0047).
//
// Only a dead letter that cannot be written or the context's end fail it;
// the records not yet handled are then still in the caller's input.
func ReplayRecords(ctx context.Context, recs []Record, translate Translator, pub Publisher, dead DeadLetter) (ReplayReport, error) {
	if translate == nil || pub == nil || dead == nil {
		return ReplayReport{}, errors.New("stream: a replay needs a translator, a publisher and a dead-letter sink")
	}
	rep := ReplayReport{Read: len(recs)}
	p := processor{translate: translate}
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		evs, cause := p.safeTranslate(r)
		if cause == nil && len(evs) > 0 {
			if err := pub.Publish(ctx, evs); err != nil {
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
				cause = fmt.Errorf("stream: publish: %w", err)
			}
		}
		if cause != nil {
			if err := dead.Dead(ctx, r, cause); err != nil {
				return rep, fmt.Errorf("stream: dead-letter record %s: %w", r.Sequence, err)
			}
			rep.Dead++
			continue
		}
		rep.Replayed++
		rep.Events += len(evs)
	}
	return rep, nil
}

// replayBatch bounds the events of one POST when a tenant's dead events
// are posted again: a long outage may have kept thousands.
const replayBatch = 100

// Replay posts dead events (ReadDeadEvents) again to their tenants'
// endpoints, resolved now by w.Targets and signed as Publish signs them;
// w.DeadLetter and w.Pause play no part. Tenants go in the order they
// first appear, each one's events in the order kept, in batches of at most
// 100. A batch that still fails is kept in keep with its new cause, and
// the tenant's later batches go straight there (ErrWebhookPaused) rather
// than spend a retry cycle each on an endpoint that just failed. Events
// of a tenant that takes no webhook now are kept too (ErrNoWebhook), and
// so are those whose target cannot be resolved: nothing is dropped.
// Event ids are those of the first delivery, so a receiver that got a
// batch before drops it as a duplicate.
//
// Only keep failing or the context's end fail it.
func (w *Webhook) Replay(ctx context.Context, deads []DeadEvent, keep EventDeadLetter) (ReplayReport, error) {
	if w.Targets == nil || keep == nil {
		return ReplayReport{}, errors.New("stream: an events replay needs the tenants' targets and a dead letter")
	}
	rep := ReplayReport{Read: len(deads)}
	var order []string
	by := map[string][]Event{}
	for _, d := range deads {
		tn := d.Tenant
		if tn == "" {
			tn = d.Event.Tenant
		}
		if _, ok := by[tn]; !ok {
			order = append(order, tn)
		}
		by[tn] = append(by[tn], d.Event)
	}
	kept := func(tn string, events []Event, cause error) error {
		if err := keep.DeadEvents(ctx, tn, events, cause); err != nil {
			return fmt.Errorf("event webhook: tenant %s: %w", tn, err)
		}
		rep.Dead += len(events)
		return nil
	}
	for _, tn := range order {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		events := by[tn]
		target, ok, err := w.Targets(ctx, tn)
		switch {
		case err != nil && ctx.Err() != nil:
			return rep, ctx.Err()
		case err != nil:
			err = kept(tn, events, fmt.Errorf("event webhook: tenant %s: %w", tn, err))
		case !ok:
			err = kept(tn, events, ErrNoWebhook)
		default:
			err = w.replayTenant(ctx, tn, target, events, kept, &rep)
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// replayTenant posts one tenant's dead events in batches; after a batch
// fails the rest are kept without a try.
func (w *Webhook) replayTenant(ctx context.Context, tn string, target WebhookTarget, events []Event,
	kept func(string, []Event, error) error, rep *ReplayReport) error {
	for start := 0; start < len(events); start += replayBatch {
		batch := events[start:min(start+replayBatch, len(events))]
		err := w.post(ctx, tn, target, batch)
		if err == nil {
			rep.Replayed += len(batch)
			rep.Events += len(batch)
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := kept(tn, batch, err); err != nil {
			return err
		}
		if rest := events[start+len(batch):]; len(rest) > 0 {
			return kept(tn, rest, fmt.Errorf("%w: %w", ErrWebhookPaused, err))
		}
		return nil
	}
	return nil
}
