package ddblocal

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// constraints collects member constraint violations the way DynamoDB's
// request validation reports them: "N validation error(s) detected: ...".
type constraints []string

var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

func (c *constraints) add(format string, args ...any) {
	*c = append(*c, fmt.Sprintf(format, args...))
}

func (c *constraints) notNull(member string, isNull bool) {
	if isNull {
		c.add("Value null at '%s' failed to satisfy constraint: Member must not be null", member)
	}
}

// tableName checks a table (or index) name member.
func (c *constraints) tableName(member string, name *string) {
	if name == nil {
		c.notNull(member, true)
		return
	}
	c.name(member, *name, 3)
}

func (c *constraints) name(member, name string, minLen int) {
	if !namePattern.MatchString(name) {
		c.add("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+", name, member)
	}
	if len(name) < minLen {
		c.add("Value '%s' at '%s' failed to satisfy constraint: Member must have length greater than or equal to %d", name, member, minLen)
	}
	if len(name) > 255 {
		c.add("Value '%s' at '%s' failed to satisfy constraint: Member must have length less than or equal to 255", name, member)
	}
}

func (c *constraints) enum(member, value string, allowed ...string) {
	if value != "" && !slices.Contains(allowed, value) {
		c.add("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy enum value set: [%s]", value, member, strings.Join(allowed, ", "))
	}
}

func (c *constraints) min(member string, v *int64, lo int64) {
	if v != nil && *v < lo {
		c.add("Value '%d' at '%s' failed to satisfy constraint: Member must have value greater than or equal to %d", *v, member, lo)
	}
}

func (c *constraints) max(member string, v *int64, hi int64) {
	if v != nil && *v > hi {
		c.add("Value '%d' at '%s' failed to satisfy constraint: Member must have value less than or equal to %d", *v, member, hi)
	}
}

func (c *constraints) err() error {
	switch n := len(*c); n {
	case 0:
		return nil
	case 1:
		return validation("1 validation error detected: %s", (*c)[0])
	default:
		return validation("%s validation errors detected: %s", strconv.Itoa(n), strings.Join(*c, "; "))
	}
}

func (c *constraints) returnConsumedCapacity(v string) {
	c.enum("returnConsumedCapacity", v, "INDEXES", "TOTAL", "NONE")
}

func (c *constraints) returnValues(v string) {
	c.enum("returnValues", v, "ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW")
}

func (c *constraints) returnItemCollectionMetrics(v string) {
	c.enum("returnItemCollectionMetrics", v, "SIZE", "NONE")
}

func (c *constraints) returnValuesOnConditionCheckFailure(v string) {
	c.enum("returnValuesOnConditionCheckFailure", v, "ALL_OLD", "NONE")
}
