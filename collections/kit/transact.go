package kit

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Action is one action of a transaction; build it with Put, Update,
// Delete or Check.
type Action struct {
	pk    string
	build func(table string) (types.TransactWriteItem, error)
}

func condExpr(b expression.Builder, cond *expression.ConditionBuilder) expression.Builder {
	if cond != nil {
		return b.WithCondition(*cond)
	}
	return b
}

// PutAction writes item (under cond when given).
func PutAction(item Item, cond *expression.ConditionBuilder) Action {
	return Action{pk: pkOf(item), build: func(table string) (types.TransactWriteItem, error) {
		p := &types.Put{TableName: &table, Item: item, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
		if cond != nil {
			e, err := expression.NewBuilder().WithCondition(*cond).Build()
			if err != nil {
				return types.TransactWriteItem{}, err
			}
			p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues = e.Condition(), e.Names(), e.Values()
		}
		return types.TransactWriteItem{Put: p}, nil
	}}
}

// UpdateAction updates the item at key (under cond when given).
func UpdateAction(key Key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder) Action {
	return Action{pk: key.PK, build: func(table string) (types.TransactWriteItem, error) {
		e, err := condExpr(expression.NewBuilder().WithUpdate(upd), cond).Build()
		if err != nil {
			return types.TransactWriteItem{}, err
		}
		return types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: key.av(), UpdateExpression: e.Update(),
			ConditionExpression: e.Condition(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
	}}
}

// DeleteAction deletes the item at key (under cond when given).
func DeleteAction(key Key, cond *expression.ConditionBuilder) Action {
	return Action{pk: key.PK, build: func(table string) (types.TransactWriteItem, error) {
		d := &types.Delete{TableName: &table, Key: key.av()}
		if cond != nil {
			e, err := expression.NewBuilder().WithCondition(*cond).Build()
			if err != nil {
				return types.TransactWriteItem{}, err
			}
			d.ConditionExpression, d.ExpressionAttributeNames, d.ExpressionAttributeValues = e.Condition(), e.Names(), e.Values()
		}
		return types.TransactWriteItem{Delete: d}, nil
	}}
}

// CheckAction requires cond to hold on the item at key without writing it.
func CheckAction(key Key, cond expression.ConditionBuilder) Action {
	return Action{pk: key.PK, build: func(table string) (types.TransactWriteItem, error) {
		e, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return types.TransactWriteItem{}, err
		}
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: key.av(),
			ConditionExpression: e.Condition(), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}}, nil
	}}
}

// Transact applies actions all or none. A cancellation comes back as an
// error wrapping *TxCanceled, which matches ErrConditionFailed,
// ErrConflict or ErrThrottled with errors.Is.
func (t *Tenant) Transact(ctx context.Context, actions ...Action) error {
	items := make([]types.TransactWriteItem, len(actions))
	for i, a := range actions {
		if err := t.guard("TransactWriteItems", a.pk); err != nil {
			return err
		}
		it, err := a.build(t.k.table)
		if err != nil {
			return fmt.Errorf("kit: transaction action %d: %w", i, err)
		}
		items[i] = it
	}
	out, err := t.k.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		return classify("TransactWriteItems", err)
	}
	t.k.recordList(ctx, "TransactWriteItems", out.ConsumedCapacity)
	return nil
}

// Write applies actions all or none, like Transact, but a single Put goes
// out as a plain conditional PutItem: the same atomicity for one item at
// half the write units (a transaction doubles them). Its failed condition
// is ErrConditionFailed, as from a transaction.
func (t *Tenant) Write(ctx context.Context, actions ...Action) error {
	if len(actions) != 1 {
		return t.Transact(ctx, actions...)
	}
	if err := t.guard("PutItem", actions[0].pk); err != nil {
		return err
	}
	it, err := actions[0].build(t.k.table)
	if err != nil {
		return fmt.Errorf("kit: write action: %w", err)
	}
	if it.Put == nil {
		return t.Transact(ctx, actions...)
	}
	p := it.Put
	out, err := t.k.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
		ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		return classify("PutItem", err)
	}
	t.k.record(ctx, "PutItem", out.ConsumedCapacity)
	return nil
}
