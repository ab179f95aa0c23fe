// Package keys is Lastro's key registry: every prefix the single table uses,
// the builders that compose keys from them and the parser that decodes any
// key back into named parts (docs/design.md#key-registry).
//
// A key is a sequence of parts separated by '#'. Each part starts with a
// registered prefix and is followed by a fixed number of fields, so a key
// read back by Parse says what every piece means. Identifiers never contain
// '#' (they are validated at the edge), which keeps parsing unambiguous.
package keys

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Attr names the key attribute a value belongs to.
type Attr string

// The key attributes of the table and its indexes.
const (
	PK     Attr = "PK"
	SK     Attr = "SK"
	GSI1PK Attr = "GSI1PK"
	GSI1SK Attr = "GSI1SK"
	GSI2PK Attr = "GSI2PK"
	GSI3PK Attr = "GSI3PK"
)

// Prefix is one registered prefix: where it may appear, what it means and
// the names of the fields that follow it.
type Prefix struct {
	Token   string
	Attr    Attr
	Pos     int // index of the part within the key (0 = first)
	Meaning string
	Fields  []string
}

// Registry lists every prefix in use. Append only: a prefix, once written
// to a table, never changes meaning.
var Registry = []Prefix{
	{"T", PK, 0, "tenant", []string{"tenantId"}},
	{"D", PK, 1, "debtor", []string{"debtorKey"}},
	{"CHG", PK, 1, "charge lookup (Pix txid / boleto number)", []string{"chargeId"}},
	{"STL", PK, 1, "settlement (idempotency record)", []string{"settlementId"}},
	{"IDEM", PK, 1, "idempotency key record", []string{"keyHash"}},
	{"SUSPENSE", PK, 1, "unmatched settlements awaiting reconciliation", nil},
	{"REM", PK, 1, "boleto registrations with one bank: pending entries and shipping files (ADR 0072)", []string{"bank"}},
	{"PIXOPEN", PK, 1, "open Pix charges awaiting a reconcile check (ADR 0070)", nil},
	{"OBX", PK, 1, "contact outbox of one agenda shard: attempts still to deliver (ADR 0062)", []string{"shard"}},
	{"DIR", PK, 0, "platform directory of tenants (the one partition outside every tenant)", nil},
	// The stream consumer's bookkeeping belongs to no tenant: a shard of the
	// table's stream carries every tenant's changes (ADR 0047).
	{"SYS", PK, 0, "platform system partition (stream consumer leases and checkpoints)", nil},

	{"TENANT", SK, 0, "tenant item", nil},
	{"CP", SK, 0, "charges policy version", []string{"version"}},
	{"DP", SK, 0, "dunning policy version", []string{"version"}},
	{"APIKEY", SK, 0, "hashed API key", []string{"sha256"}},
	{"PROFILE", SK, 0, "debtor profile", nil},
	{"CT", SK, 0, "contract", []string{"contractId"}},
	{"CONTACT", SK, 0, "contact attempt", []string{"localDate", "ts", "attemptId"}},
	{"LIMIT", SK, 0, "daily contact counter", []string{"localDate"}},
	{"CHG", SK, 0, "charge lookup item", nil},
	{"STL", SK, 0, "settlement item", nil},
	{"IDEM", SK, 0, "idempotency record", nil},
	{"EV", SK, 0, "debtor-level audit event", []string{"ts", "eventId"}},
	{"UNM", SK, 0, "unmatched settlement (suspense entry)", []string{"ts", "settlementId"}},
	{"TN", SK, 0, "directory entry of a tenant", []string{"tenantId"}},
	{"RUN", SK, 0, "agenda run of one shard on one date: lease and checkpoint", []string{"date", "shard"}},
	{"SHARD", SK, 0, "stream shard: the consumer's lease and checkpoint (ADR 0047)", []string{"streamLabel", "shardId"}},
	{"BSUM", SK, 0, "a portfolio bucket's counters, maintained from the stream (ADR 0028)", []string{"bucket"}},
	{"DSUM", SK, 0, "a tenant's day counters (promises, cures, contacts), maintained from the stream (ADR 0085)", []string{"date"}},
	{"SEED", SK, 0, "whether a stream's bucket counters were counted from the portfolio index (ADR 0079)", []string{"streamLabel"}},
	{"REV", SK, 0, "reversal (Pix refund) of a settlement, under its STL partition (ADR 0040)", []string{"rtrId"}},
	{"RVW", SK, 0, "reversal awaiting review (suspense entry, ADR 0040)", []string{"ts", "rtrId"}},
	{"WEBSESSION", SK, 0, "web page session, by its random id (ADR 0058)", []string{"sessionId"}},
	{"RETENTION", SK, 0, "the tenant's personal-data retention policy (ADR 0077)", nil},
	{"JOB", SK, 0, "a maintenance job's lease and checkpoint, in the system partition (ADRs 0075-0078)", []string{"kind", "subject"}},
	{"PEND", SK, 0, "a boleto registration awaiting the next shipping file (ADR 0072)", []string{"ts", "chargeId", "movement"}},
	{"FILE", SK, 0, "a boleto shipping file (remessa), by its number (ADR 0072)", []string{"number"}},
	{"WAKE", SK, 0, "agenda wake-up: a contact window opening that blocked contacts wait for (ADR 0064)", []string{"date", "ts"}},
	{"RFD", SK, 0, "refund asked of a Pix payment, under its STL partition (ADR 0069)", []string{"refundId"}},
	{"PXC", SK, 0, "an open Pix charge's next reconcile check (ADR 0070)", []string{"ts", "chargeId"}},
	{"ATT", SK, 0, "an outbox entry: one contact attempt to deliver (ADR 0062)", []string{"attemptId"}},
	{"LEASE", SK, 0, "agenda lease of one shard across dates (ADR 0063)", []string{"shard"}},
	{"AG", SK, 1, "agreement", []string{"agreementId"}},
	{"CHG", SK, 1, "charge (Pix txid / boleto number)", []string{"chargeId"}},
	{"DSP", SK, 1, "dispute", []string{"disputeId"}},
	{"EV", SK, 1, "audit event", []string{"seq", "ts", "eventId"}},
	{"IN", SK, 1, "instalment", []string{"seq"}},
	{"PROMISE", SK, 1, "payment promise", []string{"promiseId"}},
	{"WL", PK, 1, "collector's call list of one day (ADR 0066)", []string{"date"}},
	// The desk's searches (ADR 0084): one partition per phone (its HMAC
	// under the tenant's debtor-key secret, never the number) and per
	// contract id, listing every debtor it names.
	{"PHONE", PK, 1, "phone lookup: the debtors registered with one phone, by the phone's HMAC (ADR 0084)", []string{"phoneHash"}},
	{"CTID", PK, 1, "contract-id lookup: the debtors holding a contract of that id (ADR 0084)", []string{"contractId"}},
	{"DEBTOR", SK, 0, "a lookup's entry naming one debtor (ADR 0084)", []string{"debtorKey"}},
	{"CALL", SK, 0, "call task of one debtor's contract on the day's call list (ADR 0066)", []string{"debtorKey", "contractId"}},

	{"T", GSI1PK, 0, "tenant", []string{"tenantId"}},
	{"ACT", GSI1PK, 1, "agenda partition", []string{"date", "shard"}},
	{"T", GSI2PK, 0, "tenant", []string{"tenantId"}},
	{"B", GSI2PK, 1, "bucket partition", []string{"bucket"}},
	{"T", GSI3PK, 0, "tenant", []string{"tenantId"}},
	{"PROFILES", GSI3PK, 1, "tenant's debtor profiles", nil},
}

