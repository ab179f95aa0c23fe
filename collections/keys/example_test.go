package keys_test

import (
	"fmt"

	"lastro/collections/keys"
)

// Example: every key starts with its tenant's T#<tenant># prefix, the
// one the store client's guard and IAM's LeadingKeys check; a sequence
// is zero-padded so instalments sort in order.
func Example() {
	fmt.Println(keys.Tenant("t-demo"))
	fmt.Println(keys.Debtor("t-demo", "1d25b2a1a68c8c54"))
	fmt.Println(keys.Charge("t-demo", "chg-1"))
	fmt.Println(keys.Seq(7))
	fmt.Println(keys.ValidIdentifier("C-1"), keys.ValidIdentifier("C#1"))
	// Output:
	// T#t-demo
	// T#t-demo#D#1d25b2a1a68c8c54
	// T#t-demo#CHG#chg-1
	// 007
	// true false
}
