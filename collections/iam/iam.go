// Package iam generates the IAM policies of Lastro's roles: the cloud
// twin of the kit's tenant guard (docs/adr/0078). The tenant-scoped role
// reaches only partitions whose key starts with its own tenant,
// T#${aws:PrincipalTag/tenantId}, through dynamodb:LeadingKeys; the
// platform roles get the least their job needs. Evaluate applies the
// generated conditions the way IAM does, so tests check them against keys
// the engine builds.
package iam

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"lastro/collections/keys"
	"lastro/collections/table"
)

// TenantTag is the policy variable naming the caller's tenant: the
// session tag the API sets when it assumes the tenant-scoped role.
const TenantTag = "${aws:PrincipalTag/tenantId}"

// Roles are the roles Policy knows, in the order the CloudFormation
// lists them.
var Roles = []string{"api", "worker", "stream", "lambda"}

// Statement is one IAM policy statement.
type Statement struct {
	Sid       string                         `json:"Sid"`
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []any                          `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// Document is an IAM policy document.
type Document struct {
	Version   string      `json:"Version"`
	Statement []Statement `json:"Statement"`
}

// Resources are the ARNs a policy names: strings for `lastro iam
// policy`, CloudFormation intrinsics in the table's template.
type Resources struct {
	Table, Indexes, Stream, Archive any
}

// ARNs returns the resources of a table in region and account ("*" for
// any).
func ARNs(region, account, name string) Resources {
	t := fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", region, account, name)
	return Resources{Table: t, Indexes: t + "/index/*", Stream: t + "/stream/*", Archive: t + table.ArchiveSuffix}
}

// item actions on keys: every one of them names its partition, so
// dynamodb:LeadingKeys applies. Scan is never among them.
var itemActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
	"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem"}

// TenantKeys are the partition key patterns of one tenant's role: its
// own partition and each family of partitions under it, base table
// lookups and index partitions included (built by the key registry's
// builders, so a new family is a deliberate change here).
func TenantKeys(tenant string) []string {
	return []string{
		keys.Tenant(tenant),                 // TENANT, policies, API keys, runs, counters
		keys.Debtor(tenant, "*"),            // debtor collections
		keys.Charge(tenant, "*"),            // charge lookups
		keys.Settlement(tenant, "*"),        // settlement records
		keys.Idempotency(tenant, "*"),       // Idempotency-Key records
		keys.Suspense(tenant),               // unmatched settlements
		keys.TenantPrefix(tenant) + "ACT#*", // GSI1 agenda partitions
		keys.Bucket(tenant, "*"),            // GSI2 portfolio partitions
		keys.Profiles(tenant),               // GSI3 tenant's debtors
	}
}

