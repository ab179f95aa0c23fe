package ddblocal

import "strings"

// defaultAccountID is the account of a store opened without one: the
// example account of the AWS documentation.
const defaultAccountID = "123456789012"

// arnAccount returns the account field of an ARN
// (arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE), or "" if s has none.
func arnAccount(s string) string {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}

// foreignARN refuses an ARN of another account than the store's, as
// DynamoDB does where it authorizes a request on the resource's ARN: the
// caller (the account's root here) is not allowed the action on another
// account's resource without a resource-based policy, whether the
// resource exists or not.
func (s *Store) foreignARN(action, arn string) error {
	if arnAccount(arn) == s.opts.AccountID {
		return nil
	}
	return &apiError{Type: "AccessDeniedException", Status: 400,
		Message: "User: arn:aws:iam::" + s.opts.AccountID + ":root is not authorized to perform: dynamodb:" + action +
			" on resource: " + arn + " because no resource-based policy allows the dynamodb:" + action + " action"}
}
