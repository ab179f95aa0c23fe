package kit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ddblocal"
	"lastro/ddblocal/ddbtest"
)

// TestSystemHandleReachesOnlyTheSystemAndTenantPartitions: the stream
// consumer's handle writes its checkpoints and the tenants' counters, and
// is refused a debtor's partition or the directory.
func TestSystemHandleReachesOnlyTheSystemAndTenantPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	sys := e.kit.System()
	tests := []struct {
		pk   string
		want bool
	}{
		{keys.System, true},
		{keys.Tenant("t1"), true},
		{keys.Tenant("t2"), true},
		{keys.Debtor("t1", "0123456789abcdef"), false},
		{keys.Bucket("t1", "D001_030"), false},
		{keys.Directory, false},
		{"SYSX", false},
		{"T#", false},
	}
	for _, tt := range tests {
		err := sys.Put(ctx, item(tt.pk, "X"), nil)
		if got := err == nil; got != tt.want {
			t.Errorf("System().Put(%q): %v, want allowed=%v", tt.pk, err, tt.want)
		}
		if !tt.want && !errors.Is(err, kit.ErrOutsideTenant) {
			t.Errorf("System().Put(%q): %v, want ErrOutsideTenant", tt.pk, err)
		}
	}
}

// TestStreamsReadsTheTableStream: the latest stream, its shard, and the
// records of a put, an update and a delete in order, with both images in
// the table's attribute types.
func TestStreamsReadsTheTableStream(t *testing.T) {
	t.Parallel()
	srv := ddbtest.Start(t, ddblocal.Options{})
	ctx := context.Background()
	if _, err := table.Ensure(ctx, srv.Client(), "lastro"); err != nil {
		t.Fatal(err)
	}
	k := kit.New(srv.Client(), "lastro")
	tn := k.Tenant("t1", nil)
	key := kit.Key{PK: keys.Tenant("t1"), SK: "A"}
	if err := tn.Put(ctx, item(key.PK, key.SK, "v", "1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := tn.Put(ctx, item(key.PK, key.SK, "v", "2"), nil); err != nil {
		t.Fatal(err)
	}
	if err := tn.Delete(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	sr := kit.NewStreams(kit.NewEmbeddedStreamsClient(srv.URL, nil))
	s, err := sr.Latest(ctx, "lastro")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.Latest(ctx, "nope"); !errors.Is(err, kit.ErrNoStream) {
		t.Errorf("Latest of a table without a stream: %v, want ErrNoStream", err)
	}
	shards, err := sr.Shards(ctx, s.ARN)
	if err != nil || len(shards) != 1 || shards[0].End != "" {
		t.Fatalf("shards %+v %v: want one open shard", shards, err)
	}
	it, err := sr.Iterator(ctx, s.ARN, shards[0].ID, "")
	if err != nil {
		t.Fatal(err)
	}
	changes, next, err := sr.Records(ctx, it, 100)
	if err != nil || next == "" {
		t.Fatalf("records: %v, next %q", err, next)
	}
	names := []string{}
	for _, c := range changes {
		names = append(names, c.Name)
	}
	if len(changes) != 3 || names[0] != "INSERT" || names[1] != "MODIFY" || names[2] != "REMOVE" {
		t.Fatalf("changes %v, want INSERT MODIFY REMOVE", names)
	}
	v := func(img kit.Item) string {
		if x, ok := img["v"].(*types.AttributeValueMemberS); ok {
			return x.Value
		}
		return ""
	}
	if v(changes[1].Old) != "1" || v(changes[1].New) != "2" || changes[2].New != nil || v(changes[2].Old) != "2" || changes[2].Service {
		t.Errorf("images: %+v", changes)
	}
	// After the second record: only the third.
	it, err = sr.Iterator(ctx, s.ARN, shards[0].ID, changes[1].Sequence)
	if err != nil {
		t.Fatal(err)
	}
	rest, _, err := sr.Records(ctx, it, 100)
	if err != nil || len(rest) != 1 || rest[0].Sequence != changes[2].Sequence {
		t.Fatalf("after %s: %+v %v", changes[1].Sequence, rest, err)
	}
}