// Sep separates key parts.
const Sep = "#"

// Part is one decoded part of a key.
type Part struct {
	Prefix  string
	Meaning string
	Fields  map[string]string
	Order   []string // field names in key order
}

// Parsed is a key decoded by Parse.
type Parsed struct {
	Attr  Attr
	Key   string
	Parts []Part
}

func (p Parsed) String() string {
	var b strings.Builder
	for i, part := range p.Parts {
		if i > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(part.Meaning)
		for _, f := range part.Order {
			fmt.Fprintf(&b, " %s=%s", f, part.Fields[f])
		}
	}
	return b.String()
}

func lookup(attr Attr, pos int, token string) (Prefix, bool) {
	for _, p := range Registry {
		if p.Attr == attr && p.Pos == pos && p.Token == token {
			return p, true
		}
	}
	return Prefix{}, false
}

// Parse decodes a key value of the given attribute into named parts.
func Parse(attr Attr, key string) (Parsed, error) {
	out := Parsed{Attr: attr, Key: key}
	if attr == GSI1SK {
		// <nextAction>#<contractId>: no prefix, two fields.
		action, contract, ok := strings.Cut(key, Sep)
		if !ok || action == "" || contract == "" {
			return out, fmt.Errorf("keys: %s %q: want <nextAction>#<contractId>", attr, key)
		}
		out.Parts = []Part{{Prefix: "", Meaning: "agenda entry", Order: []string{"nextAction", "contractId"},
			Fields: map[string]string{"nextAction": action, "contractId": contract}}}
		return out, nil
	}
	toks := strings.Split(key, Sep)
	for i, pos := 0, 0; i < len(toks); pos++ {
		p, ok := lookup(attr, pos, toks[i])
		if !ok {
			return out, fmt.Errorf("keys: %s %q: unknown prefix %q at part %d", attr, key, toks[i], pos)
		}
		if i+1+len(p.Fields) > len(toks) {
			return out, fmt.Errorf("keys: %s %q: prefix %s wants %d fields", attr, key, p.Token, len(p.Fields))
		}
		part := Part{Prefix: p.Token, Meaning: p.Meaning, Fields: map[string]string{}, Order: p.Fields}
		for j, f := range p.Fields {
			v := toks[i+1+j]
			if v == "" {
				return out, fmt.Errorf("keys: %s %q: empty %s", attr, key, f)
			}
			part.Fields[f] = v
		}
		out.Parts = append(out.Parts, part)
		i += 1 + len(p.Fields)
	}
	return out, nil
}

