package ddblocal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// fullDef is a definition with every persisted field set.
func fullDef() *engine.TableDef {
	at := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	n := func(v int64) *int64 { return &v }
	yes := true
	return &engine.TableDef{
		Name: "t", ID: 7, Hash: engine.KeyDef{Name: "pk", Type: av.S}, Range: engine.KeyDef{Name: "sk", Type: av.N},
		AttrDefs: []wire.AttributeDefinition{{AttributeName: "pk", AttributeType: "S"}, {AttributeName: "sk", AttributeType: "N"}},
		Indexes: []*engine.IndexDef{{
			Name: "g", ID: 1, Hash: engine.KeyDef{Name: "gk", Type: av.B}, ProjectionType: "INCLUDE", NonKey: []string{"a"},
			Throughput: &wire.ProvisionedThroughput{ReadCapacityUnits: n(3), WriteCapacityUnits: n(4)},
			OnDemand:   &wire.OnDemandThroughput{MaxReadRequestUnits: n(5)}, Backfilling: true,
			ThroughputLog: engine.ThroughputLog{LastIncrease: at, Decreases: 2}, Warm: engine.WarmThroughput{Read: 9, Write: 10},
		}, {Name: "l", ID: 2, Local: true, Hash: engine.KeyDef{Name: "pk", Type: av.S}, Range: engine.KeyDef{Name: "x", Type: av.S}, ProjectionType: "ALL"}},
		NextIndexID: 3, Created: at, BillingMode: "PROVISIONED",
		Throughput: wire.ProvisionedThroughput{ReadCapacityUnits: n(1), WriteCapacityUnits: n(2)},
		OnDemand:   &wire.OnDemandThroughput{MaxWriteRequestUnits: n(6)}, TableClass: "STANDARD_INFREQUENT_ACCESS",
		Protected: true, SSE: &wire.SSESpecification{Enabled: &yes, SSEType: "KMS", KMSMasterKeyId: "k"},
		Tags: []wire.Tag{{Key: "a", Value: "b"}}, TableID: "id-1",
		StreamEnabled: true, StreamViewType: "NEW_IMAGE", StreamLabel: "2025-03-04T05:06:07.000",
		TTLAttribute: "exp", TTLEnabled: true,
		ThroughputLog: engine.ThroughputLog{LastDecrease: at, Decreases: 1}, Warm: engine.WarmThroughput{Read: 11, Write: 12},
		PayPerRequestAt: at, TableClassUpdated: at,
		PITR:    &engine.PITRState{Enabled: true, Since: at, Days: 35},
		Restore: &engine.RestoreSummary{SourceBackupArn: "arn:b", SourceTableArn: "arn:t", RestoredAt: at},
	}
}

// format0 is fullDef as the store wrote it before the catalog had its own
// types and a version (the JSON of the definition's fields as they were).
const format0 = `{"name":"t","id":7,"hash":{"name":"pk","type":1},"range":{"name":"sk","type":2},"attrDefs":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"indexes":[{"name":"g","id":1,"hash":{"name":"gk","type":3},"range":{},"projectionType":"INCLUDE","nonKey":["a"],"throughput":{"ReadCapacityUnits":3,"WriteCapacityUnits":4},"onDemand":{"MaxReadRequestUnits":5},"backfilling":true,"throughputLog":{"lastIncrease":"2025-03-04T05:06:07.000000008Z","lastDecrease":"0001-01-01T00:00:00Z","decreases":2},"warm":{"read":9,"write":10}},{"name":"l","id":2,"local":true,"hash":{"name":"pk","type":1},"range":{"name":"x","type":1},"projectionType":"ALL","throughputLog":{"lastIncrease":"0001-01-01T00:00:00Z","lastDecrease":"0001-01-01T00:00:00Z"},"warm":{}}],"nextIndexId":3,"created":"2025-03-04T05:06:07.000000008Z","billingMode":"PROVISIONED","throughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":2},"onDemand":{"MaxWriteRequestUnits":6},"tableClass":"STANDARD_INFREQUENT_ACCESS","protected":true,"sse":{"Enabled":true,"SSEType":"KMS","KMSMasterKeyId":"k"},"tags":[{"Key":"a","Value":"b"}],"tableId":"id-1","streamEnabled":true,"streamViewType":"NEW_IMAGE","streamLabel":"2025-03-04T05:06:07.000","ttlAttribute":"exp","ttlEnabled":true,"throughputLog":{"lastIncrease":"0001-01-01T00:00:00Z","lastDecrease":"2025-03-04T05:06:07.000000008Z","decreases":1},"warm":{"read":11,"write":12},"payPerRequestAt":"2025-03-04T05:06:07.000000008Z","tableClassUpdated":"2025-03-04T05:06:07.000000008Z","pitr":{"enabled":true,"since":"2025-03-04T05:06:07.000000008Z","days":35},"restore":{"sourceBackupArn":"arn:b","sourceTableArn":"arn:t","restoredAt":"2025-03-04T05:06:07.000000008Z"}}`

func TestCatalogFormatReadsAndWritesFormat0(t *testing.T) {
	t.Parallel()
	var got engine.TableDef
	if err := json.Unmarshal([]byte(format0), &got); err != nil {
		t.Fatal(err)
	}
	if want := fullDef(); !reflect.DeepEqual(&got, want) {
		t.Errorf("decoded format 0:\n got %+v\nwant %+v", got, *want)
	}
	out, err := json.Marshal(fullDef())
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != format0 {
		t.Errorf("format 1 differs from format 0:\n got %s\nwant %s", out, format0)
	}
}

func TestCatalogFormatAtOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version []byte // nil: no version key (a format-0 directory)
		wantErr bool
	}{
		{"format 0 is migrated", nil, false},
		{"format 1", binary.BigEndian.AppendUint32(nil, 1), false},
		{"a newer format is refused", binary.BigEndian.AppendUint32(nil, engine.CatalogFormat+1), true},
		{"a malformed version is refused", []byte{1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := Open(engine.Options{Dir: dir, TTLSweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.ctl.CreateTable(context.Background(), []byte(`{"TableName":"tbl","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := storage.Open(storage.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if tt.version == nil {
				b := db.NewBatch()
				b.Delete(storage.FormatVersionKey)
				err = b.Commit()
			} else {
				err = db.Set(storage.FormatVersionKey, tt.version)
			}
			if err := errors.Join(err, db.Close()); err != nil {
				t.Fatal(err)
			}
			s, err = Open(engine.Options{Dir: dir, TTLSweepInterval: -1})
			if tt.wantErr {
				if !errors.Is(err, engine.ErrFormat) {
					t.Fatalf("Open = %v, want %v", err, engine.ErrFormat)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.eng.Table("tbl") == nil {
				t.Error("table tbl lost")
			}
			v, err := s.eng.DB.Get(storage.FormatVersionKey)
			if err != nil || binary.BigEndian.Uint32(v) != engine.CatalogFormat {
				t.Errorf("format version = %x, %v; want %d", v, err, engine.CatalogFormat)
			}
		})
	}
}
