package engine

import (
	"strings"

	"lastro/ddblocal/internal/av"
	"lastro/ddblocal/internal/wire"
)

// UpdateItem's second size gate. Besides the item it would store, a
// standalone UpdateItem is measured by what its UpdateExpression writes:
// the name and new value of every attribute a SET or ADD clause reaches,
// plus a fixed cost per clause. The key and the attributes the statement
// leaves alone are out of that figure, so with a short key the ceiling
// falls below 400 KB. Measured against DynamoDB in most regions (a few
// regions, and transactions and PartiQL everywhere, measure the stored
// item only): 3 bytes for the update, 19 per SET or ADD clause (one more
// through a list index) and 2 per REMOVE or DELETE clause.

const (
	updateBaseCost   = 3
	updateSetCost    = 19
	updateRemoveCost = 2
)

// CheckStatementSize applies the gate to the item n an UpdateExpression
// produced. Every top-level attribute a clause reached and n still holds
// counts as written (a REMOVE of a whole attribute leaves nothing).
func (up Updater) CheckStatementSize(expr *string, n av.Item) error {
	if up.U == nil || up.legacy || expr == nil {
		return nil
	}
	size := updateClauseCost(*expr).total()
	written := map[string]bool{}
	for _, p := range up.U.Paths() {
		name := p.Top()
		v, ok := n[name]
		if !ok || written[name] {
			continue
		}
		written[name] = true
		size += len(name) + av.Size(v)
	}
	if size > maxItemBytes {
		return wire.Validation("Item size to update has exceeded the maximum allowed size")
	}
	return nil
}

// clauseCost counts an UpdateExpression's clauses by kind.
type clauseCost struct {
	sets, listIndexSets, removes int
}

func (c clauseCost) total() int {
	return updateBaseCost + updateSetCost*c.sets + c.listIndexSets + updateRemoveCost*c.removes
}

// updateClauseCost scans a valid UpdateExpression: sections start with
// SET, REMOVE, ADD or DELETE, and clauses are separated by commas outside
// parentheses. Names in an expression that parsed are plain identifiers or
// #aliases, so no keyword can hide inside one.
func updateClauseCost(expr string) clauseCost {
	var c clauseCost
	section := ""
	depth := 0
	clauseStart := true
	for i := 0; i < len(expr); {
		ch := expr[i]
		switch {
		case ch == '(':
			depth++
			i++
		case ch == ')':
			depth--
			i++
		case ch == ',' && depth == 0:
			clauseStart = true
			i++
		case isWordByte(ch):
			j := i
			for j < len(expr) && (isWordByte(expr[j]) || expr[j] == '.' || expr[j] == '[' || expr[j] == ']') {
				j++
			}
			word := expr[i:j]
			i = j
			if kw := strings.ToUpper(word); depth == 0 && (kw == "SET" || kw == "REMOVE" || kw == "ADD" || kw == "DELETE") {
				section, clauseStart = kw, true
				continue
			}
			if !clauseStart {
				continue
			}
			// The first word of a clause is the path it targets.
			clauseStart = false
			switch section {
			case "SET", "ADD":
				c.sets++
				if section == "SET" && strings.Contains(word, "[") {
					c.listIndexSets++
				}
			case "REMOVE", "DELETE":
				c.removes++
			}
		default:
			i++
		}
	}
	return c
}

func isWordByte(b byte) bool {
	return b == '#' || b == ':' || b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
