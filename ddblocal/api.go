package ddblocal

import (
	"encoding/json"

	"lastro/ddblocal/internal/av"
)

// The request and response shapes of the DynamoDB JSON 1.0 protocol that
// the store serves. Pointers mark members whose absence matters.

type keySchemaElement struct {
	AttributeName string `json:"AttributeName"`
	KeyType       string `json:"KeyType"`
}

type attributeDefinition struct {
	AttributeName string `json:"AttributeName"`
	AttributeType string `json:"AttributeType"`
}

type projection struct {
	ProjectionType   string   `json:"ProjectionType,omitempty"`
	NonKeyAttributes []string `json:"NonKeyAttributes,omitempty"`
}

type provisionedThroughput struct {
	ReadCapacityUnits  *int64 `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits *int64 `json:"WriteCapacityUnits,omitempty"`
}

type onDemandThroughput struct {
	MaxReadRequestUnits  *int64 `json:"MaxReadRequestUnits,omitempty"`
	MaxWriteRequestUnits *int64 `json:"MaxWriteRequestUnits,omitempty"`
}

type indexSpec struct {
	IndexName             *string                `json:"IndexName"`
	KeySchema             []keySchemaElement     `json:"KeySchema"`
	Projection            *projection            `json:"Projection"`
	ProvisionedThroughput *provisionedThroughput `json:"ProvisionedThroughput,omitempty"`
	OnDemandThroughput    *onDemandThroughput    `json:"OnDemandThroughput,omitempty"`
	WarmThroughput        *warmThroughputSpec    `json:"WarmThroughput,omitempty"`
}

type warmThroughputSpec struct {
	ReadUnitsPerSecond  *int64 `json:"ReadUnitsPerSecond,omitempty"`
	WriteUnitsPerSecond *int64 `json:"WriteUnitsPerSecond,omitempty"`
}

type streamSpecification struct {
	StreamEnabled  *bool  `json:"StreamEnabled,omitempty"`
	StreamViewType string `json:"StreamViewType,omitempty"`
}

type sseSpecification struct {
	Enabled        *bool  `json:"Enabled,omitempty"`
	SSEType        string `json:"SSEType,omitempty"`
	KMSMasterKeyId string `json:"KMSMasterKeyId,omitempty"`
}

type tag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type createTableInput struct {
	TableName                 *string                `json:"TableName"`
	AttributeDefinitions      []attributeDefinition  `json:"AttributeDefinitions"`
	KeySchema                 []keySchemaElement     `json:"KeySchema"`
	LocalSecondaryIndexes     []indexSpec            `json:"LocalSecondaryIndexes"`
	GlobalSecondaryIndexes    []indexSpec            `json:"GlobalSecondaryIndexes"`
	BillingMode               string                 `json:"BillingMode"`
	ProvisionedThroughput     *provisionedThroughput `json:"ProvisionedThroughput"`
	OnDemandThroughput        *onDemandThroughput    `json:"OnDemandThroughput"`
	StreamSpecification       *streamSpecification   `json:"StreamSpecification"`
	SSESpecification          *sseSpecification      `json:"SSESpecification"`
	Tags                      []tag                  `json:"Tags"`
	TableClass                string                 `json:"TableClass"`
	DeletionProtectionEnabled *bool                  `json:"DeletionProtectionEnabled"`
	WarmThroughput            *warmThroughputSpec    `json:"WarmThroughput"`
}

type gsiUpdate struct {
	Create *indexSpec `json:"Create"`
	Delete *struct {
		IndexName *string `json:"IndexName"`
	} `json:"Delete"`
	Update *struct {
		IndexName             *string                `json:"IndexName"`
		ProvisionedThroughput *provisionedThroughput `json:"ProvisionedThroughput"`
		OnDemandThroughput    *onDemandThroughput    `json:"OnDemandThroughput"`
		WarmThroughput        *warmThroughputSpec    `json:"WarmThroughput"`
	} `json:"Update"`
}

type updateTableInput struct {
	TableName                   *string                `json:"TableName"`
	AttributeDefinitions        []attributeDefinition  `json:"AttributeDefinitions"`
	BillingMode                 string                 `json:"BillingMode"`
	ProvisionedThroughput       *provisionedThroughput `json:"ProvisionedThroughput"`
	OnDemandThroughput          *onDemandThroughput    `json:"OnDemandThroughput"`
	GlobalSecondaryIndexUpdates []gsiUpdate            `json:"GlobalSecondaryIndexUpdates"`
	StreamSpecification         *streamSpecification   `json:"StreamSpecification"`
	SSESpecification            *sseSpecification      `json:"SSESpecification"`
	TableClass                  string                 `json:"TableClass"`
	DeletionProtectionEnabled   *bool                  `json:"DeletionProtectionEnabled"`
	WarmThroughput              *warmThroughputSpec    `json:"WarmThroughput"`
	ReplicaUpdates              []json.RawMessage      `json:"ReplicaUpdates"`
	MultiRegionConsistency      *string                `json:"MultiRegionConsistency"`
}

type tableNameInput struct {
	TableName *string `json:"TableName"`
}

type listTablesInput struct {
	ExclusiveStartTableName *string `json:"ExclusiveStartTableName"`
	Limit                   *int64  `json:"Limit"`
}

// expectedAttr is one entry of the legacy Expected parameter.
type expectedAttr struct {
	Value              *av.Wire   `json:"Value"`
	Exists             *bool      `json:"Exists"`
	ComparisonOperator *string    `json:"ComparisonOperator"`
	AttributeValueList []*av.Wire `json:"AttributeValueList"`
}

// condition is one entry of the legacy KeyConditions, QueryFilter and
// ScanFilter parameters.
type condition struct {
	ComparisonOperator *string    `json:"ComparisonOperator"`
	AttributeValueList []*av.Wire `json:"AttributeValueList"`
}

// attributeUpdate is one entry of the legacy AttributeUpdates parameter.
type attributeUpdate struct {
	Value  *av.Wire `json:"Value"`
	Action *string  `json:"Action"`
}

// exprParams are the expression members shared by most operations.
type exprParams struct {
	ExpressionAttributeNames  map[string]string   `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues map[string]*av.Wire `json:"ExpressionAttributeValues"`
}

