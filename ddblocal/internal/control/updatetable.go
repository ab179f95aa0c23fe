package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/engine"
	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// UpdateTable validates in DynamoDB's order: member constraints, "at least
// one change", the one-concern-per-call rules and the shape of the index
// actions, then (once the table is found) each change against the table's
// state. Nothing is applied unless every check passes.

func limitExceeded(msg string) *wire.APIError {
	return &wire.APIError{Type: "LimitExceededException", Status: 400, Message: msg}
}

func errOneOnlineIndex() *wire.APIError {
	return limitExceeded("Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table")
}

func indexNotFound(index, table string) *wire.APIError {
	return wire.NotFound(fmt.Sprintf("Requested resource not found: Index %s for table %s", index, table))
}

// updateTableConstraints is the first validation pass of UpdateTable.
func updateTableConstraints(in *wire.UpdateTableInput) error {
	var c wire.Constraints
	for i, a := range in.AttributeDefinitions {
		m := fmt.Sprintf("attributeDefinitions.%d.member", i+1)
		c.NotNull(m+".attributeName", a.AttributeName == "")
		c.NotNull(m+".attributeType", a.AttributeType == "")
		c.Enum(m+".attributeType", a.AttributeType, wire.AttributeTypes...)
	}
	c.TableName("tableName", in.TableName)
	c.Enum("billingMode", in.BillingMode, wire.BillingModes...)
	c.Throughput("provisionedThroughput", in.ProvisionedThroughput)
	for i, u := range in.GlobalSecondaryIndexUpdates {
		m := fmt.Sprintf("globalSecondaryIndexUpdates.%d.member", i+1)
		if u.Update != nil {
			indexNameConstraint(&c, m+".update.indexName", u.Update.IndexName)
			c.Throughput(m+".update.provisionedThroughput", u.Update.ProvisionedThroughput)
		}
		if u.Create != nil {
			c.Index(m+".create", *u.Create, true)
		}
		if u.Delete != nil {
			indexNameConstraint(&c, m+".delete.indexName", u.Delete.IndexName)
		}
	}
	c.StreamSpec("streamSpecification", in.StreamSpecification)
	if in.SSESpecification != nil {
		c.Enum("sSESpecification.sSEType", in.SSESpecification.SSEType, wire.SSETypes...)
	}
	c.Enum("tableClass", in.TableClass, wire.TableClasses...)
	return c.Err()
}

func indexNameConstraint(c *wire.Constraints, member string, name *string) {
	if name == nil {
		c.NotNull(member, true)
		return
	}
	c.Name(member, *name, 3)
}

// updateShape holds what an UpdateTable request asks for.
type updateShape struct {
	billing, pt, stream, gsi, sse, dp, odt, warm, class bool
	creates, deletes                                    int
}

func (u updateShape) count() int {
	n := 0
	for _, b := range []bool{u.billing, u.pt, u.stream, u.gsi, u.sse, u.dp, u.odt, u.warm, u.class} {
		if b {
			n++
		}
	}
	return n
}

