package cost

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestHeatRejectsWhatTheSeedRejects replays the seed's rates (1,000
// reschedules/s of the largest tenant, 800 settlements/s) over one
// minute: our design stays under the partition limits everywhere, each
// rejected design goes over on the structure it is rejected for.
func TestHeatRejectsWhatTheSeedRejects(t *testing.T) {
	t.Parallel()
	p := SeedHeat()
	p.Reschedules, p.Window = 60_000, time.Minute
	results, err := SimulateHeat(p)
	if err != nil {
		t.Fatal(err)
	}
	over := map[Design]string{TenantPK: "table", UnshardedGSI1: "agenda (GSI1)", DaysPastDueKey: "portfolio (GSI2)"}
	for _, r := range results {
		for _, pk := range r.Peaks {
			want := over[r.Design] == pk.Structure
			if pk.Over() != want {
				t.Errorf("%s, %s: %.0f WCU/s %.0f RCU/s on %s, over: %v, want %v", r.Design, pk.Structure, pk.WCU, pk.RCU, pk.Partition, pk.Over(), want)
			}
		}
	}
	var out bytes.Buffer
	if err := PrintHeat(&out, p, results); err != nil || !strings.Contains(out.String(), "agenda shards:") {
		t.Errorf("print: %v\n%s", err, out.String())
	}
}

func TestRecommendShards(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		wcu          float64
		min, recomme int
	}{{0, 1, 1}, {400, 1, 2}, {1480, 2, 8}, {3000, 3, 16}} {
		if m, r := RecommendShards(tt.wcu); m != tt.min || r != tt.recomme {
			t.Errorf("RecommendShards(%v) = %d, %d; want %d, %d", tt.wcu, m, r, tt.min, tt.recomme)
		}
	}
}

func TestHeatProfileIsChecked(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(*HeatProfile){
		"no tenants":     func(p *HeatProfile) { p.Tenants = 0 },
		"share over one": func(p *HeatProfile) { p.LargestShare = 1.5 },
		"short window":   func(p *HeatProfile) { p.Window = time.Millisecond },
		"no shards":      func(p *HeatProfile) { p.Shards = 0 },
		"bucket shares":  func(p *HeatProfile) { p.BucketShares = map[string]float64{"D001_030": 0.5} },
	} {
		p := SeedHeat()
		change(&p)
		if _, err := SimulateHeat(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
