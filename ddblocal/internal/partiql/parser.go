package partiql

import (
	"slices"
	"strconv"
	"strings"
)

// Messages of the parser that DynamoDB words on its own.
const (
	msgLeftover        = notWellFormed + "Unexpected token after expression"
	msgAlias           = "Aliasing is not supported"
	msgMissingKey      = "Where clause does not contain a mandatory equality on all key attributes"
	msgEmptyComponent  = "Path component cannot be an empty string"
	msgFromComponents  = "A path may contain at most 2 components in the FROM clause"
	msgDMLFrom         = "FROM clause may only contain a single table name in data manipulation statements"
	msgStarAndOthers   = "Other attributes should not be present in the projection when '*' is used."
	msgReturningSyntax = "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"
	msgInOperator      = "IN operator must have a left hand argument of type Variable Reference and right hand argument of type Seq with at least one member"
)

type parser struct {
	toks   []token
	i      int
	params int
}

// Parse parses one statement and checks what needs no table: function
// names and arities, SET function shapes, RETURNING variants.
func Parse(src string) (*Statement, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	if err := validate(st); err != nil {
		return nil, err
	}
	return st, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) acceptKw(k string) bool {
	if p.peek().kw(k) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.peek().punct(s) {
		p.i++
		return true
	}
	return false
}

// atEnd reports whether nothing but an optional semicolon is left.
func (p *parser) atEnd() bool {
	t := p.peek()
	return t.kind == tEOF || t.punct(";")
}

func (p *parser) statement() (*Statement, error) {
	var st *Statement
	var err error
	t := p.peek()
	switch {
	case t.kw("SELECT"):
		st, err = p.selectStmt()
	case t.kw("INSERT"):
		st, err = p.insertStmt()
	case t.kw("UPDATE"):
		st, err = p.updateStmt()
	case t.kw("DELETE"):
		st, err = p.deleteStmt()
	case t.kw("FROM"):
		st, err = p.fromFirstUpdate()
	case t.kw("EXISTS"):
		st, err = p.existsStmt()
	default:
		return nil, malformed("Expected data manipulation")
	}
	if err != nil {
		return nil, err
	}
	p.acceptPunct(";")
	if p.peek().kind != tEOF {
		return nil, &Error{Msg: msgLeftover}
	}
	st.Params = p.params
	return st, nil
}

// source parses FROM's table, or "table"."index". missing is the detail
// when no name is there.
func (p *parser) source(st *Statement, missing string) error {
	name, err := p.sourceName(missing)
	if err != nil {
		return err
	}
	st.Table = name
	if p.acceptPunct(".") {
		if st.Index, err = p.sourceName(missing); err != nil {
			return err
		}
		if p.peek().punct(".") {
			return &Error{Msg: msgFromComponents}
		}
	}
	return nil
}

func (p *parser) sourceName(missing string) (string, error) {
	t := p.peek()
	switch {
	case t.kind == tQuoted:
		p.i++
		if t.text == "" {
			return "", &Error{Msg: msgEmptyComponent}
		}
		return t.text, nil
	case t.kind == tIdent && !isReserved(t.text):
		p.i++
		return t.text, nil
	}
	return "", malformed(missing)
}

// noAlias refuses a table alias (FROM t x or FROM t AS x).
func (p *parser) noAlias() error {
	t := p.peek()
	if t.kw("AS") || t.kind == tQuoted || t.kind == tIdent && !isReserved(t.text) {
		return &Error{Msg: msgAlias}
	}
	return nil
}