var identifier = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ValidIdentifier reports whether a client-chosen identifier that goes into
// a key (contractId, chargeId, settlementId) is 1-64 of A-Z a-z 0-9 - _ .
// (docs/design.md#key-formatting): never '#', never empty.
func ValidIdentifier(s string) bool { return identifier.MatchString(s) }

var debtorKey = regexp.MustCompile(`^[0-9a-f]{16}$`)

// ValidDebtorKey reports whether s is a debtor key (16 lower-case hex
// characters) and so safe to put into a table key.
func ValidDebtorKey(s string) bool { return debtorKey.MatchString(s) }

func join(parts ...string) string { return strings.Join(parts, Sep) }

// Seq formats a sequence number zero-padded to three digits.
func Seq(n int) string { return fmt.Sprintf("%03d", n) }

// Timestamp formats an instant as fixed-width RFC 3339 UTC (milliseconds),
// so timestamps sort as strings.
func Timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Tenant is the partition of a tenant's own items.
func Tenant(t string) string { return join("T", t) }

// Directory is the platform's directory of tenants: one item per tenant
// (DirectoryEntry), written with the tenant, so jobs that visit every
// tenant list them with one Query. It is the only partition outside every
// tenant's key space (ADR 0021).
const Directory = "DIR"

// DirectoryEntry is the sort key of a tenant's entry in the directory.
func DirectoryEntry(t string) string { return join("TN", t) }

// DirectoryPrefix selects the directory's tenant entries.
const DirectoryPrefix = "TN" + Sep

// TenantPrefix is what every key of tenant t starts with (IAM LeadingKeys).
func TenantPrefix(t string) string { return join("T", t) + Sep }

// Debtor is a debtor's item collection.
func Debtor(t, debtorKey string) string { return join("T", t, "D", debtorKey) }

// Charge is the lookup partition of a charge.
func Charge(t, chargeID string) string { return join("T", t, "CHG", chargeID) }

