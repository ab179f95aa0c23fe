package engine

import (
	"fmt"
	"time"

	"lastro/ddblocal/internal/wire"
)

// ThroughputLog records provisioned-throughput changes of a table or GSI
// for DescribeTable and for the daily budget of decreases.
type ThroughputLog struct {
	LastIncrease time.Time `json:"lastIncrease"`
	LastDecrease time.Time `json:"lastDecrease"`
	// Decreases counts the decreases made on the UTC day of LastDecrease.
	Decreases int `json:"decreases,omitempty"`
}

// DecreasesToday is NumberOfDecreasesToday: the budget resets at 00:00 UTC.
func (l ThroughputLog) DecreasesToday(now time.Time) int {
	if l.Decreases == 0 || !sameUTCDay(l.LastDecrease, now) {
		return 0
	}
	return l.Decreases
}

func sameUTCDay(a, b time.Time) bool {
	ay, am, ad := a.UTC().Date()
	by, bm, bd := b.UTC().Date()
	return ay == by && am == bm && ad == bd
}

// WarmThroughput is the high-water mark DynamoDB reports as WarmThroughput:
// the highest provisioned capacity ever set, or the on-demand defaults once
// the table has been PAY_PER_REQUEST.
type WarmThroughput struct {
	Read  int64 `json:"read,omitempty"`
	Write int64 `json:"write,omitempty"`
}

const (
	OnDemandWarmRead  = 12000
	OnDemandWarmWrite = 4000
)

func (w *WarmThroughput) Raise(r, wr int64) {
	w.Read = max(w.Read, r)
	w.Write = max(w.Write, wr)
}

func (w WarmThroughput) describe() map[string]any {
	return map[string]any{"ReadUnitsPerSecond": w.Read, "WriteUnitsPerSecond": w.Write, "Status": "ACTIVE"}
}

// Epoch renders a timestamp as DynamoDB does: seconds with milliseconds.
func Epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// DescOpts selects the variant of a TableDescription: the members an
// operation's response carries differ from DescribeTable's.
type DescOpts struct {
	Status      string // TableStatus; ACTIVE when empty
	IndexStatus string // IndexStatus of every GSI; ACTIVE (or backfill state) when empty
	Created     bool   // CreateTable response: no WarmThroughput, no LastUpdateToPayPerRequestDateTime
	Deleted     bool   // DeleteTable response: no schema, indexes, creation time or WarmThroughput
	Switched    bool   // UpdateTable switched the billing mode: summary without its timestamp
}

func (s *Store) TableARN(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", s.Opts.Region, s.Opts.AccountID, name)
}

// ThroughputDesc is a ProvisionedThroughputDescription.
func ThroughputDesc(p *wire.ProvisionedThroughput, log ThroughputLog, now time.Time) map[string]any {
	var r, w int64
	if p != nil {
		r, w = Deref(p.ReadCapacityUnits), Deref(p.WriteCapacityUnits)
	}
	m := map[string]any{"NumberOfDecreasesToday": log.DecreasesToday(now), "ReadCapacityUnits": r, "WriteCapacityUnits": w}
	if !log.LastIncrease.IsZero() {
		m["LastIncreaseDateTime"] = Epoch(log.LastIncrease)
	}
	if !log.LastDecrease.IsZero() {
		m["LastDecreaseDateTime"] = Epoch(log.LastDecrease)
	}
	return m
}

// Describe builds a TableDescription of t's current definition.
func (s *Store) Describe(t *Table, o DescOpts) map[string]any {
	return s.DescribeDef(t, t.Def.Load(), o)
}

