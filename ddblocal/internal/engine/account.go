package engine

import (
	"strings"

	"lastro/ddblocal/internal/wire"
)

// defaultAccountID is the account of a store opened without one: the
// example account of the AWS documentation.
const defaultAccountID = "123456789012"

// ARNAccount returns the account field of an ARN
// (arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE), or "" if s has none.
func ARNAccount(s string) string {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}

// ForeignARN refuses an ARN of another account than the store's, as
// DynamoDB does where it authorizes a request on the resource's ARN: the
// caller (the account's root here) is not allowed the action on another
// account's resource without a resource-based policy, whether the
// resource exists or not.
func (s *Store) ForeignARN(action, arn string) error {
	if ARNAccount(arn) == s.Opts.AccountID {
		return nil
	}
	return &wire.APIError{Type: "AccessDeniedException", Status: 400,
		Message: "User: arn:aws:iam::" + s.Opts.AccountID + ":root is not authorized to perform: dynamodb:" + action +
			" on resource: " + arn + " because no resource-based policy allows the dynamodb:" + action + " action"}
}