// checkUpdateShape runs the request-level checks that need no table.
//
// It is one long function on purpose: its checks run in the order DynamoDB
// reports violations, the first refusal is the wire contract, and the
// sequence reads top to bottom in one place.
func checkUpdateShape(in *wire.UpdateTableInput) (updateShape, error) {
	u := updateShape{
		billing: in.BillingMode != "", pt: in.ProvisionedThroughput != nil, stream: in.StreamSpecification != nil,
		gsi: len(in.GlobalSecondaryIndexUpdates) > 0, sse: in.SSESpecification != nil, dp: in.DeletionProtectionEnabled != nil,
		odt: in.OnDemandThroughput != nil, warm: in.WarmThroughput != nil, class: in.TableClass != "",
	}
	if u.count() == 0 && len(in.ReplicaUpdates) == 0 {
		mrc := "MultiRegionConsistency, "
		if in.MultiRegionConsistency != nil {
			mrc = ""
		}
		return u, wire.Validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, %sDeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required", mrc)
	}
	if in.GlobalSecondaryIndexUpdates != nil && len(in.GlobalSecondaryIndexUpdates) == 0 {
		return u, InvalidParam("List of GlobalSecondaryIndexUpdates is empty")
	}
	if len(in.ReplicaUpdates) > 0 {
		return u, InvalidParam("Replica updates are not supported by this endpoint")
	}
	for _, g := range in.GlobalSecondaryIndexUpdates {
		if g.Create != nil {
			u.creates++
		}
		if g.Delete != nil {
			u.deletes++
		}
	}
	n := u.count()
	switch {
	case u.sse && n > 1:
		return u, InvalidParam("Server-Side Encryption modification must be the only operation in the request")
	case u.class && n > 1:
		return u, InvalidParam("TableClass modification must be the only operation in the request")
	case u.dp && n > 1:
		return u, InvalidParam("DeletionProtection modification must be the only operation in the request")
	case u.warm && u.creates > 0:
		return u, InvalidParam("Create global secondary index cannot be specified when updating WarmThroughput")
	case u.warm && n > 1:
		return u, InvalidParam("WarmThroughput must be the only operation in the request")
	case u.odt && n > 1 && !(n == 2 && u.billing):
		return u, InvalidParam("OnDemandThroughput can only be combined with BillingMode in an UpdateTable request")
	case u.stream && (u.pt || in.BillingMode == "PROVISIONED"):
		return u, InvalidParam("You cannot modify stream status while updating table IOPS")
	case u.creates+u.deletes > 0 && u.pt:
		return u, InvalidParam("You cannot create or delete index while updating table IOPS")
	case u.creates+u.deletes > 0 && u.stream:
		return u, InvalidParam("You cannot create or delete index while changing stream status")
	}
	seen := map[string]bool{}
	for _, g := range in.GlobalSecondaryIndexUpdates {
		actions := 0
		var name string
		if g.Create != nil {
			actions++
			name = *g.Create.IndexName
		}
		if g.Delete != nil {
			actions++
			name = *g.Delete.IndexName
		}
		if g.Update != nil {
			actions++
			name = *g.Update.IndexName
		}
		switch {
		case actions == 0:
			return u, InvalidParam("One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null")
		case actions > 1:
			return u, InvalidParam("Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object")
		case seen[name]:
			return u, InvalidParam("Only one global secondary index update per index is allowed simultaneously. Index: %s", name)
		}
		seen[name] = true
	}
	if u.creates+u.deletes > 1 {
		return u, errOneOnlineIndex()
	}
	if sp := in.StreamSpecification; sp != nil {
		if *sp.StreamEnabled && sp.StreamViewType == "" {
			return u, InvalidParam("If stream is being enabled then UpdateViewType is required")
		}
		if !*sp.StreamEnabled && sp.StreamViewType != "" {
			return u, InvalidParam("If stream is being disabled, then UpdateViewType must not be specified")
		}
	}
	return u, checkSSE(in.SSESpecification)
}

// tableUpdate is an UpdateTable being applied to a copy of the definition.
type tableUpdate struct {
	s   *Store
	in  *wire.UpdateTableInput
	old *engine.TableDef
	d   *engine.TableDef
	now time.Time

	status      string
	switched    bool
	oldTP       bool              // echo the table's previous throughput
	indexStatus map[string]string // IndexStatus overrides in the response
	indexOldTP  map[string]*engine.IndexDef
	created     *engine.IndexDef
	dropped     *engine.IndexDef
}

// UpdateTable answers the UpdateTable operation.
func (s *Store) UpdateTable(ctx context.Context, body []byte) (any, error) {
	var in wire.UpdateTableInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	if err := updateTableConstraints(&in); err != nil {
		return nil, err
	}
	if _, err := checkUpdateShape(&in); err != nil {
		return nil, err
	}
	t := s.Table(*in.TableName)
	if t == nil {
		return nil, engine.TableNotFound(*in.TableName)
	}

	u, err := s.publishUpdate(t, &in)
	if err != nil {
		return nil, err
	}
	if u.dropped != nil {
		lo, hi := storage.SpaceKey(u.d.ID, u.dropped.ID), storage.SpaceKey(u.d.ID, u.dropped.ID+1)
		if err := s.DB.DeleteRange(lo, hi); err != nil {
			return nil, err
		}
		t.IdxItems[u.dropped.ID].Store(0)
		t.IdxBytes[u.dropped.ID].Store(0)
	}
	desc := u.response(t)
	if u.created != nil {
		if err := s.Backfill(ctx, t, u.created.ID); err != nil {
			if ctx.Err() != nil {
				// The caller gave up: the index stays backfilling and
				// writers maintain it; finish it in the background
				// rather than leave it incomplete until the next Open.
				s.finishBackfill(t, u.created.ID)
			}
			return nil, err
		}
	}
	return map[string]any{"TableDescription": desc}, nil
}