func (p *parser) selectStmt() (*Statement, error) {
	p.next() // SELECT
	st := &Statement{Kind: Select}
	for {
		if p.peek().punct("*") {
			p.i++
			st.Star = true
		} else {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			path, ok := e.(*Path)
			if !ok {
				return nil, errorf("Unexpected path component at %s", PosOf(e))
			}
			st.Projection = append(st.Projection, path)
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if st.Star && len(st.Projection) > 0 {
		return nil, &Error{Msg: msgStarAndOthers}
	}
	if !p.acceptKw("FROM") {
		return nil, p.unexpected()
	}
	if err := p.source(st, "Unexpected term"); err != nil {
		return nil, err
	}
	if err := p.noAlias(); err != nil {
		return nil, err
	}
	if p.acceptKw("WHERE") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		st.Where = w
	}
	if p.peek().kw("ORDER") && p.peekAt(1).kw("BY") {
		p.i += 2
		for {
			t := p.next()
			if t.kind != tQuoted && (t.kind != tIdent || isReserved(t.text)) {
				return nil, malformed("Expected identifier for simple path")
			}
			k := OrderKey{Name: t.text}
			if p.acceptKw("DESC") {
				k.Desc = true
			} else {
				p.acceptKw("ASC")
			}
			st.OrderBy = append(st.OrderBy, k)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	return st, nil
}

func (p *parser) existsStmt() (*Statement, error) {
	p.next() // EXISTS
	if !p.acceptPunct("(") || !p.peek().kw("SELECT") {
		return nil, malformed("Expected data manipulation")
	}
	st, err := p.selectStmt()
	if err != nil {
		return nil, err
	}
	if !p.acceptPunct(")") {
		return nil, p.unexpected()
	}
	st.Kind = Exists
	return st, nil
}

func (p *parser) insertStmt() (*Statement, error) {
	p.next() // INSERT
	if !p.acceptKw("INTO") {
		return nil, p.unexpected()
	}
	st := &Statement{Kind: Insert}
	first := p.peek()
	if err := p.source(st, "Expected identifier for simple path"); err != nil {
		return nil, err
	}
	if st.Index != "" {
		// Unlike UPDATE and DELETE, which parse a qualifier and refuse it
		// once the table is resolved, INSERT's grammar has no room for one:
		// DynamoDB refuses it here, before looking at either name.
		last := p.toks[p.i-1]
		span := Pos{first.line, first.col, last.col + last.len - first.col}
		return nil, errorf("%s at %s", msgDMLFrom, span)
	}
	if !p.acceptKw("VALUE") {
		if p.peek().kw("VALUES") || p.peek().punct("<<") {
			return nil, &Error{Msg: `Unsupported operation: Inserting multiple items in a single statement is not supported, use "INSERT INTO tableName VALUE item" instead`}
		}
		return nil, &Error{Msg: msgLeftover}
	}
	if p.atEnd() {
		return nil, malformed("Unexpected term")
	}
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	st.Value = v
	if p.peek().kw("RETURNING") {
		return nil, &Error{Msg: "RETURNING is not supported in INSERT"}
	}
	return st, nil
}

func (p *parser) updateStmt() (*Statement, error) {
	p.next() // UPDATE
	st := &Statement{Kind: Update}
	if err := p.source(st, "Expected identifier for simple path"); err != nil {
		return nil, err
	}
	if err := p.noAlias(); err != nil {
		return nil, err
	}
	if err := p.actions(st); err != nil {
		return nil, err
	}
	if !p.acceptKw("WHERE") {
		if p.atEnd() {
			return nil, &Error{Msg: msgMissingKey}
		}
		return nil, &Error{Msg: msgLeftover}
	}
	w, err := p.expr()
	if err != nil {
		return nil, err
	}
	st.Where = w
	return st, p.returning(st)
}

// fromFirstUpdate parses FROM t [WHERE cond] SET ... | REMOVE ...
func (p *parser) fromFirstUpdate() (*Statement, error) {
	p.next() // FROM
	st := &Statement{Kind: Update}
	if err := p.source(st, "Expected identifier for simple path"); err != nil {
		return nil, err
	}
	if err := p.noAlias(); err != nil {
		return nil, err
	}
	if p.acceptKw("WHERE") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		st.Where = w
	}
	if err := p.actions(st); err != nil {
		return nil, err
	}
	if err := p.returning(st); err != nil {
		return nil, err
	}
	if st.Where == nil && p.atEnd() {
		return nil, &Error{Msg: msgMissingKey}
	}
	return st, nil
}

// actions parses one or more SET a = v[, ...] and REMOVE a[, ...] clauses.
func (p *parser) actions(st *Statement) error {
	for {
		switch {
		case p.acceptKw("SET"):
			for {
				path, err := p.targetPath()
				if err != nil {
					return err
				}
				if !p.acceptPunct("=") {
					return p.unexpected()
				}
				if p.atEnd() {
					return malformed("Missing right-hand side expression of infix operator")
				}
				v, err := p.expr()
				if err != nil {
					return err
				}
				st.Actions = append(st.Actions, Action{Kind: ActionSet, Path: path, Value: v})
				if !p.acceptPunct(",") {
					break
				}
			}
		case p.acceptKw("REMOVE"):
			for {
				path, err := p.targetPath()
				if err != nil {
					return err
				}
				st.Actions = append(st.Actions, Action{Kind: ActionRemove, Path: path})
				if !p.acceptPunct(",") {
					break
				}
			}
		default:
			if len(st.Actions) == 0 {
				if p.peek().kw("ADD") || p.peek().kw("DELETE") {
					return &Error{Msg: "Only SET and REMOVE are supported in update expressions at this time"}
				}
				return p.unexpected()
			}
			return nil
		}
	}
}

// targetPath parses the path an update action writes.
func (p *parser) targetPath() (*Path, error) {
	e, err := p.primary()
	if err != nil {
		return nil, err
	}
	path, ok := e.(*Path)
	if !ok {
		return nil, errorf("Unrecognized assignment target: %s", describe(e))
	}
	return path, nil
}

func (p *parser) deleteStmt() (*Statement, error) {
	p.next() // DELETE
	if !p.acceptKw("FROM") {
		return nil, p.unexpected()
	}
	st := &Statement{Kind: Delete}
	if err := p.source(st, "Expected identifier for simple path"); err != nil {
		return nil, err
	}
	if err := p.noAlias(); err != nil {
		return nil, err
	}
	if !p.acceptKw("WHERE") {
		if p.atEnd() {
			return nil, &Error{Msg: msgMissingKey}
		}
		return nil, &Error{Msg: msgLeftover}
	}
	w, err := p.expr()
	if err != nil {
		return nil, err
	}
	st.Where = w
	return st, p.returning(st)
}

func (p *parser) returning(st *Statement) error {
	if !p.acceptKw("RETURNING") {
		return nil
	}
	var all, old bool
	switch {
	case p.acceptKw("ALL"):
		all = true
	case p.acceptKw("MODIFIED"):
	default:
		return p.unexpected()
	}
	switch {
	case p.acceptKw("OLD"):
		old = true
	case p.acceptKw("NEW"):
	default:
		return p.unexpected()
	}
	if !p.acceptPunct("*") {
		if p.atEnd() {
			return &Error{Msg: msgReturningSyntax}
		}
		return &Error{Msg: "Invalid syntax with multiple returning elements in RETURNING clause"}
	}
	switch {
	case all && old:
		st.Returning = ReturnAllOld
	case all:
		st.Returning = ReturnAllNew
	case old:
		st.Returning = ReturnModifiedOld
	default:
		st.Returning = ReturnModifiedNew
	}
	return nil
}

// unexpected describes the token where a term was expected.
func (p *parser) unexpected() *Error {
	t := p.peek()
	switch {
	case t.kind == tEOF || t.punct(";") || t.punct(")") || t.punct("]") || t.punct("}") || t.punct(",") || t.punct(">>"):
		return malformed("Unexpected term")
	case t.kind == tIdent && operatorWords[strings.ToLower(t.text)]:
		return malformed("Unexpected operator")
	case t.kind == tIdent && isReserved(t.text):
		return malformed("Unexpected keyword")
	case t.kind == tPunct && strings.Contains("=<><=>=!=+-*/%||", t.text):
		return malformed("Unexpected operator")
	}
	return &Error{Msg: msgLeftover}
}

// --- expressions, by increasing precedence ---

func (p *parser) expr() (Expr, error) { return p.or() }

// rhs checks that an infix operator has something on its right.
func (p *parser) rhs() error {
	if p.atEnd() {
		return malformed("Missing right-hand side expression of infix operator")
	}
	return nil
}

func (p *parser) or() (Expr, error) { return p.leftAssoc(p.and, keywordOp("OR")) }

func (p *parser) and() (Expr, error) { return p.leftAssoc(p.not, keywordOp("AND")) }

func (p *parser) not() (Expr, error) {
	if p.peek().kw("NOT") {
		at := posOf(p.next())
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Not{X: x, At: at}, nil
	}
	return p.comparison()
}

var comparators = map[string]string{"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

// comparison parses a comparison or a predicate over one operand. It is
// long because it is one case per form (BETWEEN, IN, IS, the
// operators), each parsed in place.
func (p *parser) comparison() (Expr, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if op, ok := comparators[t.text]; ok && t.kind == tPunct {
			p.i++
			if err := p.rhs(); err != nil {
				return nil, err
			}
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			l = &Binary{Op: op, L: l, R: r, At: posOf(t)}
			continue
		}
		negated := false
		if t.kw("NOT") && (p.peekAt(1).kw("IN") || p.peekAt(1).kw("BETWEEN") || p.peekAt(1).kw("LIKE")) {
			negated = true
			p.i++
			t = p.peek()
		}
		switch {
		case t.kw("IS"):
			p.i++
			n := p.acceptKw("NOT")
			typ, err := p.typeName()
			if err != nil {
				return nil, err
			}
			l = &Is{X: l, Type: typ, Not: n, At: posOf(t)}
		case t.kw("IN"):
			p.i++
			if err := p.rhs(); err != nil {
				return nil, err
			}
			in := &In{X: l, Not: negated, At: posOf(t)}
			r, err := p.additive()
			if err != nil {
				return nil, err
			}
			switch r := r.(type) {
			case *List:
				in.List = r.Elems
			case *Param:
				in.List = []Expr{r}
			default:
				return nil, &Error{Msg: msgInOperator}
			}
			if len(in.List) == 0 {
				return nil, &Error{Msg: msgInOperator}
			}
			l = in
		case t.kw("BETWEEN"):
			p.i++
			if err := p.rhs(); err != nil {
				return nil, err
			}
			lo, err := p.additive()
			if err != nil {
				return nil, err
			}
			if !p.acceptKw("AND") {
				return nil, p.unexpected()
			}
			if err := p.rhs(); err != nil {
				return nil, err
			}
			hi, err := p.additive()
			if err != nil {
				return nil, err
			}
			l = &Between{X: l, Lo: lo, Hi: hi, Not: negated, At: posOf(t)}
		case t.kw("LIKE"):
			return nil, &Error{Msg: "Unsupported operation: Like"}
		default:
			if negated {
				return nil, p.unexpected()
			}
			return l, nil
		}
	}
}

// typeName reads the type after IS.
func (p *parser) typeName() (string, error) {
	t := p.peek()
	if t.kind != tIdent {
		return "", malformed("Expected type name")
	}
	name := strings.ToLower(t.text)
	p.i++
	switch name {
	case "double":
		p.acceptKw("PRECISION")
	case "character":
		p.acceptKw("VARYING")
	}
	typ, ok := typeNames[name]
	if !ok {
		return "", malformed("Expected type name")
	}
	return typ, nil
}

func (p *parser) additive() (Expr, error) {
	return p.leftAssoc(p.multiplicative, punctOp("+", "-", "||"))
}

func (p *parser) multiplicative() (Expr, error) { return p.leftAssoc(p.unary, punctOp("*", "/", "%")) }

// opMatcher reports whether a token is one of a precedence level's binary
// operators, and the operator's name.
type opMatcher func(token) (op string, ok bool)

// keywordOp matches a keyword operator (any case), named in upper case.
func keywordOp(kw string) opMatcher {
	return func(t token) (string, bool) { return kw, t.kw(kw) }
}

// punctOp matches punctuation operators.
func punctOp(ops ...string) opMatcher {
	return func(t token) (string, bool) { return t.text, t.kind == tPunct && slices.Contains(ops, t.text) }
}

// leftAssoc parses next (op next)* for the left-associative operators of
// one precedence level.
func (p *parser) leftAssoc(next func() (Expr, error), match opMatcher) (Expr, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := match(p.peek())
		if !ok {
			return l, nil
		}
		at := posOf(p.next())
		if err := p.rhs(); err != nil {
			return nil, err
		}
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &Binary{Op: op, L: l, R: r, At: at}
	}
}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	if t.punct("-") || t.punct("+") {
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if t.text == "+" {
			return x, nil
		}
		if lit, ok := x.(*Lit); ok && lit.Kind == LitNumber {
			neg := "-" + lit.Text
			if strings.HasPrefix(lit.Text, "-") {
				neg = lit.Text[1:]
			}
			return &Lit{Kind: LitNumber, Text: neg, At: posOf(t)}, nil
		}
		return &Neg{X: x, At: posOf(t)}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	at := posOf(t)
	switch t.kind {
	case tString:
		p.i++
		return &Lit{Kind: LitString, Text: t.text, At: at}, nil
	case tNumber:
		p.i++
		return &Lit{Kind: LitNumber, Text: t.text, At: at}, nil
	case tParam:
		p.i++
		e := &Param{Index: p.params, At: at}
		p.params++
		return e, nil
	case tQuoted:
		return p.path()
	case tIdent:
		name := strings.ToLower(t.text)
		if p.peekAt(1).punct("(") {
			return p.call()
		}
		switch name {
		case "true", "false":
			p.i++
			return &Lit{Kind: LitBool, Bool: name == "true", At: at}, nil
		case "null":
			p.i++
			return &Lit{Kind: LitNull, At: at}, nil
		case "missing":
			p.i++
			return &Lit{Kind: LitMissing, At: at}, nil
		}
		if isReserved(name) {
			return nil, p.unexpected()
		}
		return p.path()
	case tPunct:
		switch t.text {
		case "(":
			p.i++
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.acceptPunct(")") {
				return nil, p.unexpected()
			}
			return e, nil
		case "[":
			p.i++
			elems, err := p.exprList("]")
			if err != nil {
				return nil, err
			}
			return &List{Elems: elems, At: at}, nil
		case "<<":
			p.i++
			elems, err := p.exprList(">>")
			if err != nil {
				return nil, err
			}
			return &Bag{Elems: elems, At: at}, nil
		case "{":
			return p.tuple()
		}
	}
	return nil, p.unexpected()
}

// exprList parses comma-separated expressions up to the closing token.
func (p *parser) exprList(closing string) ([]Expr, error) {
	var elems []Expr
	if p.acceptPunct(closing) {
		return elems, nil
	}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
		if p.acceptPunct(closing) {
			return elems, nil
		}
		if !p.acceptPunct(",") {
			return nil, p.unexpected()
		}
	}
}

