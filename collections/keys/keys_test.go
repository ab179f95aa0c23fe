package keys

import (
	"strings"
	"testing"
	"time"
)

// TestRegistryHasNoPrefixCollisions proves begins_with can never confuse
// two families: no token is a prefix of another at the same position of
// the same attribute.
func TestRegistryHasNoPrefixCollisions(t *testing.T) {
	t.Parallel()
	for i, a := range Registry {
		for j, b := range Registry {
			if i == j || a.Attr != b.Attr || a.Pos != b.Pos {
				continue
			}
			if a.Token == b.Token {
				t.Errorf("%s position %d: %q registered twice", a.Attr, a.Pos, a.Token)
			} else if strings.HasPrefix(b.Token, a.Token) {
				t.Errorf("%s position %d: %q is a prefix of %q", a.Attr, a.Pos, a.Token, b.Token)
			}
		}
	}
}

func TestEveryBuiltKeyParsesBack(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 8, 10, 12, 30, 0, 5e6, time.UTC)
	tests := []struct {
		attr Attr
		key  string
		want string // Parsed.String()
	}{
		{PK, Tenant("t042"), "tenant tenantId=t042"},
		{PK, Debtor("t042", "9f2c1a7e4b0d3e61"), "tenant tenantId=t042 / debtor debtorKey=9f2c1a7e4b0d3e61"},
		{PK, Charge("t042", "E123"), "tenant tenantId=t042 / charge lookup (Pix txid / boleto number) chargeId=E123"},
		{PK, Settlement("t042", "s-1"), "tenant tenantId=t042 / settlement (idempotency record) settlementId=s-1"},
		{PK, Idempotency("t042", "ab12"), "tenant tenantId=t042 / idempotency key record keyHash=ab12"},
		{PK, Suspense("t042"), "tenant tenantId=t042 / unmatched settlements awaiting reconciliation"},
		{PK, Remessas("t042", "001"), "tenant tenantId=t042 / boleto registrations with one bank: pending entries and shipping files (ADR 0072) bank=001"},
		{SK, RemessaPending(at, "12345670000000001", "01"), "a boleto registration awaiting the next shipping file (ADR 0072) ts=2026-08-10T12:30:00.005Z chargeId=12345670000000001 movement=01"},
		{SK, RemessaFile(7), "a boleto shipping file (remessa), by its number (ADR 0072) number=000007"},
		{SK, Unmatched(at, "s-1"), "unmatched settlement (suspense entry) ts=2026-08-10T12:30:00.005Z settlementId=s-1"},
		{SK, Reversal("D1"), "reversal (Pix refund) of a settlement, under its STL partition (ADR 0040) rtrId=D1"},
		{SK, ReversalReview(at, "D1"), "reversal awaiting review (suspense entry, ADR 0040) ts=2026-08-10T12:30:00.005Z rtrId=D1"},
		{SK, Refund("rf1"), "refund asked of a Pix payment, under its STL partition (ADR 0069) refundId=rf1"},
		{PK, PixOpen("t042"), "tenant tenantId=t042 / open Pix charges awaiting a reconcile check (ADR 0070)"},
		{SK, PixCheck(at, "E123"), "an open Pix charge's next reconcile check (ADR 0070) ts=2026-08-10T12:30:00.005Z chargeId=E123"},
		{SK, ContractCharge("C-1", "E123abc"), "contract contractId=C-1 / charge (Pix txid / boleto number) chargeId=E123abc"},
		{PK, Directory, "platform directory of tenants (the one partition outside every tenant)"},
		{SK, DirectoryEntry("t042"), "directory entry of a tenant tenantId=t042"},
		{SK, TenantSK, "tenant item"},
		{SK, ProfileSK, "debtor profile"},
		{SK, ChargeSK, "charge lookup item"},
		{SK, SettlementSK, "settlement item"},
		{SK, IdemSK, "idempotency record"},
		{SK, ChargesPolicy(3), "charges policy version version=v0003"},
		{SK, DunningPolicy(12), "dunning policy version version=v0012"},
		{SK, APIKey("deadbeef"), "hashed API key sha256=deadbeef"},
		{SK, WebSession("0f1e2d3c4b5a69788796a5b4c3d2e1f0"), "web page session, by its random id (ADR 0058) sessionId=0f1e2d3c4b5a69788796a5b4c3d2e1f0"},
		{SK, Contract("C-2026-004512"), "contract contractId=C-2026-004512"},
		{SK, Installment("C-1", 7), "contract contractId=C-1 / instalment seq=007"},
		{SK, Event("C-1", 7, at, "e1"), "contract contractId=C-1 / audit event seq=007 ts=2026-08-10T12:30:00.005Z eventId=e1"},
		{SK, DebtorEvent(at, "e2"), "debtor-level audit event ts=2026-08-10T12:30:00.005Z eventId=e2"},
		{SK, Agreement("C-1", "a1"), "contract contractId=C-1 / agreement agreementId=a1"},
		{SK, Promise("C-1", "p1"), "contract contractId=C-1 / payment promise promiseId=p1"},
		{SK, Dispute("C-1", "d1"), "contract contractId=C-1 / dispute disputeId=d1"},
		{SK, Contact("2026-08-10", at, "x1"), "contact attempt localDate=2026-08-10 ts=2026-08-10T12:30:00.005Z attemptId=x1"},
		{SK, Limit("2026-08-10"), "daily contact counter localDate=2026-08-10"},
		{PK, WorkList("t042", "2026-08-10"), "tenant tenantId=t042 / collector's call list of one day (ADR 0066) date=2026-08-10"},
		{SK, CallTask("9f2c1a7e4b0d3e61", "C-1"), "call task of one debtor's contract on the day's call list (ADR 0066) debtorKey=9f2c1a7e4b0d3e61 contractId=C-1"},
		{PK, PhoneLookup("t042", "5f0c9e2b7a1d4c3e8b6a0f1e2d3c4b5a"), "tenant tenantId=t042 / phone lookup: the debtors registered with one phone, by the phone's HMAC (ADR 0084) phoneHash=5f0c9e2b7a1d4c3e8b6a0f1e2d3c4b5a"},
		{PK, ContractLookup("t042", "C-2026-004512"), "tenant tenantId=t042 / contract-id lookup: the debtors holding a contract of that id (ADR 0084) contractId=C-2026-004512"},
		{SK, LookupEntry("9f2c1a7e4b0d3e61"), "a lookup's entry naming one debtor (ADR 0084) debtorKey=9f2c1a7e4b0d3e61"},
		{SK, Run("2026-08-10", 3), "agenda run of one shard on one date: lease and checkpoint date=2026-08-10 shard=03"},
		{SK, Wake("2026-08-10", time.Date(2026, 8, 10, 13, 0, 0, 0, time.UTC)), "agenda wake-up: a contact window opening that blocked contacts wait for (ADR 0064) date=2026-08-10 ts=2026-08-10T13:00:00.000Z"},
		{PK, Outbox("t042", 5), "tenant tenantId=t042 / contact outbox of one agenda shard: attempts still to deliver (ADR 0062) shard=05"},
		{SK, OutboxEntry("8c0a"), "an outbox entry: one contact attempt to deliver (ADR 0062) attemptId=8c0a"},
		{SK, ShardLease(3), "agenda lease of one shard across dates (ADR 0063) shard=03"},
		{PK, System, "platform system partition (stream consumer leases and checkpoints)"},
		{SK, Shard("2026-09-24T12:00:00.000", "shardId-00000001790000000000-0a1b2c3d"), "stream shard: the consumer's lease and checkpoint (ADR 0047) streamLabel=2026-09-24T12:00:00.000 shardId=shardId-00000001790000000000-0a1b2c3d"},
		{SK, CountersSeed("2026-09-24T12:00:00.000"), "whether a stream's bucket counters were counted from the portfolio index (ADR 0079) streamLabel=2026-09-24T12:00:00.000"},
		{SK, BucketSummary("D031_060"), "a portfolio bucket's counters, maintained from the stream (ADR 0028) bucket=D031_060"},
		{GSI1PK, Agenda("t042", "2026-09-24", 7), "tenant tenantId=t042 / agenda partition date=2026-09-24 shard=07"},
		{GSI1SK, AgendaEntry("SMS_D5", "C-1"), "agenda entry nextAction=SMS_D5 contractId=C-1"},
		{GSI2PK, Bucket("t042", "D031_060"), "tenant tenantId=t042 / bucket partition bucket=D031_060"},
		{GSI3PK, Profiles("t042"), "tenant tenantId=t042 / tenant's debtor profiles"},
	}
	for _, tt := range tests {
		p, err := Parse(tt.attr, tt.key)
		if err != nil {
			t.Errorf("Parse(%s, %q): %v", tt.attr, tt.key, err)
			continue
		}
		if got := p.String(); got != tt.want {
			t.Errorf("Parse(%s, %q) = %q, want %q", tt.attr, tt.key, got, tt.want)
		}
	}
}

