package expr

import "strconv"

// parser is a recursive-descent parser for DynamoDB's expression grammar:
//
//	condition  := operand comparator operand
//	            | operand IN '(' operand (',' operand)* ')'
//	            | operand BETWEEN operand AND operand
//	            | function | '(' condition ')' | NOT condition
//	            | condition AND condition | condition OR condition
//	update     := (SET set_action (',' set_action)* | REMOVE path (',' path)*
//	            |  ADD path :value (',' ...)* | DELETE path :value (',' ...)*)+
//	set_action := path '=' (operand | arithmetic)
//	arithmetic := operand ('+'|'-') operand | '(' arithmetic ')'
//	projection := path (',' path)*
//	operand    := path | :value | function | '(' operand ')'
//	function   := ID '(' operand (',' operand)* ')'
//	path       := (ID | #name) ('.' (ID | #name) | '[' index ']')*
//
// NOT binds tighter than AND, which binds tighter than OR. Errors are
// reported at the first token that cannot continue any valid expression,
// as DynamoDB's ANTLR parser does. Failures unwind with a panic carrying
// *Error, recovered by parse; this keeps the many grammar functions free
// of error plumbing.
type parser struct {
	src  string
	kind string // expression kind, for messages
	toks []token
	pos  int

	// Doubled parentheses are an error ("redundant parentheses"), but
	// DynamoDB only raises it once its parser has committed to the
	// alternative that contains them: a syntax error found while it was
	// still looking ahead wins. window counts the condition primaries whose
	// alternative is still undecided; a redundancy found while window > 0
	// stays pending until every enclosing primary is decided.
	window    int
	redundant bool

	// DynamoDB accepts doubled parentheses around each side of a
	// KeyConditionExpression's top-level AND ("((pk = :p)) AND ((sk = :s))")
	// but not around the whole expression ("((pk = :p))") nor deeper
	// ("((pk = :p) AND ((sk = :s)))"). depth counts the condition
	// parentheses open; keyRedundant notes a doubling at depth 0, an error
	// unless the expression turns out to be such an AND.
	depth        int
	keyRedundant bool
}

// parse runs f over the tokens of src and returns its result, or the
// first error.
func parse[T any](kind, src string, f func(p *parser) T) (res T, err error) {
	if src == "" {
		return res, invalid(kind, detail(msgEmpty))
	}
	if n := javaLen(src); n > maxExpressionSize {
		if kind == KindUpdate || kind == KindProjection {
			return res, invalid(kind, detail(msgTooLong))
		}
		return res, invalid(kind, detail(msgTooLong, "expression size", strconv.Itoa(n)))
	}
	var buf [32]token
	p := &parser{src: src, kind: kind, toks: tokenize(src, buf[:0])}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	res = f(p)
	p.expect(tEOF)
	p.flushRedundant()
	return res, nil
}

func (p *parser) cur() token        { return p.toks[p.pos] }
func (p *parser) at(k tokKind) bool { return p.toks[p.pos].kind == k }

func (p *parser) text(t token) string { return p.src[t.start:t.end] }

// fail reports a syntax error at the current token. The "near" text runs
// from the previous token to the next one, with the original spacing.
func (p *parser) fail() {
	t := p.toks[p.pos]
	tok := "<EOF>"
	if t.kind != tEOF {
		tok = p.text(t)
	}
	start, end := 0, len(p.src)
	if p.pos > 0 {
		start = p.toks[p.pos-1].start
	}
	if t.kind != tEOF && p.toks[p.pos+1].kind != tEOF {
		end = p.toks[p.pos+1].end
	}
	panic(invalid(p.kind, detail(msgSyntax, "token", `"`+tok+`"`, "near", `"`+p.src[start:end]+`"`)))
}

func (p *parser) expect(k tokKind) {
	if !p.at(k) {
		p.fail()
	}
	p.pos++
}

// parenthesize marks n as enclosed in parentheses, noting redundancy when
// it already was.
func (p *parser) parenthesize(n *node) {
	if n.parens {
		p.redundant = true
		if p.window == 0 {
			p.flushRedundant()
		}
	}
	n.parens = true
}

func (p *parser) flushRedundant() {
	if p.redundant {
		panic(invalid(p.kind, detail(msgRedundantParens)))
	}
}

// decideAll records that every enclosing condition primary is now known to
// be a condition (a comparison, NOT, AND or OR was seen), so pending
// redundancies are raised.
func (p *parser) decideAll() {
	p.window = 0
	p.flushRedundant()
}

// path parses a document path.
func (p *parser) path() *node {
	n := &node{kind: nPath}
	t := p.cur()
	switch t.kind {
	case tID:
		n.raw = append(n.raw, rawElem{kind: rawID, text: p.text(t)})
	case tName:
		n.raw = append(n.raw, rawElem{kind: rawName, text: p.text(t)})
	default:
		p.fail()
	}
	p.pos++
	for {
		switch p.cur().kind {
		case tDot:
			p.pos++
			t := p.cur()
			switch t.kind {
			case tID:
				n.raw = append(n.raw, rawElem{kind: rawID, text: p.text(t)})
			case tName:
				n.raw = append(n.raw, rawElem{kind: rawName, text: p.text(t)})
			default:
				// DynamoDB's grammar also accepts ".:value" here, but the
				// service then fails internally; reject it as a syntax error.
				p.fail()
			}
			p.pos++
		case tLBrack:
			p.pos++
			t := p.cur()
			if t.kind != tIndex {
				p.fail()
			}
			digits := p.text(t)
			idx, err := strconv.ParseInt(digits, 10, 32)
			if err != nil {
				idx = -1 // reported later, like DynamoDB, as out of range
			}
			n.raw = append(n.raw, rawElem{kind: rawIndex, text: digits, index: int(idx)})
			p.pos++
			p.expect(tRBrack)
		default:
			return n
		}
	}
}

