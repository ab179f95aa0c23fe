package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// processor is what the consumer and the Lambda handler share: translate
// records (poison ones to the dead-letter sink), publish their events,
// archive the TTL's deletions.
type processor struct {
	translate Translator
	pub       Publisher
	dead      DeadLetter
	archive   *kit.Kit
}

func (c *Consumer) processor() processor {
	return processor{translate: c.cfg.Translate, pub: c.cfg.Publisher, dead: c.cfg.DeadLetter, archive: c.cfg.Archive}
}

// process handles records in order. It returns only when every event was
// published and every archive write done, or an error: the caller then
// must not checkpoint, and the records come again.
func (p processor) process(ctx context.Context, recs []Record) (Report, error) {
	var rep Report
	var events []Event
	for _, r := range recs {
		evs, err := p.events(ctx, r)
		if errors.Is(err, errDead) {
			rep.Dead++
			continue
		}
		if err != nil {
			return rep, err
		}
		events = append(events, evs...)
	}
	if len(events) > 0 {
		if err := p.pub.Publish(ctx, events); err != nil {
			return rep, fmt.Errorf("stream: publish: %w", err)
		}
	}
	for _, r := range recs {
		ok, err := p.archiveTTL(ctx, r)
		if err != nil {
			return rep, err
		}
		if ok {
			rep.Archived++
		}
	}
	rep.Records, rep.Events = len(recs), len(events)
	return rep, nil
}

// errDead marks a record sent to the dead-letter sink.
var errDead = errors.New("stream: poison record")

// events translates one record; a translator error sends the record to
// the dead-letter sink (errDead), and only a failing sink is an error.
// A panic in the translator is a poison record too, never a crashed
// consumer.
func (p processor) events(ctx context.Context, r Record) (evs []Event, err error) {
	evs, terr := p.safeTranslate(r)
	if terr == nil {
		return evs, nil
	}
	if err := p.dead.Dead(ctx, r, terr); err != nil {
		return nil, fmt.Errorf("stream: dead-letter record %s: %w", r.Sequence, err)
	}
	return nil, errDead
}

func (p processor) safeTranslate(r Record) (evs []Event, err error) {
	defer func() {
		if v := recover(); v != nil {
			evs, err = nil, fmt.Errorf("stream: translator panicked: %v", v)
		}
	}()
	return p.translate(r)
}

// archiveTTL writes a TTL deletion's old image to the archive table: only
// deletions the service made (Record.Service), never a user's delete,
// which is a decision, not housekeeping. The archived item keeps its keys
// and gains archivedAt and archivedSequence; the put is conditioned on no
// newer archive of the same key, so a redelivered record and a second
// consumer write it once.
func (p processor) archiveTTL(ctx context.Context, r Record) (bool, error) {
	if p.archive == nil || r.Name != Remove || !r.Service || r.Old == nil {
		return false, nil
	}
	pk, _ := r.Old["PK"].(*types.AttributeValueMemberS)
	if pk == nil {
		return false, nil
	}
	tenantID := tenantOf(pk.Value)
	if tenantID == "" {
		return false, nil // outside every tenant (the system partition): nothing to keep
	}
	item := make(kit.Item, len(r.Old)+2)
	for k, v := range r.Old {
		item[k] = v
	}
	item["archivedAt"] = &types.AttributeValueMemberS{Value: keys.Timestamp(r.At)}
	item["archivedSequence"] = &types.AttributeValueMemberS{Value: padSeq(r.Sequence)}
	name, val := expression.Name, expression.Value
	cond := name("PK").AttributeNotExists().Or(name("archivedSequence").LessThan(val(padSeq(r.Sequence))))
	err := p.archive.Tenant(tenantID, nil).Put(kit.Within(ctx, "stream.archive"), item, &cond)
	if errors.Is(err, kit.ErrConditionFailed) {
		return false, nil // archived already
	}
	if err != nil {
		return false, fmt.Errorf("stream: archive record %s: %w", r.Sequence, err)
	}
	return true, nil
}

// tenantOf is the tenant of a partition key T#<t>[#...], "" for any
// other.
func tenantOf(pk string) string {
	p, err := keys.Parse(keys.PK, pk)
	if err != nil || len(p.Parts) == 0 || p.Parts[0].Prefix != "T" {
		return ""
	}
	return p.Parts[0].Fields["tenantId"]
}

// padSeq left-pads a sequence number to 40 digits (DynamoDB's longest),
// so sequence numbers compare as strings inside a condition.
func padSeq(s string) string {
	if len(s) >= 40 {
		return s
	}
	return strings.Repeat("0", 40-len(s)) + s
}