func TestParseRejectsUnknownShapes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		attr Attr
		key  string
	}{
		{PK, "X#1"},
		{PK, "T"},
		{PK, "T#t1#D"},
		{SK, "CT#c#XX#1"},
		{SK, "CT##IN#001"},
		{GSI1SK, "nohash"},
	} {
		if _, err := Parse(tt.attr, tt.key); err == nil {
			t.Errorf("Parse(%s, %q) accepted", tt.attr, tt.key)
		}
	}
}

func TestPrefixesSelectOnlyTheirFamily(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 8, 10, 0, 0, 0, 0, time.UTC)
	ev := Event("C-1", 7, at, "e")
	in := Installment("C-1", 7)
	if strings.HasPrefix(ev, InstallmentsPrefix("C-1")) || !strings.HasPrefix(in, InstallmentsPrefix("C-1")) {
		t.Error("instalment prefix selects the wrong items")
	}
	if !strings.HasPrefix(ev, EventsPrefix("C-1", 7)) || strings.HasPrefix(Event("C-1", 70, at, "e"), EventsPrefix("C-1", 7)) {
		t.Error("event prefix selects the wrong items")
	}
	if strings.HasPrefix(Installment("C-10", 1), InstallmentsPrefix("C-1")) {
		t.Error("contract C-1 prefix selects C-10")
	}
	if !strings.HasPrefix(Run("2026-08-10", 15), RunsOn("2026-08-10")) || strings.HasPrefix(Run("2026-08-1", 0), RunsOn("2026-08-10")) ||
		strings.HasPrefix(Run("2026-08-11", 0), RunsOn("2026-08-10")) {
		t.Error("the runs prefix selects the wrong dates")
	}
	lo, hi := ContractRange("C-1")
	inside := func(k string) bool { return k >= lo && k <= hi }
	for _, k := range []string{Contract("C-1"), Installment("C-1", 999), Installment("C-1", 1), ev, ContractCharge("C-1", "x"), Agreement("C-1", "a")} {
		if !inside(k) {
			t.Errorf("ContractRange(C-1) misses %q", k)
		}
	}
	for _, k := range []string{Contract("C-10"), Installment("C-10", 1), Contract("C-1-2"), Contract("C-1.2"), Contract("C-1_2"),
		Promise("C-1", "p"), Contract("C-0"), ProfileSK, Contact("2026-08-10", at, "x")} {
		if inside(k) {
			t.Errorf("ContractRange(C-1) selects %q", k)
		}
	}
}

