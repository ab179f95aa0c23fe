package wire

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Constraints collects member constraint violations the way DynamoDB's
// request validation reports them: "N validation error(s) detected: ...".
type Constraints []string

var NamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

func (c *Constraints) Add(format string, args ...any) {
	*c = append(*c, fmt.Sprintf(format, args...))
}

func (c *Constraints) NotNull(member string, isNull bool) {
	if isNull {
		c.Add("Value null at '%s' failed to satisfy constraint: Member must not be null", member)
	}
}

// TableName checks a member naming an existing table. Since DynamoDB
// accepts table ARNs there, the minimum length is 1 (a 2-character name is
// simply not found) and an ARN is exempt from the name pattern.
func (c *Constraints) TableName(member string, name *string) {
	if name == nil {
		c.NotNull(member, true)
		return
	}
	if IsTableARN(*name) {
		if len(*name) > 1024 {
			c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to 1024", *name, member)
		}
		return
	}
	c.Name(member, *name, 1)
}

// NewTableName checks the name of a table being created: 3 to 255
// characters of [a-zA-Z0-9_.-].
func (c *Constraints) NewTableName(member string, name *string) {
	if name == nil {
		c.NotNull(member, true)
		return
	}
	c.Name(member, *name, 3)
}

// IsTableARN reports whether a TableName member holds a table ARN.
func IsTableARN(name string) bool { return strings.HasPrefix(name, "arn:") }

// TableNameOf returns the table name a TableName member designates: the
// name itself, or the name inside a table ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME).
func TableNameOf(name string) string {
	if !IsTableARN(name) {
		return name
	}
	_, rest, ok := strings.Cut(name, ":table/")
	if !ok {
		return name
	}
	rest, _, _ = strings.Cut(rest, "/")
	return rest
}

func (c *Constraints) Name(member, name string, minLen int) {
	if !NamePattern.MatchString(name) {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+", name, member)
	}
	if len(name) < minLen {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to %d", name, member, minLen)
	}
	if len(name) > 255 {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to 255", name, member)
	}
}

func (c *Constraints) Enum(member, value string, allowed ...string) {
	if value != "" && !slices.Contains(allowed, value) {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy enum value set: [%s]", value, member, strings.Join(allowed, ", "))
	}
}

func (c *Constraints) Min(member string, v *int64, lo int64) {
	if v != nil && *v < lo {
		c.Add("Value '%d' at '%s' failed to satisfy constraint: Member must have value greater than or equal to %d", *v, member, lo)
	}
}

func (c *Constraints) Max(member string, v *int64, hi int64) {
	if v != nil && *v > hi {
		c.Add("Value '%d' at '%s' failed to satisfy constraint: Member must have value less than or equal to %d", *v, member, hi)
	}
}

// maxReportedConstraints is how many violations DynamoDB lists (and
// counts) in one message; the rest are dropped.
const maxReportedConstraints = 10

func (c *Constraints) Err() error {
	list := *c
	if len(list) > maxReportedConstraints {
		list = list[:maxReportedConstraints]
	}
	switch n := len(list); n {
	case 0:
		return nil
	case 1:
		return ConstraintViolation("%s", list[0])
	default:
		e := Validation("%s validation errors detected: %s", strconv.Itoa(n), strings.Join(list, "; "))
		e.Family = famEnveloped
		return e
	}
}

// MinLen reports a list or string member shorter than lo.
func (c *Constraints) MinLen(member, value string, n, lo int) {
	if n < lo {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to %d", value, member, lo)
	}
}

// MaxLen reports a list or string member longer than hi.
func (c *Constraints) MaxLen(member, value string, n, hi int) {
	if n > hi {
		c.Add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", value, member, hi)
	}
}

// JavaList renders a list of strings the way DynamoDB echoes a list
// member's value in a constraint message: [a, b, c].
func JavaList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

func (c *Constraints) ReturnConsumedCapacity(v string) {
	c.Enum("returnConsumedCapacity", v, "INDEXES", "TOTAL", "NONE")
}

func (c *Constraints) ReturnValues(v string) {
	c.Enum("returnValues", v, "ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW")
}

func (c *Constraints) ReturnItemCollectionMetrics(v string) {
	c.Enum("returnItemCollectionMetrics", v, "SIZE", "NONE")
}

func (c *Constraints) ReturnValuesOnConditionCheckFailure(v string) {
	c.Enum("returnValuesOnConditionCheckFailure", v, "ALL_OLD", "NONE")
}

// DynamoDB's newer request front end checks a few members of PutItem,
// UpdateItem and DeleteItem by itself, ahead of the member constraints,
// and reports the first it refuses alone — provided the request carries
// all its required members (TableName and Item or Key); with one missing,
// the request goes to the older validation, which lists every violation
// in one message. Recorded so far: an unknown ConditionalOperator
// (unknownConditionalOperator), an empty TableName, and UpdateItem's
// ReturnValues. PutItem's and DeleteItem's ReturnValues are not among
// them: they stay with the member constraints (reported beside an invalid
// ReturnConsumedCapacity), as do all other members.

// emptyTableName reports an empty TableName alone. (The newest front end
// words it "Value at 'TableName' ..." in some regions; this is the wording
// of the others, which also report it alone.)
func emptyTableName(name *string, required ...bool) error {
	if name == nil || *name != "" || !allTrue(required) {
		return nil
	}
	return ConstraintViolation("Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1")
}

// UpdateReturnValues reports an unknown ReturnValues of UpdateItem alone,
// listing the set as DynamoDB does (its "UPDATE_NEW" included).
func UpdateReturnValues(rv string, required ...bool) error {
	if rv == "" || slices.Contains([]string{"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"}, rv) || !allTrue(required) {
		return nil
	}
	return ConstraintViolation("Failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATE_NEW, NONE]")
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}
