package stream

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/jsonl"
)

// FileSink is the local default Publisher: one JSON line per event in a
// file, each batch on disk (one write, one fsync) before Publish returns.
type FileSink struct{ f *jsonl.File }

// NewFileSink returns a sink appending to path.
func NewFileSink(path string) *FileSink { return &FileSink{f: jsonl.Open(path)} }

// Publish appends the events.
func (s *FileSink) Publish(ctx context.Context, events []Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	vs := make([]any, len(events))
	for i := range events {
		vs[i] = events[i]
	}
	if err := s.f.AppendAll(vs...); err != nil {
		return fmt.Errorf("event file: %w", err)
	}
	return nil
}

// Close closes the file.
func (s *FileSink) Close() error { return s.f.Close() }

// DeadRecord is a poison record as the dead letter keeps it: the whole
// record, its images in DynamoDB JSON, and why it was refused.
type DeadRecord struct {
	EventID  string         `json:"eventId"`
	Sequence string         `json:"sequence"`
	Name     string         `json:"name"`
	Keys     map[string]any `json:"keys,omitempty"`
	Old      map[string]any `json:"old,omitempty"`
	New      map[string]any `json:"new,omitempty"`
	Service  bool           `json:"service,omitempty"`
	At       time.Time      `json:"at"`
	Cause    string         `json:"cause"`
	DeadAt   time.Time      `json:"deadAt"`
}

// DeadLetterFile keeps poison records (those Translate cannot decode) in
// a JSON-lines file, on disk before Dead returns, so the consumer can move
// past them without losing one. It holds items as the table stores them:
// the file is created 0600, like the table's own data.
type DeadLetterFile struct {
	f   *jsonl.File
	now func() time.Time
}

// NewDeadLetterFile returns a dead letter appending to path.
func NewDeadLetterFile(path string) *DeadLetterFile {
	return &DeadLetterFile{f: jsonl.Open(path), now: time.Now}
}

// Dead appends the record with its cause. It only fails when the file
// cannot be written; the consumer then keeps the record unacknowledged.
func (d *DeadLetterFile) Dead(_ context.Context, r Record, cause error) error {
	msg := "unknown"
	if cause != nil {
		msg = cause.Error()
	}
	dr := DeadRecord{EventID: r.EventID, Sequence: r.Sequence, Name: r.Name, Keys: imageJSON(r.Keys), Old: imageJSON(r.Old),
		New: imageJSON(r.New), Service: r.Service, At: r.At.UTC(), Cause: msg, DeadAt: d.now().UTC()}
	if err := d.f.Append(dr); err != nil {
		return fmt.Errorf("dead letter: %w", err)
	}
	return nil
}

// Close closes the file.
func (d *DeadLetterFile) Close() error { return d.f.Close() }

// ReadDeadLetters reads a dead-letter file back: the records, as they
// arrived, for inspection or replay through Translate.
func ReadDeadLetters(path string) ([]Record, []DeadRecord, error) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("dead letter: %w", err)
	}
	defer fh.Close()
	var recs []Record
	var deads []DeadRecord
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20) // an item is at most 400 KB, a record two of them
	for n := 1; sc.Scan(); n++ {
		var dr DeadRecord
		if err := json.Unmarshal(sc.Bytes(), &dr); err != nil {
			return nil, nil, fmt.Errorf("dead letter line %d: %w", n, err)
		}
		r := Record{EventID: dr.EventID, Sequence: dr.Sequence, Name: dr.Name, Service: dr.Service, At: dr.At}
		for _, img := range []struct {
			from map[string]any
			to   *map[string]types.AttributeValue
		}{{dr.Keys, &r.Keys}, {dr.Old, &r.Old}, {dr.New, &r.New}} {
			if *img.to, err = imageFromJSON(img.from); err != nil {
				return nil, nil, fmt.Errorf("dead letter line %d: %w", n, err)
			}
		}
		recs, deads = append(recs, r), append(deads, dr)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("dead letter: %w", err)
	}
	return recs, deads, nil
}

// imageJSON writes an image in DynamoDB JSON ({"S": "..."}, {"N": "1"},
// ...), which keeps every attribute's type, so a record read back is the
// record written.
func imageJSON(img map[string]types.AttributeValue) map[string]any {
	if img == nil {
		return nil
	}
	out := make(map[string]any, len(img))
	for k, v := range img {
		out[k] = avJSON(v)
	}
	return out
}

