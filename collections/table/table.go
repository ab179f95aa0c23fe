// Package table defines Lastro's single DynamoDB table: its key schema, the
// three sparse GSIs named after the question they answer, streams and TTL,
// as a CreateTable request for any DynamoDB endpoint and as CloudFormation
// for AWS (docs/design.md#indexes).
package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Index names: each answers one question.
const (
	Agenda        = "agenda"         // GSI1: contracts with an action due on a date, per shard
	Portfolio     = "portfolio"      // GSI2: contracts by bucket, largest balance first
	TenantDebtors = "tenant-debtors" // GSI3: a tenant's debtor profiles (offboarding, key rotation)
)

// TTLAttribute holds the epoch-seconds expiry of housekeeping items.
const TTLAttribute = "expiresAt"

// PartitionAttr maps an index ("" = the table) to its partition key attribute.
var PartitionAttr = map[string]string{"": "PK", Agenda: "GSI1PK", Portfolio: "GSI2PK", TenantDebtors: "GSI3PK"}

// SortAttr maps an index to its sort key attribute ("" when it has none).
var SortAttr = map[string]string{"": "SK", Agenda: "GSI1SK", Portfolio: "outstandingCents", TenantDebtors: ""}

// AgendaProjection and PortfolioProjection are the INCLUDE projections.
var (
	AgendaProjection    = []string{"debtorKey", "contractId", "bucket", "outstandingCents", "nextAction", "nextActionDate", "tenantId"}
	PortfolioProjection = []string{"debtorKey", "contractId", "oldestOverdueDueDate", "productCode", "lastContactAt"}
)

// CreateInput returns the CreateTable request for a table named name.
func CreateInput(name string) *dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(h, r string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(h), KeyType: types.KeyTypeHash}}
		if r != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(r), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			s("PK"), s("SK"), s("GSI1PK"), s("GSI1SK"), s("GSI2PK"), s("GSI3PK"),
			{AttributeName: aws.String("outstandingCents"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: key("PK", "SK"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String(Agenda), KeySchema: key("GSI1PK", "GSI1SK"),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: AgendaProjection}},
			{IndexName: aws.String(Portfolio), KeySchema: key("GSI2PK", "outstandingCents"),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: PortfolioProjection}},
			{IndexName: aws.String(TenantDebtors), KeySchema: key("GSI3PK", ""),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
		},
		StreamSpecification:       &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		DeletionProtectionEnabled: aws.Bool(true),
	}
}

// ArchiveSuffix names the archive table after the main one unless told
// otherwise: lastro → lastro-archive.
const ArchiveSuffix = "-archive"

// ArchiveInput returns the CreateTable request of the cold archive the
// stream consumer writes the TTL's deletions to: the same keys, no
// indexes, no stream, the Standard-IA class (cheaper storage, dearer
// requests: it is written once and rarely read, docs/design.md#stream-consumer).
func ArchiveInput(name string) *dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		TableClass:           types.TableClassStandardInfrequentAccess,
		AttributeDefinitions: []types.AttributeDefinition{s("PK"), s("SK")},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		DeletionProtectionEnabled: aws.Bool(true),
	}
}

// EnsureArchive creates the archive table unless it exists and waits
// until it is active. It reports whether it created the table.
func EnsureArchive(ctx context.Context, db API, name string) (created bool, err error) {
	return create(ctx, db, ArchiveInput(name))
}

// create creates table in unless it exists, without deletion protection
// (Ensure is for tests and local stores; production tables come from the
// CloudFormation), and waits until it is active. It reports whether it
// created the table.
func create(ctx context.Context, db API, in *dynamodb.CreateTableInput) (bool, error) {
	name := aws.ToString(in.TableName)
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		return false, nil
	case !errors.As(err, &nf):
		return false, fmt.Errorf("describe table %s: %w", name, err)
	}
	in.DeletionProtectionEnabled = aws.Bool(false)
	if _, err := db.CreateTable(ctx, in); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) {
			return false, fmt.Errorf("create table %s: %w", name, err)
		}
	}
	w := dynamodb.NewTableExistsWaiter(db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, 2*time.Minute); err != nil {
		return false, fmt.Errorf("wait for table %s: %w", name, err)
	}
	return true, nil
}

// API is the part of the DynamoDB client table management needs.
type API interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	UpdateContinuousBackups(context.Context, *dynamodb.UpdateContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateContinuousBackupsOutput, error)
}

