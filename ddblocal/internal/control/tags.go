package control

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	"lastro/ddblocal/internal/wire"
)

// Tagging: TagResource, UntagResource and ListTagsOfResource. A table's
// tags live in its definition (tableDef.Tags), so the tags given to
// CreateTable, persistence and removal with the table come for free.
//
// DynamoDB validates a tag request synchronously and all or nothing, in
// this order: the ResourceArn member, member constraints, the shape of the
// ARN, its account (another account's table is AccessDeniedException), the
// tag list, each tag, then the table's existence, and last the
// 50-tag limit on the merged set. Tags only name tables: index, stream and
// backup ARNs are refused. Unlike DynamoDB, a write is visible to the next
// ListTagsOfResource at once (DynamoDB lags one to three seconds) and there
// is no per-table tag write lock.

const (
	maxTagsPerResource = 50
	maxTagKeyChars     = 128
	maxTagValueChars   = 256
	maxResourceARNLen  = 1283
)

// tagCharset is the AWS tag pattern: letters, digits and spaces of any
// script, and + - = . _ : / @.
var tagCharset = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

type tagMember struct {
	Key   *string `json:"Key"`
	Value *string `json:"Value"`
}

type tagResourceInput struct {
	ResourceArn *string      `json:"ResourceArn"`
	Tags        []*tagMember `json:"Tags"`
}

type untagResourceInput struct {
	ResourceArn *string   `json:"ResourceArn"`
	TagKeys     []*string `json:"TagKeys"`
}

type listTagsOfResourceInput struct {
	ResourceArn *string `json:"ResourceArn"`
	NextToken   *string `json:"NextToken"`
}

