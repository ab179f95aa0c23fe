package wire

import (
	"encoding/json"

	"lastro/ddblocal/internal/av"
)

// The request and response shapes of the DynamoDB JSON 1.0 protocol that
// the store serves. Pointers mark members whose absence matters.

type KeySchemaElement struct {
	AttributeName string `json:"AttributeName"`
	KeyType       string `json:"KeyType"`
}

type AttributeDefinition struct {
	AttributeName string `json:"AttributeName"`
	AttributeType string `json:"AttributeType"`
}

type Projection struct {
	ProjectionType   string   `json:"ProjectionType,omitempty"`
	NonKeyAttributes []string `json:"NonKeyAttributes,omitempty"`
}

type ProvisionedThroughput struct {
	ReadCapacityUnits  *int64 `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits *int64 `json:"WriteCapacityUnits,omitempty"`
}

type OnDemandThroughput struct {
	MaxReadRequestUnits  *int64 `json:"MaxReadRequestUnits,omitempty"`
	MaxWriteRequestUnits *int64 `json:"MaxWriteRequestUnits,omitempty"`
}

type IndexSpec struct {
	IndexName             *string                `json:"IndexName"`
	KeySchema             []KeySchemaElement     `json:"KeySchema"`
	Projection            *Projection            `json:"Projection"`
	ProvisionedThroughput *ProvisionedThroughput `json:"ProvisionedThroughput,omitempty"`
	OnDemandThroughput    *OnDemandThroughput    `json:"OnDemandThroughput,omitempty"`
	WarmThroughput        *WarmThroughputSpec    `json:"WarmThroughput,omitempty"`
}

type WarmThroughputSpec struct {
	ReadUnitsPerSecond  *int64 `json:"ReadUnitsPerSecond,omitempty"`
	WriteUnitsPerSecond *int64 `json:"WriteUnitsPerSecond,omitempty"`
}

type StreamSpecification struct {
	StreamEnabled  *bool  `json:"StreamEnabled,omitempty"`
	StreamViewType string `json:"StreamViewType,omitempty"`
}

type SSESpecification struct {
	Enabled        *bool  `json:"Enabled,omitempty"`
	SSEType        string `json:"SSEType,omitempty"`
	KMSMasterKeyId string `json:"KMSMasterKeyId,omitempty"`
}

type Tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type CreateTableInput struct {
	TableName                 *string                `json:"TableName"`
	AttributeDefinitions      []AttributeDefinition  `json:"AttributeDefinitions"`
	KeySchema                 []KeySchemaElement     `json:"KeySchema"`
	LocalSecondaryIndexes     []IndexSpec            `json:"LocalSecondaryIndexes"`
	GlobalSecondaryIndexes    []IndexSpec            `json:"GlobalSecondaryIndexes"`
	BillingMode               string                 `json:"BillingMode"`
	ProvisionedThroughput     *ProvisionedThroughput `json:"ProvisionedThroughput"`
	OnDemandThroughput        *OnDemandThroughput    `json:"OnDemandThroughput"`
	StreamSpecification       *StreamSpecification   `json:"StreamSpecification"`
	SSESpecification          *SSESpecification      `json:"SSESpecification"`
	Tags                      []Tag                  `json:"Tags"`
	TableClass                string                 `json:"TableClass"`
	DeletionProtectionEnabled *bool                  `json:"DeletionProtectionEnabled"`
	WarmThroughput            *WarmThroughputSpec    `json:"WarmThroughput"`
}

type gsiUpdate struct {
	Create *IndexSpec `json:"Create"`
	Delete *struct {
		IndexName *string `json:"IndexName"`
	} `json:"Delete"`
	Update *struct {
		IndexName             *string                `json:"IndexName"`
		ProvisionedThroughput *ProvisionedThroughput `json:"ProvisionedThroughput"`
		OnDemandThroughput    *OnDemandThroughput    `json:"OnDemandThroughput"`
		WarmThroughput        *WarmThroughputSpec    `json:"WarmThroughput"`
	} `json:"Update"`
}

type UpdateTableInput struct {
	TableName                   *string                `json:"TableName"`
	AttributeDefinitions        []AttributeDefinition  `json:"AttributeDefinitions"`
	BillingMode                 string                 `json:"BillingMode"`
	ProvisionedThroughput       *ProvisionedThroughput `json:"ProvisionedThroughput"`
	OnDemandThroughput          *OnDemandThroughput    `json:"OnDemandThroughput"`
	GlobalSecondaryIndexUpdates []gsiUpdate            `json:"GlobalSecondaryIndexUpdates"`
	StreamSpecification         *StreamSpecification   `json:"StreamSpecification"`
	SSESpecification            *SSESpecification      `json:"SSESpecification"`
	TableClass                  string                 `json:"TableClass"`
	DeletionProtectionEnabled   *bool                  `json:"DeletionProtectionEnabled"`
	WarmThroughput              *WarmThroughputSpec    `json:"WarmThroughput"`
	ReplicaUpdates              []json.RawMessage      `json:"ReplicaUpdates"`
	MultiRegionConsistency      *string                `json:"MultiRegionConsistency"`
}

type TableNameInput struct {
	TableName *string `json:"TableName"`
}

type ListTablesInput struct {
	ExclusiveStartTableName *string `json:"ExclusiveStartTableName"`
	Limit                   *int64  `json:"Limit"`
}

// ExpectedAttr is one entry of the legacy Expected parameter.
type ExpectedAttr struct {
	Value              *av.Wire   `json:"Value"`
	Exists             *bool      `json:"Exists"`
	ComparisonOperator *string    `json:"ComparisonOperator"`
	AttributeValueList []*av.Wire `json:"AttributeValueList"`
}

// Condition is one entry of the legacy KeyConditions, QueryFilter and
// ScanFilter parameters.
type Condition struct {
	ComparisonOperator *string    `json:"ComparisonOperator"`
	AttributeValueList []*av.Wire `json:"AttributeValueList"`
}

// AttributeUpdate is one entry of the legacy AttributeUpdates parameter.
type AttributeUpdate struct {
	Value  *av.Wire `json:"Value"`
	Action *string  `json:"Action"`
}

// ExprParams are the expression members shared by most operations.
type ExprParams struct {
	ExpressionAttributeNames  map[string]string   `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues map[string]*av.Wire `json:"ExpressionAttributeValues"`
}

