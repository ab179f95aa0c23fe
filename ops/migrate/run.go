package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"lastro/collections/kit"
	"lastro/ops"
)

// Options tune a backfill.
type Options struct {
	// WCU is the write capacity units a second the backfill may spend,
	// all segments together (0: no limit).
	WCU float64
	// PageSize is how many items a scan page evaluates (default 100): the
	// most an interrupted segment reads again.
	PageSize int32
}

func (o Options) pageSize() int32 {
	if o.PageSize <= 0 {
		return 100
	}
	return o.PageSize
}

// RunReport is what a backfill did, over every run that resumed it.
type RunReport struct {
	Migration string  `json:"migration"`
	Segments  int32   `json:"segments"`
	Scanned   int64   `json:"scanned"`   // items of the source type read
	Written   int64   `json:"written"`   // items the backfill decorated
	Skipped   int64   `json:"skipped"`   // already carrying the key or stamped
	Conflicts int64   `json:"conflicts"` // changed or deleted between the scan and the write
	WCU       float64 `json:"wcu"`       // write units the writes consumed
	Done      bool    `json:"done"`
}

// Run backfills m: every segment of a parallel scan filtered on m.Type,
// each item that lacks m's key attributes updated with them and stamped
// with schemaVersion, paced at o.WCU. Each segment keeps its cursor in its
// own checkpoint after every page; interrupted (ctx, a crash), the next
// run resumes each segment where it stopped, and an item written twice
// is refused by its schemaVersion guard rather than written again.
func Run(ctx context.Context, d ops.Deps, m *Migration, o Options) (*RunReport, error) {
	if m.Kind != Backfill && m.Kind != Lookups {
		return nil, fmt.Errorf("migrate %s: %w", m.Name, errNoBackfill)
	}
	d = lockProgress(d)
	run, err := claim(ctx, d.Kit, d.Clock, m.Name, d.Owner)
	if err != nil {
		return nil, err
	}
	rep := &RunReport{Migration: m.Name}
	if run.Phase == phaseDone {
		fillReport(rep, run.Counts)
		rep.Segments, rep.Done = run.Segments, true
		progress(d, "migrate %s: already done (%d written)", m.Name, rep.Written)
		return rep, nil
	}
	if run.Segments == 0 {
		run.Segments = segments(d)
	} else if run.Segments != segments(d) {
		// The cursors belong to the segmentation they were taken in.
		progress(d, "migrate %s: resuming with the %d segments it started with", m.Name, run.Segments)
	}
	run.Phase = phaseActive
	if err := run.save(ctx, ops.LeaseTTL); err != nil {
		return nil, err
	}
	total := run.Segments
	rep.Segments = total
	b := newBucket(o.WCU, d.Clock)
	var (
		mu   sync.Mutex
		sum  = map[string]int64{}
		wcu  float64
		errl []error
		wg   sync.WaitGroup
	)
	for seg := range total {
		wg.Go(func() {
			cp, used, err := backfillSegment(ctx, d, m, o, b, seg, total)
			mu.Lock()
			defer mu.Unlock()
			if cp != nil {
				for k, v := range cp.Counts {
					sum[k] += v
				}
			}
			wcu += used
			if err != nil {
				errl = append(errl, fmt.Errorf("segment %d: %w", seg, err))
			}
		})
	}
	wg.Wait()
	fillReport(rep, sum)
	if err := errors.Join(errl...); err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, release(ctx, d, m.Name))
		}
		return rep, err
	}
	// Read again: a long backfill outlives the run item's lease, which
	// only the segments' saves kept meaningful.
	if run, err = claim(ctx, d.Kit, d.Clock, m.Name, d.Owner); err != nil {
		return rep, err
	}
	run.Counts, run.Phase = sum, phaseDone
	if err := run.save(ctx, ops.LeaseTTL); err != nil {
		return rep, err
	}
	rep.Done = true
	progress(d, "migrate %s: done: %d scanned, %d written, %d skipped, %d conflicts (%.0f WCU this run)",
		m.Name, rep.Scanned, rep.Written, rep.Skipped, rep.Conflicts, wcu)
	return rep, nil
}

func fillReport(rep *RunReport, c map[string]int64) {
	rep.Scanned, rep.Written, rep.Skipped, rep.Conflicts = c["scanned"], c["written"], c["skipped"], c["conflicts"]
	rep.WCU = float64(c["wcu"])
}

