package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"lastro/collections/kit"
	"lastro/ops"
)

// Plan is a backfill's blast radius, from a dry run that writes nothing.
type Plan struct {
	Migration string `json:"migration"`
	Kind      Kind   `json:"kind"`
	Type      string `json:"type,omitempty"`
	Index     string `json:"index,omitempty"`
	Scanned   int64  `json:"scanned"`  // items of the source type
	Changes   int64  `json:"changes"`  // items the backfill would write
	Carrying  int64  `json:"carrying"` // items that need no write
	// PerTenant is the items that would change, by tenant.
	PerTenant map[string]int64 `json:"perTenant"`
	WCU       float64          `json:"wcu"` // write units the writes would consume
	Rate      float64          `json:"rateWcuPerSecond"`
	// Seconds is WCU at Rate (0 when unlimited): the time the writes take,
	// the scan's own time aside.
	Seconds float64  `json:"estimatedSeconds"`
	Tenants []string `json:"tenants"`
}

// PlanBackfill counts, with a parallel scan filtered on m.Type, the
// items Run would write, their write units and the time at rate units a
// second. An additive migration has nothing to plan but its kind.
func PlanBackfill(ctx context.Context, d ops.Deps, m *Migration, rate float64) (*Plan, error) {
	p := &Plan{Migration: m.Name, Kind: m.Kind, Type: m.Type, Index: m.Index, Rate: rate, PerTenant: map[string]int64{}}
	if m.Kind == Additive {
		progress(d, "migrate %s: additive, application attributes only: nothing to backfill", m.Name)
		return p, nil
	}
	d = lockProgress(d)
	total := segments(d)
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errl []error
	)
	for seg := range total {
		wg.Go(func() {
			err := d.Kit.MaintenanceScanPages(ctx, "migrate-plan."+m.Name, kit.ScanSpec{Segment: seg, Total: total, Type: m.Type},
				func(items []kit.Item, _ *kit.Key) error {
					if m.Kind == Lookups {
						return m.planLookups(ctx, d, p, &mu, items)
					}
					mu.Lock()
					defer mu.Unlock()
					for _, it := range items {
						if str(it, "type") != m.Type {
							continue
						}
						p.Scanned++
						want, ok := m.needs(it)
						if !ok {
							p.Carrying++
							continue
						}
						p.Changes++
						p.PerTenant[tenantOf(str(it, "PK"))]++
						p.WCU += m.backfillUnits(it, want)
					}
					progress(d, "migrate %s: plan: %d scanned, %d would change", m.Name, p.Scanned, p.Changes)
					return ctx.Err()
				})
			if err != nil {
				mu.Lock()
				errl = append(errl, fmt.Errorf("segment %d: %w", seg, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errl...); err != nil {
		return nil, err
	}
	if rate > 0 {
		p.Seconds = p.WCU / rate
	}
	p.Tenants = slices.Sorted(maps.Keys(p.PerTenant))
	progress(d, "migrate %s: plan: %d items would change, %.0f WCU, about %s at %.0f WCU/s",
		m.Name, p.Changes, p.WCU, time.Duration(p.Seconds*float64(time.Second)).Round(time.Second), rate)
	return p, nil
}

// lockedWriter serialises the segments' progress lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func lockProgress(d ops.Deps) ops.Deps {
	if d.Progress != nil {
		if _, ok := d.Progress.(*lockedWriter); !ok {
			d.Progress = &lockedWriter{w: d.Progress}
		}
	}
	return d
}

// planLookups counts a page of a Lookups migration: the source items
// that lack their entries and the units filing them takes.
func (m *Migration) planLookups(ctx context.Context, d ops.Deps, p *Plan, mu *sync.Mutex, items []kit.Item) error {
	var page []kit.Item
	for _, it := range items {
		if str(it, "type") == m.Type {
			page = append(page, it)
		}
	}
	lacking, est, err := m.Filer.Lacking(ctx, d, page)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	p.Scanned += int64(len(page))
	p.Changes += int64(len(lacking))
	p.Carrying += int64(len(page) - len(lacking))
	for i, it := range lacking {
		p.PerTenant[tenantOf(str(it, "PK"))]++
		p.WCU += est[i]
	}
	progress(d, "migrate %s: plan: %d scanned, %d would change", m.Name, p.Scanned, p.Changes)
	return ctx.Err()
}