// TestContactsOfOneLocalDay: the day's prefix selects that civil date's
// attempts only — not the next date's, not the counter — even when the UTC
// instant of an attempt is already the next UTC day.
func TestContactsOfOneLocalDay(t *testing.T) {
	t.Parallel()
	late := time.Date(2026, 9, 21, 2, 30, 0, 0, time.UTC) // 23:30 on the 20th in São Paulo
	day := ContactsOn("2026-09-20")
	for _, k := range []string{Contact("2026-09-20", late, "a"), Contact("2026-09-20", late.Add(-20*time.Hour), "b")} {
		if !strings.HasPrefix(k, day) {
			t.Errorf("%q not in %q", k, day)
		}
	}
	for _, k := range []string{Contact("2026-09-21", late, "c"), Contact("2026-09-02", late, "d"), Limit("2026-09-20")} {
		if strings.HasPrefix(k, day) {
			t.Errorf("%q selected by %q", k, day)
		}
	}
	if a, b := Contact("2026-09-20", late, "z"), Contact("2026-09-21", late.Add(time.Hour), "a"); a >= b {
		t.Errorf("attempts do not sort chronologically: %q >= %q", a, b)
	}
}

func TestValidIdentifier(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"C-2026-004512", "a", "A.b_c-9", strings.Repeat("x", 64)} {
		if !ValidIdentifier(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "C#1", "C 1", "C/1", "ç", strings.Repeat("x", 65), "C\n"} {
		if ValidIdentifier(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLookupPartitionsHoldOnlyTheirEntries: a phone or contract-id lookup
// partition is apart from every debtor partition (the 360's Query never
// reads it) and its entries are one begins_with range, one per debtor.
func TestLookupPartitionsHoldOnlyTheirEntries(t *testing.T) {
	t.Parallel()
	for _, pk := range []string{PhoneLookup("t042", "ab12"), ContractLookup("t042", "C-1")} {
		if strings.HasPrefix(pk, Debtor("t042", "")) || !strings.HasPrefix(pk, TenantPrefix("t042")) {
			t.Errorf("%q: not a tenant's own lookup partition", pk)
		}
	}
	if ContractLookup("t042", "C-1") == ContractLookup("t042", "C-10") || PhoneLookup("t1", "ab") == PhoneLookup("t2", "ab") {
		t.Error("lookup partitions collide")
	}
	a, b := LookupEntry("9f2c1a7e4b0d3e61"), LookupEntry("0a2c1a7e4b0d3e61")
	if !strings.HasPrefix(a, LookupEntryPrefix) || !strings.HasPrefix(b, LookupEntryPrefix) || a == b {
		t.Errorf("entries %q, %q", a, b)
	}
	for _, sk := range []string{ProfileSK, Contract("C-1"), DebtorEvent(time.Now(), "e")} {
		if strings.HasPrefix(sk, LookupEntryPrefix) {
			t.Errorf("%q selected by the lookup entries' prefix", sk)
		}
	}
}
