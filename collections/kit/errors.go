package kit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"lastro/collections/errs"
)

// Errors callers compare with errors.Is.
var (
	// ErrConditionFailed: a condition did not hold (the item changed, or
	// already exists); re-read and decide again.
	ErrConditionFailed = errors.New("kit: condition failed")
	// ErrConflict: a concurrent transaction touched the same item; retry.
	ErrConflict = errors.New("kit: transaction conflict")
	// ErrThrottled: the store shed load or failed transiently; retry later.
	ErrThrottled = errors.New("kit: throttled")
)

// TxCanceled is a canceled transaction with DynamoDB's reason per action,
// in action order.
type TxCanceled struct {
	Reasons []string // "None", "ConditionalCheckFailed", "TransactionConflict", ...
	// Items holds the current item of actions that failed their condition
	// when the action asked for it (ReturnValuesOnConditionCheckFailure).
	Items []map[string]types.AttributeValue
}

func (e *TxCanceled) Error() string {
	return "kit: transaction canceled [" + strings.Join(e.Reasons, ", ") + "]"
}

// Failed reports whether action i failed its condition.
func (e *TxCanceled) Failed(i int) bool {
	return i < len(e.Reasons) && e.Reasons[i] == "ConditionalCheckFailed"
}

// Is lets errors.Is match the cancellation's cause: a conflict or
// throttling (retryable) or a failed condition.
func (e *TxCanceled) Is(target error) bool {
	for _, r := range e.Reasons {
		switch {
		case target == ErrConflict && r == "TransactionConflict":
			return true
		case target == ErrThrottled && (r == "ThrottlingError" || r == "ProvisionedThroughputExceeded"):
			return true
		case target == ErrConditionFailed && r == "ConditionalCheckFailed":
			return true
		}
	}
	return false
}

// classify maps an SDK error onto the kit's errors and errs kinds.
func classify(op string, err error) error {
	var (
		ccf    *types.ConditionalCheckFailedException
		tc     *types.TransactionCanceledException
		tconf  *types.TransactionConflictException
		thr    *types.ProvisionedThroughputExceededException
		lim    *types.RequestLimitExceeded
		ise    *types.InternalServerError
		apiErr smithy.APIError
	)
	switch {
	case errors.As(err, &ccf):
		return errs.Wrap(errs.Conflict, "condition_failed", fmt.Errorf("%s: %w", op, ErrConditionFailed), "the item changed")
	case errors.As(err, &tc):
		e := &TxCanceled{}
		for _, r := range tc.CancellationReasons {
			code := "None"
			if r.Code != nil {
				code = *r.Code
			}
			e.Reasons = append(e.Reasons, code)
			e.Items = append(e.Items, r.Item)
		}
		kind := errs.Conflict
		if errors.Is(e, ErrThrottled) {
			kind = errs.Transient
		}
		return errs.Wrap(kind, "transaction_canceled", e, "the transaction was canceled")
	case errors.As(err, &tconf):
		return errs.Wrap(errs.Conflict, "conflict", fmt.Errorf("%s: %w", op, ErrConflict), "concurrent update")
	case errors.As(err, &thr), errors.As(err, &lim), errors.As(err, &ise):
		return errs.Wrap(errs.Transient, "throttled", fmt.Errorf("%s: %w: %v", op, ErrThrottled, err), "store unavailable, retry")
	case errors.As(err, &apiErr) && (apiErr.ErrorCode() == "ThrottlingException" || apiErr.ErrorCode() == "InternalServerError"):
		return errs.Wrap(errs.Transient, "throttled", fmt.Errorf("%s: %w: %v", op, ErrThrottled, err), "store unavailable, retry")
	}
	return fmt.Errorf("kit: %s: %w", op, err)
}
