package statement

import (
	"errors"
	"strconv"
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/expr"
	"lastro/ddblocal/internal/partiql"
	"lastro/ddblocal/internal/wire"
)

// PartiQL's WHERE and SET clauses are translated into DynamoDB expression
// text over generated #pN names and :pN values and parsed by the expr
// package, as DynamoDB itself does: the evaluator, the operand type checks
// and their messages are the ones ConditionExpression and UpdateExpression
// use.

// pqBuilder accumulates the placeholders of one translated statement.
type pqBuilder struct {
	params []*av.Value
	names  map[string]string // #pN -> attribute name
	byName map[string]string // attribute name -> #pN
	values map[string]*av.Value
}

func newPQBuilder(params []*av.Value) *pqBuilder {
	return &pqBuilder{params: params, names: map[string]string{}, byName: map[string]string{}, values: map[string]*av.Value{}}
}

// attrs returns the expression context holding every placeholder made.
func (b *pqBuilder) attrs() *expr.Attrs { return expr.NewAttrs(b.names, b.values) }

func (b *pqBuilder) name(n string) string {
	if ref, ok := b.byName[n]; ok {
		return ref
	}
	ref := "#p" + strconv.Itoa(len(b.names))
	b.names[ref] = n
	b.byName[n] = ref
	return ref
}

func (b *pqBuilder) value(v *av.Value) string {
	ref := ":p" + strconv.Itoa(len(b.values))
	b.values[ref] = v
	return ref
}

func (b *pqBuilder) path(p *partiql.Path) string {
	var s strings.Builder
	for i, e := range p.Elems {
		switch {
		case e.IsIndex:
			s.WriteString("[" + strconv.Itoa(e.Index) + "]")
		case i == 0:
			s.WriteString(b.name(e.Name))
		default:
			s.WriteString("." + b.name(e.Name))
		}
	}
	return s.String()
}

// literal converts a value expression, reporting PartiQL's messages.
func (b *pqBuilder) literal(e partiql.Expr) (*av.Value, error) {
	v, err := partiql.Value(e, b.params)
	if err != nil {
		return nil, partiqlError(err)
	}
	return v, nil
}

// cond translates a WHERE clause (or part of one) into a condition.
//
// It is long because it is one case per PartiQL expression kind, each
// translated in place.
func (b *pqBuilder) cond(e partiql.Expr) (string, error) {
	switch e := e.(type) {
	case *partiql.Binary:
		switch e.Op {
		case "AND", "OR":
			l, err := b.cond(e.L)
			if err != nil {
				return "", err
			}
			r, err := b.cond(e.R)
			if err != nil {
				return "", err
			}
			if e.Op == "AND" {
				l, r = parenOr(e.L, l), parenOr(e.R, r)
			}
			return l + " " + e.Op + " " + r, nil
		case "=", "<>", "<", "<=", ">", ">=":
			if s, ok, err := b.boolCompare(e); ok || err != nil {
				return s, err
			}
			l, err := b.operand(e.L)
			if err != nil {
				return "", err
			}
			r, err := b.operand(e.R)
			if err != nil {
				return "", err
			}
			return l + " " + e.Op + " " + r, nil
		}
		return "", wire.Validation("Unsupported operator in Condition Expression. Operator: %s", e.Op)
	case *partiql.Not:
		x, err := b.cond(e.X)
		if err != nil {
			return "", err
		}
		if _, ok := e.X.(*partiql.Not); ok {
			return "NOT " + x, nil
		}
		if c, ok := e.X.(*partiql.Call); ok && partiql.IsConditionFunction(c.Name) {
			return "NOT " + x, nil
		}
		return "NOT (" + x + ")", nil
	case *partiql.Between:
		x, err := b.operands(e.X, e.Lo, e.Hi)
		if err != nil {
			return "", err
		}
		s := x[0] + " BETWEEN " + x[1] + " AND " + x[2]
		if e.Not {
			s = "NOT (" + s + ")"
		}
		return s, nil
	case *partiql.In:
		x, err := b.operand(e.X)
		if err != nil {
			return "", err
		}
		var list []string
		for _, el := range e.List {
			if p, ok := el.(*partiql.Param); ok && len(e.List) == 1 {
				v, err := b.literal(p)
				if err != nil {
					return "", err
				}
				if v.T == av.L {
					for _, m := range v.List {
						list = append(list, b.value(m))
					}
					continue
				}
			}
			o, err := b.operand(el)
			if err != nil {
				return "", err
			}
			list = append(list, o)
		}
		s := x + " IN (" + strings.Join(list, ", ") + ")"
		if e.Not {
			s = "NOT (" + s + ")"
		}
		return s, nil
	case *partiql.Is:
		return b.is(e)
	case *partiql.Call:
		args, err := b.operands(e.Args...)
		if err != nil {
			return "", err
		}
		return e.Name + "(" + strings.Join(args, ", ") + ")", nil
	}
	return "", wire.Validation("WHERE clause must contain an expression that resolves to a boolean")
}