// Settlement is the partition of a settlement record.
func Settlement(t, settlementID string) string { return join("T", t, "STL", settlementID) }

// Suspense is the partition listing a tenant's unmatched settlements
// (ADR 0008): one keyed Query answers the reconciliation list, no Scan.
func Suspense(t string) string { return join("T", t, "SUSPENSE") }

// Unmatched is the sort key of an unmatched settlement in the suspense
// partition, ordered by the instant it was received.
func Unmatched(receivedAt time.Time, settlementID string) string {
	return join("UNM", Timestamp(receivedAt), settlementID)
}

// UnmatchedPrefix selects the suspense entries.
const UnmatchedPrefix = "UNM" + Sep

// Reversal is the sort key, under a settlement's partition, of one of its
// reversals (a Pix refund, by its rtrId): the reversal's idempotency
// record.
func Reversal(rtrID string) string { return join("REV", rtrID) }

// Refund is the sort key, under a settlement's partition, of a refund the
// tenant asked of that Pix payment, by the refund id it gave (ADR 0069).
func Refund(refundID string) string { return join("RFD", refundID) }

// PixOpen is the partition of a tenant's open Pix charges awaiting a
// reconcile check, each keyed by when it is due (ADR 0070).
func PixOpen(t string) string { return join("T", t, "PIXOPEN") }

// PixCheck is the sort key of an open Pix charge's next reconcile check:
// the instant it is due, so due checks are one range.
func PixCheck(at time.Time, chargeID string) string { return join("PXC", Timestamp(at), chargeID) }

// PixCheckPrefix selects the reconcile checks.
const PixCheckPrefix = "PXC" + Sep

// ReversalReview is the sort key of a reversal a person must review, in
// the suspense partition, ordered by the instant it was received.
func ReversalReview(receivedAt time.Time, rtrID string) string {
	return join("RVW", Timestamp(receivedAt), rtrID)
}

// ReversalReviewPrefix selects the reversals awaiting review.
const ReversalReviewPrefix = "RVW" + Sep

// Remessas is the partition of a tenant's boleto registrations with one
// bank (ADR 0072).
func Remessas(t, bank string) string { return join("T", t, "REM", bank) }

// RemessaPending is a registration waiting for the next shipping file, in
// the order it was asked for.
func RemessaPending(at time.Time, chargeID, movement string) string {
	return join("PEND", Timestamp(at), chargeID, movement)
}

// RemessaPendingPrefix selects the pending registrations, oldest first.
const RemessaPendingPrefix = "PEND" + Sep

// RemessaFile is shipping file number n (zero-padded to 6, the NSA's width).
func RemessaFile(n int) string { return join("FILE", fmt.Sprintf("%06d", n)) }

// RemessaFilePrefix selects the shipping files, by number.
const RemessaFilePrefix = "FILE" + Sep

// Idempotency is the partition of an Idempotency-Key record.
func Idempotency(t, keyHash string) string { return join("T", t, "IDEM", keyHash) }

// Sort keys.
const (
	TenantSK     = "TENANT"
	ProfileSK    = "PROFILE"
	ChargeSK     = "CHG"
	SettlementSK = "STL"
	IdemSK       = "IDEM"
	// RetentionSK is the tenant's personal-data retention policy, in the
	// tenant partition (ADR 0077).
	RetentionSK = "RETENTION"
)

// PolicyVersion formats a policy version as v0001.
func PolicyVersion(v int) string { return fmt.Sprintf("v%04d", v) }

// ChargesPolicy is the sort key of a charges policy version.
func ChargesPolicy(v int) string { return join("CP", PolicyVersion(v)) }

// DunningPolicy is the sort key of a dunning policy version.
func DunningPolicy(v int) string { return join("DP", PolicyVersion(v)) }

// APIKey is the sort key of a hashed API key.
func APIKey(sha256hex string) string { return join("APIKEY", sha256hex) }

// WebSession is the sort key, in the tenant's partition, of a web page
// session: an opaque random id, never anything about the person or key.
func WebSession(id string) string { return join("WEBSESSION", id) }

