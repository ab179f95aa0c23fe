package wire

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"lastro/ddblocal/internal/av"
)

// APIError is an error answered to the client in DynamoDB's error shape.
type APIError struct {
	Type    string // e.g. "ValidationException"
	Message string
	Status  int
	// extra members of the error body (CancellationReasons, Item)
	Reasons []CancellationReason
	Item    map[string]any
	// Cancels marks a validation failure that DynamoDB reports inside a
	// transaction as a ValidationError cancellation reason rather than as a
	// ValidationException for the whole request (e.g. a key of the wrong
	// type, found only once the table's schema is known).
	Cancels bool `json:"-"`
	// Family is the error's kind for the validation envelope, set where
	// it is raised (see requestError and Store.envelope).
	Family errFamily `json:"-"`
}

// errFamily classifies a ValidationException for the
// "1 validation error detected: " envelope that DynamoDB's current
// validation layer puts around PutItem's, UpdateItem's and DeleteItem's
// request-validation errors (ADR 0060).
type errFamily uint8

const (
	// famUnclassified: not marked where raised; bare unless a request
	// validation step marks it (requestError).
	famUnclassified errFamily = iota
	// FamBare: data-plane, structural and limit errors, and the few
	// request checks DynamoDB reports outside the envelope.
	FamBare
	// FamRequest: request validation (value syntax, expression parameters
	// and syntax, ReturnValues), enveloped by the current layer.
	FamRequest
	// famEnveloped: member constraint violations, which carry their own
	// "N validation error(s) detected: " in every layer.
	famEnveloped
)

type CancellationReason struct {
	Code    string         `json:"Code"`
	Message string         `json:"Message,omitempty"`
	Item    map[string]any `json:"Item,omitempty"`
}

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

// Namespace returns the __type prefix DynamoDB uses for the error.
func (e *APIError) Namespace() string {
	switch e.Type {
	case "ValidationException":
		return "com.amazon.coral.validate#"
	case "SerializationException", "UnknownOperationException", "MissingAuthenticationTokenException",
		"UnrecognizedClientException", "AccessDeniedException":
		return "com.amazon.coral.service#"
	case "ThrottlingException":
		return "com.amazon.coral.availability#"
	}
	return "com.amazonaws.dynamodb.v20120810#"
}

func Validation(format string, args ...any) *APIError {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &APIError{Type: "ValidationException", Message: msg, Status: 400}
}

func NotFound(msg string) *APIError {
	return &APIError{Type: "ResourceNotFoundException", Message: msg, Status: 400}
}

func ErrResourceNotFound() *APIError {
	return NotFound("Requested resource not found")
}

func ResourceInUse(msg string) *APIError {
	return &APIError{Type: "ResourceInUseException", Message: msg, Status: 400}
}

// Cancelling marks a validation error as one a transaction reports as a
// cancellation reason.
func Cancelling(e *APIError) *APIError {
	e.Cancels = true
	return e
}

func ConditionalFailed() *APIError {
	return &APIError{Type: "ConditionalCheckFailedException", Message: "The conditional request failed", Status: 400}
}

func Serialization(msg string) *APIError {
	return &APIError{Type: "SerializationException", Message: msg, Status: 400}
}

func Internal(err error) *APIError {
	return &APIError{Type: "InternalServerError", Message: "Internal server error", Status: 500}
}

// ConstraintViolation is one member constraint violation, in the
// envelope every validation layer reports it in.
func ConstraintViolation(format string, args ...any) *APIError {
	e := Validation("1 validation error detected: "+format, args...)
	e.Family = famEnveloped
	return e
}

// RequestError marks a ValidationException raised by a request validation
// step (the expression parameters, the attribute values, ReturnValues, the
// expressions) as request validation, unless where it was raised already
// classified it. Other errors pass unchanged.
func RequestError(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Type != "ValidationException" || ae.Family != famUnclassified {
		return err
	}
	c := *ae
	c.Family = FamRequest
	return &c
}

// MemberMin phrases a numeric member constraint the way the current
// validation framework does: naming the member, not echoing it.
func (c *Constraints) MemberMin(member string, v *int64, lo int64) {
	if v != nil && *v < lo {
		c.Add("Value at '%s' failed to satisfy constraint: Member must have value greater than or equal to %d", member, lo)
	}
}