// publishUpdate applies an UpdateTable request to the table's definition
// under the catalog lock, which a deferred unlock releases even if
// validation panics (the HTTP handler recovers and keeps serving).
func (s *Store) publishUpdate(t *engine.Table, in *wire.UpdateTableInput) (*tableUpdate, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	old := t.Def.Load()
	if s.Tables[old.Name] != t {
		return nil, engine.TableNotFound(old.Name)
	}
	u := &tableUpdate{s: s, in: in, old: old, d: CloneDef(old), now: s.Now(), status: "ACTIVE",
		indexStatus: map[string]string{}, indexOldTP: map[string]*engine.IndexDef{}}
	if err := u.apply(); err != nil {
		return nil, err
	}
	// Open or close the stream descriptor (streams.go) before writers see
	// the new definition.
	if err := s.StreamTransition(old, u.d); err != nil {
		return nil, err
	}
	if err := s.PersistDef(u.d); err != nil {
		return nil, err
	}
	s.SetDef(t, u.d)
	return u, nil
}

// CloneDef copies a definition deeply enough to modify its indexes.
func CloneDef(old *engine.TableDef) *engine.TableDef {
	d := *old
	d.AttrDefs = slices.Clone(old.AttrDefs)
	d.Indexes = make([]*engine.IndexDef, len(old.Indexes))
	for i, ix := range old.Indexes {
		cp := *ix
		d.Indexes[i] = &cp
	}
	return &d
}

func (u *tableUpdate) apply() error {
	in, d := u.in, u.d
	if err := u.applyBilling(); err != nil {
		return err
	}
	if err := u.applyIndexes(); err != nil {
		return err
	}
	if d.BillingMode == "PROVISIONED" && u.old.BillingMode == "PAY_PER_REQUEST" {
		for _, ix := range d.Indexes {
			if !ix.Local && ix.Throughput == nil {
				return InvalidParam("ProvisionedThroughput must be specified for index: %s", ix.Name)
			}
		}
	}
	if err := u.applyStream(); err != nil {
		return err
	}
	if sse := in.SSESpecification; sse != nil {
		if sse.Enabled != nil && !*sse.Enabled && (d.SSE == nil || (d.SSE.Enabled != nil && !*d.SSE.Enabled)) {
			return InvalidParam("Table is already encrypted by default")
		}
		d.SSE = sse
	}
	if in.TableClass != "" {
		cur := d.TableClass
		if cur == "" {
			cur = "STANDARD"
		}
		u.status = "UPDATING"
		if in.TableClass != cur {
			d.TableClass = in.TableClass
			d.TableClassUpdated = u.now
		}
	}
	if in.DeletionProtectionEnabled != nil {
		d.Protected = *in.DeletionProtectionEnabled
	}
	if w := in.WarmThroughput; w != nil {
		if r := w.ReadUnitsPerSecond; r != nil && *r < d.Warm.Read {
			return InvalidParam("Requested ReadUnitsPerSecond for WarmThroughput for table is lower than current WarmThroughput, decreasing WarmThroughput is not supported")
		}
		if wr := w.WriteUnitsPerSecond; wr != nil && *wr < d.Warm.Write {
			return InvalidParam("Requested WriteUnitsPerSecond for WarmThroughput for table is lower than current WarmThroughput, decreasing WarmThroughput is not supported")
		}
		d.Warm.Raise(engine.Deref(w.ReadUnitsPerSecond), engine.Deref(w.WriteUnitsPerSecond))
	}
	return nil
}

