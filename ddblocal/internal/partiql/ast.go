// Package partiql parses the PartiQL dialect DynamoDB accepts in
// ExecuteStatement, BatchExecuteStatement and ExecuteTransaction: SELECT,
// INSERT, UPDATE (also in its FROM-first form), DELETE and, inside
// transactions, EXISTS(SELECT ...). It is pure: it turns text into a syntax
// tree, checks what can be checked without a table, and converts literals
// into attribute values. Errors are *Error values whose Msg is the message
// DynamoDB puts in its ValidationException.
package partiql

import "fmt"

// Error is a statement the parser refuses; Msg is DynamoDB's message.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

const notWellFormed = "Statement wasn't well formed, can't be processed: "

func malformed(detail string) *Error { return &Error{Msg: notWellFormed + detail} }

func errorf(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Pos locates a token in the statement.
type Pos struct{ Line, Col, Len int }

// String renders the position as DynamoDB appends it to messages.
func (p Pos) String() string { return fmt.Sprintf("%d:%d:%d", p.Line, p.Col, p.Len) }

func posOf(t token) Pos { return Pos{t.line, t.col, t.len} }

// Kind is the kind of a statement.
type Kind uint8

const (
	Select Kind = iota + 1
	Insert
	Update
	Delete
	Exists // EXISTS(SELECT ...), a condition check inside a transaction
)

func (k Kind) String() string {
	switch k {
	case Select:
		return "SELECT"
	case Insert:
		return "INSERT"
	case Update:
		return "UPDATE"
	case Delete:
		return "DELETE"
	case Exists:
		return "EXISTS"
	}
	return "?"
}

// Returning is an UPDATE or DELETE RETURNING clause.
type Returning uint8

const (
	ReturnNone Returning = iota
	ReturnAllOld
	ReturnAllNew
	ReturnModifiedOld
	ReturnModifiedNew
)

func (r Returning) String() string {
	switch r {
	case ReturnAllOld:
		return "ALL OLD *"
	case ReturnAllNew:
		return "ALL NEW *"
	case ReturnModifiedOld:
		return "MODIFIED OLD *"
	case ReturnModifiedNew:
		return "MODIFIED NEW *"
	}
	return "NONE"
}

// Statement is one parsed statement.
type Statement struct {
	Kind  Kind
	Table string
	Index string // "" unless FROM names "table"."index"

	// SELECT
	Star       bool
	Projection []*Path
	OrderBy    []OrderKey

	Where Expr // nil when absent

	// INSERT: the item (a map literal or a parameter)
	Value Expr

	// UPDATE
	Actions   []Action
	Returning Returning

	// Params is the number of ? placeholders, in order of appearance.
	Params int
}

// OrderKey is one ORDER BY term.
type OrderKey struct {
	Name string
	Desc bool
}

// ActionKind is SET or REMOVE.
type ActionKind uint8

const (
	ActionSet ActionKind = iota + 1
	ActionRemove
)

// Action is one SET path = value or REMOVE path of an UPDATE.
type Action struct {
	Kind  ActionKind
	Path  *Path
	Value Expr // SET only
}

// Expr is a node of an expression tree.
type Expr interface{ pos() Pos }

// PathElem is one step of a path: a name, or a list index.
type PathElem struct {
	Name    string
	Index   int
	IsIndex bool
}

// Path is a document path such as a.b[2]."c".
type Path struct {
	Elems []PathElem
	At    Pos
}

// Literal kinds.
type LitKind uint8

const (
	LitString LitKind = iota + 1
	LitNumber
	LitBool
	LitNull
	LitMissing
)

// Lit is a scalar literal.
type Lit struct {
	Kind LitKind
	Text string // string value, or number as written
	Bool bool
	At   Pos
}

// Param is a ? placeholder; Index counts from 0.
type Param struct {
	Index int
	At    Pos
}

// Tuple is a {'k': v, ...} literal.
type Tuple struct {
	Keys []Expr
	Vals []Expr
	At   Pos
}

// List is a [v, ...] literal.
type List struct {
	Elems []Expr
	At    Pos
}

// Bag is a <<v, ...>> literal: DynamoDB reads it as a set.
type Bag struct {
	Elems []Expr
	At    Pos
}

// Binary is an infix operation: AND, OR, a comparison (=, <>, <, <=, >,
// >=; != is normalised to <>), or arithmetic (+, -).
type Binary struct {
	Op   string
	L, R Expr
	At   Pos // the operator
}

// Not is NOT x.
type Not struct {
	X  Expr
	At Pos
}

// Neg is unary minus applied to a non-literal.
type Neg struct {
	X  Expr
	At Pos
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
	At        Pos
}

// In is x [NOT] IN [v, ...] (or a parameter holding a list).
type In struct {
	X    Expr
	List []Expr // nil when Param is set
	Not  bool
	At   Pos
}

// Is is x IS [NOT] <type>, with Type upper-cased (MISSING, NULL, BOOLEAN…).
type Is struct {
	X    Expr
	Type string
	Not  bool
	At   Pos
}

// Call is a function call; Name is lower-cased.
type Call struct {
	Name string
	Args []Expr
	At   Pos
}

// Subquery is the SELECT inside EXISTS(...).
type Subquery struct {
	Stmt *Statement
	At   Pos
}

func (e *Path) pos() Pos     { return e.At }
func (e *Lit) pos() Pos      { return e.At }
func (e *Param) pos() Pos    { return e.At }
func (e *Tuple) pos() Pos    { return e.At }
func (e *List) pos() Pos     { return e.At }
func (e *Bag) pos() Pos      { return e.At }
func (e *Binary) pos() Pos   { return e.At }
func (e *Not) pos() Pos      { return e.At }
func (e *Neg) pos() Pos      { return e.At }
func (e *Between) pos() Pos  { return e.At }
func (e *In) pos() Pos       { return e.At }
func (e *Is) pos() Pos       { return e.At }
func (e *Call) pos() Pos     { return e.At }
func (e *Subquery) pos() Pos { return e.At }

// PosOf returns where an expression starts (for operators, the operator).
func PosOf(e Expr) Pos { return e.pos() }

// String renders a path as written in DynamoDB messages: a.b[1].
func (p *Path) String() string {
	s := ""
	for i, e := range p.Elems {
		switch {
		case e.IsIndex:
			s += fmt.Sprintf("[%d]", e.Index)
		case i == 0:
			s += e.Name
		default:
			s += "." + e.Name
		}
	}
	return s
}

// Equal reports whether two paths name the same document path.
func (p *Path) Equal(q *Path) bool {
	if len(p.Elems) != len(q.Elems) {
		return false
	}
	for i := range p.Elems {
		if p.Elems[i] != q.Elems[i] {
			return false
		}
	}
	return true
}