// TagResource answers the TagResource operation.
func (s *Store) TagResource(ctx context.Context, body []byte) (any, error) {
	var in tagResourceInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	arn, err := s.tagTarget("TagResource", in.ResourceArn, "tags", in.Tags == nil)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, wire.Validation("Atleast one Tag needs to be provided as Input.")
	}
	add := make([]wire.Tag, 0, len(in.Tags))
	seen := make(map[string]bool, len(in.Tags))
	for _, m := range in.Tags {
		t, err := checkTagMember(m)
		if err != nil {
			return nil, err
		}
		if seen[t.Key] {
			return nil, wire.Validation("Duplicate Tag Keys provided as input: Duplicate Tag Key found %s", t.Key)
		}
		seen[t.Key] = true
		add = append(add, t)
	}
	err = s.changeTags(arn, func(cur []wire.Tag) ([]wire.Tag, error) {
		out := append([]wire.Tag(nil), cur...)
		for _, t := range add {
			if i := tagIndex(out, t.Key); i >= 0 {
				out[i].Value = t.Value // TagResource upserts
			} else {
				out = append(out, t)
			}
		}
		if len(out) > maxTagsPerResource {
			return nil, wire.Validation("Number of Tags exceed the current limit for the provided ResourceArn")
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// UntagResource answers the UntagResource operation.
func (s *Store) UntagResource(ctx context.Context, body []byte) (any, error) {
	var in untagResourceInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	arn, err := s.tagTarget("UntagResource", in.ResourceArn, "tagKeys", in.TagKeys == nil)
	if err != nil {
		return nil, err
	}
	if len(in.TagKeys) == 0 {
		return nil, wire.Validation("Atleast one Tag Key needs to be provided as Input.")
	}
	// The limit counts the keys named, even though untagging only removes.
	if len(in.TagKeys) > maxTagsPerResource {
		return nil, wire.Validation("Number of Tags exceed the current limit for the provided ResourceArn")
	}
	for _, k := range in.TagKeys {
		if err := checkTagKey(k); err != nil {
			return nil, err
		}
	}
	err = s.changeTags(arn, func(cur []wire.Tag) ([]wire.Tag, error) {
		out := make([]wire.Tag, 0, len(cur))
		for _, t := range cur {
			drop := false
			for _, k := range in.TagKeys {
				drop = drop || *k == t.Key
			}
			if !drop {
				out = append(out, t)
			}
		}
		return out, nil // removing an absent key is not an error
	})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// ListTagsOfResource answers the ListTagsOfResource operation.
func (s *Store) ListTagsOfResource(ctx context.Context, body []byte) (any, error) {
	var in listTagsOfResourceInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	arn, err := s.tagTarget("ListTagsOfResource", in.ResourceArn, "", false)
	if err != nil {
		return nil, err
	}
	t := s.Table(wire.TableNameOf(arn))
	if t == nil {
		return nil, resourceARNNotFound(arn)
	}
	// At most 50 tags: one page, never a NextToken.
	tags := t.Def.Load().Tags
	if tags == nil {
		tags = []wire.Tag{}
	}
	return map[string]any{"Tags": tags}, nil
}

// tagTarget validates the ResourceArn of a tagging operation, together with
// its required list member (named member; missing when absent), in
// DynamoDB's order, and returns the ARN.
func (s *Store) tagTarget(op string, arn *string, member string, missing bool) (string, error) {
	if arn == nil {
		return "", wire.Validation("Invalid TableArn")
	}
	var c wire.Constraints
	c.Length("resourceArn", arn, 1, maxResourceARNLen)
	if member != "" {
		c.NotNull(member, missing)
	}
	if err := c.Err(); err != nil {
		return "", err
	}
	if err := s.checkResourceARN(op, *arn); err != nil {
		return "", err
	}
	return *arn, nil
}

// changeTags replaces a table's tags with what edit makes of them, under
// the catalog lock so concurrent tag writes never lose one another.
func (s *Store) changeTags(arn string, edit func([]wire.Tag) ([]wire.Tag, error)) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	t := s.Tables[wire.TableNameOf(arn)]
	if t == nil {
		return resourceARNNotFound(arn)
	}
	old := t.Def.Load()
	tags, err := edit(old.Tags)
	if err != nil {
		return err
	}
	d := *old
	d.Tags = tags
	if err := s.PersistDef(&d); err != nil {
		return err
	}
	t.Def.Store(&d)
	return nil
}

func resourceARNNotFound(arn string) *wire.APIError {
	return wire.NotFound("Requested resource not found: ResourceArn: " + arn + " not found")
}

// checkResourceARN validates the ResourceArn of a tag request (action):
// a DynamoDB table ARN of this store's region and account. A well-formed
// table ARN of another account is refused as unauthorized, existing or
// not.
func (s *Store) checkResourceARN(action, arn string) error {
	if !strings.HasPrefix(arn, "arn:") {
		return InvalidParam("ARNs must start with 'arn:': %s", arn)
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[2] != "dynamodb" {
		return InvalidParam("Provided Arn is not a DynamoDB resource arn: %s", arn)
	}
	region, resource := parts[3], parts[5]
	if region != s.Opts.Region || !strings.HasPrefix(parts[1], "aws") {
		return invalidTableARN(arn)
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(resource, "table/"), "/")
	switch {
	case !strings.HasPrefix(resource, "table/"):
		return InvalidParam("Provided Arn is not a DynamoDB resource arn: %s", arn)
	case len(name) < 3 || len(name) > 255 || !wire.NamePattern.MatchString(name):
		return invalidTableARN(arn)
	case rest == "":
		return s.ForeignARN(action, arn)
	case strings.HasPrefix(rest, "index/"):
		return InvalidParam("Invalid resource arn provided, only table or stream is accepted. Provided resource arn: %s", arn)
	case strings.HasPrefix(rest, "stream/"):
		// Streams carry no tags of their own; DynamoDB answers not found.
		return resourceARNNotFound(arn)
	default:
		return InvalidParam("Provided Arn is not a DynamoDB resource arn: %s", arn)
	}
}

func invalidTableARN(arn string) *wire.APIError {
	return wire.Validation("Invalid TableArn: Invalid ResourceArn provided as input %s", arn)
}

// checkTagMember validates one tag of a TagResource request.
func checkTagMember(m *tagMember) (wire.Tag, error) {
	if m == nil || m.Key == nil {
		return wire.Tag{}, wire.Validation("The Tag Key provided is invalid, Key: null")
	}
	if err := checkTagKey(m.Key); err != nil {
		return wire.Tag{}, err
	}
	if m.Value == nil {
		return wire.Tag{}, wire.Validation("The Tag Value provided is invalid, Value: null")
	}
	v := *m.Value
	if utf8.RuneCountInString(v) > maxTagValueChars || !tagCharset.MatchString(v) {
		return wire.Tag{}, wire.Validation("The Tag Value provided is invalid, Value: %s", v)
	}
	return wire.Tag{Key: *m.Key, Value: v}, nil
}

// checkTagKey validates a tag key: 1 to 128 characters of the tag
// charset, and not in the reserved aws: namespace (in any case).
func checkTagKey(k *string) error {
	if k == nil {
		return wire.Validation("The Tag Key provided is invalid, Key: null")
	}
	key := *k
	n := utf8.RuneCountInString(key)
	if n < 1 || n > maxTagKeyChars || !tagCharset.MatchString(key) {
		return wire.Validation("The Tag Key provided is invalid, Key: %s", key)
	}
	if strings.HasPrefix(strings.ToLower(key), "aws:") {
		return wire.Validation("Tag Key cannot be prefixed with aws:, Key: %s", key)
	}
	return nil
}

// checkCreateTags validates the Tags of a CreateTable request with the
// rules of TagResource; an empty list is accepted there.
func checkCreateTags(tags []wire.Tag) error {
	if len(tags) > maxTagsPerResource {
		return wire.Validation("Number of Tags exceed the current limit for the provided ResourceArn")
	}
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if _, err := checkTagMember(&tagMember{Key: &t.Key, Value: &t.Value}); err != nil {
			return err
		}
		if seen[t.Key] {
			return wire.Validation("Duplicate Tag Keys provided as input: Duplicate Tag Key found %s", t.Key)
		}
		seen[t.Key] = true
	}
	return nil
}

func tagIndex(tags []wire.Tag, key string) int {
	for i, t := range tags {
		if t.Key == key {
			return i
		}
	}
	return -1
}
