package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"lastro/collections/keys"
	"lastro/collections/table"
)

// tableCmd: lastro table create|describe|definition.
func tableCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stderr, "usage: lastro table create|describe|definition [flags]\n")
		if len(args) > 0 {
			return flag.ErrHelp
		}
		return fmt.Errorf("no table command given")
	}
	sub := args[0]
	if sub != "create" && sub != "describe" && sub != "definition" {
		return fmt.Errorf("unknown table command %q (create, describe or definition)", sub)
	}
	fs := newFlagSet("table "+sub, "[flags]", stderr)
	withArchive := fs.Bool("archive", false, "create: also the archive table of the TTL's deletions (<table>-archive, Standard-IA)")
	withRoles := fs.Bool("roles", false, "definition: also the IAM roles of lastro iam policy (api, worker, stream, lambda)")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if sub == "definition" {
		out, err := table.CloudFormation(cfg.Table)
		if err != nil {
			return err
		}
		if *withRoles {
			if out, err = cloudFormationRoles(out); err != nil {
				return err
			}
		}
		_, err = fmt.Fprintln(stdout, string(out))
		return err
	}
	e, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	if sub == "create" && *withArchive {
		name := cfg.Table + table.ArchiveSuffix
		created, err := table.EnsureArchive(ctx, e.db, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "archive table %s: created %v\n", name, created)
	}
	// newEngine already created the table when it was missing.
	out, err := e.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.Table)})
	if err != nil {
		return err
	}
	d := out.Table
	fmt.Fprintf(stdout, "table %s: %s, %d items, %d bytes\n", *d.TableName, d.TableStatus, aws.ToInt64(d.ItemCount), aws.ToInt64(d.TableSizeBytes))
	for _, g := range d.GlobalSecondaryIndexes {
		fmt.Fprintf(stdout, "  index %-15s %s  %s, %d items\n", *g.IndexName, keySchema(g.KeySchema), g.Projection.ProjectionType, aws.ToInt64(g.ItemCount))
	}
	if d.StreamSpecification != nil && aws.ToBool(d.StreamSpecification.StreamEnabled) {
		fmt.Fprintf(stdout, "  stream %s\n", d.StreamSpecification.StreamViewType)
	}
	return nil
}

func keySchema(ks []types.KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = *k.AttributeName
	}
	return strings.Join(parts, "+")
}

// inspect prints one partition with every key decoded by the registry:
// lastro inspect <PK>.
func inspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", "<PK> [flags]", stderr)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// Only flags: -h lists them; anything else lacks the partition.
		if _, err := loadConfig(fs, args, os.Getenv); err != nil {
			return err
		}
		return fmt.Errorf("no partition key given: lastro inspect <PK> [flags]")
	}
	pk := args[0]
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	parsed, err := keys.Parse(keys.PK, pk)
	if err != nil {
		return err
	}
	e, err := newApp(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	fmt.Fprintf(stdout, "PK %s\n   %s\n", pk, parsed)
	p := dynamodb.NewQueryPaginator(e.db, &dynamodb.QueryInput{
		TableName: aws.String(cfg.Table), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
		ConsistentRead:            aws.Bool(true),
	})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			n++
			sk := it["SK"].(*types.AttributeValueMemberS).Value
			desc := "?"
			if ps, err := keys.Parse(keys.SK, sk); err == nil {
				desc = ps.String()
			}
			fmt.Fprintf(stdout, "SK %s\n   %s\n", sk, desc)
			for _, attr := range []keys.Attr{keys.GSI1PK, keys.GSI1SK, keys.GSI2PK, keys.GSI3PK} {
				if v, ok := it[string(attr)].(*types.AttributeValueMemberS); ok {
					if ps, err := keys.Parse(attr, v.Value); err == nil {
						fmt.Fprintf(stdout, "   %s %s: %s\n", attr, v.Value, ps)
					}
				}
			}
			names := make([]string, 0, len(it))
			for k := range it {
				names = append(names, k)
			}
			sort.Strings(names)
			raw, _ := json.Marshal(names)
			fmt.Fprintf(stdout, "   attributes %s\n", raw)
		}
	}
	fmt.Fprintf(stdout, "%d items\n", n)
	return nil
}
