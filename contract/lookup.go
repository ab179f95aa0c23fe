package contract

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/keys"
	"lastro/collections/kit"
)

// TypeLookup is the type of a contract-id lookup entry.
const TypeLookup = "CONTRACT_LOOKUP"

// lookupItem is one entry of a contract-id lookup partition
// (T#<t>#CTID#<contractId> / DEBTOR#<debtorKey>): a debtor holding a
// contract of that id. Contract ids are unique per debtor only, so the
// partition may name several debtors; a Query lists them all (ADR 0084).
// This file is the only writer of the shape.
type lookupItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	TenantID   string `dynamodbav:"tenantId"`
	DebtorKey  string `dynamodbav:"debtorKey"`
	ContractID string `dynamodbav:"contractId"`
	CreatedAt  string `dynamodbav:"createdAt"`
}

// LookupKey is the key of the contract-id lookup entry naming dk.
func LookupKey(tenantID, contractID, dk string) kit.Key {
	return kit.Key{PK: keys.ContractLookup(tenantID, contractID), SK: keys.LookupEntry(dk)}
}

// LookupPut is the write of the contract-id lookup entry naming dk, for
// the transaction that creates the contract's header (or that moves the
// debtor to a new key): conditioned on the entry not existing, as the
// header is.
func LookupPut(tenantID, contractID, dk, createdAt string) (kit.Action, error) {
	it, err := lookupEntry(tenantID, contractID, dk, createdAt)
	if err != nil {
		return kit.Action{}, err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	return kit.PutAction(it, &notExists), nil
}

func lookupEntry(tenantID, contractID, dk, createdAt string) (kit.Item, error) {
	k := LookupKey(tenantID, contractID, dk)
	return marshal(lookupItem{PK: k.PK, SK: k.SK, Type: TypeLookup, TenantID: tenantID, DebtorKey: dk, ContractID: contractID, CreatedAt: createdAt})
}

// FileLookup writes the contract-id lookup entry of an existing contract
// header that has none (a contract created before the lookups, filed by
// the lookups backfill, ADR 0084): one put conditioned on the entry not
// existing, so a rerun or a racing writer is never overwritten
// (kit.ErrConditionFailed then).
func FileLookup(ctx context.Context, db *kit.Tenant, tenantID, contractID, dk, createdAt string) error {
	if !keys.ValidIdentifier(contractID) || !keys.ValidDebtorKey(dk) {
		return errInvalidContractID
	}
	it, err := lookupEntry(tenantID, contractID, dk, createdAt)
	if err != nil {
		return err
	}
	notExists := expression.AttributeNotExists(expression.Name("PK"))
	return db.Put(ctx, it, &notExists)
}

// DebtorsOf lists, strongly consistent, the debtor keys holding a
// contract of contractID: one Query of its lookup partition, at most
// limit of them, more telling whether others exist.
func DebtorsOf(ctx context.Context, db *kit.Tenant, tenantID, contractID string, limit int) (dks []string, more bool, err error) {
	if !keys.ValidIdentifier(contractID) {
		return nil, false, errInvalidContractID
	}
	q := kit.Query{Partition: keys.ContractLookup(tenantID, contractID), Sort: kit.BeginsWith(keys.LookupEntryPrefix),
		Consistent: true, Limit: int32(limit + 1)}
	page, err := db.QueryPage(ctx, q, "")
	if err != nil {
		return nil, false, fmt.Errorf("contract lookup: %w", err)
	}
	for _, it := range page.Items {
		var rec lookupItem
		if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
			return nil, false, fmt.Errorf("decode contract lookup: %w", err)
		}
		if len(dks) == limit {
			return dks, true, nil
		}
		dks = append(dks, rec.DebtorKey)
	}
	return dks, false, nil
}