// Policy returns the policy document of role on r.
func Policy(role string, r Resources) (Document, error) {
	doc := Document{Version: "2012-10-17"}
	denyScan := Statement{Sid: "NoScan", Effect: "Deny", Action: []string{"dynamodb:Scan", "dynamodb:DeleteTable", "dynamodb:UpdateTable"},
		Resource: []any{r.Table, r.Indexes}}
	switch role {
	case "api":
		doc.Statement = []Statement{{
			Sid: "OwnTenantOnly", Effect: "Allow", Action: itemActions, Resource: []any{r.Table, r.Indexes},
			Condition: map[string]map[string][]string{"ForAllValues:StringLike": {"dynamodb:LeadingKeys": TenantKeys(TenantTag)}},
		}, {
			// ForAllValues holds for a request naming no key at all: the
			// item actions always name one, and everything else is denied.
			Sid: "KeysRequired", Effect: "Deny", Action: itemActions, Resource: []any{r.Table, r.Indexes},
			Condition: map[string]map[string][]string{"Null": {"dynamodb:LeadingKeys": {"true"}}},
		}, denyScan}
	case "worker":
		// The agenda runs every tenant: reads, conditioned updates and
		// transactions, leases and checkpoints; no deletes, no Scan.
		doc.Statement = []Statement{{Sid: "AgendaRun", Effect: "Allow",
			Action:   []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"},
			Resource: []any{r.Table, r.Indexes}}, denyScan}
	case "stream", "lambda":
		// The stream consumer reads the stream, keeps its checkpoints in
		// the system partition and the bucket counters in each tenant's
		// own partition, and archives the TTL's deletions: it never
		// reaches a debtor collection or a lookup.
		doc.Statement = []Statement{
			{Sid: "ReadStream", Effect: "Allow", Action: []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"},
				Resource: []any{r.Stream}},
			{Sid: "CheckpointsAndCounters", Effect: "Allow", Action: []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"},
				Resource:  []any{r.Table},
				Condition: map[string]map[string][]string{"ForAllValues:StringLike": {"dynamodb:LeadingKeys": {keys.System, keys.Tenant("*")}}}},
			{Sid: "OwnPartitionsOnly", Effect: "Deny", Action: []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"},
				Resource:  []any{r.Table},
				Condition: map[string]map[string][]string{"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": {keys.TenantPrefix("*") + "*"}}}},
			{Sid: "Archive", Effect: "Allow", Action: []string{"dynamodb:PutItem"}, Resource: []any{r.Archive}},
			denyScan,
		}
		if role == "lambda" {
			doc.Statement = append(doc.Statement, Statement{Sid: "Logs", Effect: "Allow",
				Action: []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, Resource: []any{"*"}})
		}
	default:
		return doc, fmt.Errorf("iam: unknown role %q (want %s)", role, strings.Join(Roles, ", "))
	}
	return doc, nil
}

// Request is one DynamoDB request as IAM sees it.
type Request struct {
	Action      string
	Resource    string
	LeadingKeys []string          // the partition keys it names; none for a Scan
	Tags        map[string]string // the principal's tags
}

// Evaluate reports whether doc allows req: an explicit Deny wins, else
// some Allow must match (IAM's evaluation logic for one identity policy).
func Evaluate(doc Document, req Request) bool {
	allowed := false
	for _, s := range doc.Statement {
		if !matchAny(s.Action, req.Action, nil) || !matchAnyResource(s.Resource, req.Resource) || !conditions(s.Condition, req) {
			continue
		}
		if s.Effect == "Deny" {
			return false
		}
		allowed = true
	}
	return allowed
}

func matchAnyResource(rs []any, r string) bool {
	for _, x := range rs {
		if s, ok := x.(string); ok && like(s, r, nil) {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, v string, tags map[string]string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return like(p, v, tags) })
}

var variable = regexp.MustCompile(`\$\{aws:PrincipalTag/([A-Za-z0-9_.:/=+@-]+)\}`)

// like is IAM's StringLike: * any run of characters, ? one; a policy
// variable stands for its tag's value taken literally (a missing tag
// matches nothing).
func like(pattern, v string, tags map[string]string) bool {
	var b strings.Builder
	b.WriteString("^")
	for pattern != "" {
		if loc := variable.FindStringSubmatchIndex(pattern); loc != nil && loc[0] == 0 {
			tag, ok := tags[pattern[loc[2]:loc[3]]]
			if !ok {
				return false
			}
			b.WriteString(regexp.QuoteMeta(tag))
			pattern = pattern[loc[1]:]
			continue
		}
		switch c := pattern[0]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
		pattern = pattern[1:]
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String()).MatchString(v)
}

// conditions evaluates a statement's condition block on req.
func conditions(c map[string]map[string][]string, req Request) bool {
	for op, byKey := range c {
		for key, patterns := range byKey {
			if key != "dynamodb:LeadingKeys" {
				return false // a key this evaluator does not know never matches
			}
			vals := req.LeadingKeys
			switch op {
			case "ForAllValues:StringLike":
				for _, v := range vals {
					if !matchAny(patterns, v, req.Tags) {
						return false
					}
				}
			case "ForAnyValue:StringLike":
				if !slices.ContainsFunc(vals, func(v string) bool { return matchAny(patterns, v, req.Tags) }) {
					return false
				}
			case "Null":
				isNull := len(vals) == 0
				if (patterns[0] == "true") != isNull {
					return false
				}
			default:
				return false
			}
		}
	}
	return true
}
