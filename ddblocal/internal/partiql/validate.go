package partiql

import (
	"fmt"
	"strings"
)

// conditionFunctions are the functions a WHERE clause may call, with
// their operand counts. size is an operand, not a condition.
var conditionFunctions = map[string]int{
	"attribute_exists": 1, "attribute_not_exists": 1, "attribute_type": 2,
	"begins_with": 2, "contains": 2, "size": 1,
}

// IsConditionFunction reports whether name is a boolean WHERE function.
func IsConditionFunction(name string) bool {
	n, ok := conditionFunctions[name]
	return ok && name != "size" && n > 0
}

// validate checks a parsed statement for what needs no table.
func validate(st *Statement) error {
	if st.Kind == Delete && st.Returning != ReturnNone && st.Returning != ReturnAllOld {
		return errorf("Invalid returning clause: RETURNING %s. Only RETURNING ALL OLD * is allowed in DELETE statements.", st.Returning)
	}
	if st.Where != nil {
		if err := validateCond(st.Where); err != nil {
			return err
		}
	}
	for _, a := range st.Actions {
		if a.Kind != ActionSet {
			continue
		}
		if err := validateSetValue(a.Path, a.Value, true); err != nil {
			return err
		}
	}
	return nil
}

func operandCount(name string, n int) *Error {
	return errorf("Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d", name, n)
}

func validateCond(e Expr) error {
	switch e := e.(type) {
	case *Binary:
		if e.Op == "AND" || e.Op == "OR" {
			if err := validateCond(e.L); err != nil {
				return err
			}
			return validateCond(e.R)
		}
		if err := validateOperand(e.L); err != nil {
			return err
		}
		return validateOperand(e.R)
	case *Not:
		return validateCond(e.X)
	case *Between:
		for _, x := range []Expr{e.X, e.Lo, e.Hi} {
			if err := validateOperand(x); err != nil {
				return err
			}
		}
	case *In:
		if err := validateOperand(e.X); err != nil {
			return err
		}
		for _, x := range e.List {
			if err := validateOperand(x); err != nil {
				return err
			}
		}
	case *Is:
		return validateOperand(e.X)
	case *Call:
		return validateCall(e)
	}
	return nil
}

func validateCall(c *Call) error {
	n, ok := conditionFunctions[c.Name]
	if !ok {
		return errorf("Unrecognized function: %s at %s", c.Name, c.At)
	}
	if len(c.Args) != n {
		return operandCount(c.Name, len(c.Args))
	}
	for _, a := range c.Args {
		if err := validateOperand(a); err != nil {
			return err
		}
	}
	return nil
}

func validateOperand(e Expr) error {
	switch e := e.(type) {
	case *Call:
		return validateCall(e)
	case *Binary:
		if e.Op == "AND" || e.Op == "OR" {
			return validateCond(e)
		}
		if err := validateOperand(e.L); err != nil {
			return err
		}
		return validateOperand(e.R)
	case *Not:
		return validateCond(e.X)
	case *Neg:
		return validateOperand(e.X)
	}
	return nil
}

// validateSetValue checks the value of SET target = value. set_add and
// set_delete may only stand alone, as target = set_add(target, <<...>>).
func validateSetValue(target *Path, e Expr, top bool) error {
	switch e := e.(type) {
	case *Call:
		switch e.Name {
		case "set_add", "set_delete":
			fn := strings.ToUpper(e.Name)
			if len(e.Args) != 2 {
				return errorf("%s must have exactly two arguments at %s", fn, e.At)
			}
			first, ok := e.Args[0].(*Path)
			if !top || !ok || !first.Equal(target) {
				return errorf("The first argument to %s must equal the assignment value at %s", fn, e.At)
			}
			switch e.Args[1].(type) {
			case *Bag, *Param:
			default:
				return errorf("The second argument to %s must be a value with type SET at %s", fn, first.At)
			}
			return nil
		case "list_append", "if_not_exists":
			for _, a := range e.Args {
				if err := validateSetValue(target, a, false); err != nil {
					return err
				}
			}
			return nil
		}
		return errorf("Unrecognized function: %s at %s", e.Name, e.At)
	case *Binary:
		if e.Op != "+" && e.Op != "-" {
			return errorf("Unsupported operator in Update Expression. Operator: %s", e.Op)
		}
		if err := validateSetValue(target, e.L, false); err != nil {
			return err
		}
		return validateSetValue(target, e.R, false)
	case *Neg, *Not, *Between, *In, *Is:
		return errorf("Unsupported operator in Update Expression. Operator: %s", opName(e))
	}
	return nil
}

func opName(e Expr) string {
	switch e.(type) {
	case *Neg:
		return "-"
	case *Not:
		return "NOT"
	case *Between:
		return "BETWEEN"
	case *In:
		return "IN"
	case *Is:
		return "IS"
	}
	return fmt.Sprintf("%T", e)
}
