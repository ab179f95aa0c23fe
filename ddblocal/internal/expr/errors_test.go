package expr

import (
	"strings"
	"testing"
)

// Expected messages come from DynamoDB itself (recorded test suites of
// other emulators and DynamoDB Local's implementation of the service's
// expression engine).

func TestConditionErrors(t *testing.T) {
	t.Parallel()
	const pre = "Invalid ConditionExpression: "
	tests := []struct{ expr, want string }{
		// Size and emptiness.
		{"", pre + "The expression can not be empty;"},
		{"   ", pre + `Syntax error; token: "<EOF>", near: "   "`},
		{"a = :s" + strings.Repeat(" ", 4091), pre + "Expression size has exceeded the maximum allowed size; expression size: 4097"},

		// Syntax errors, with DynamoDB's "near" text: previous, offending
		// and next token with the original spacing.
		{"!!!", pre + `Syntax error; token: "!", near: "!!"`},
		{"a b", pre + `Syntax error; token: "b", near: "a b"`},
		{"a,", pre + `Syntax error; token: ",", near: "a,"`},
		{"a = = :s", pre + `Syntax error; token: "=", near: "= = :s"`},
		{"a =", pre + `Syntax error; token: "<EOF>", near: "="`},
		{"a = ", pre + `Syntax error; token: "<EOF>", near: "= "`},
		{"a > 4", pre + `Syntax error; token: "4", near: "> 4"`},
		{"attribute_type()", pre + `Syntax error; token: ")", near: "()"`},
		{"things are not gonna be ok", pre + `Syntax error; token: "are", near: "things are not"`},
		{"attribute_exists(Pictures-RearView)", pre + `Syntax error; token: "-", near: "Pictures-RearView"`},
		{`attribute_exists("Pictures.RearView")`, pre + `Syntax error; token: """, near: "("Pictures"`},
		{"attribute_exists(Pictures..RearView)", pre + `Syntax error; token: ".", near: "..RearView"`},
		{"attribute_exists(Pi#ctures.RearView)", pre + `Syntax error; token: "#ctures", near: "Pi#ctures."`},
		{"attribute_exists(asdf[a])", pre + `Syntax error; token: "a", near: "[a]"`},
		{"a in b, c", pre + `Syntax error; token: "b", near: "in b,"`},
		{"a > between", pre + `Syntax error; token: "between", near: "> between"`},
		{"a in (b,c,)", pre + `Syntax error; token: ")", near: ",)"`},
		{"(a)between(b.(c.d))and(c)", pre + `Syntax error; token: "(", near: ".(c"`},
		{"#$.b > a", pre + `Syntax error; token: "#", near: "#$"`},
		{"a > :things.stuff", pre + `Syntax error; token: ".", near: ":things.stuff"`},
		{"b[:a] > a", pre + `Syntax error; token: ":a", near: "[:a]"`},
		{"b[#_] > a", pre + `Syntax error; token: "#_", near: "[#_]"`},
		{"ü > a", pre + `Syntax error; token: "ü", near: "ü >"`},
		{"size(a).b > a", pre + `Syntax error; token: ".", near: ").b"`},
		{"(size(a))[0] > a", pre + `Syntax error; token: "[", near: ")[0"`},
		{"a[-1] = :s", pre + `Syntax error; token: "-", near: "[-1"`},
		{"_hidden = :s", pre + `Syntax error; token: "_", near: "_hidden"`},
		{"a.:s = :s", pre + `Syntax error; token: ":s", near: ".:s ="`},
		{"NOT a", pre + `Syntax error; token: "<EOF>", near: "a"`},
		{"a = :s AND", pre + `Syntax error; token: "<EOF>", near: "AND"`},
		{"a = :s OR b", pre + `Syntax error; token: "<EOF>", near: "b"`},
		{"(a AND b = :s)", pre + `Syntax error; token: "AND", near: "a AND b"`},
		{"a BETWEEN :n AND", pre + `Syntax error; token: "<EOF>", near: "AND"`},
		{"SET = :s", pre + `Syntax error; token: "SET", near: "SET ="`},

		// Redundant parentheses, and when a syntax error wins over them.
		{"((a = :s))", pre + "The expression has redundant parentheses;"},
		{"a = :s and a > ((views))", pre + "The expression has redundant parentheses;"},
		{"(a)between(((b.c)).d)and(c)", pre + "The expression has redundant parentheses;"},
		{"a > whatever((:things), ((a)))", pre + "The expression has redundant parentheses;"},
		{"a=a AND ((a=a AND a=a)) AND a=a", pre + "The expression has redundant parentheses;"},
		{"a=a OR ((a=a OR (a=a OR a=a)))", pre + "The expression has redundant parentheses;"},
		{"((a)) = :s", pre + "The expression has redundant parentheses;"},
		{"((a)) b", pre + `Syntax error; token: "b", near: ") b"`},
		{"(((a)) = b x)", pre + "The expression has redundant parentheses;"},

		// Function names and places.
		{"a = :s and whatever((:things)) > a", pre + "Invalid function name; function: whatever"},
		{"attRIbute_exIsts((views), #a)", pre + "Invalid function name; function: attRIbute_exIsts"},
		{"if_not_exists(a, :s) = :s", pre + "The function is not allowed in a condition expression; function: if_not_exists"},
		{"list_append(a, :l) = :l", pre + "The function is not allowed in a condition expression; function: list_append"},
		{"a = :s and attribute_exists((views), (#a)) > b", pre + "The function is not allowed to be used this way in an expression; function: attribute_exists"},
		{"attribute_not_exists(things) > b", pre + "The function is not allowed to be used this way in an expression; function: attribute_not_exists"},
		{"attribute_type(things, :s) > b", pre + "The function is not allowed to be used this way in an expression; function: attribute_type"},
		{"begins_with(things, a) > b", pre + "The function is not allowed to be used this way in an expression; function: begins_with"},
		{"contains(:things, c) > b", pre + "The function is not allowed to be used this way in an expression; function: contains"},
		{"size(contains(a, b)) > a", pre + "The function is not allowed to be used this way in an expression; function: contains"},
		{"size(things)", pre + "The function is not allowed to be used this way in an expression; function: size"},
		{"NOT size(things)", pre + "The function is not allowed to be used this way in an expression; function: size"},
		{"a between b and attribute_exists(things)", pre + "The function is not allowed to be used this way in an expression; function: attribute_exists"},
		{"a in (b, attribute_exists(things))", pre + "The function is not allowed to be used this way in an expression; function: attribute_exists"},

		// Reserved words, list index range.
		{"attribute_exists(views, #a)", pre + "Attribute name is a reserved keyword; reserved keyword: views"},
		{":s < abOrT", pre + "Attribute name is a reserved keyword; reserved keyword: abOrT"},
		{"a.COMMENT = :s", pre + "Attribute name is a reserved keyword; reserved keyword: COMMENT"},
		{"#a[0].COMMENT = :s", pre + "Attribute name is a reserved keyword; reserved keyword: COMMENT"},
		{"a[2147483648] = :s", pre + "List index is not within the allowable range; index: [2147483648]"},

		// Names and values, checked bottom-up, left to right.
		{"attribute_exists(#Pictures.RearView, :zz) and a = :s", pre + "An expression attribute name used in the document path is not defined; attribute name: #Pictures"},
		{"begins_with(Pictures.#RearView)", pre + "An expression attribute name used in the document path is not defined; attribute name: #RearView"},
		{"(#P between :lo and :hi) and (#PC in (:cat1, :cat2))", pre + "An expression attribute name used in the document path is not defined; attribute name: #P"},
		{"#4g > a", pre + "An expression attribute name used in the document path is not defined; attribute name: #4g"},
		{"(a)between(b.c[45].#zz)and(:s)", pre + "An expression attribute name used in the document path is not defined; attribute name: #zz"},
		{"begins_with(:hello, #a, #b)", pre + "An expression attribute value used in expression is not defined; attribute value: :hello"},
		{":zz < :s", pre + "An expression attribute value used in expression is not defined; attribute value: :zz"},
		{":_ > a", pre + "An expression attribute value used in expression is not defined; attribute value: :_"},

		// Operand counts.
		{"attribute_exists(things, a) and a = :s", pre + "Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2"},
		{"attribute_not_exists(things, b)", pre + "Incorrect number of operands for operator or function; operator or function: attribute_not_exists, number of operands: 2"},
		{"attribute_type(things)", pre + "Incorrect number of operands for operator or function; operator or function: attribute_type, number of operands: 1"},
		{"begins_with(things)", pre + "Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 1"},
		{"begins_with(things, size(a), b)", pre + "Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 3"},
		{"contains(things)", pre + "Incorrect number of operands for operator or function; operator or function: contains, number of operands: 1"},
		{"size(things, a) > b", pre + "Incorrect number of operands for operator or function; operator or function: size, number of operands: 2"},

		// Operand types.
		{"attribute_type(a, size(a)) and a = :s", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"},
		{"attribute_type(a, :n)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"},
		{"attribute_type(a, :bool)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: BOOL"},
		{"attribute_type(a, :ss)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: SS"},
		{"attribute_type(a, b)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: " + allTypesString},
		{"attribute_type(a, :typeBad)", pre + "Invalid attribute type name found; type: STRING, valid types: {S,SS,N,NS,B,BS,BOOL,NULL,L,M}"},
		{"begins_with(a, size(a)) and a = :s", pre + "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{"begins_with(a, :null)", pre + "Incorrect operand type for operator or function; operator or function: begins_with, operand type: NULL"},
		{"begins_with(:m, a)", pre + "Incorrect operand type for operator or function; operator or function: begins_with, operand type: M"},
		{"size(size(a)) > :n", pre + "Incorrect operand type for operator or function; operator or function: size, operand type: N"},
		{"attribute_not_exists(size(:n))", pre + "Incorrect operand type for operator or function; operator or function: size, operand type: N"},
		{"size(:bool) > a", pre + "Incorrect operand type for operator or function; operator or function: size, operand type: BOOL"},
		{"a < :l", pre + "Incorrect operand type for operator or function; operator or function: <, operand type: L"},
		{"a BETWEEN :ss AND :ss", pre + "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: SS"},
		{"attribute_exists(:s) and a = :s", pre + "Operator or function requires a document path; operator or function: attribute_exists"},
		{"attribute_not_exists(size(:s))", pre + "Operator or function requires a document path; operator or function: attribute_not_exists"},

		// Distinct operands.
		{"a = a AND #a = b AND :s > a", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]"},
		{"#a <> a", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: <>, first operand: [a]"},
		{"((a=a) OR (a=a))", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]"},
		{"contains(ab.bc[1].a, ab.bc[1].#a)", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: contains, first operand: [ab, bc, [1], a]"},
		{"a IN (b, a)", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: IN, first operand: [a]"},

		// BETWEEN bounds and IN operands.
		{"a BETWEEN :n5 AND :n4", pre + "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound operand: AttributeValue: {N:4}"},
		{"a BETWEEN :s2 AND :s", pre + "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {S:b}, upper bound operand: AttributeValue: {S:a}"},
		{"a BETWEEN :bz AND :b", pre + "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {B:eg==}, upper bound operand: AttributeValue: {B:YQ==}"},
		{"a BETWEEN :n AND :s", pre + "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}"},
		{"a IN (" + strings.TrimSuffix(strings.Repeat(":s, ", 101), ", ") + ")", pre + "The IN operator is provided with too many operands; number of operands: 101"},

		// Limits.
		{strings.Repeat("a.", 32) + "a = :s", pre + "The document path has too many nesting levels; nesting levels: 33"},
		{strings.TrimSuffix(strings.Repeat("a = :s OR ", 151), " OR "), pre + "The expression contains too many operators; operator count: 301"},
	}
	for _, tt := range tests {
		_, err := ParseCondition(KindCondition, tt.expr, attrs(t, commonNames, commonValues))
		if got := errMsg(t, err); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.expr, got, tt.want)
		}
	}
}

func TestValidConditions(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"a = :s",
		"#a = :s",
		" a  =   :s ",
		"a <> :s AND b < :n OR NOT c >= :s2",
		"(a = :s)",
		"((a = :s) AND (b = :s))",
		"(a) = :s",
		"a BETWEEN :n4 AND :n5",
		"a between :n and :n",
		"a iN (:s, :s2, :n)",
		"attribute_exists(a.b[2].c) AND attribute_not_exists(#e)",
		"attribute_type(a, :typeS)",
		"begins_with(a, :s) OR begins_with(:s, b) OR begins_with(a, :b)",
		"contains(a, :s) AND contains(a, b)",
		"size(a) > :n AND size(:s) = :n",
		":s = :s",
		"a[0] = b[0]",
		"NOT NOT a = :s",
		"a.#d[3] = :s",
		"abc_123 = :s AND A9 = :s",
		"a IN (" + strings.TrimSuffix(strings.Repeat(":s, ", 100), ", ") + ")",
		strings.Repeat("a.", 31) + "a = :s",
	} {
		if _, err := ParseCondition(KindFilter, expr, attrs(t, commonNames, commonValues)); err != nil {
			t.Errorf("%q: %v", expr, err)
		}
	}
}

func TestErrorPrefixFollowsKind(t *testing.T) {
	t.Parallel()
	_, err := ParseCondition(KindFilter, "a = ", nil)
	if got, want := errMsg(t, err), `Invalid FilterExpression: Syntax error; token: "<EOF>", near: "= "`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUpdateErrors(t *testing.T) {
	t.Parallel()
	const pre = "Invalid UpdateExpression: "
	names := map[string]string{"#a": "a", "#b": "b", "#c": "c", "#d": "[3]"}
	tests := []struct{ expr, want string }{
		{"", pre + "The expression can not be empty;"},
		{"SET a = :s" + strings.Repeat(" ", 4087), pre + "Expression size has exceeded the maximum allowed size;"},

		// Syntax.
		{"whatever", pre + `Syntax error; token: "whatever", near: "whatever"`},
		{"INVALID SYNTAX HERE", pre + `Syntax error; token: "INVALID", near: "INVALID SYNTAX"`},
		{"set a", pre + `Syntax error; token: "<EOF>", near: "a"`},
		{"SET", pre + `Syntax error; token: "<EOF>", near: "SET"`},
		{"SET a = ", pre + `Syntax error; token: "<EOF>", near: "= "`},
		{"set a=set", pre + `Syntax error; token: "set", near: "=set"`},
		{"remove a = b", pre + `Syntax error; token: "=", near: "a = b"`},
		{"delete a b", pre + `Syntax error; token: "b", near: "a b"`},
		{"ADD numx", pre + `Syntax error; token: "<EOF>", near: "numx"`},
		{"ADD numx 1", pre + `Syntax error; token: "1", near: "numx 1"`},
		{"DELETE setx a", pre + `Syntax error; token: "a", near: "setx a"`},
		{"set :a = b", pre + `Syntax error; token: ":a", near: "set :a ="`},
		{"remove :a", pre + `Syntax error; token: ":a", near: "remove :a"`},
		{"SET numx = numx * :n", pre + `Syntax error; token: "*", near: "numx * :n"`},
		{"SET numx = numx / :n", pre + `Syntax error; token: "/", near: "numx / :n"`},
		{"SET note = :n +", pre + `Syntax error; token: "<EOF>", near: "+"`},
		{"set a = b + c + d", pre + `Syntax error; token: "+", near: "c + d"`},
		{"set a[1] = 1", pre + `Syntax error; token: "1", near: "= 1"`},
		{`set a[1] = "eight"`, pre + `Syntax error; token: """, near: "= "eight"`},
		{"set (a = (b + c))", pre + `Syntax error; token: "(", near: "set (a"`},
		{"set a = (b.c).d + e", pre + `Syntax error; token: ".", near: ").d"`},
		{"set a = (b + c) + d", pre + `Syntax error; token: "+", near: ") + d"`},
		{"SET c = if_not_exists(c, :n+:n5)", pre + `Syntax error; token: "+", near: ":n+:n5"`},
		{"SET _123 = :s", pre + `Syntax error; token: "_", near: "SET _123"`},
		{"SET 123a = :s", pre + `Syntax error; token: "123", near: "SET 123a"`},
		{"SET #list[0.#a = :s", pre + `Syntax error; token: ".", near: "0.#a"`},
		{"SET a[:s] = :s", pre + `Syntax error; token: ":s", near: "[:s]"`},
		{"SET a = _f(b)", pre + `Syntax error; token: "_", near: "= _f"`},

		// Redundant parentheses.
		{"SET a = ((b))", pre + "The expression has redundant parentheses;"},
		{"SET a = ((b + c))", pre + "The expression has redundant parentheses;"},

		// Walk in textual order: reserved words, functions, sections.
		{" set #c = :s set abOrt = true ", pre + "Attribute name is a reserved keyword; reserved keyword: abOrt"},
		{" remove Absolute ", pre + "Attribute name is a reserved keyword; reserved keyword: Absolute"},
		{"SET status = :s", pre + "Attribute name is a reserved keyword; reserved keyword: status"},
		{"set #c = if_not_exist(:c) set c = d", pre + "Invalid function name; function: if_not_exist"},
		{"SET a = LIST_APPEND(:l, :l)", pre + "Invalid function name; function: LIST_APPEND"},
		{"SET a = f123_hi(b, c, d)", pre + "Invalid function name; function: f123_hi"},
		{"SET a = contains(s, :s)", pre + "The function is not allowed in an update expression; function: contains"},
		{"SET a = size(s)", pre + "The function is not allowed in an update expression; function: size"},
		{"SET a = list_append(list_append(:l, :l), :l)", pre + "The function is not allowed to be used this way in an expression; function: list_append"},
		{"SET a = if_not_exists(a, list_append(:l, :l))", pre + "The function is not allowed to be used this way in an expression; function: list_append"},
		{"SET a = list_append(a, b) + :n", pre + "The function is not allowed to be used this way in an expression; function: list_append"},
		{"set a = #c set c = :d", pre + `The "SET" section can only be used once in an update expression;`},
		{"remove #d set a = b remove e", pre + `The "REMOVE" section can only be used once in an update expression;`},
		{"add #d :e set a = b add e :f", pre + `The "ADD" section can only be used once in an update expression;`},
		{"delete #d :e set a = b delete #e :f", pre + `The "DELETE" section can only be used once in an update expression;`},
		{"SET a[2147483648] = :s", pre + "List index is not within the allowable range; index: [2147483648]"},

		// Paths, from the last action to the first.
		{"SET #zz = if_not_exists(:c)", pre + "An expression attribute name used in the document path is not defined; attribute name: #zz"},
		{"set d[1] = a, d.b = a, c[1].a = a, #c = if_not_exists(a)", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, [1], a], path two: [c]"},
		// "path two" descends through the first child in the iteration order
		// of DynamoDB's HashMaps; here that is the attribute named "[3]"
		// (#d). Recordings from years ago named [c] and [a] instead.
		{"set c.b.#c = a, c = a, #d = a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, b, c], path two: [[3]]"},
		{"set a = b remove a, #c, #d", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [[3]]"},
		{"set a = b remove a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"},
		{"set #c[3].#d = a, #c[3] = a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, [3], [3]], path two: [c, [3]]"},
		{"remove c, #c.a, #d", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c], path two: [[3]]"},
		{"remove c, #c.a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c], path two: [c, a]"},
		{"remove a, #c, a, #d", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [[3]]"},
		{"remove x, #c, x", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [x], path two: [x]"},
		{"SET a = :s, a.b = :s", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"},
		{"SET lst[0] = :s, lst[0].ok = :s", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [lst, [0]], path two: [lst, [0], ok]"},
		{"SET #a = :s, a = :s", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"},
		{"set #c[3].#d = a, #c.#d[3] = if_not_exists(a)", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [c, [3], [3]], path two: [c, [3], [3]]"},
		{"remove a.#c set a[1] = #d", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, c], path two: [a, [1]]"},
		{"SET a.b = :s, a[1] = :s", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a, [1]]"},

		// Values, from the last action to the first.
		{"SET #a = if_not_exists(:c)", pre + "An expression attribute value used in expression is not defined; attribute value: :c"},
		{"SET b = if_not_exists(:zz, :s)", pre + "An expression attribute value used in expression is not defined; attribute value: :zz"},
		{"set b = list_append(:s, a), c = if_not_exists(a) add a.b :s", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"add a.b :null", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: NULL, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"add a.b :bool", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: BOOLEAN, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"add a.b :b", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: BINARY, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"add a.b :m", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: MAP, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"add a.b :l", pre + "Incorrect operand type for operator or function; operator: ADD, operand type: LIST, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"delete a.b :s", pre + "Incorrect operand type for operator or function; operator: DELETE, operand type: STRING, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
		{"delete a.b :n", pre + "Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
		{"delete a.b :l", pre + "Incorrect operand type for operator or function; operator: DELETE, operand type: LIST, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
		{"set a = if_not_exists(c)", pre + "Incorrect number of operands for operator or function; operator or function: if_not_exists, number of operands: 1"},
		{"set a = list_append(c)", pre + "Incorrect number of operands for operator or function; operator or function: list_append, number of operands: 1"},
		{"set a = if_not_exists(:s, c)", pre + "Operator or function requires a document path; operator or function: if_not_exists"},
		{"set a = if_not_exists(if_not_exists(a, b), c)", pre + "Operator or function requires a document path; operator or function: if_not_exists"},
		{"set a = if_not_exists(a, a)", pre + "The first operand must be distinct from the remaining operands for this operator or function; operator: if_not_exists, first operand: [a]"},
		{"set a = list_append(:s, a)", pre + "Incorrect operand type for operator or function; operator or function: list_append, operand type: S"},
		{"set a = list_append(a, :n)", pre + "Incorrect operand type for operator or function; operator or function: list_append, operand type: N"},
		{"set a = list_append(:m, a)", pre + "Incorrect operand type for operator or function; operator or function: list_append, operand type: M"},
		{"set a = a + :s", pre + "Incorrect operand type for operator or function; operator or function: +, operand type: S"},
		{"set a = :s + :b", pre + "Incorrect operand type for operator or function; operator or function: +, operand type: S"},
		{"set a = :b + a", pre + "Incorrect operand type for operator or function; operator or function: +, operand type: B"},
		{"set a = a - :ns", pre + "Incorrect operand type for operator or function; operator or function: -, operand type: NS"},
		{"set a = a - :l", pre + "Incorrect operand type for operator or function; operator or function: -, operand type: L"},
		{"SET a = " + strings.Repeat("b.", 32) + "c", pre + "The document path has too many nesting levels; nesting levels: 33"},
	}
	for _, tt := range tests {
		_, err := ParseUpdate(tt.expr, attrs(t, names, commonValues))
		if got := errMsg(t, err); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.expr, got, tt.want)
		}
	}
}

func TestValidUpdates(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"SET a = :s",
		"sEt a = :s, b = a",
		"  set   b=:s  ",
		"REMOVE a SET b = a",
		"SET c = b REMOVE b",
		"SET a = :n + :n5, b = a - :n, c = (a), d = (a + :n), e = (a) + :n",
		"SET a = if_not_exists(b, :n) + :n5",
		"SET a = list_append(if_not_exists(a, :l), :l)",
		"SET a = if_not_exists(b, if_not_exists(c, :n))",
		"ADD a :n, b :ss DELETE c :ns REMOVE d, e[1] SET f = :l",
		"SET a.b = :s, a.c.d = :s, b.x = :s REMOVE a.x, b.y",
		"SET a[1] = :s, a[3] = :s REMOVE a[0]",
		"SET #Alpha_Numeric_123 = :s, #123a = :s, #_ = :s",
		"SET a = :Alpha_Numeric_123, b = :123, c = :_",
		"SET a.#c[1].#b.y[1] = :s",
		"SET #d = :s",
	} {
		names := map[string]string{"#Alpha_Numeric_123": "x1", "#123a": "x2", "#_": "x3", "#c": "c", "#b": "b", "#d": "a.b"}
		vals := strings.Replace(commonValues, "{", `{":Alpha_Numeric_123": {"S": "x"}, ":123": {"N": "1"}, ":_": {"S": "y"}, `, 1)
		if _, err := ParseUpdate(expr, attrs(t, names, vals)); err != nil {
			t.Errorf("%q: %v", expr, err)
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	t.Parallel()
	const pre = "Invalid ProjectionExpression: "
	names := map[string]string{"#a": "a", "#b": "[3]"}
	tests := []struct{ expr, want string }{
		{"", pre + "The expression can not be empty;"},
		{"a" + strings.Repeat(",a", 2048), pre + "Expression size has exceeded the maximum allowed size;"},
		{"!!!", pre + `Syntax error; token: "!", near: "!!"`},
		{"a b", pre + `Syntax error; token: "b", near: "a b"`},
		{"a,", pre + `Syntax error; token: "<EOF>", near: ","`},
		{"whatever(stuff)", pre + `Syntax error; token: "(", near: "whatever(stuff"`},
		{":a", pre + `Syntax error; token: ":a", near: ":a"`},
		{"a,,b", pre + `Syntax error; token: ",", near: ",,b"`},
		{"a..b", pre + `Syntax error; token: ".", near: "..b"`},
		{"a[b]", pre + `Syntax error; token: "b", near: "[b]"`},
		{"(a)", pre + `Syntax error; token: "(", near: "(a"`},
		{"a-b", pre + `Syntax error; token: "-", near: "a-b"`},
		{"#list[].#b", pre + `Syntax error; token: "]", near: "[]."`},
		{"ADD", pre + `Syntax error; token: "ADD", near: "ADD"`},
		{"a.abORt", pre + "Attribute name is a reserved keyword; reserved keyword: abORt"},
		{"#a,ABSoLUTE", pre + "Attribute name is a reserved keyword; reserved keyword: ABSoLUTE"},
		{"list[0].COMMENT", pre + "Attribute name is a reserved keyword; reserved keyword: list"},
		{"a,b,a,#zz", pre + "An expression attribute name used in the document path is not defined; attribute name: #zz"},
		{"b[1], b.a, #a.b, a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a]"},
		{"a, #a[1]", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, [1]]"},
		// The other path is the first one in DynamoDB's HashMap order: [b].
		{"a,b,a", pre + "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [b]"},
		{"a.b, #a[1], #b", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a, [1]]"},
		{"a.b[1], #a[1], #b", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, b, [1]], path two: [a, [1]]"},
		{"a[3].b, #a.#b.b", pre + "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [3], b], path two: [a, [3], b]"},
	}
	for _, tt := range tests {
		_, err := ParseProjection(tt.expr, attrs(t, names, ""))
		if got := errMsg(t, err); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.expr, got, tt.want)
		}
	}
}

func TestKeyConditionErrors(t *testing.T) {
	t.Parallel()
	const pre = "Invalid KeyConditionExpression: "
	vals := `{":a": {"S": "1"}, ":b": {"S": "2"}, ":n": {"N": "1"}, ":m": {"N": "2"}, ":t": {"S": "S"}}`
	tests := []struct{ expr, want string }{
		// Condition-level problems come first, with the usual prefix.
		{"", pre + "The expression can not be empty;"},
		{"things are not gonna be ok", pre + `Syntax error; token: "are", near: "things are not"`},
		{"(size(a))[0] > a", pre + `Syntax error; token: "[", near: ")[0"`},
		{"attribute_type(a, b)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: " + allTypesString},
		{"attribute_type(a, :n)", pre + "Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"},
		{"a between :b and :a", pre + "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {S:2}, upper bound operand: AttributeValue: {S:1}"},
		{"a between :n and :a", pre + "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:1}"},
		{"begins_with(a, :n)", pre + "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{"((a = :a))", pre + "The expression has redundant parentheses;"},
		{"a = :a AND dog(c, :a)", pre + "Invalid function name; function: dog"},

		// Then the shape of a key condition, with messages of their own.
		{"attribute_type(a, :t)", "Invalid operator used in KeyConditionExpression: attribute_type"},
		{"a > b and size(b) > c or a > c", "Invalid operator used in KeyConditionExpression: OR"},
		{"a in (b, size(c), d)", "Invalid operator used in KeyConditionExpression: IN"},
		{"attribute_exists(a)", "Invalid operator used in KeyConditionExpression: attribute_exists"},
		{"attribute_not_exists(a)", "Invalid operator used in KeyConditionExpression: attribute_not_exists"},
		{"contains(a.d, b)", "Invalid operator used in KeyConditionExpression: contains"},
		{"not a > b", "Invalid operator used in KeyConditionExpression: NOT"},
		{"a <> b", "Invalid operator used in KeyConditionExpression: <>"},
		{":a between size(b) and size(a) and b > :b", "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"},
		{"begins_with(:a, b) and a > :b", "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand"},
		{"size(b) > a AND a.b > b AND b > c", "KeyConditionExpressions cannot contain nested operations"},
		{"a > size(b.d)", "KeyConditionExpressions cannot contain nested operations"},
		{"a between size(b) and size(a)", "KeyConditionExpressions cannot contain nested operations"},
		{"b > a.b", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"},
		{"b between c[1] and d", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"},
		{"begins_with(a, b)", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"},
		{"b.d > a AND c.d > e.f", "KeyConditionExpressions cannot have conditions on nested attributes"},
		{"b[0] > a", "KeyConditionExpressions cannot have conditions on nested attributes"},
		{":b > :a AND a < :b", "Invalid condition in KeyConditionExpression: No key attribute specified"},
		{"b > :n AND b < :n and c = :n and d = :n", "KeyConditionExpressions must only contain one condition per key"},
		{"(a > :n and b > :n) and (b > :n and c > :n)", "KeyConditionExpressions must only contain one condition per key"},
		{"p = :a AND p = :a", "KeyConditionExpressions must only contain one condition per key"},
		{":a = a and b = :a and :a = c", "Conditions can be of length 1 or 2 only"},
		{"(a > :a and b > :a) and (c > :a and d > :a) and (e > :a and f > :a)", "Conditions can be of length 1 or 2 only"},
	}
	for _, tt := range tests {
		_, err := ParseKeyConditionExpr(tt.expr, attrs(t, nil, vals))
		if got := errMsg(t, err); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.expr, got, tt.want)
		}
	}
}