// DescribeDef builds the TableDescription of d, t's definition at one
// instant. It is long because a TableDescription has that many members,
// each a few lines: one literal per member in the model's order.
func (s *Store) DescribeDef(t *Table, d *TableDef, o DescOpts) map[string]any {
	now := s.Now()
	arn := s.TableARN(d.Name)
	status := o.Status
	if status == "" {
		status = "ACTIVE"
	}
	tp := &d.Throughput
	if d.BillingMode == "PAY_PER_REQUEST" {
		tp = nil
	}
	desc := map[string]any{
		"TableName":                 d.Name,
		"TableStatus":               status,
		"TableArn":                  arn,
		"TableId":                   d.TableID,
		"ItemCount":                 t.Items.Load(),
		"TableSizeBytes":            t.Bytes.Load(),
		"ProvisionedThroughput":     ThroughputDesc(tp, d.ThroughputLog, now),
		"DeletionProtectionEnabled": d.Protected,
	}
	if !o.Deleted {
		desc["AttributeDefinitions"] = d.AttrDefs
		desc["KeySchema"] = KeySchemaOf(d.Hash, d.Range)
		desc["CreationDateTime"] = Epoch(d.Created)
		if !o.Created {
			desc["WarmThroughput"] = d.Warm.describe()
		}
	}
	if !d.PayPerRequestAt.IsZero() {
		sum := map[string]any{"BillingMode": d.BillingMode}
		if !o.Created && !o.Switched {
			sum["LastUpdateToPayPerRequestDateTime"] = Epoch(d.PayPerRequestAt)
		}
		desc["BillingModeSummary"] = sum
	}
	if d.TableClass != "" {
		sum := map[string]any{"TableClass": d.TableClass}
		if !d.TableClassUpdated.IsZero() {
			sum["LastUpdateDateTime"] = Epoch(d.TableClassUpdated)
		}
		desc["TableClassSummary"] = sum
	}
	if d.OnDemand != nil && d.BillingMode == "PAY_PER_REQUEST" {
		desc["OnDemandThroughput"] = d.OnDemand
	}
	if d.SSE != nil && (d.SSE.Enabled == nil || *d.SSE.Enabled) {
		desc["SSEDescription"] = map[string]any{"Status": "ENABLED", "SSEType": "KMS",
			"KMSMasterKeyArn": s.KMSKeyARN(d.SSE.KMSMasterKeyId)}
	}
	if d.StreamLabel != "" {
		desc["LatestStreamLabel"] = d.StreamLabel
		desc["LatestStreamArn"] = arn + "/stream/" + d.StreamLabel
	}
	if d.StreamEnabled {
		desc["StreamSpecification"] = map[string]any{"StreamEnabled": true, "StreamViewType": d.StreamViewType}
	}
	if d.Restore != nil && !o.Deleted {
		desc["RestoreSummary"] = d.Restore.describe(status == "CREATING")
	}
	if o.Deleted {
		return desc
	}
	var gsis, lsis []map[string]any
	for _, ix := range d.Indexes {
		p := map[string]any{"ProjectionType": ix.ProjectionType}
		if len(ix.NonKey) > 0 {
			p["NonKeyAttributes"] = ix.NonKey
		}
		m := map[string]any{
			"IndexName":      ix.Name,
			"KeySchema":      KeySchemaOf(ix.Hash, ix.Range),
			"Projection":     p,
			"IndexSizeBytes": t.IdxBytes[ix.ID].Load(),
			"ItemCount":      t.IdxItems[ix.ID].Load(),
			"IndexArn":       arn + "/index/" + ix.Name,
		}
		if ix.Local {
			lsis = append(lsis, m)
			continue
		}
		switch {
		case o.IndexStatus != "":
			m["IndexStatus"] = o.IndexStatus
		case ix.Backfilling:
			m["IndexStatus"] = "CREATING"
			m["Backfilling"] = true
		default:
			m["IndexStatus"] = "ACTIVE"
		}
		ixTP := ix.Throughput
		if d.BillingMode == "PAY_PER_REQUEST" {
			ixTP = nil
		}
		m["ProvisionedThroughput"] = ThroughputDesc(ixTP, ix.ThroughputLog, now)
		if ix.OnDemand != nil && d.BillingMode == "PAY_PER_REQUEST" {
			m["OnDemandThroughput"] = ix.OnDemand
		}
		if !o.Created {
			m["WarmThroughput"] = ix.Warm.describe()
		}
		gsis = append(gsis, m)
	}
	if gsis != nil {
		desc["GlobalSecondaryIndexes"] = gsis
	}
	if lsis != nil {
		desc["LocalSecondaryIndexes"] = lsis
	}
	return desc
}

// KMSKeyARN is the ARN of the KMS key a table is encrypted with: the
// account's AWS managed key unless the request named one.
func (s *Store) KMSKeyARN(id string) string {
	if len(id) > 4 && id[:4] == "arn:" {
		return id
	}
	if id == "" {
		id = "7f3e5d1c-2b4a-4c8e-9f60-1a2b3c4d5e6f"
	}
	return fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", s.Opts.Region, s.Opts.AccountID, id)
}

// KeySchemaOf is the KeySchema of a table or index keyed by h and r.
func KeySchemaOf(h, r KeyDef) []wire.KeySchemaElement {
	ks := []wire.KeySchemaElement{{AttributeName: h.Name, KeyType: "HASH"}}
	if r.Name != "" {
		ks = append(ks, wire.KeySchemaElement{AttributeName: r.Name, KeyType: "RANGE"})
	}
	return ks
}

func Deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