// Contract is the sort key of a contract header.
func Contract(contractID string) string { return join("CT", contractID) }

// Installment is the sort key of an instalment.
func Installment(contractID string, seq int) string { return join("CT", contractID, "IN", Seq(seq)) }

// InstallmentsPrefix selects a contract's instalments (AP02).
func InstallmentsPrefix(contractID string) string { return join("CT", contractID, "IN") + Sep }

// Event is the sort key of an audit event (seq 0 = contract level).
func Event(contractID string, seq int, at time.Time, eventID string) string {
	return join("CT", contractID, "EV", Seq(seq), Timestamp(at), eventID)
}

// DebtorEvent is the sort key of an audit event about the debtor itself
// rather than one contract (registration, document reveal).
func DebtorEvent(at time.Time, eventID string) string {
	return join("EV", Timestamp(at), eventID)
}

// EventsPrefix selects the audit trail of one instalment (AP09).
func EventsPrefix(contractID string, seq int) string {
	return join("CT", contractID, "EV", Seq(seq)) + Sep
}

// ContractCharge is the sort key of a charge issued for a contract, in the
// debtor's collection (its lookup is Charge).
func ContractCharge(contractID, chargeID string) string {
	return join("CT", contractID, "CHG", chargeID)
}

// ContractRange bounds, inclusively, the contract header and every child
// of it that sorts before and with its instalments (agreements, charges,
// events, instalments): the settlement reads a contract with one Query
// between them. Identifiers never contain '#' and every character they
// may hold sorts after it, so no other contract falls inside.
func ContractRange(contractID string) (lo, hi string) {
	return Contract(contractID), InstallmentsPrefix(contractID) + "~"
}

// Agreement is the sort key of an agreement.
func Agreement(contractID, agreementID string) string {
	return join("CT", contractID, "AG", agreementID)
}

// Promise is the sort key of a payment promise.
func Promise(contractID, promiseID string) string {
	return join("CT", contractID, "PROMISE", promiseID)
}

// PromisesPrefix selects a contract's payment promises, oldest first.
func PromisesPrefix(contractID string) string { return join("CT", contractID, "PROMISE") + Sep }

// Dispute is the sort key of a debtor's dispute of a contract.
func Dispute(contractID, disputeID string) string {
	return join("CT", contractID, "DSP", disputeID)
}

// Contact is the sort key of a contact attempt: the debtor's civil date
// (the same date as the LIMIT counter it was counted against) before the
// UTC instant, so one local day is one begins_with range (ADR 0016) and
// attempts still sort chronologically.
func Contact(localDate string, at time.Time, attemptID string) string {
	return join("CONTACT", localDate, Timestamp(at), attemptID)
}

// ContactsOn selects the contact attempts of one civil date.
func ContactsOn(localDate string) string { return join("CONTACT", localDate) + Sep }

// WorkList is the partition of tenant t's call list for one civil date
// (a collector's queue, read by one Query).
func WorkList(t, date string) string { return join("T", t, "WL", date) }

// CallTask is the SK of the call task of one debtor's contract on a day's
// call list: a debtor's tasks are adjacent, one call for them all.
func CallTask(debtorKey, contractID string) string { return join("CALL", debtorKey, contractID) }

// CallTasksOf selects one debtor's tasks on a day's call list.
func CallTasksOf(debtorKey string) string { return join("CALL", debtorKey) + Sep }

// PhoneLookup is the partition listing the debtors registered with one
// phone: phoneHash is the HMAC of the phone in E.164 under the tenant's
// debtor-key secret, never the number (ADR 0084).
func PhoneLookup(t, phoneHash string) string { return join("T", t, "PHONE", phoneHash) }

// ContractLookup is the partition listing the debtors holding a contract
// of contractID: contract ids are unique per debtor, not per tenant
// (ADR 0084).
func ContractLookup(t, contractID string) string { return join("T", t, "CTID", contractID) }

// LookupEntry is the sort key, in a phone or contract-id lookup
// partition, of the entry naming one debtor: a Query on the partition
// lists every match.
func LookupEntry(debtorKey string) string { return join("DEBTOR", debtorKey) }

