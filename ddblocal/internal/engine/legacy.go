package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/wire"
)

// The legacy request shapes (AttributesToGet, Expected, AttributeUpdates,
// KeyConditions, QueryFilter, ScanFilter) are validated here with
// DynamoDB's own messages, then translated into expressions over generated
// names and values, so one parser and evaluator serve both. Where a legacy
// operator means something else than its expression namesake (NE and
// NOT_CONTAINS on a missing attribute, ADD of a list) the translation
// spells the legacy meaning out.

func LegacyProjection(names []string) (*expr.Projection, error) {
	if len(names) == 0 {
		return nil, wire.ConstraintViolation("Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	seen := map[string]bool{}
	m := map[string]string{}
	parts := make([]string, len(names))
	for i, n := range names {
		if n == "" {
			return nil, wire.Validation(av.MsgEmptyName)
		}
		if seen[n] {
			return nil, wire.Validation("One or more parameter values were invalid: Duplicate value in attribute name: %s", n)
		}
		seen[n] = true
		k := fmt.Sprintf("#l%d", i)
		m[k] = n
		parts[i] = k
	}
	p, err := expr.ParseProjection(strings.Join(parts, ", "), expr.NewAttrs(m, nil))
	if err != nil {
		return nil, ExprError(err)
	}
	return p, nil
}

// comparisonOperators is the ComparisonOperator enum in the order
// DynamoDB lists it in constraint messages.
var comparisonOperators = []string{"IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ", "GT", "NOT_NULL", "NE", "LE", "BEGINS_WITH", "GE", "CONTAINS"}

// legacyOp describes what a ComparisonOperator accepts.
type legacyOp struct {
	args      int // number of values; -1 for one or more
	types     []av.Type
	allTypes  bool
	indexable bool // usable on a sort key in KeyConditions
}

var (
	scalarTypes   = []av.Type{av.S, av.N, av.B}
	containsTypes = []av.Type{av.S, av.N, av.B, av.BOOL, av.NULL}
	legacyOps     = map[string]legacyOp{
		"EQ":           {args: 1, allTypes: true, indexable: true},
		"NE":           {args: 1, allTypes: true},
		"LE":           {args: 1, types: scalarTypes, indexable: true},
		"LT":           {args: 1, types: scalarTypes, indexable: true},
		"GE":           {args: 1, types: scalarTypes, indexable: true},
		"GT":           {args: 1, types: scalarTypes, indexable: true},
		"BETWEEN":      {args: 2, types: scalarTypes, indexable: true},
		"BEGINS_WITH":  {args: 1, types: []av.Type{av.S, av.B}, indexable: true},
		"IN":           {args: -1, types: scalarTypes},
		"CONTAINS":     {args: 1, types: containsTypes},
		"NOT_CONTAINS": {args: 1, types: containsTypes},
		"NULL":         {args: 0},
		"NOT_NULL":     {args: 0},
	}
)

// CheckConditions adds the constraint violations of KeyConditions,
// QueryFilter or ScanFilter (member names them) to the request's c: each
// entry needs a ComparisonOperator from the enum.
func CheckConditions(c *wire.Constraints, member string, m map[string]*wire.Condition) {
	for _, k := range wire.SortedKeys(m) {
		path := fmt.Sprintf("%s.%s.member.comparisonOperator", member, k)
		switch {
		case m[k] == nil || m[k].ComparisonOperator == nil:
			c.NotNull(path, true)
		case !isComparisonOperator(*m[k].ComparisonOperator):
			c.Add("%s", enumViolation(path, *m[k].ComparisonOperator))
		}
	}
}

func isComparisonOperator(op string) bool {
	_, ok := legacyOps[op]
	return ok
}

func enumViolation(path, op string) string {
	return fmt.Sprintf("Value '%s' at '%s' failed to satisfy constraint: Member must satisfy enum value set: [%s]", op, path, strings.Join(comparisonOperators, ", "))
}

// exprBuilder accumulates an expression over generated placeholders.
type exprBuilder struct {
	names  map[string]string
	values map[string]*av.Value
}

func newExprBuilder() *exprBuilder {
	return &exprBuilder{names: map[string]string{}, values: map[string]*av.Value{}}
}

func (b *exprBuilder) name(attr string) string {
	k := fmt.Sprintf("#l%d", len(b.names))
	b.names[k] = attr
	return k
}

func (b *exprBuilder) value(v *av.Value) string {
	k := fmt.Sprintf(":l%d", len(b.values))
	b.values[k] = v
	return k
}

func (b *exprBuilder) attrs() *expr.Attrs { return expr.NewAttrs(b.names, b.values) }

// maxInValues is how many operands one expression IN accepts; longer
// legacy IN lists become several INs joined by OR.
const maxInValues = 100

// condition translates one validated legacy condition.
func (b *exprBuilder) condition(attr, op string, vals []*av.Value) string {
	n := b.name(attr)
	switch op {
	case "NULL":
		return "attribute_not_exists(" + n + ")"
	case "NOT_NULL":
		return "attribute_exists(" + n + ")"
	case "EQ":
		return n + " = " + b.value(vals[0])
	case "NE":
		// Like legacy NE, <> holds for a missing attribute.
		return n + " <> " + b.value(vals[0])
	case "LT":
		return n + " < " + b.value(vals[0])
	case "LE":
		return n + " <= " + b.value(vals[0])
	case "GT":
		return n + " > " + b.value(vals[0])
	case "GE":
		return n + " >= " + b.value(vals[0])
	case "BETWEEN":
		return n + " BETWEEN " + b.value(vals[0]) + " AND " + b.value(vals[1])
	case "BEGINS_WITH":
		return "begins_with(" + n + ", " + b.value(vals[0]) + ")"
	case "CONTAINS":
		return "contains(" + n + ", " + b.value(vals[0]) + ")"
	case "NOT_CONTAINS":
		// Unlike NOT contains(...), legacy NOT_CONTAINS is false for a
		// missing attribute.
		return "(attribute_exists(" + n + ") AND NOT contains(" + n + ", " + b.value(vals[0]) + "))"
	case "IN":
		var ins []string
		for i := 0; i < len(vals); i += maxInValues {
			chunk := vals[i:min(i+maxInValues, len(vals))]
			refs := make([]string, len(chunk))
			for j, v := range chunk {
				refs[j] = b.value(v)
			}
			ins = append(ins, n+" IN ("+strings.Join(refs, ",")+")")
		}
		if len(ins) == 1 {
			return ins[0]
		}
		return "(" + strings.Join(ins, " OR ") + ")"
	}
	panic("ddblocal: unknown comparison operator " + op)
}

// legacyValues validates an AttributeValueList.
func legacyValues(list []*av.Wire) ([]*av.Value, error) {
	vals := make([]*av.Value, len(list))
	for i, w := range list {
		v, err := av.FromWire(w)
		if err != nil {
			return nil, wire.Validation("%s", err.Error())
		}
		vals[i] = v
	}
	return vals, nil
}

// checkOperands validates the values of a condition against its
// operator: their number, then for each value that the operator accepts
// its type and that it shares the first value's type, then the order of
// BETWEEN's bounds.
func checkOperands(op string, vals []*av.Value) error {
	spec := legacyOps[op]
	if spec.args >= 0 && len(vals) != spec.args || spec.args < 0 && len(vals) == 0 {
		return wire.Validation("One or more parameter values were invalid: Invalid number of argument(s) for the %s ComparisonOperator", op)
	}
	for _, v := range vals {
		if !spec.allTypes && !typeIn(v.T, spec.types) {
			return wire.Validation("One or more parameter values were invalid: ComparisonOperator %s is not valid for %s AttributeValue type", op, v.T)
		}
		if v.T != vals[0].T {
			return wire.Validation("One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type")
		}
	}
	if op == "BETWEEN" {
		if c, _ := av.Compare(vals[0], vals[1]); c > 0 {
			return wire.Validation("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound")
		}
	}
	return nil
}

func typeIn(t av.Type, ts []av.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// checkConditionalOperator refuses a ConditionalOperator that has fewer
// than two conditions to combine. Writes report this outside the
// validation envelope.
func checkConditionalOperator(condOp *string, n int) error {
	var e *wire.APIError
	switch {
	case condOp == nil:
		return nil
	case n == 0:
		e = wire.Validation("ConditionalOperator cannot be used without Filter or Expected")
	case n == 1:
		e = wire.Validation("ConditionalOperator can only be used when Filter or Expected has two or more elements")
	default:
		return nil
	}
	e.Family = wire.FamBare
	return e
}

// joinConditions combines translated conditions with the
// ConditionalOperator (AND unless OR is asked for) and parses the result.
func (b *exprBuilder) joinConditions(parts []string, condOp *string) (*expr.Condition, error) {
	sep := " AND "
	if condOp != nil && *condOp == "OR" {
		sep = " OR "
	}
	c, err := expr.ParseCondition(expr.KindCondition, strings.Join(parts, sep), b.attrs())
	if err != nil {
		return nil, ExprError(err)
	}
	return c, nil
}

// legacyExpected validates and translates the Expected of a write.
func legacyExpected(expected map[string]*wire.ExpectedAttr, condOp *string) (*expr.Condition, error) {
	if err := checkConditionalOperator(condOp, len(expected)); err != nil {
		return nil, err
	}
	if len(expected) == 0 {
		return nil, nil
	}
	b := newExprBuilder()
	var parts []string
	size := 0
	for _, attr := range wire.SortedKeys(expected) {
		if attr == "" {
			return nil, wire.Validation(av.MsgEmptyName)
		}
		e := expected[attr]
		if e == nil {
			e = &wire.ExpectedAttr{}
		}
		op, vals, err := checkExpected(attr, e)
		if err != nil {
			return nil, err
		}
		// The expected values count against the item size limit too.
		size += len(attr)
		for _, v := range vals {
			size += av.Size(v)
		}
		if size > maxItemBytes {
			return nil, wire.Validation("Item size has exceeded the maximum allowed size")
		}
		parts = append(parts, b.condition(attr, op, vals))
	}
	return b.joinConditions(parts, condOp)
}

// checkExpected validates one Expected entry and returns the comparison it
// stands for: Value alone (or with Exists true) means EQ, Exists false
// means NULL. The checks run in DynamoDB's order: the combination of
// members, then the values, then the operands against the operator.
func checkExpected(attr string, e *wire.ExpectedAttr) (string, []*av.Value, error) {
	const invalid = "One or more parameter values were invalid: "
	hasOp, hasList := e.ComparisonOperator != nil, e.AttributeValueList != nil
	switch {
	case e.Exists != nil && hasOp:
		return "", nil, wire.Validation(invalid+"Exists and ComparisonOperator cannot be used together for Attribute: %s", attr)
	case e.Value != nil && hasList:
		return "", nil, wire.Validation(invalid+"Value and AttributeValueList cannot be used together for Attribute: %s", attr)
	case !hasOp && hasList:
		return "", nil, wire.Validation(invalid+"AttributeValueList can only be used with a ComparisonOperator for Attribute: %s", attr)
	case e.Exists != nil && !*e.Exists && e.Value != nil:
		return "", nil, wire.Validation(invalid+"Value cannot be used when Exists is false for Attribute: %s", attr)
	case e.Value == nil && !hasList && hasOp && *e.ComparisonOperator != "NULL" && *e.ComparisonOperator != "NOT_NULL":
		return "", nil, wire.Validation(invalid+"Value or AttributeValueList must be used with ComparisonOperator: %s for Attribute: %s", *e.ComparisonOperator, attr)
	case e.Value == nil && !hasList && !hasOp && e.Exists == nil:
		return "", nil, wire.Validation(invalid+"Value must be provided when Exists is null for Attribute: %s", attr)
	case e.Value == nil && !hasList && !hasOp && *e.Exists:
		return "", nil, wire.Validation(invalid+"Value must be provided when Exists is true for Attribute: %s", attr)
	}
	list := e.AttributeValueList
	if e.Value != nil {
		list = []*av.Wire{e.Value}
	}
	vals, err := legacyValues(list)
	if err != nil {
		return "", nil, err
	}
	if !hasOp {
		if e.Value == nil {
			return "NULL", nil, nil // Exists false
		}
		return "EQ", vals, nil
	}
	op := *e.ComparisonOperator
	if !isComparisonOperator(op) {
		return "", nil, wire.ConstraintViolation("%s", enumViolation("expected."+attr+".member.comparisonOperator", op))
	}
	if err := checkOperands(op, vals); err != nil {
		return "", nil, err
	}
	return op, vals, nil
}

// checkCondition validates one KeyConditions, QueryFilter or ScanFilter
// entry: its values first, then the operands against the operator.
func checkCondition(member, attr string, c *wire.Condition) (string, []*av.Value, error) {
	if c == nil || c.ComparisonOperator == nil {
		return "", nil, wire.ConstraintViolation("Value null at '%s.%s.member.comparisonOperator' failed to satisfy constraint: Member must not be null", member, attr)
	}
	op := *c.ComparisonOperator
	vals, err := legacyValues(c.AttributeValueList)
	if err != nil {
		return "", nil, err
	}
	if !isComparisonOperator(op) {
		return "", nil, wire.ConstraintViolation("%s", enumViolation(member+"."+attr+".member.comparisonOperator", op))
	}
	if err := checkOperands(op, vals); err != nil {
		return "", nil, err
	}
	return op, vals, nil
}

// LegacyFilterCond validates and translates a QueryFilter or ScanFilter.
// An empty filter filters nothing.
func LegacyFilterCond(f map[string]*wire.Condition, condOp *string) (*expr.Condition, error) {
	if err := checkConditionalOperator(condOp, len(f)); err != nil {
		return nil, err
	}
	if len(f) == 0 {
		return nil, nil
	}
	b := newExprBuilder()
	var parts []string
	for _, attr := range wire.SortedKeys(f) {
		op, vals, err := checkCondition("filter", attr, f[attr])
		if err != nil {
			return nil, err
		}
		parts = append(parts, b.condition(attr, op, vals))
	}
	return b.joinConditions(parts, condOp)
}

// CheckKeyConditions is the part of KeyConditions validation that needs
// no table: each condition's values and operands, then their number.
func CheckKeyConditions(kc map[string]*wire.Condition) error {
	for _, attr := range wire.SortedKeys(kc) {
		if _, _, err := checkCondition("keyConditions", attr, kc[attr]); err != nil {
			return err
		}
	}
	if len(kc) != 1 && len(kc) != 2 {
		return wire.Validation("Conditions can be of length 1 or 2 only")
	}
	return nil
}

// LegacyKeyConditions validates KeyConditions against the key schema of
// the table or index queried and translates them.
func LegacyKeyConditions(kc map[string]*wire.Condition, schema expr.KeySchema) (*expr.KeyCondition, error) {
	if err := CheckKeyConditions(kc); err != nil {
		return nil, err
	}
	type key struct {
		name string
		typ  av.Type
		hash bool
	}
	keys := []key{{schema.Hash, schema.HashType, true}}
	if schema.Range != "" {
		keys = append(keys, key{schema.Range, schema.RangeType, false})
	}
	b := newExprBuilder()
	var parts []string
	for _, k := range keys {
		if k.hash && schema.Range == "" && len(kc) > 1 {
			return nil, wire.Validation("Query key condition not supported")
		}
		c, ok := kc[k.name]
		if !ok {
			if k.hash || len(kc) > 1 {
				return nil, wire.Validation("Query condition missed key schema element: %s", k.name)
			}
			continue
		}
		op := *c.ComparisonOperator
		if !legacyOps[op].indexable {
			return nil, wire.Validation("Attempted conditional constraint is not an indexable operation")
		}
		vals, err := legacyValues(c.AttributeValueList)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if v.T != k.typ {
				return nil, wire.Validation("One or more parameter values were invalid: Condition parameter type does not match schema type")
			}
		}
		if k.hash && op != "EQ" {
			return nil, wire.Validation("Query key condition not supported")
		}
		parts = append(parts, b.condition(k.name, op, vals))
	}
	kcond, err := expr.ParseKeyCondition(strings.Join(parts, " AND "), b.attrs(), schema)
	if err != nil {
		return nil, ExprError(err)
	}
	return kcond, nil
}

// CheckFilterKeys refuses a Query filter (a QueryFilter when legacy, else
// a FilterExpression) on a key attribute of the table or index queried:
// those belong in the key condition.
func CheckFilterKeys(filter *expr.Condition, legacy bool, schema expr.KeySchema) error {
	if filter == nil {
		return nil
	}
	member := "Filter Expression"
	if legacy {
		member = "QueryFilter"
	}
	names := filter.TopNames()
	for _, k := range []string{schema.Hash, schema.Range} {
		if k != "" && slices.Contains(names, k) {
			return wire.Validation("%s can only contain non-primary key attributes: Primary key attribute: %s", member, k)
		}
	}
	return nil
}

// legacyUpdates validates AttributeUpdates and translates them into an
// update expression: PUT is SET, DELETE without a value is REMOVE, DELETE
// with a set is DELETE, ADD of a number or set is ADD, and ADD of a list
// (which update expressions do not allow) appends with list_append.
func legacyUpdates(u map[string]*wire.AttributeUpdate) (*expr.Update, error) {
	const invalid = "One or more parameter values were invalid: "
	b := newExprBuilder()
	var set, remove, add, del []string
	size := 0
	for _, attr := range wire.SortedKeys(u) {
		if attr == "" {
			return nil, wire.Validation(av.MsgEmptyName)
		}
		au := u[attr]
		if au == nil {
			au = &wire.AttributeUpdate{}
		}
		action := "PUT"
		if au.Action != nil {
			action = *au.Action
		}
		var v *av.Value
		if au.Value != nil {
			var err error
			if v, err = av.FromWire(au.Value); err != nil {
				return nil, wire.Validation("%s", err.Error())
			}
		}
		switch {
		case action != "ADD" && action != "PUT" && action != "DELETE":
			return nil, wire.ConstraintViolation("Value '%s' at 'attributeUpdates.%s.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]", action, attr)
		case v == nil && action != "DELETE":
			return nil, wire.Validation(invalid + "Only DELETE action is allowed when no attribute value is specified")
		case v != nil && action == "DELETE" && !v.T.IsSet():
			return nil, wire.Validation(invalid+"DELETE action with value is not supported for the type %s", v.T)
		case v != nil && action == "ADD" && !v.T.IsSet() && v.T != av.N && v.T != av.L:
			return nil, wire.Validation(invalid+"ADD action is not supported for the type %s", v.T)
		}
		if action != "DELETE" {
			// What the update writes must fit in an item on its own.
			if size += len(attr) + av.Size(v); size > maxItemBytes {
				return nil, wire.Validation("Item size to update has exceeded the maximum allowed size")
			}
		}
		n := b.name(attr)
		switch {
		case action == "PUT":
			set = append(set, n+" = "+b.value(v))
		case action == "DELETE" && v == nil:
			remove = append(remove, n)
		case action == "DELETE":
			del = append(del, n+" "+b.value(v))
		case v.T == av.L:
			empty := b.value(&av.Value{T: av.L, List: []*av.Value{}})
			set = append(set, n+" = list_append(if_not_exists("+n+", "+empty+"), "+b.value(v)+")")
		default:
			add = append(add, n+" "+b.value(v))
		}
	}
	var sections []string
	for _, s := range []struct {
		verb    string
		clauses []string
	}{{"SET", set}, {"REMOVE", remove}, {"ADD", add}, {"DELETE", del}} {
		if len(s.clauses) > 0 {
			sections = append(sections, s.verb+" "+strings.Join(s.clauses, ", "))
		}
	}
	if len(sections) == 0 {
		return nil, nil
	}
	up, err := expr.ParseUpdate(strings.Join(sections, " "), b.attrs())
	if err != nil {
		return nil, ExprError(err)
	}
	return up, nil
}

// applyError words an error of applying an update: AttributeUpdates report
// an operand of the wrong type as a type mismatch.
func (up Updater) applyError(err error) error {
	var ee *expr.Error
	if up.legacy && errors.As(err, &ee) && ee.Msg == expr.MsgOperandType {
		return wire.Validation("Type mismatch for attribute to update")
	}
	return ExprError(err)
}

// CheckSelect validates Select against the attributes the request names
// (projMember is "AttributesToGet", "ProjectionExpression" or "") and
// whether it reads an index. Query reports these inside the validation
// envelope, Scan without it.
func CheckSelect(sel, projMember string, index, query bool) error {
	env := ""
	if query {
		env = "1 validation error detected: "
	}
	switch {
	case projMember != "" && sel != "" && sel != "SPECIFIC_ATTRIBUTES":
		what := sel
		if sel == "COUNT" {
			what = "only the Count"
		}
		return wire.Validation("%sCannot specify the %s when choosing to get %s", env, projMember, what)
	case projMember == "" && sel == "SPECIFIC_ATTRIBUTES":
		return wire.Validation("%sMust specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES", env)
	case !index && sel == "ALL_PROJECTED_ATTRIBUTES":
		return wire.Validation("%sALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName", env)
	}
	return nil
}

// ProjectionMember names the member a read selects attributes with.
func ProjectionMember(pe *string, attrsToGet []string) string {
	switch {
	case pe != nil:
		return "ProjectionExpression"
	case attrsToGet != nil:
		return "AttributesToGet"
	}
	return ""
}