// atom parses an operand that does not start with a parenthesis.
func (p *parser) atom() *node {
	t := p.cur()
	switch t.kind {
	case tValue:
		p.pos++
		return &node{kind: nValue, name: p.text(t)}
	case tID:
		if p.toks[p.pos+1].kind == tLParen {
			return p.function()
		}
		return p.path()
	case tName:
		return p.path()
	}
	p.fail()
	return nil
}

// function parses a call; any identifier parses as a function name, the
// name is checked later.
func (p *parser) function() *node {
	name := p.text(p.cur())
	p.pos += 2 // name and '('
	n := &node{kind: nFunc, name: name, fn: functions[name]}
	n.args = append(n.args, p.operand())
	for p.at(tComma) {
		p.pos++
		n.args = append(n.args, p.operand())
	}
	p.expect(tRParen)
	return n
}

// operand parses path | :value | function | '(' operand ')'.
func (p *parser) operand() *node {
	if !p.at(tLParen) {
		return p.atom()
	}
	p.pos++
	n := p.operand()
	p.expect(tRParen)
	p.parenthesize(n)
	return n
}

// condition parses a whole condition expression.
func (p *parser) condition() *node {
	n := p.or(false)
	if p.keyRedundant && (n.kind != nAnd || n.parens) {
		p.redundant = true
	}
	return n
}

// or parses conditions joined by OR. With bare set (inside parentheses
// whose meaning is not yet known) it may return a plain operand, which the
// caller then treats as a parenthesized operand.
func (p *parser) or(bare bool) *node {
	left := p.and(bare)
	if !left.isCondition() {
		return left
	}
	for p.at(tOr) {
		p.decideAll()
		p.pos++
		left = &node{kind: nOr, args: []*node{left, p.and(false)}}
	}
	return left
}

func (p *parser) and(bare bool) *node {
	left := p.not(bare)
	if !left.isCondition() {
		return left
	}
	for p.at(tAnd) {
		p.decideAll()
		p.pos++
		left = &node{kind: nAnd, args: []*node{left, p.not(false)}}
	}
	return left
}

func (p *parser) not(bare bool) *node {
	if !p.at(tNot) {
		return p.primary(bare)
	}
	p.decideAll()
	p.pos++
	return &node{kind: nNot, args: []*node{p.not(false)}}
}

// primary parses a comparison, a function condition or a parenthesized
// condition. What follows the first operand decides which it is.
func (p *parser) primary(bare bool) *node {
	outer := p.window
	p.window++
	var n *node
	if p.at(tLParen) {
		p.pos++
		p.depth++
		n = p.or(true)
		p.depth--
		p.expect(tRParen)
		if p.kind == KindKeyCondition && p.depth == 0 && n.parens && n.isCondition() {
			p.keyRedundant = true
		} else {
			p.parenthesize(n)
		}
	} else {
		n = p.atom()
	}
	if n.isOperand() {
		switch k := p.cur().kind; {
		case k >= tEQ && k <= tGE:
			p.decideAll()
			p.pos++
			n = &node{kind: nCompare, op: uint8(k - tEQ), args: []*node{n, p.operand()}}
		case k == tIn:
			p.decideAll()
			p.pos++
			p.expect(tLParen)
			n = &node{kind: nIn, args: []*node{n, p.operand()}}
			for p.at(tComma) {
				p.pos++
				n.args = append(n.args, p.operand())
			}
			p.expect(tRParen)
		case k == tBetween:
			p.decideAll()
			p.pos++
			lo := p.operand()
			p.expect(tAnd)
			n = &node{kind: nBetween, args: []*node{n, lo, p.operand()}}
		default:
			if !n.isCondition() && !bare {
				p.fail()
			}
		}
	}
	p.window = min(p.window, outer)
	if p.window == 0 {
		p.flushRedundant()
	}
	return n
}

// setValue parses the right-hand side of a SET action.
func (p *parser) setValue() *node {
	n := p.arithmetic()
	if n.kind != nArith && (p.at(tPlus) || p.at(tMinus)) {
		n = p.arithTail(n)
	}
	return n
}

// arithmetic parses an operand or a parenthesized arithmetic expression;
// only one addition or subtraction is allowed per SET action.
func (p *parser) arithmetic() *node {
	if !p.at(tLParen) {
		return p.atom()
	}
	p.pos++
	n := p.arithmetic()
	if n.kind != nArith && (p.at(tPlus) || p.at(tMinus)) {
		n = p.arithTail(n)
	}
	p.expect(tRParen)
	p.parenthesize(n)
	return n
}

func (p *parser) arithTail(left *node) *node {
	op := opPlus
	if p.at(tMinus) {
		op = opMinus
	}
	p.pos++
	return &node{kind: nArith, op: op, args: []*node{left, p.operand()}}
}