// LookupEntryPrefix selects a lookup partition's entries.
const LookupEntryPrefix = "DEBTOR" + Sep

// Limit is the sort key of the daily contact counter for a civil date.
func Limit(localDate string) string { return join("LIMIT", localDate) }

// Agenda is the GSI1 partition of one date and shard.
func Agenda(t, date string, shard int) string {
	return join("T", t, "ACT", date, fmt.Sprintf("%02d", shard))
}

// AgendaEntry is the GSI1 sort key.
func AgendaEntry(action, contractID string) string { return join(action, contractID) }

// Run is the sort key of the agenda run of a date and shard, in the
// tenant partition: the shard's lease and checkpoint.
func Run(date string, shard int) string { return join("RUN", date, fmt.Sprintf("%02d", shard)) }

// Outbox is the partition of one agenda shard's contact outbox: the
// allowed attempts whose delivery has no outcome yet, listed by the
// dispatcher with one keyed Query (ADR 0062).
func Outbox(t string, shard int) string { return join("T", t, "OBX", fmt.Sprintf("%02d", shard)) }

// OutboxEntry is the sort key of one attempt in an outbox partition.
func OutboxEntry(attemptID string) string { return join("ATT", attemptID) }

// ShardLease is the sort key, in the tenant partition, of one agenda
// shard's lease: one holder per tenant and shard whatever the date it
// runs (ADR 0063).
func ShardLease(shard int) string { return join("LEASE", fmt.Sprintf("%02d", shard)) }

// RunsOn selects the agenda runs of one date (every shard's lease and
// checkpoint) in the tenant partition.
func RunsOn(date string) string { return join("RUN", date) + Sep }

// Wake is the sort key, in the tenant partition, of the agenda wake-up
// of a run date at an instant (a contact window opening that blocked
// contacts wait for, ADR 0064).
func Wake(date string, at time.Time) string { return join("WAKE", date, Timestamp(at)) }

// WakesOn selects the wake-ups of one run date in the tenant partition.
func WakesOn(date string) string { return join("WAKE", date) + Sep }

// Bucket is the GSI2 partition of a delinquency bucket.
func Bucket(t, bucket string) string { return join("T", t, "B", bucket) }

// BucketSummary is the sort key, in the tenant's partition, of one
// bucket's counters (contracts and balance): kept by the stream consumer,
// never computed by reading the bucket (ADR 0028).
func BucketSummary(bucket string) string { return join("BSUM", bucket) }

// DaySummary is the sort key, in the tenant's partition, of one civil
// date's counters (promises kept and broken, cures, contacts by channel
// and refusals by reason): kept by the stream consumer, read by the
// dashboard with one Query over the month (ADR 0085).
func DaySummary(date string) string { return join("DSUM", date) }

// System is the platform's system partition, outside every tenant: the
// stream consumer's leases and checkpoints (ADR 0047). Like Directory, only
// a dedicated kit handle reaches it.
const System = "SYS"

// Shard is the sort key, in the system partition, of one stream shard's
// lease and checkpoint. The stream label is part of it because shard ids
// are unique within a stream only, and a table re-created or with its
// stream replaced starts a new stream.
func Shard(streamLabel, shardID string) string { return join("SHARD", streamLabel, shardID) }

// Job is the sort key, in the system partition, of a maintenance job's
// lease and checkpoint (offboarding, key rotation, a migration segment):
// kind names the job, subject what it works on (a tenant id, a migration
// segment), neither ever a person's data.
func Job(kind, subject string) string { return join("JOB", kind, subject) }

// CountersSeed is the sort key, in the system partition, of the item that
// says whether the bucket counters of a stream were counted from the
// portfolio index (ADR 0079): until they are, the consumer adds no deltas.
func CountersSeed(streamLabel string) string { return join("SEED", streamLabel) }

// Profiles is the GSI3 partition listing a tenant's debtors.
func Profiles(t string) string { return join("T", t, "PROFILES") }
