package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"lastro/collections/kit"
	"lastro/collections/table"
	"lastro/ops"
)

const backupUsage = "usage: lastro backup create [--name N] | list | restore (--backup ARN | --at RFC3339) --target T [--verify] | drill [--target T] [--keep]\n"

// backupCmd: lastro backup create|list|restore|drill, over the store's
// on-demand backups and point-in-time recovery (docs/adr/0078).
func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stderr, backupUsage)
		if len(args) > 0 {
			return flag.ErrHelp
		}
		return fmt.Errorf("no backup command given")
	}
	sub := args[0]
	switch sub {
	case "create", "list", "restore", "drill":
	default:
		fmt.Fprint(stderr, backupUsage)
		return fmt.Errorf("unknown backup command %q (create, list, restore or drill)", sub)
	}
	fs := newFlagSet("backup "+sub, "[flags]", stderr)
	name := fs.String("name", "", "create: the backup's name (default lastro-<UTC time>)")
	arn := fs.String("backup", "", "restore: the backup's ARN (lastro backup list)")
	at := fs.String("at", "", "restore: a point in time (RFC 3339) within the PITR window, instead of --backup")
	target := fs.String("target", "", "restore, drill: the new table to restore into (never the source)")
	verify := fs.Bool("verify", false, "restore: count the items per type in both tables (with --at, what changed since shows as differences)")
	keep := fs.Bool("keep", false, "drill: keep the restored table")
	cfg, err := loadConfig(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if sub == "restore" && (*arn == "") == (*at == "") {
		return fmt.Errorf("restore needs exactly one of --backup ARN or --at TIME")
	}
	var when time.Time
	if *at != "" {
		if when, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("--at %q is not an RFC 3339 instant", *at)
		}
	}
	if sub == "restore" && *target == "" {
		return fmt.Errorf("restore needs --target: a backup is restored into a new table")
	}
	if *target == cfg.Table {
		return fmt.Errorf("--target must be a new table, not %s itself", cfg.Table)
	}
	e, err := opsApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	now := e.Clock.Now().UTC()
	switch sub {
	case "create":
		if *name == "" {
			*name = "lastro-" + now.Format("20060102T150405Z")
		}
		out, err := e.db.CreateBackup(ctx, &dynamodb.CreateBackupInput{TableName: aws.String(cfg.Table), BackupName: name})
		if err != nil {
			return fmt.Errorf("create backup: %w", err)
		}
		b := out.BackupDetails
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%d bytes\n", aws.ToString(b.BackupArn), aws.ToString(b.BackupName), b.BackupStatus, aws.ToInt64(b.BackupSizeBytes))
		return nil
	case "list":
		in := &dynamodb.ListBackupsInput{TableName: aws.String(cfg.Table)}
		n := 0
		for {
			page, err := e.db.ListBackups(ctx, in)
			if err != nil {
				return fmt.Errorf("list backups: %w", err)
			}
			for _, b := range page.BackupSummaries {
				n++
				fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%d bytes\n", aws.ToString(b.BackupArn), aws.ToString(b.BackupName),
					aws.ToTime(b.BackupCreationDateTime).UTC().Format(time.RFC3339), b.BackupStatus, aws.ToInt64(b.BackupSizeBytes))
			}
			if page.LastEvaluatedBackupArn == nil {
				break
			}
			in.ExclusiveStartBackupArn = page.LastEvaluatedBackupArn
		}
		fmt.Fprintf(stderr, "%d backups of %s\n", n, cfg.Table)
		return nil
	case "restore":
		if err := restore(ctx, e, cfg.Table, *arn, when, *target, stderr); err != nil {
			return err
		}
		if !*verify {
			return nil
		}
		_, err := verifyRestore(ctx, e, cfg.Table, *target, nil, stdout, stderr)
		return err
	}
	// drill: counts, backup, restore into a new table, counts again.
	if *target == "" {
		*target = cfg.Table + "-drill-" + now.Format("20060102t150405")
	}
	fmt.Fprintf(stderr, "drill: counting %s\n", cfg.Table)
	before, err := ops.CountByType(ctx, e.Kit, 4)
	if err != nil {
		return err
	}
	out, err := e.db.CreateBackup(ctx, &dynamodb.CreateBackupInput{TableName: aws.String(cfg.Table), BackupName: aws.String("drill-" + now.Format("20060102T150405Z"))})
	if err != nil {
		return fmt.Errorf("create backup: %w", err)
	}
	backup := aws.ToString(out.BackupDetails.BackupArn)
	fmt.Fprintf(stderr, "drill: backup %s\n", backup)
	if err := restore(ctx, e, cfg.Table, backup, time.Time{}, *target, stderr); err != nil {
		return err
	}
	diffs, err := verifyRestore(ctx, e, cfg.Table, *target, before, stdout, stderr)
	if !*keep {
		if _, derr := e.db.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: target}); derr != nil {
			fmt.Fprintf(stderr, "drill: the restored table %s was kept: %v\n", *target, derr)
		}
	}
	if err == nil && len(diffs) > 0 {
		err = fmt.Errorf("drill: %d item types differ between %s and its restore", len(diffs), cfg.Table)
	}
	return err
}

// restore restores a backup (or the table at a point in time) into
// target and waits until it is active.
func restore(ctx context.Context, e *app, source, arn string, at time.Time, target string, stderr io.Writer) error {
	var err error
	if arn != "" {
		_, err = e.db.RestoreTableFromBackup(ctx, &dynamodb.RestoreTableFromBackupInput{BackupArn: aws.String(arn), TargetTableName: aws.String(target)})
	} else {
		_, err = e.db.RestoreTableToPointInTime(ctx, &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: aws.String(source),
			TargetTableName: aws.String(target), RestoreDateTime: aws.Time(at)})
	}
	if err != nil {
		return fmt.Errorf("restore into %s: %w", target, err)
	}
	fmt.Fprintf(stderr, "restore: waiting for %s\n", target)
	w := dynamodb.NewTableExistsWaiter(e.db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(target)}, 30*time.Minute); err != nil {
		return fmt.Errorf("wait for %s: %w", target, err)
	}
	return table.CheckLastro(ctx, e.db, target)
}

// verifyRestore counts the items per type of target and compares them
// with want (nil: the source table counted now) and prints the result.
func verifyRestore(ctx context.Context, e *app, source, target string, want map[string]int64, stdout, stderr io.Writer) ([]ops.Difference, error) {
	var err error
	if want == nil {
		if want, err = ops.CountByType(ctx, e.Kit, 4); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stderr, "verify: counting %s\n", target)
	got, err := ops.CountByType(ctx, kit.New(e.db, target, kit.WithClock(e.Clock)), 4)
	if err != nil {
		return nil, err
	}
	diffs := ops.Diff(want, got)
	var total int64
	for _, n := range got {
		total += n
	}
	if err := printJSON(stdout, map[string]any{"source": source, "target": target, "itemsByType": got, "items": total,
		"differences": diffs, "verified": len(diffs) == 0}); err != nil {
		return diffs, err
	}
	return diffs, nil
}
