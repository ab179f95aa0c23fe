package expr

import "strings"

// Error is a validation or evaluation failure. Msg is the exact message
// DynamoDB returns in the ValidationException.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// The expression kinds, as DynamoDB names them in "Invalid <kind>: ...".
const (
	KindCondition    = "ConditionExpression"
	KindFilter       = "FilterExpression"
	KindKeyCondition = "KeyConditionExpression"
	KindUpdate       = "UpdateExpression"
	KindProjection   = "ProjectionExpression"
)

// Message stems. DynamoDB builds every expression validation message as
// "<stem>;" followed by ", "-separated "key: value" details.
const (
	msgSyntax            = "Syntax error"
	msgRedundantParens   = "The expression has redundant parentheses"
	msgReserved          = "Attribute name is a reserved keyword"
	msgListIndex         = "List index is not within the allowable range"
	msgInvalidFunction   = "Invalid function name"
	msgConditionFunction = "The function is not allowed in a condition expression"
	msgValueFunction     = "The function is not allowed in an update expression"
	msgFunctionContext   = "The function is not allowed to be used this way in an expression"
	msgAttrTypeName      = "Invalid attribute type name found"
	msgPathTooDeep       = "The document path has too many nesting levels"
	msgPathConflict      = "Two document paths conflict with each other; must remove or rewrite one of these paths"
	msgPathOverlap       = "Two document paths overlap with each other; must remove or rewrite one of these paths"
	msgNameMissing       = "An expression attribute name used in the document path is not defined"
	msgValueMissing      = "An expression attribute value used in expression is not defined"
	msgOperandCount      = "Incorrect number of operands for operator or function"
	msgOperandType       = "Incorrect operand type for operator or function"
	msgNeedPath          = "Operator or function requires a document path"
	msgRepeatPath        = "The first operand must be distinct from the remaining operands for this operator or function"
	msgTooManyOperators  = "The expression contains too many operators"
	msgEmpty             = "The expression can not be empty"
	msgTooLong           = "Expression size has exceeded the maximum allowed size"
	msgBetweenOrder      = "The BETWEEN operator requires upper bound to be greater than or equal to lower bound"
	msgBetweenTypes      = "The BETWEEN operator requires same data type for lower and upper bounds"
	msgInTooMany         = "The IN operator is provided with too many operands"
)

// Messages of errors raised while applying an update to an item.
const (
	MsgPathInvalidForUpdate = "The document path provided in the update expression is invalid for update"
	MsgOperandType          = "An operand in the update expression has an incorrect data type"
	MsgAttributeNotFound    = "The provided expression refers to an attribute that does not exist in the item"
	MsgNestingTooDeep       = "Nesting Levels have exceeded supported limits"
)

// Limits DynamoDB enforces on expressions.
const (
	maxExpressionSize = 4096 // UTF-16 code units, as Java counts them
	maxPathDepth      = 32
	maxOperators      = 300
	maxInOperands     = 100
)

// detail formats stem and key/value pairs the way DynamoDB does:
// "stem;" or "stem; k1: v1, k2: v2".
func detail(stem string, kv ...string) string {
	var b strings.Builder
	b.Grow(len(stem) + 1 + 24*len(kv))
	b.WriteString(stem)
	b.WriteByte(';')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(' ')
		b.WriteString(kv[i])
		if i+1 < len(kv) {
			b.WriteString(": ")
			b.WriteString(kv[i+1])
		}
	}
	return b.String()
}

// invalid prefixes a detail message with "Invalid <kind>: ".
func invalid(kind, msg string) *Error {
	return &Error{Msg: "Invalid " + kind + ": " + msg}
}