func avJSON(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": bs}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = avJSON(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": imageJSON(v.Value)}
	}
	return map[string]any{"NULL": true}
}

func imageFromJSON(m map[string]any) (map[string]types.AttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := avFromJSON(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func avFromJSON(v any) (types.AttributeValue, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, errors.New("not a DynamoDB JSON value")
	}
	strs := func(x any) ([]string, error) {
		l, ok := x.([]any)
		if !ok {
			return nil, errors.New("not a set")
		}
		out := make([]string, len(l))
		for i, e := range l {
			if out[i], ok = e.(string); !ok {
				return nil, errors.New("not a string in a set")
			}
		}
		return out, nil
	}
	for tag, x := range m {
		switch tag {
		case "S", "N":
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s is not a string", tag)
			}
			if tag == "S" {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case "B":
			s, _ := x.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberB{Value: b}, nil
		case "BOOL":
			b, ok := x.(bool)
			if !ok {
				return nil, errors.New("BOOL is not a boolean")
			}
			return &types.AttributeValueMemberBOOL{Value: b}, nil
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS", "NS", "BS":
			l, err := strs(x)
			if err != nil {
				return nil, err
			}
			switch tag {
			case "SS":
				return &types.AttributeValueMemberSS{Value: l}, nil
			case "NS":
				return &types.AttributeValueMemberNS{Value: l}, nil
			}
			bs := make([][]byte, len(l))
			for i, s := range l {
				if bs[i], err = base64.StdEncoding.DecodeString(s); err != nil {
					return nil, err
				}
			}
			return &types.AttributeValueMemberBS{Value: bs}, nil
		case "L":
			l, ok := x.([]any)
			if !ok {
				return nil, errors.New("the value of an L is not a list")
			}
			out := make([]types.AttributeValue, len(l))
			for i, e := range l {
				av, err := avFromJSON(e)
				if err != nil {
					return nil, err
				}
				out[i] = av
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		case "M":
			mm, ok := x.(map[string]any)
			if !ok {
				return nil, errors.New("the value of an M is not a map")
			}
			img, err := imageFromJSON(mm)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberM{Value: img}, nil
		}
		return nil, fmt.Errorf("unknown type %q", tag)
	}
	return nil, errors.New("empty value")
}

// DeadEvent is an event a publisher gave up on, as the events dead
// letter keeps it: the event whole (events carry no personal data), its
// tenant and why.
type DeadEvent struct {
	Tenant string    `json:"tenant"`
	Cause  string    `json:"cause"`
	DeadAt time.Time `json:"deadAt"`
	Event  Event     `json:"event"`
}

// EventDeadLetterFile keeps the events of a tenant whose webhook gave up
// in a JSON-lines file (one DeadEvent a line), on disk before DeadEvents
// returns, so the stream moves past them without losing one.
type EventDeadLetterFile struct {
	f   *jsonl.File
	now func() time.Time
}

// NewEventDeadLetterFile returns an events dead letter appending to path.
func NewEventDeadLetterFile(path string) *EventDeadLetterFile {
	return &EventDeadLetterFile{f: jsonl.Open(path), now: time.Now}
}

// DeadEvents appends the tenant's events with the cause.
func (d *EventDeadLetterFile) DeadEvents(ctx context.Context, tenant string, events []Event, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg := "unknown"
	if cause != nil {
		msg = cause.Error()
	}
	at := d.now().UTC()
	vs := make([]any, len(events))
	for i, e := range events {
		vs[i] = DeadEvent{Tenant: tenant, Cause: msg, DeadAt: at, Event: e}
	}
	if err := d.f.AppendAll(vs...); err != nil {
		return fmt.Errorf("events dead letter: %w", err)
	}
	return nil
}

// Close closes the file.
func (d *EventDeadLetterFile) Close() error { return d.f.Close() }

// ReadDeadEvents reads an events dead letter back, in the order kept.
func ReadDeadEvents(path string) ([]DeadEvent, error) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("events dead letter: %w", err)
	}
	defer fh.Close()
	var out []DeadEvent
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var de DeadEvent
		if err := json.Unmarshal(sc.Bytes(), &de); err != nil {
			return nil, fmt.Errorf("events dead letter line %d: %w", n, err)
		}
		out = append(out, de)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("events dead letter: %w", err)
	}
	return out, nil
}