func (c *Constraints) ConditionalOperator(op *string) {
	if op != nil {
		c.Enum("conditionalOperator", *op, "OR", "AND")
	}
}

// CurrentWording rewrites an attribute value error into the wording of
// DynamoDB's current validation layer, which PutItem, UpdateItem,
// DeleteItem, GetItem, BatchGetItem and Query use (Scan, BatchWriteItem and
// the transactions keep the older wording the av package produces). The
// current layer keeps ": " after an empty number, ends the number-set
// duplicates message with the usual prefix and a full stop, and lists a
// string or binary set with duplicates quoted, in byte order up to the
// first repeat. wires are the values the error may come from.
func CurrentWording(err error, wires ...map[string]*av.Wire) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Type != "ValidationException" {
		return err
	}
	msg := ae.Message
	switch {
	case msg == "The parameter cannot be converted to a numeric value":
		msg += ": "
	case msg == "Input collection contains duplicates":
		msg = "One or more parameter values were invalid: Input collection contains duplicates."
	case strings.HasPrefix(msg, "One or more parameter values were invalid: Input collection ["):
		for _, w := range wires {
			if m := duplicateSetMessage(w); m != "" {
				msg = m
				break
			}
		}
	default:
		return err
	}
	return Validation("%s", msg)
}

// duplicateSetMessage finds the first string or binary set with a repeated
// member among values (in name order, depth first) and words it the
// current way; "" when there is none.
func duplicateSetMessage(values map[string]*av.Wire) string {
	for _, k := range SortedKeys(values) {
		if m := duplicateIn(values[k]); m != "" {
			return m
		}
	}
	return ""
}

func duplicateIn(w *av.Wire) string {
	switch {
	case w == nil:
	case w.SS != nil:
		if list := orderedUntilRepeat(*w.SS); list != nil {
			quoted := make([]string, len(list))
			for i, s := range list {
				b, _ := json.Marshal(s)
				quoted[i] = string(b)
			}
			return "One or more parameter values were invalid: Input collection [" + strings.Join(quoted, ", ") + "] contains duplicates."
		}
	case w.BS != nil:
		enc := make([]string, len(*w.BS))
		for i, b := range *w.BS {
			enc[i] = string(b)
		}
		if list := orderedUntilRepeat(enc); list != nil {
			quoted := make([]string, len(list))
			for i, s := range list {
				quoted[i] = `"` + base64.StdEncoding.EncodeToString([]byte(s)) + `"`
			}
			return "One or more parameter values were invalid: Input collection [" + strings.Join(quoted, ",") + "]of type BS contains duplicates."
		}
	case w.M != nil:
		return duplicateSetMessage(*w.M)
	case w.L != nil:
		for _, c := range *w.L {
			if m := duplicateIn(c); m != "" {
				return m
			}
		}
	}
	return ""
}

// orderedUntilRepeat returns the members seen before the first repeat in
// byte order, then the repeat, then the rest as sent; nil without repeats.
func orderedUntilRepeat(members []string) []string {
	seen := map[string]bool{}
	for i, m := range members {
		if seen[m] {
			out := make([]string, 0, len(members))
			for s := range seen {
				out = append(out, s)
			}
			sort.Strings(out)
			return append(append(out, m), members[i+1:]...)
		}
		seen[m] = true
	}
	return nil
}

// ItemTableName checks the TableName member of a data-plane request. An
// empty name fails only its length: the pattern is not reported beside it.
func (c *Constraints) ItemTableName(member string, name *string) {
	if name != nil && *name == "" {
		c.Add("Value '' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
		return
	}
	c.TableName(member, name)
}

// UnknownConditionalOperator reports an unknown ConditionalOperator the way
// DynamoDB's newer validation does when the request's required members are
// present: alone, ahead of the other member constraints. (With a required
// member missing, the older aggregated message applies instead.)
func UnknownConditionalOperator(op *string, required ...bool) error {
	if op == nil || *op == "AND" || *op == "OR" {
		return nil
	}
	for _, ok := range required {
		if !ok {
			return nil
		}
	}
	return Validation("Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]")
}