func (p *parser) tuple() (Expr, error) {
	at := posOf(p.next()) // {
	tu := &Tuple{At: at}
	if p.acceptPunct("}") {
		return tu, nil
	}
	for {
		k, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.acceptPunct(":") {
			return nil, p.unexpected()
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		tu.Keys = append(tu.Keys, k)
		tu.Vals = append(tu.Vals, v)
		if p.acceptPunct("}") {
			return tu, nil
		}
		if !p.acceptPunct(",") {
			return nil, p.unexpected()
		}
	}
}

func (p *parser) call() (Expr, error) {
	t := p.next()
	p.next() // (
	c := &Call{Name: strings.ToLower(t.text), At: posOf(t)}
	if c.Name == "exists" && p.peek().kw("SELECT") {
		st, err := p.selectStmt()
		if err != nil {
			return nil, err
		}
		if !p.acceptPunct(")") {
			return nil, p.unexpected()
		}
		c.Args = []Expr{&Subquery{Stmt: st, At: posOf(t)}}
		return c, nil
	}
	args, err := p.exprList(")")
	if err != nil {
		return nil, err
	}
	c.Args = args
	return c, nil
}

// path parses a name followed by .name, ."name", [n] or ['name'] steps.
func (p *parser) path() (Expr, error) {
	t := p.next()
	path := &Path{Elems: []PathElem{{Name: t.text}}, At: posOf(t)}
	if t.kind == tQuoted && t.text == "" {
		return nil, &Error{Msg: msgEmptyComponent}
	}
	for {
		switch {
		case p.peek().punct("."):
			p.i++
			n := p.next()
			switch {
			case n.kind == tQuoted:
				if n.text == "" {
					return nil, &Error{Msg: msgEmptyComponent}
				}
			case n.kind == tIdent && !isReserved(n.text):
			case n.punct("*"):
				return nil, &Error{Msg: "Unpivot path component like a.*.b are not supported"}
			default:
				return nil, malformed("Invalid path dot component")
			}
			path.Elems = append(path.Elems, PathElem{Name: n.text})
			path.At.Len = p.toks[p.i-1].col + p.toks[p.i-1].len - path.At.Col
		case p.peek().punct("["):
			p.i++
			n := p.next()
			switch {
			case n.kind == tNumber:
				idx, err := strconv.Atoi(n.text)
				if err != nil || idx < 0 {
					return nil, errorf("List index is not within the allowable range; index: [%s]", n.text)
				}
				path.Elems = append(path.Elems, PathElem{Index: idx, IsIndex: true})
			case n.kind == tString:
				if n.text == "" {
					return nil, &Error{Msg: msgEmptyComponent}
				}
				path.Elems = append(path.Elems, PathElem{Name: n.text})
			case n.punct("*"):
				return nil, &Error{Msg: "Wildcard path component like a[*].b are not supported"}
			default:
				return nil, malformed("Unexpected path component")
			}
			if !p.acceptPunct("]") {
				return nil, p.unexpected()
			}
		default:
			return path, nil
		}
	}
}

// describe names an expression node for messages.
func describe(e Expr) string {
	switch e := e.(type) {
	case *Lit:
		if e.Kind == LitString || e.Kind == LitNumber {
			return e.Text
		}
		return strings.ToLower(litKindName(e))
	case *Call:
		return e.Name
	case *Path:
		return e.String()
	}
	return "expression"
}

func litKindName(l *Lit) string {
	switch l.Kind {
	case LitBool:
		if l.Bool {
			return "TRUE"
		}
		return "FALSE"
	case LitNull:
		return "NULL"
	case LitMissing:
		return "MISSING"
	}
	return ""
}