// applyBilling applies BillingMode, ProvisionedThroughput and
// OnDemandThroughput.
func (u *tableUpdate) applyBilling() error {
	in, d := u.in, u.d
	mode := d.BillingMode
	if in.BillingMode != "" {
		mode = in.BillingMode
		u.status = "UPDATING"
	}
	pt := in.ProvisionedThroughput
	switch {
	case mode == "PROVISIONED" && pt == nil && in.BillingMode == "PROVISIONED":
		return InvalidParam("ProvisionedThroughput must be specified when BillingMode is PROVISIONED")
	case mode == "PAY_PER_REQUEST" && pt != nil && in.BillingMode == "PAY_PER_REQUEST":
		return InvalidParam("ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST")
	case mode == "PAY_PER_REQUEST" && pt != nil:
		return InvalidParam("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
	}
	if o := in.OnDemandThroughput; o != nil && mode == "PROVISIONED" {
		member := "MaxReadRequestUnits"
		if o.MaxReadRequestUnits == nil {
			member = "MaxWriteRequestUnits"
		}
		return InvalidParam("%s for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED", member)
	}
	if mode != d.BillingMode {
		u.switched = true
		d.BillingMode = mode
		if mode == "PAY_PER_REQUEST" {
			d.PayPerRequestAt = u.now
			d.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
			for _, ix := range d.Indexes {
				if !ix.Local {
					ix.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
				}
			}
		} else {
			d.OnDemand = nil
			for _, ix := range d.Indexes {
				ix.OnDemand = nil
				ix.Throughput = nil
			}
		}
	}
	if pt != nil {
		u.status = "UPDATING"
		cur := d.Throughput
		if u.old.BillingMode == "PAY_PER_REQUEST" {
			cur = wire.ProvisionedThroughput{}
		}
		if err := u.s.capacityLimit(pt, ""); err != nil {
			return err
		}
		if err := changeThroughput(&d.ThroughputLog, cur, *pt, u.now, "the table", ""); err != nil {
			return err
		}
		u.oldTP = u.old.BillingMode == "PROVISIONED"
		d.Throughput = *pt
		d.Warm.Raise(*pt.ReadCapacityUnits, *pt.WriteCapacityUnits)
	}
	if o := in.OnDemandThroughput; o != nil {
		merged, err := mergeOnDemand(d.OnDemand, o, "table")
		if err != nil {
			return err
		}
		d.OnDemand = merged
	}
	return nil
}

// mergeOnDemand applies an OnDemandThroughput update member by member; -1
// removes a maximum.
func mergeOnDemand(cur, upd *wire.OnDemandThroughput, what string) (*wire.OnDemandThroughput, error) {
	out := wire.OnDemandThroughput{}
	if cur != nil {
		out = *cur
	}
	for _, f := range []struct {
		name string
		v    *int64
		dst  **int64
	}{{"MaxReadRequestUnits", upd.MaxReadRequestUnits, &out.MaxReadRequestUnits}, {"MaxWriteRequestUnits", upd.MaxWriteRequestUnits, &out.MaxWriteRequestUnits}} {
		switch {
		case f.v == nil:
		case *f.v == -1:
			*f.dst = nil
		case *f.v < 1:
			return nil, InvalidParam("Requested %s for OnDemandThroughput for %s is outside of valid range", f.name, what)
		default:
			v := *f.v
			*f.dst = &v
		}
	}
	if out.MaxReadRequestUnits == nil && out.MaxWriteRequestUnits == nil {
		return nil, nil
	}
	return &out, nil
}

// changeThroughput validates a provisioned-throughput change of the table
// or an index (named by what and index) and records it.
func changeThroughput(log *engine.ThroughputLog, cur, next wire.ProvisionedThroughput, now time.Time, what, index string) error {
	cr, cw := engine.Deref(cur.ReadCapacityUnits), engine.Deref(cur.WriteCapacityUnits)
	nr, nw := *next.ReadCapacityUnits, *next.WriteCapacityUnits
	if cr == nr && cw == nw {
		subject := "for the table"
		if index != "" {
			subject = "for index " + index
		}
		return wire.Validation("The provisioned throughput for %s will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned %s: %d. Requested ReadCapacityUnits: %d. Current WriteCapacityUnits provisioned %s: %d. Requested WriteCapacityUnits: %d. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
			what, subject, cr, nr, subject, cw, nw)
	}
	decrease := nr < cr || nw < cw
	if decrease {
		n := log.DecreasesToday(now)
		if n >= 4 && now.Before(log.LastDecrease.Add(time.Hour)) {
			next := log.LastDecrease.Add(time.Hour)
			y, m, dd := log.LastDecrease.UTC().Date()
			if midnight := time.Date(y, m, dd+1, 0, 0, 0, 0, time.UTC); midnight.Before(next) {
				next = midnight
			}
			return limitExceeded(fmt.Sprintf("Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 seconds. Number of decreases today: %d. Last decrease at %s. Next decrease can be made at %s.",
				n, longUTC(log.LastDecrease), longUTC(next)))
		}
		log.Decreases = n + 1
		log.LastDecrease = now
	}
	if nr > cr || nw > cw {
		log.LastIncrease = now
	}
	return nil
}

// longUTC formats a time as DynamoDB does in its decrease-limit message.
func longUTC(t time.Time) string {
	return t.UTC().Format("Monday, January 2, 2006 at 3:04:05 PM") + " Coordinated Universal Time"
}

func (u *tableUpdate) applyStream() error {
	sp, d := u.in.StreamSpecification, u.d
	if sp == nil {
		return nil
	}
	if *sp.StreamEnabled {
		if u.old.StreamEnabled {
			return wire.Validation("Table already has an enabled stream: TableName: %s", d.Name)
		}
		d.StreamEnabled = true
		d.StreamViewType = sp.StreamViewType
		label := streamLabel(u.now)
		if label <= d.StreamLabel {
			// A new stream always gets a new label.
			label = streamLabel(parseStreamLabel(d.StreamLabel).Add(time.Millisecond))
		}
		d.StreamLabel = label
	} else {
		if !u.old.StreamEnabled {
			return wire.Validation("Table has no stream to disable: TableName: %s", d.Name)
		}
		d.StreamEnabled = false
		d.StreamViewType = ""
	}
	u.status = "UPDATING"
	return nil
}

func parseStreamLabel(l string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05.000", l)
	if err != nil {
		return time.Time{}
	}
	return t
}

// applyIndexes applies GlobalSecondaryIndexUpdates.
func (u *tableUpdate) applyIndexes() error {
	for _, g := range u.in.GlobalSecondaryIndexUpdates {
		var err error
		switch {
		case g.Create != nil:
			err = u.createIndex(*g.Create)
		case g.Delete != nil:
			err = u.deleteIndex(*g.Delete.IndexName)
		case g.Update != nil:
			err = u.updateIndex(*g.Update.IndexName, g.Update.ProvisionedThroughput, g.Update.OnDemandThroughput, g.Update.WarmThroughput)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (u *tableUpdate) gsiCount() int {
	n := 0
	for _, ix := range u.d.Indexes {
		if !ix.Local {
			n++
		}
	}
	return n
}

func (u *tableUpdate) backfilling() bool {
	for _, ix := range u.old.Indexes {
		if ix.Backfilling {
			return true
		}
	}
	return false
}

func (u *tableUpdate) createIndex(spec wire.IndexSpec) error {
	d, in := u.d, u.in
	name := *spec.IndexName
	if in.AttributeDefinitions == nil {
		return InvalidParam("AttributeDefinitions is not specified for index: %s", name)
	}
	reqDefs := newAttrDefs(in.AttributeDefinitions)
	if err := reqDefs.undefinedKeys(spec.KeySchema, in.AttributeDefinitions); err != nil {
		return err
	}
	if err := keyShape(spec.KeySchema); err != nil {
		return err
	}
	if d.Index(name) != nil {
		return wire.Validation("Attempting to create an index which already exists")
	}
	// A key attribute the table already defines keeps its stored type.
	defs := newAttrDefs(in.AttributeDefinitions)
	for _, a := range d.AttrDefs {
		t, _ := av.ParseType(a.AttributeType)
		defs.types[a.AttributeName] = t
	}
	ix, err := buildIndex(spec, defs, false)
	if err != nil {
		return err
	}
	if d.BillingMode == "PAY_PER_REQUEST" {
		if spec.ProvisionedThroughput != nil {
			return InvalidParam("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: %s when BillingMode is PAY_PER_REQUEST", name)
		}
		if err := checkOnDemand(spec.OnDemandThroughput, "index : "+name); err != nil {
			return err
		}
		ix.Warm.Raise(engine.OnDemandWarmRead, engine.OnDemandWarmWrite)
	} else {
		if spec.ProvisionedThroughput == nil {
			return InvalidParam("Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: %s", name)
		}
		if spec.OnDemandThroughput != nil {
			return InvalidParam("MaxReadRequestUnits for OnDemandThroughput for index : %s cannot be specified when the table BillingMode is PROVISIONED", name)
		}
		if err := u.s.capacityLimit(spec.ProvisionedThroughput, name); err != nil {
			return err
		}
		ix.Warm.Raise(*spec.ProvisionedThroughput.ReadCapacityUnits, *spec.ProvisionedThroughput.WriteCapacityUnits)
	}
	if w := spec.WarmThroughput; w != nil {
		ix.Warm.Raise(engine.Deref(w.ReadUnitsPerSecond), engine.Deref(w.WriteUnitsPerSecond))
	}
	nonKeys := len(ix.NonKey)
	for _, x := range d.Indexes {
		nonKeys += len(x.NonKey)
	}
	if nonKeys > wire.MaxProjectedNonKeys {
		return InvalidParam("The number of projected attributes in all secondary indexes of the table exceeds the limit of %d", wire.MaxProjectedNonKeys)
	}
	if u.backfilling() {
		return errOneOnlineIndex()
	}
	if u.gsiCount() >= wire.MaxGSIs {
		return limitExceeded(fmt.Sprintf("Subscriber limit exceeded: Number of global secondary indexes exceeds per-table limit of %d", wire.MaxGSIs))
	}
	if int(d.NextIndexID)+1 >= engine.MaxIndexes {
		return limitExceeded("Subscriber limit exceeded: Too many index changes on this table")
	}
	ix.Backfilling = true
	d.AddIndex(ix)
	for _, k := range spec.KeySchema {
		if !slices.ContainsFunc(d.AttrDefs, func(a wire.AttributeDefinition) bool { return a.AttributeName == k.AttributeName }) {
			d.AttrDefs = append(d.AttrDefs, wire.AttributeDefinition{AttributeName: k.AttributeName, AttributeType: defs.types[k.AttributeName].String()})
		}
	}
	sortAttrDefs(d.AttrDefs)
	u.created = ix
	u.status = "UPDATING"
	u.indexStatus[ix.Name] = "CREATING"
	return nil
}

func (u *tableUpdate) deleteIndex(name string) error {
	d := u.d
	ix := d.Index(name)
	if ix == nil {
		return indexNotFound(name, d.Name)
	}
	if ix.Local {
		return wire.Validation("Cannot delete an index that is not a GlobalSecondaryIndex: %s", name)
	}
	for _, x := range u.old.Indexes {
		if x.Backfilling && x.Name != name {
			return errOneOnlineIndex()
		}
	}
	d.Indexes = slices.DeleteFunc(d.Indexes, func(x *engine.IndexDef) bool { return x == ix })
	// An attribute no key uses any more leaves the attribute definitions.
	d.AttrDefs = slices.DeleteFunc(d.AttrDefs, func(a wire.AttributeDefinition) bool { return !d.UsesKey(a.AttributeName) })
	u.dropped = ix
	u.status = "UPDATING"
	u.indexStatus[name] = "DELETING"
	return nil
}

func (u *tableUpdate) updateIndex(name string, pt *wire.ProvisionedThroughput, odt *wire.OnDemandThroughput, warm *wire.WarmThroughputSpec) error {
	d := u.d
	ix := d.Index(name)
	if ix == nil {
		return indexNotFound(name, d.Name)
	}
	if ix.Local {
		return wire.Validation("Cannot update an index that is not a GlobalSecondaryIndex: %s", name)
	}
	before := *ix
	if pt != nil {
		if d.BillingMode == "PAY_PER_REQUEST" {
			return InvalidParam("The only Updates for index: %s when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput", name)
		}
		var cur wire.ProvisionedThroughput
		if ix.Throughput != nil && u.old.BillingMode == "PROVISIONED" {
			cur = *ix.Throughput
		}
		if err := u.s.capacityLimit(pt, name); err != nil {
			return err
		}
		if err := changeThroughput(&ix.ThroughputLog, cur, *pt, u.now, "the index "+name, name); err != nil {
			return err
		}
		p := *pt
		ix.Throughput = &p
		ix.Warm.Raise(*pt.ReadCapacityUnits, *pt.WriteCapacityUnits)
		if u.old.BillingMode == "PROVISIONED" {
			u.indexOldTP[name] = &before
		}
	}
	if odt != nil {
		if d.BillingMode == "PROVISIONED" {
			return InvalidParam("MaxReadRequestUnits for OnDemandThroughput for index : %s cannot be specified when the table BillingMode is PROVISIONED", name)
		}
		merged, err := mergeOnDemand(ix.OnDemand, odt, "index : "+name)
		if err != nil {
			return err
		}
		ix.OnDemand = merged
	}
	if warm != nil {
		if r := warm.ReadUnitsPerSecond; r != nil && *r < ix.Warm.Read {
			return InvalidParam("Requested ReadUnitsPerSecond for WarmThroughput for index %s is lower than current WarmThroughput, decreasing WarmThroughput is not supported", name)
		}
		if w := warm.WriteUnitsPerSecond; w != nil && *w < ix.Warm.Write {
			return InvalidParam("Requested WriteUnitsPerSecond for WarmThroughput for index %s is lower than current WarmThroughput, decreasing WarmThroughput is not supported", name)
		}
		ix.Warm.Raise(engine.Deref(warm.ReadUnitsPerSecond), engine.Deref(warm.WriteUnitsPerSecond))
	}
	if _, set := u.indexStatus[name]; !set {
		u.indexStatus[name] = "UPDATING"
	}
	return nil
}

// response builds the TableDescription UpdateTable answers: the new
// settings with the transient statuses DynamoDB reports, the previous
// throughput where DynamoDB still echoes it, and a deleted index as
// DELETING.
func (u *tableUpdate) response(t *engine.Table) map[string]any {
	rd := *u.d
	rd.Indexes = nil
	for _, ix := range u.old.Indexes {
		if u.dropped != nil && ix.ID == u.dropped.ID {
			rd.Indexes = append(rd.Indexes, ix)
			continue
		}
		for _, x := range u.d.Indexes {
			if x.ID == ix.ID {
				rd.Indexes = append(rd.Indexes, x)
			}
		}
	}
	if u.created != nil {
		rd.Indexes = append(rd.Indexes, u.created)
	}
	desc := u.s.DescribeDef(t, &rd, engine.DescOpts{Status: u.status, Switched: u.switched})
	if u.oldTP {
		tp := engine.ThroughputDesc(&u.old.Throughput, u.d.ThroughputLog, u.now)
		tp["NumberOfDecreasesToday"] = u.old.ThroughputLog.DecreasesToday(u.now)
		desc["ProvisionedThroughput"] = tp
	}
	gsis, _ := desc["GlobalSecondaryIndexes"].([]map[string]any)
	for _, m := range gsis {
		name := m["IndexName"].(string)
		if st, ok := u.indexStatus[name]; ok {
			m["IndexStatus"] = st
		}
		if u.created != nil && name == u.created.Name {
			m["Backfilling"] = false
			delete(m, "WarmThroughput")
		}
		if prev, ok := u.indexOldTP[name]; ok {
			tp := engine.ThroughputDesc(prev.Throughput, u.d.Index(name).ThroughputLog, u.now)
			tp["NumberOfDecreasesToday"] = prev.ThroughputLog.DecreasesToday(u.now)
			m["ProvisionedThroughput"] = tp
		}
	}
	return desc
}

// Backfill writes the entries of a new index for every existing item and
// then marks the index active. Writers running meanwhile already maintain
// the index (they read the table definition after locking their item), and
// each item is re-read under its lock, so no entry is lost, stale or
// counted twice.
func (s *Store) Backfill(ctx context.Context, t *engine.Table, id uint16) error {
	d := t.Def.Load()
	keys, err := s.DB.Keys(ctx, storage.SpaceKey(d.ID, 0), storage.SpaceKey(d.ID, 1), nil)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if i%256 == 0 {
			// A cancelled backfill leaves the index backfilling: the
			// next Open resumes it.
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := s.BackfillOne(t, id, k); err != nil {
			if errors.Is(err, errIndexGone) {
				return nil
			}
			return err
		}
	}
	// The entries were applied unsynced: make them durable and visible to
	// readers before the index is reported complete.
	if err := s.DB.Settle(); err != nil {
		return err
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	cur := t.Def.Load()
	ix := cur.IndexByID(id)
	// A table deleted meanwhile must not be written back to the catalog
	// (over a new table of the same name, perhaps).
	if ix == nil || !ix.Backfilling || s.Tables[cur.Name] != t {
		return nil
	}
	nd := CloneDef(cur)
	nd.IndexByID(id).Backfilling = false
	if err := s.PersistDef(nd); err != nil {
		return err
	}
	s.SetDef(t, nd)
	return nil
}

// finishBackfill completes an index backfill whose caller went away.
// Close waits for it (its stop cancels it; Open resumes it).
func (s *Store) finishBackfill(t *engine.Table, id uint16) {
	s.Bg.Done.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.Bg.Stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	go func() {
		defer s.Bg.Done.Done()
		defer cancel()
		if err := s.Backfill(ctx, t, id); err != nil && ctx.Err() == nil {
			s.Log.Error("backfill", "index", id, "err", err)
		}
	}()
}

var errIndexGone = errors.New("ddblocal: index deleted during backfill")

// ResumeBackfills completes the backfills a crash interrupted: such an
// index is persisted as backfilling with only some of its entries, and
// nothing else would ever finish it. Open calls it before serving.
func (s *Store) ResumeBackfills() error {
	for _, t := range s.Tables {
		for _, ix := range t.Def.Load().Indexes {
			if !ix.Backfilling {
				continue
			}
			if err := s.Backfill(context.Background(), t, ix.ID); err != nil {
				return fmt.Errorf("ddblocal: resume backfill of index %s: %w", ix.Name, err)
			}
		}
	}
	return nil
}

// BackfillOne adds one item's entry to the index being built, unless a
// writer that already knew the index has written it (and counted it).
func (s *Store) BackfillOne(t *engine.Table, id uint16, key []byte) error {
	s.DB.Locks.Acquire(string(key), false)
	defer s.DB.Locks.Release(string(key))
	d := t.Def.Load()
	ix := d.IndexByID(id)
	if ix == nil {
		return errIndexGone
	}
	it, err := s.Get(key)
	if err != nil || it == nil || !ix.InIndex(it) {
		return err
	}
	ek := d.EntryKey(ix, it)
	_, err = s.DB.Get(ek)
	if err == nil {
		return nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	proj := d.Project(ix, it)
	b := s.DB.NewBatch()
	defer b.Close()
	b.Set(ek, av.AppendItemBinary(nil, proj))
	// The index (or its table) may have been deleted since d was read; an
	// entry committed after their DeleteRange would stay for ever. No fsync
	// per entry: the synced catalog write that ends the backfill covers
	// them, and an interrupted backfill is redone at Open.
	err = s.DB.ApplyUnsynced(b, func() error {
		if t.Dropped.Load() || t.Def.Load().IndexByID(id) == nil {
			return errIndexGone
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.IdxItems[ix.ID].Add(1)
	t.IdxBytes[ix.ID].Add(int64(av.ItemSize(proj)))
	return nil
}
