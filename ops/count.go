package ops

import (
	"context"
	"errors"
	"maps"
	"slices"

	"lastro/collections/kit"
)

// CountByType counts the items of k's table per `type` attribute with a
// parallel maintenance scan ("" for items without one): the restore
// drill's check that a restored table holds what its source held.
func CountByType(ctx context.Context, k *kit.Kit, segments int) (map[string]int64, error) {
	if segments <= 0 {
		segments = 4
	}
	total := int32(segments)
	counts := make([]map[string]int64, total)
	errc := make(chan error, total)
	for seg := range total {
		counts[seg] = map[string]int64{}
		go func() {
			errc <- k.MaintenanceScan(ctx, "count-by-type", seg, total, func(it kit.Item) error {
				counts[seg][str(it, "type")]++
				return nil
			})
		}()
	}
	var err error
	for range total {
		err = errors.Join(err, <-errc)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, c := range counts {
		for t, n := range c {
			out[t] += n
		}
	}
	return out, nil
}

// Difference is one item type whose counts differ.
type Difference struct {
	Type   string `json:"type"`
	Source int64  `json:"source"`
	Target int64  `json:"target"`
}

// Diff lists the types whose counts differ between a and b, by type.
func Diff(a, b map[string]int64) []Difference {
	types := map[string]bool{}
	for t := range a {
		types[t] = true
	}
	for t := range b {
		types[t] = true
	}
	var out []Difference
	for _, t := range slices.Sorted(maps.Keys(types)) {
		if a[t] != b[t] {
			out = append(out, Difference{Type: t, Source: a[t], Target: b[t]})
		}
	}
	return out
}