type getItemInput struct {
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
	Expected                            map[string]*expectedAttr `json:"Expected"`
	ConditionalOperator                 *string                  `json:"ConditionalOperator"`
	ReturnValues                        string                   `json:"ReturnValues"`
	ReturnConsumedCapacity              string                   `json:"ReturnConsumedCapacity"`
	ReturnItemCollectionMetrics         string                   `json:"ReturnItemCollectionMetrics"`
	ReturnValuesOnConditionCheckFailure string                   `json:"ReturnValuesOnConditionCheckFailure"`
	exprParams
}

type putItemInput struct {
	TableName *string     `json:"TableName"`
	Item      av.WireItem `json:"Item"`
	writeOptions
}

type updateItemInput struct {
	TableName        *string                     `json:"TableName"`
	Key              av.WireItem                 `json:"Key"`
	UpdateExpression *string                     `json:"UpdateExpression"`
	AttributeUpdates map[string]*attributeUpdate `json:"AttributeUpdates"`
	writeOptions
}

type deleteItemInput struct {
	TableName *string     `json:"TableName"`
	Key       av.WireItem `json:"Key"`
	writeOptions
}

type queryInput struct {
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
	KeyConditions          map[string]*condition `json:"KeyConditions"`
	QueryFilter            map[string]*condition `json:"QueryFilter"`
	ConditionalOperator    *string               `json:"ConditionalOperator"`
	AttributesToGet        []string              `json:"AttributesToGet"`
	exprParams
}

type scanInput struct {
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
	ScanFilter             map[string]*condition `json:"ScanFilter"`
	ConditionalOperator    *string               `json:"ConditionalOperator"`
	AttributesToGet        []string              `json:"AttributesToGet"`
	exprParams
}

type keysAndAttributes struct {
	Keys                     []av.WireItem     `json:"Keys"`
	ConsistentRead           *bool             `json:"ConsistentRead"`
	ProjectionExpression     *string           `json:"ProjectionExpression"`
	ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
	AttributesToGet          []string          `json:"AttributesToGet"`
}

type batchGetItemInput struct {
	RequestItems           map[string]*keysAndAttributes `json:"RequestItems"`
	ReturnConsumedCapacity string                        `json:"ReturnConsumedCapacity"`
}

type writeRequest struct {
	PutRequest *struct {
		Item av.WireItem `json:"Item"`
	} `json:"PutRequest,omitempty"`
	DeleteRequest *struct {
		Key av.WireItem `json:"Key"`
	} `json:"DeleteRequest,omitempty"`
}

type batchWriteItemInput struct {
	RequestItems                map[string][]*writeRequest `json:"RequestItems"`
	ReturnConsumedCapacity      string                     `json:"ReturnConsumedCapacity"`
	ReturnItemCollectionMetrics string                     `json:"ReturnItemCollectionMetrics"`
}

type transactOp struct {
	TableName                           *string     `json:"TableName"`
	Key                                 av.WireItem `json:"Key"`
	Item                                av.WireItem `json:"Item"`
	ConditionExpression                 *string     `json:"ConditionExpression"`
	UpdateExpression                    *string     `json:"UpdateExpression"`
	ReturnValuesOnConditionCheckFailure string      `json:"ReturnValuesOnConditionCheckFailure"`
	exprParams
}

type transactWriteItem struct {
	ConditionCheck *transactOp `json:"ConditionCheck"`
	Put            *transactOp `json:"Put"`
	Delete         *transactOp `json:"Delete"`
	Update         *transactOp `json:"Update"`
}

type transactWriteItemsInput struct {
	TransactItems               []*transactWriteItem `json:"TransactItems"`
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

type transactGetItemsInput struct {
	TransactItems          []*transactGetItem `json:"TransactItems"`
	ReturnConsumedCapacity string             `json:"ReturnConsumedCapacity"`
}

// consumedCapacity is the ConsumedCapacity member of responses.
type consumedCapacity struct {
	TableName              string               `json:"TableName"`
	CapacityUnits          float64              `json:"CapacityUnits"`
	ReadCapacityUnits      *float64             `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits     *float64             `json:"WriteCapacityUnits,omitempty"`
	Table                  *capacity            `json:"Table,omitempty"`
	GlobalSecondaryIndexes map[string]*capacity `json:"GlobalSecondaryIndexes,omitempty"`
	LocalSecondaryIndexes  map[string]*capacity `json:"LocalSecondaryIndexes,omitempty"`
}

type capacity struct {
	CapacityUnits      float64  `json:"CapacityUnits"`
	ReadCapacityUnits  *float64 `json:"ReadCapacityUnits,omitempty"`
	WriteCapacityUnits *float64 `json:"WriteCapacityUnits,omitempty"`
}