// Ensure creates the table unless it exists, waits until it is active and
// turns TTL and point-in-time recovery on: PITR is what a table export
// reads (lastro export, AP11), so a fresh table exports with no setup,
// as the CloudFormation definition does on AWS. A table that exists is
// left as it is. It reports whether it created the table.
func Ensure(ctx context.Context, db API, name string) (created bool, err error) {
	created, err = create(ctx, db, CreateInput(name))
	if !created || err != nil {
		return created, err
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return true, fmt.Errorf("enable TTL on %s: %w", name, err)
	}
	if err := EnablePITR(ctx, db, name); err != nil {
		return true, err
	}
	return true, nil
}

// EnablePITR turns point-in-time recovery on for the table; enabling it
// again is a no-op that keeps the recovery window already kept.
func EnablePITR(ctx context.Context, db API, name string) error {
	_, err := db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName:                        aws.String(name),
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("enable point-in-time recovery on %s: %w", name, err)
	}
	return nil
}

// Ready reports whether the table answers a DescribeTable: the
// readiness probe, without the caller importing the SDK's types.
func Ready(ctx context.Context, db API, name string) error {
	if _, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}); err != nil {
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	return nil
}

// CloudFormation returns the AWS::DynamoDB::Table resource for the table as
// a CloudFormation template (JSON), with PITR and deletion protection on.
func CloudFormation(name string) ([]byte, error) {
	in := CreateInput(name)
	attrDefs := make([]map[string]string, 0, len(in.AttributeDefinitions))
	for _, a := range in.AttributeDefinitions {
		attrDefs = append(attrDefs, map[string]string{"AttributeName": *a.AttributeName, "AttributeType": string(a.AttributeType)})
	}
	ks := func(k []types.KeySchemaElement) []map[string]string {
		out := make([]map[string]string, len(k))
		for i, e := range k {
			out[i] = map[string]string{"AttributeName": *e.AttributeName, "KeyType": string(e.KeyType)}
		}
		return out
	}
	var gsis []map[string]any
	for _, g := range in.GlobalSecondaryIndexes {
		p := map[string]any{"ProjectionType": string(g.Projection.ProjectionType)}
		if len(g.Projection.NonKeyAttributes) > 0 {
			p["NonKeyAttributes"] = g.Projection.NonKeyAttributes
		}
		gsis = append(gsis, map[string]any{"IndexName": *g.IndexName, "KeySchema": ks(g.KeySchema), "Projection": p})
	}
	archive := name + ArchiveSuffix
	tmpl := map[string]any{
		"AWSTemplateFormatVersion": "2010-09-09",
		"Description":              "Lastro single table and its cold archive",
		"Resources": map[string]any{
			"LastroTable": map[string]any{
				"Type":           "AWS::DynamoDB::Table",
				"DeletionPolicy": "Retain",
				"Properties": map[string]any{
					"TableName":                        name,
					"BillingMode":                      "PAY_PER_REQUEST",
					"AttributeDefinitions":             attrDefs,
					"KeySchema":                        ks(in.KeySchema),
					"GlobalSecondaryIndexes":           gsis,
					"StreamSpecification":              map[string]string{"StreamViewType": "NEW_AND_OLD_IMAGES"},
					"TimeToLiveSpecification":          map[string]any{"AttributeName": TTLAttribute, "Enabled": true},
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"DeletionProtectionEnabled":        true,
					"SSESpecification":                 map[string]any{"SSEEnabled": true},
				},
			},
			// The TTL's deletions, written by the stream consumer: Standard-IA
			// (docs/design.md#stream-consumer), its own backup policy, no stream of its own.
			"LastroArchiveTable": map[string]any{
				"Type":           "AWS::DynamoDB::Table",
				"DeletionPolicy": "Retain",
				"Properties": map[string]any{
					"TableName":   archive,
					"BillingMode": "PAY_PER_REQUEST",
					"TableClass":  string(types.TableClassStandardInfrequentAccess),
					"AttributeDefinitions": []map[string]string{{"AttributeName": "PK", "AttributeType": "S"},
						{"AttributeName": "SK", "AttributeType": "S"}},
					"KeySchema":                        []map[string]string{{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}},
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"DeletionProtectionEnabled":        true,
					"SSESpecification":                 map[string]any{"SSEEnabled": true},
				},
			},
		},
	}
	return json.MarshalIndent(tmpl, "", "  ")
}
