package ddblocal

import (
	"fmt"
	"time"
)

// throughputLog records provisioned-throughput changes of a table or GSI
// for DescribeTable and for the daily budget of decreases.
type throughputLog struct {
	LastIncrease time.Time `json:"lastIncrease"`
	LastDecrease time.Time `json:"lastDecrease"`
	// Decreases counts the decreases made on the UTC day of LastDecrease.
	Decreases int `json:"decreases,omitempty"`
}

// decreasesToday is NumberOfDecreasesToday: the budget resets at 00:00 UTC.
func (l throughputLog) decreasesToday(now time.Time) int {
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

// warmThroughput is the high-water mark DynamoDB reports as WarmThroughput:
// the highest provisioned capacity ever set, or the on-demand defaults once
// the table has been PAY_PER_REQUEST.
type warmThroughput struct {
	Read  int64 `json:"read,omitempty"`
	Write int64 `json:"write,omitempty"`
}

const (
	onDemandWarmRead  = 12000
	onDemandWarmWrite = 4000
)

func (w *warmThroughput) raise(r, wr int64) {
	w.Read = max(w.Read, r)
	w.Write = max(w.Write, wr)
}

func (w warmThroughput) describe() map[string]any {
	return map[string]any{"ReadUnitsPerSecond": w.Read, "WriteUnitsPerSecond": w.Write, "Status": "ACTIVE"}
}

// epoch renders a timestamp as DynamoDB does: seconds with milliseconds.
func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// descOpts selects the variant of a TableDescription: the members an
// operation's response carries differ from DescribeTable's.
type descOpts struct {
	status      string // TableStatus; ACTIVE when empty
	indexStatus string // IndexStatus of every GSI; ACTIVE (or backfill state) when empty
	created     bool   // CreateTable response: no WarmThroughput, no LastUpdateToPayPerRequestDateTime
	deleted     bool   // DeleteTable response: no schema, indexes, creation time or WarmThroughput
	switched    bool   // UpdateTable switched the billing mode: summary without its timestamp
}

func (s *Store) tableARN(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", s.opts.Region, s.opts.AccountID, name)
}

// throughputDesc is a ProvisionedThroughputDescription.
func throughputDesc(p *provisionedThroughput, log throughputLog, now time.Time) map[string]any {
	var r, w int64
	if p != nil {
		r, w = deref(p.ReadCapacityUnits), deref(p.WriteCapacityUnits)
	}
	m := map[string]any{"NumberOfDecreasesToday": log.decreasesToday(now), "ReadCapacityUnits": r, "WriteCapacityUnits": w}
	if !log.LastIncrease.IsZero() {
		m["LastIncreaseDateTime"] = epoch(log.LastIncrease)
	}
	if !log.LastDecrease.IsZero() {
		m["LastDecreaseDateTime"] = epoch(log.LastDecrease)
	}
	return m
}

// describe builds a TableDescription of t's current definition.
func (s *Store) describe(t *table, o descOpts) map[string]any {
	return s.describeDef(t, t.def.Load(), o)
}

func (s *Store) describeDef(t *table, d *tableDef, o descOpts) map[string]any {
	now := s.now()
	arn := s.tableARN(d.Name)
	status := o.status
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
		"ItemCount":                 t.items.Load(),
		"TableSizeBytes":            t.bytes.Load(),
		"ProvisionedThroughput":     throughputDesc(tp, d.ThroughputLog, now),
		"DeletionProtectionEnabled": d.Protected,
	}
	if !o.deleted {
		desc["AttributeDefinitions"] = d.AttrDefs
		desc["KeySchema"] = keySchemaOf(d.Hash, d.Range)
		desc["CreationDateTime"] = epoch(d.Created)
		if !o.created {
			desc["WarmThroughput"] = d.Warm.describe()
		}
	}
	if !d.PayPerRequestAt.IsZero() {
		sum := map[string]any{"BillingMode": d.BillingMode}
		if !o.created && !o.switched {
			sum["LastUpdateToPayPerRequestDateTime"] = epoch(d.PayPerRequestAt)
		}
		desc["BillingModeSummary"] = sum
	}
	if d.TableClass != "" {
		sum := map[string]any{"TableClass": d.TableClass}
		if !d.TableClassUpdated.IsZero() {
			sum["LastUpdateDateTime"] = epoch(d.TableClassUpdated)
		}
		desc["TableClassSummary"] = sum
	}
	if d.OnDemand != nil && d.BillingMode == "PAY_PER_REQUEST" {
		desc["OnDemandThroughput"] = d.OnDemand
	}
	if d.SSE != nil && (d.SSE.Enabled == nil || *d.SSE.Enabled) {
		desc["SSEDescription"] = map[string]any{"Status": "ENABLED", "SSEType": "KMS",
			"KMSMasterKeyArn": s.kmsKeyARN(d.SSE.KMSMasterKeyId)}
	}
	if d.StreamLabel != "" {
		desc["LatestStreamLabel"] = d.StreamLabel
		desc["LatestStreamArn"] = arn + "/stream/" + d.StreamLabel
	}
	if d.StreamEnabled {
		desc["StreamSpecification"] = map[string]any{"StreamEnabled": true, "StreamViewType": d.StreamViewType}
	}
	if d.Restore != nil && !o.deleted {
		desc["RestoreSummary"] = d.Restore.describe(status == "CREATING")
	}
	if o.deleted {
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
			"KeySchema":      keySchemaOf(ix.Hash, ix.Range),
			"Projection":     p,
			"IndexSizeBytes": t.idxBytes[ix.ID].Load(),
			"ItemCount":      t.idxItems[ix.ID].Load(),
			"IndexArn":       arn + "/index/" + ix.Name,
		}
		if ix.Local {
			lsis = append(lsis, m)
			continue
		}
		switch {
		case o.indexStatus != "":
			m["IndexStatus"] = o.indexStatus
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
		m["ProvisionedThroughput"] = throughputDesc(ixTP, ix.ThroughputLog, now)
		if ix.OnDemand != nil && d.BillingMode == "PAY_PER_REQUEST" {
			m["OnDemandThroughput"] = ix.OnDemand
		}
		if !o.created {
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

// kmsKeyARN is the ARN of the KMS key a table is encrypted with: the
// account's AWS managed key unless the request named one.
func (s *Store) kmsKeyARN(id string) string {
	if len(id) > 4 && id[:4] == "arn:" {
		return id
	}
	if id == "" {
		id = "7f3e5d1c-2b4a-4c8e-9f60-1a2b3c4d5e6f"
	}
	return fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", s.opts.Region, s.opts.AccountID, id)
}

func keySchemaOf(h, r keyDef) []keySchemaElement {
	ks := []keySchemaElement{{h.Name, "HASH"}}
	if r.Name != "" {
		ks = append(ks, keySchemaElement{r.Name, "RANGE"})
	}
	return ks
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
