// Package av holds DynamoDB attribute values as the store keeps them: the
// wire (JSON) form, a compact binary form for storage, DynamoDB's size rules,
// its number semantics and an order-preserving encoding for key attributes.
//
// Values are immutable once built: code that changes an item builds new
// values and shares the untouched ones.
package av

// Type is a DynamoDB data type descriptor.
type Type uint8

// The data types, with the descriptors DynamoDB uses on the wire.
const (
	S Type = iota + 1
	N
	B
	SS
	NS
	BS
	M
	L
	NULL
	BOOL
)

var typeNames = [...]string{"", "S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "?"
}

// ParseType returns the type with the given descriptor.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if i > 0 && n == s {
			return Type(i), true
		}
	}
	return 0, false
}

// IsSet reports whether t is one of the set types.
func (t Type) IsSet() bool { return t == SS || t == NS || t == BS }

// Value is one attribute value. Exactly the fields of its type are used:
// Str for S and N (numbers in canonical form), Bin for B, Strs for SS and NS,
// Bins for BS, Map for M, List for L, Bool for BOOL.
type Value struct {
	T    Type
	Str  string
	Bin  []byte
	Strs []string
	Bins [][]byte
	Map  map[string]*Value
	List []*Value
	Bool bool
}

// Item is a whole item: attribute name to value.
type Item map[string]*Value

// Str returns an S value.
func Str(s string) *Value { return &Value{T: S, Str: s} }

// Num returns an N value from a string that must already be canonical.
func Num(s string) *Value { return &Value{T: N, Str: s} }

// Bin returns a B value.
func Bin(b []byte) *Value { return &Value{T: B, Bin: b} }

// Bool returns a BOOL value.
func Bool(b bool) *Value { return &Value{T: BOOL, Bool: b} }

// Null returns a NULL value.
func Null() *Value { return &Value{T: NULL} }

// Equal reports whether a and b are the same value, with DynamoDB's
// semantics: sets compare as sets, numbers by value (every number the store
// holds is canonical, so comparing their text is comparing their value).
func Equal(a, b *Value) bool { return Same(a, b) }

// Clone returns a shallow copy of the item (values are shared: they are
// immutable).
func (it Item) Clone() Item {
	out := make(Item, len(it))
	for k, v := range it {
		out[k] = v
	}
	return out
}