// backfillSegment runs one segment from its checkpoint and returns the
// checkpoint (its counts cover every run of the segment) and the write
// units this run spent.
func backfillSegment(ctx context.Context, d ops.Deps, m *Migration, o Options, b *bucket, seg, total int32) (*checkpoint, float64, error) {
	subj := subject(m.Name, seg, total)
	cp, err := claim(ctx, d.Kit, d.Clock, subj, d.Owner)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ops.ErrLeased) {
			// The claim may have landed: give the lease back.
			nc := context.WithoutCancel(ctx)
			cp, rerr := claim(nc, d.Kit, d.Clock, subj, d.Owner)
			if rerr == nil {
				rerr = cp.save(nc, 0)
			}
			err = errors.Join(err, rerr)
		}
		return nil, 0, err
	}
	if cp.Phase == phaseDone {
		return cp, 0, nil
	}
	cp.Phase = phaseActive
	var used float64
	spec := kit.ScanSpec{Segment: seg, Total: total, After: cp.cursor(), Type: m.Type, Limit: o.pageSize()}
	err = d.Kit.MaintenanceScanPages(ctx, "migrate."+m.Name, spec, func(items []kit.Item, next *kit.Key) error {
		if m.Kind == Lookups {
			if err := m.fileLookups(ctx, d, b, cp, items, &used); err != nil {
				return err
			}
			items = nil
		}
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return err
			}
			cp.count("scanned", 1)
			want, ok := m.needs(it)
			if !ok {
				cp.count("skipped", 1)
				continue
			}
			est := m.backfillUnits(it, want)
			if err := b.take(ctx, est); err != nil {
				return err
			}
			units, err := m.write(ctx, d.Kit, it, want)
			b.settle(est, units)
			used += units
			cp.count("wcu", int64(units))
			switch {
			case errors.Is(err, kit.ErrConditionFailed):
				cp.count("conflicts", 1)
			case err != nil:
				return err
			default:
				cp.count("written", 1)
			}
		}
		if next == nil {
			cp.Phase, cp.CursorPK, cp.CursorSK = phaseDone, "", ""
		} else {
			cp.CursorPK, cp.CursorSK = next.PK, next.SK
		}
		if err := cp.save(ctx, ops.LeaseTTL); err != nil {
			return err
		}
		progress(d, "migrate %s: segment %d/%d: %d scanned, %d written, %d skipped",
			m.Name, seg+1, total, cp.Counts["scanned"], cp.Counts["written"], cp.Counts["skipped"])
		return nil
	})
	if err != nil && ctx.Err() != nil {
		// Interrupted mid-page: keep the counts of the items already
		// written (they are skipped as stamped when the page is read
		// again) under the cursor of the last whole page.
		if serr := cp.release(ctx, d.Kit); serr != nil {
			err = errors.Join(err, serr)
		}
		progress(d, "migrate %s: segment %d/%d interrupted after %d written: run again to resume",
			m.Name, seg+1, total, cp.Counts["written"])
	}
	return cp, used, err
}

// write sets want and the schemaVersion stamp on item, on the condition
// that the item still exists, is below the migration's version and does
// not carry the attributes yet: a rerun, a resumed page or a concurrent
// writer is never overwritten. It returns the write units consumed.
func (m *Migration) write(ctx context.Context, k *kit.Kit, item kit.Item, want map[string]string) (float64, error) {
	key := keyOf(item)
	db := k.Tenant(tenantOf(key.PK), nil)
	upd := expression.Set(expression.Name(SchemaVersion), expression.Value(m.Version))
	cond := expression.AttributeExists(expression.Name("PK")).And(
		expression.AttributeNotExists(expression.Name(SchemaVersion)).Or(
			expression.Name(SchemaVersion).LessThan(expression.Value(m.Version))))
	for _, a := range m.Attrs {
		upd = upd.Set(expression.Name(a), expression.Value(want[a]))
		cond = cond.And(expression.AttributeNotExists(expression.Name(a)))
	}
	wctx, u := kit.Operation(ctx, "maintenance.migrate."+m.Name)
	_, err := db.Update(wctx, key, upd, &cond, "")
	return u.WRU(), err
}

// fileLookups files the entries a page of a Lookups migration lacks,
// paced like a backfill's writes; an entry that a writer or a rerun filed
// first is a conflict, never overwritten.
func (m *Migration) fileLookups(ctx context.Context, d ops.Deps, b *bucket, cp *checkpoint, items []kit.Item, used *float64) error {
	var page []kit.Item
	for _, it := range items {
		if str(it, "type") == m.Type {
			page = append(page, it)
		}
	}
	cp.count("scanned", int64(len(page)))
	lacking, est, err := m.Filer.Lacking(ctx, d, page)
	if err != nil {
		return err
	}
	cp.count("skipped", int64(len(page)-len(lacking)))
	for i, it := range lacking {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.take(ctx, est[i]); err != nil {
			return err
		}
		wctx, u := kit.Operation(ctx, "maintenance.migrate."+m.Name)
		err := m.Filer.File(wctx, d, it)
		b.settle(est[i], u.WRU())
		*used += u.WRU()
		cp.count("wcu", int64(u.WRU()))
		switch {
		case errors.Is(err, kit.ErrConditionFailed):
			cp.count("conflicts", 1)
		case err != nil:
			return err
		default:
			cp.count("written", 1)
		}
	}
	return nil
}

// release gives up the run item's lease after a clean interruption.
func release(ctx context.Context, d ops.Deps, name string) error {
	ctx = context.WithoutCancel(ctx)
	run, err := claim(ctx, d.Kit, d.Clock, name, d.Owner)
	if err != nil {
		return err
	}
	return run.save(ctx, 0)
}

func segments(d ops.Deps) int32 {
	if d.Segments <= 0 {
		return 4
	}
	return int32(d.Segments)
}

func progress(d ops.Deps, format string, args ...any) {
	if d.Progress != nil {
		fmt.Fprintf(d.Progress, format+"\n", args...)
	}
}