// parenOr parenthesises an OR operand of AND; nothing else needs it, and
// DynamoDB refuses doubled parentheses.
func parenOr(e partiql.Expr, s string) string {
	if bin, ok := e.(*partiql.Binary); ok && bin.Op == "OR" {
		return "(" + s + ")"
	}
	return s
}

// boolCompare turns f(...) = TRUE (or FALSE) into f(...) (or NOT f(...)).
func (b *pqBuilder) boolCompare(e *partiql.Binary) (string, bool, error) {
	if e.Op != "=" && e.Op != "<>" {
		return "", false, nil
	}
	call, lit := e.L, e.R
	if _, ok := call.(*partiql.Call); !ok {
		call, lit = e.R, e.L
	}
	c, ok := call.(*partiql.Call)
	l, isLit := lit.(*partiql.Lit)
	if !ok || !isLit || l.Kind != partiql.LitBool || !partiql.IsConditionFunction(c.Name) {
		return "", false, nil
	}
	s, err := b.cond(c)
	if err != nil {
		return "", true, err
	}
	if l.Bool != (e.Op == "=") {
		s = "NOT " + s
	}
	return s, true, nil
}

func (b *pqBuilder) operands(es ...partiql.Expr) ([]string, error) {
	out := make([]string, len(es))
	for i, e := range es {
		s, err := b.operand(e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// operand translates a comparison or function operand.
func (b *pqBuilder) operand(e partiql.Expr) (string, error) {
	switch e := e.(type) {
	case *partiql.Path:
		return b.path(e), nil
	case *partiql.Lit:
		if e.Kind == partiql.LitMissing {
			return "", wire.Validation("MISSING must be compared using IS operator")
		}
	case *partiql.Call:
		args, err := b.operands(e.Args...)
		if err != nil {
			return "", err
		}
		return e.Name + "(" + strings.Join(args, ", ") + ")", nil
	case *partiql.Binary:
		return "", wire.Validation("Unsupported operator in Condition Expression. Operator: %s", e.Op)
	}
	if !partiql.IsValue(e) {
		return "", wire.Validation("Unsupported operator in Condition Expression. Operator: %s", describeExpr(e))
	}
	v, err := b.literal(e)
	if err != nil {
		return "", err
	}
	return b.value(v), nil
}

// isTypes maps IS type names to attribute_type descriptors.
var isTypes = map[string]string{"NULL": "NULL", "BOOLEAN": "BOOL", "STRING": "S", "NUMERIC": "N", "BLOB": "B",
	"STRUCT": "M", "TUPLE": "M", "LIST": "L"}

func (b *pqBuilder) is(e *partiql.Is) (string, error) {
	p, ok := e.X.(*partiql.Path)
	if !ok {
		return "", wire.Validation("The left hand side argument to IS must be a Variable Reference, Literal, or Path")
	}
	x := b.path(p)
	if e.Type == "MISSING" {
		if e.Not {
			return "attribute_exists(" + x + ")", nil
		}
		return "attribute_not_exists(" + x + ")", nil
	}
	t, ok := isTypes[e.Type]
	if !ok {
		return "", wire.Validation("Unsupported data type for IS operator: %s. Supported data types are [MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]", e.Type)
	}
	s := "attribute_type(" + x + ", " + b.value(av.Str(t)) + ")"
	if e.Not {
		s = "NOT " + s
	}
	return s, nil
}

// update translates the SET and REMOVE actions of an UPDATE.
func (b *pqBuilder) update(actions []partiql.Action) (string, error) {
	var set, remove, add, del []string
	for _, a := range actions {
		target := b.path(a.Path)
		if a.Kind == partiql.ActionRemove {
			remove = append(remove, target)
			continue
		}
		if c, ok := a.Value.(*partiql.Call); ok && (c.Name == "set_add" || c.Name == "set_delete") {
			v, err := b.literal(c.Args[1])
			if err != nil {
				return "", err
			}
			if !v.T.IsSet() {
				return "", wire.Validation("The second argument to %s must be a value with type SET at %s", strings.ToUpper(c.Name), partiql.PosOf(c.Args[0]))
			}
			clause := target + " " + b.value(v)
			if c.Name == "set_add" {
				add = append(add, clause)
			} else {
				del = append(del, clause)
			}
			continue
		}
		v, err := b.setValue(a.Value)
		if err != nil {
			return "", err
		}
		set = append(set, target+" = "+v)
	}
	var s []string
	for _, c := range []struct {
		kw    string
		items []string
	}{{"SET", set}, {"REMOVE", remove}, {"ADD", add}, {"DELETE", del}} {
		if len(c.items) > 0 {
			s = append(s, c.kw+" "+strings.Join(c.items, ", "))
		}
	}
	return strings.Join(s, " "), nil
}

// setValue translates the right-hand side of SET path = value.
func (b *pqBuilder) setValue(e partiql.Expr) (string, error) {
	switch e := e.(type) {
	case *partiql.Path:
		return b.path(e), nil
	case *partiql.Binary:
		l, err := b.setValue(e.L)
		if err != nil {
			return "", err
		}
		r, err := b.setValue(e.R)
		if err != nil {
			return "", err
		}
		return l + " " + e.Op + " " + r, nil
	case *partiql.Call:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			s, err := b.setValue(a)
			if err != nil {
				return "", err
			}
			args[i] = s
		}
		return e.Name + "(" + strings.Join(args, ", ") + ")", nil
	}
	if !partiql.IsValue(e) {
		return "", wire.Validation("Unsupported operator in Update Expression. Operator: %s", describeExpr(e))
	}
	v, err := b.literal(e)
	if err != nil {
		return "", err
	}
	return b.value(v), nil
}

func describeExpr(e partiql.Expr) string {
	switch e := e.(type) {
	case *partiql.Lit:
		if e.Kind == partiql.LitMissing {
			return "MISSING"
		}
	case *partiql.Neg:
		return "-"
	case *partiql.Not:
		return "NOT"
	case *partiql.Is:
		return "IS"
	case *partiql.In:
		return "IN"
	case *partiql.Between:
		return "BETWEEN"
	case *partiql.Subquery:
		return "SELECT"
	}
	return "expression"
}

// parseCond parses translated condition text. DynamoDB reports the
// expression's own message without the "Invalid ...Expression:" prefix.
func parseCond(s string, a *expr.Attrs) (*expr.Condition, error) {
	c, err := expr.ParseCondition(expr.KindCondition, s, a)
	if err != nil {
		return nil, partiqlError(err)
	}
	return c, nil
}

func parseUpdateExpr(s string, a *expr.Attrs) (*expr.Update, error) {
	u, err := expr.ParseUpdate(s, a)
	if err != nil {
		return nil, partiqlError(err)
	}
	return u, nil
}

// partiqlError turns a parser or expression error into the
// ValidationException DynamoDB answers a statement with.
func partiqlError(err error) error {
	var pe *partiql.Error
	if errors.As(err, &pe) {
		return wire.Validation("%s", pe.Msg)
	}
	var ee *expr.Error
	if errors.As(err, &ee) {
		msg := ee.Msg
		if strings.HasPrefix(msg, "Invalid ") {
			if i := strings.Index(msg, "Expression: "); i > 0 && i < 40 {
				msg = msg[i+len("Expression: "):]
			}
		}
		return wire.Validation("%s", msg)
	}
	var ae *av.Error
	if errors.As(err, &ae) {
		return wire.Validation("%s", ae.Msg)
	}
	return err
}