type GetItemInput struct {
	TableName                 *string             `json:"TableName"`
	Key                       av.WireItem         `json:"Key"`
	ConsistentRead            *bool               `json:"ConsistentRead"`
	ProjectionExpression      *string             `json:"ProjectionExpression"`
	AttributesToGet           []string            `json:"AttributesToGet"`
	ReturnConsumedCapacity    string              `json:"ReturnConsumedCapacity"`
	ExpressionAttributeNames  map[string]string   `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues map[string]*av.Wire `json:"ExpressionAttributeValues"`
}

// writeOptions are the members PutItem, UpdateItem and DeleteItem share.
type writeOptions struct {
	ConditionExpression                 *string                  `json:"ConditionExpression"`
	Expected                            map[string]*ExpectedAttr `json:"Expected"`
	ConditionalOperator                 *string                  `json:"ConditionalOperator"`
	ReturnValues                        string                   `json:"ReturnValues"`
	ReturnConsumedCapacity              string                   `json:"ReturnConsumedCapacity"`
	ReturnItemCollectionMetrics         string                   `json:"ReturnItemCollectionMetrics"`
	ReturnValuesOnConditionCheckFailure string                   `json:"ReturnValuesOnConditionCheckFailure"`
	ExprParams
}

type PutItemInput struct {
	TableName *string     `json:"TableName"`
	Item      av.WireItem `json:"Item"`
	writeOptions
}

type UpdateItemInput struct {
	TableName        *string                     `json:"TableName"`
	Key              av.WireItem                 `json:"Key"`
	UpdateExpression *string                     `json:"UpdateExpression"`
	AttributeUpdates map[string]*AttributeUpdate `json:"AttributeUpdates"`
	writeOptions
}

type DeleteItemInput struct {
	TableName *string     `json:"TableName"`
	Key       av.WireItem `json:"Key"`
	writeOptions
}

type QueryInput struct {
	TableName              *string               `json:"TableName"`
	IndexName              *string               `json:"IndexName"`
	Select                 string                `json:"Select"`
	Limit                  *int64                `json:"Limit"`
	ConsistentRead         *bool                 `json:"ConsistentRead"`
	KeyConditionExpression *string               `json:"KeyConditionExpression"`
	FilterExpression       *string               `json:"FilterExpression"`
	ProjectionExpression   *string               `json:"ProjectionExpression"`
	ExclusiveStartKey      av.WireItem           `json:"ExclusiveStartKey"`
	ScanIndexForward       *bool                 `json:"ScanIndexForward"`
	ReturnConsumedCapacity string                `json:"ReturnConsumedCapacity"`
	KeyConditions          map[string]*Condition `json:"KeyConditions"`
	QueryFilter            map[string]*Condition `json:"QueryFilter"`
	ConditionalOperator    *string               `json:"ConditionalOperator"`
	AttributesToGet        []string              `json:"AttributesToGet"`
	ExprParams
}

type ScanInput struct {
	TableName              *string               `json:"TableName"`
	IndexName              *string               `json:"IndexName"`
	Select                 string                `json:"Select"`
	Limit                  *int64                `json:"Limit"`
	ConsistentRead         *bool                 `json:"ConsistentRead"`
	FilterExpression       *string               `json:"FilterExpression"`
	ProjectionExpression   *string               `json:"ProjectionExpression"`
	ExclusiveStartKey      av.WireItem           `json:"ExclusiveStartKey"`
	Segment                *int64                `json:"Segment"`
	TotalSegments          *int64                `json:"TotalSegments"`
	ReturnConsumedCapacity string                `json:"ReturnConsumedCapacity"`
	ScanFilter             map[string]*Condition `json:"ScanFilter"`
	ConditionalOperator    *string               `json:"ConditionalOperator"`
	AttributesToGet        []string              `json:"AttributesToGet"`
	ExprParams
}

type KeysAndAttributes struct {
	Keys                     []av.WireItem     `json:"Keys"`
	ConsistentRead           *bool             `json:"ConsistentRead"`
	ProjectionExpression     *string           `json:"ProjectionExpression"`
	ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
	AttributesToGet          []string          `json:"AttributesToGet"`
}

type BatchGetItemInput struct {
	RequestItems           map[string]*KeysAndAttributes `json:"RequestItems"`
	ReturnConsumedCapacity string                        `json:"ReturnConsumedCapacity"`
}

type WriteRequest struct {
	PutRequest *struct {
		Item av.WireItem `json:"Item"`
	} `json:"PutRequest,omitempty"`
	DeleteRequest *struct {
		Key av.WireItem `json:"Key"`
	} `json:"DeleteRequest,omitempty"`
}

type BatchWriteItemInput struct {
	RequestItems                map[string][]*WriteRequest `json:"RequestItems"`
	ReturnConsumedCapacity      string                     `json:"ReturnConsumedCapacity"`
	ReturnItemCollectionMetrics string                     `json:"ReturnItemCollectionMetrics"`
}

type TransactOp struct {
	TableName                           *string     `json:"TableName"`
	Key                                 av.WireItem `json:"Key"`
	Item                                av.WireItem `json:"Item"`
	ConditionExpression                 *string     `json:"ConditionExpression"`
	UpdateExpression                    *string     `json:"UpdateExpression"`
	ReturnValuesOnConditionCheckFailure string      `json:"ReturnValuesOnConditionCheckFailure"`
	ExprParams
}

type TransactWriteItem struct {
	ConditionCheck *TransactOp `json:"ConditionCheck"`
	Put            *TransactOp `json:"Put"`
	Delete         *TransactOp `json:"Delete"`
	Update         *TransactOp `json:"Update"`
}

type TransactWriteItemsInput struct {
	TransactItems               []*TransactWriteItem `json:"TransactItems"`
	ClientRequestToken          *string              `json:"ClientRequestToken"`
	ReturnConsumedCapacity      string               `json:"ReturnConsumedCapacity"`
	ReturnItemCollectionMetrics string               `json:"ReturnItemCollectionMetrics"`
}

type transactGetItem struct {
	Get *struct {
		TableName                *string           `json:"TableName"`
		Key                      av.WireItem       `json:"Key"`
		ProjectionExpression     *string           `json:"ProjectionExpression"`
		ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
	} `json:"Get"`
}

type TransactGetItemsInput struct {
	TransactItems          []*transactGetItem `json:"TransactItems"`
	ReturnConsumedCapacity string             `json:"ReturnConsumedCapacity"`
}

// ConsumedCapacity is the ConsumedCapacity member of responses.
type ConsumedCapacity struct {
	TableName              string               `json:"TableName"`
	CapacityUnits          float64              `json:"CapacityUnits"`
	ReadCapacityUnits      *float64             `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits     *float64             `json:"WriteCapacityUnits,omitempty"`
	Table                  *Capacity            `json:"Table,omitempty"`
	GlobalSecondaryIndexes map[string]*Capacity `json:"GlobalSecondaryIndexes,omitempty"`
	LocalSecondaryIndexes  map[string]*Capacity `json:"LocalSecondaryIndexes,omitempty"`
}

type Capacity struct {
	CapacityUnits      float64  `json:"CapacityUnits"`
	ReadCapacityUnits  *float64 `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits *float64 `json:"WriteCapacityUnits,omitempty"`
}

// FrontEnd runs the checks DynamoDB's newer front end reports alone when
// a PutItem, UpdateItem or DeleteItem carries its required members (the
// item or key: hasRequired): an empty table name, then an unknown
// ConditionalOperator.
func (o *writeOptions) FrontEnd(table *string, hasRequired bool) error {
	if err := emptyTableName(table, hasRequired); err != nil {
		return err
	}
	return UnknownConditionalOperator(o.ConditionalOperator, table != nil, hasRequired)
}

func (ti *TransactWriteItem) Actions() map[string]*TransactOp {
	return map[string]*TransactOp{"ConditionCheck": ti.ConditionCheck, "Put": ti.Put, "Delete": ti.Delete, "Update": ti.Update}
}
