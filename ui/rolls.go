package ui

import (
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"lastro/contract/regua"
	"lastro/report"
)

// The dashboard's roll rates come from the table's monthly full exports
// (`lastro export`), as the reports do: the same derivation of each
// contract's state on the export's date (report.ReadExport), so the chart
// and `lastro report rollrate` agree. An export never changes, so each is
// read once per process.

// rollLinks are the transitions the chart draws: a bucket rolling into
// the next one, and current contracts entering delinquency.
var rollLinks = []struct{ From, To, Name, Color string }{
	{report.StateCurrent, regua.BucketD001_030, msg("em dia → 1–30"), "#4d7c0f"},
	{regua.BucketD001_030, regua.BucketD031_060, msg("1–30 → 31–60"), "#d97706"},
	{regua.BucketD031_060, regua.BucketD061_090, msg("31–60 → 61–90"), "#dc2626"},
	{regua.BucketD061_090, regua.BucketD091_PLUS, msg("61–90 → 90+"), "#7f1d1d"},
}

// rollMonths is how many month-over-month points the chart shows.
const rollMonths = 6

// exportCache holds the exports read so far, by folder.
type exportCache struct {
	mu    sync.Mutex
	read  map[string]*report.Export
	fails map[string]bool
}

// monthly returns, oldest first, the newest full export of each of the
// last rollMonths+1 months found under dir.
func (c *exportCache) monthly(dir string) []*report.Export {
	if dir == "" {
		return nil
	}
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder holds no export for the chart
		}
		if !d.IsDir() && d.Name() == "manifest-summary.json" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "AWSDynamoDB" {
			found = append(found, filepath.Dir(path))
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read == nil {
		c.read, c.fails = map[string]*report.Export{}, map[string]bool{}
	}
	byMonth := map[string]*report.Export{}
	for _, f := range found {
		ex, ok := c.read[f]
		if !ok && !c.fails[f] {
			var err error
			if ex, err = report.ReadExport(f); err != nil {
				c.fails[f] = true // incremental, or still being written
				continue
			}
			c.read[f] = ex
		}
		if ex == nil {
			continue
		}
		m := ex.ExportTime.UTC().Format("2006-01")
		if prev := byMonth[m]; prev == nil || ex.ExportTime.After(prev.ExportTime) {
			byMonth[m] = ex
		}
	}
	months := make([]string, 0, len(byMonth))
	for m := range byMonth {
		months = append(months, m)
	}
	slices.Sort(months)
	if len(months) > rollMonths+1 {
		months = months[len(months)-rollMonths-1:]
	}
	out := make([]*report.Export, len(months))
	for i, m := range months {
		out[i] = byMonth[m]
	}
	return out
}

// rollPoint is one month's roll rates, in parts per million per link.
type rollPoint struct {
	Month string
	PPM   []int64
}

// rollSeries computes the tenant's roll rates between consecutive
// monthly exports.
func rollSeries(exports []*report.Export, tenantID string) []rollPoint {
	of := func(ex *report.Export) []report.Position {
		var out []report.Position
		for _, p := range ex.Positions {
			if p.TenantID == tenantID {
				out = append(out, p)
			}
		}
		return out
	}
	var pts []rollPoint
	for i := 1; i < len(exports); i++ {
		r := report.NewRollRate(of(exports[i-1]), of(exports[i]))
		pt := rollPoint{Month: exports[i].ExportTime.UTC().Format("01/2006")}
		for _, l := range rollLinks {
			pt.PPM = append(pt.PPM, r.RatePPM(l.From, l.To))
		}
		pts = append(pts, pt)
	}
	return pts
}

// rollChart draws the series as a line chart in SVG, its words in l. It
// holds only numbers and fixed words, never text from a request or an
// item.
func rollChart(l lang, pts []rollPoint) template.HTML {
	const w, h, left, top, bottom = 640, 260, 48, 16, 40
	plotW, plotH := w-left-150, h-top-bottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="roll-title" viewBox="0 0 %d %d" width="100%%" class="rolls">`, w, h)
	fmt.Fprintf(&b, `<title id="roll-title">%s</title>`, template.HTMLEscapeString(l.T("Taxas de rolagem mês a mês")))
	var top100 int64 = 1
	for _, p := range pts {
		for _, v := range p.PPM {
			top100 = max(top100, v)
		}
	}
	// The y scale: the next multiple of 10 % above the largest rate.
	scale := ((top100 + 99_999) / 100_000) * 100_000
	for i := int64(0); i <= scale; i += scale / 4 {
		y := top + plotH - int(i*int64(plotH)/scale)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#e3e6ea"/><text x="%d" y="%d" font-size="11" text-anchor="end">%d%%</text>`,
			left, left+plotW, y, y, left-6, y+4, i/10_000)
	}
	x := func(i int) int {
		if len(pts) == 1 {
			return left + plotW/2
		}
		return left + i*plotW/(len(pts)-1)
	}
	for i, p := range pts {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`, x(i), h-bottom+18, p.Month)
	}
	for li, link := range rollLinks {
		name := l.T(link.Name)
		var path []string
		for i, p := range pts {
			y := top + plotH - int(p.PPM[li]*int64(plotH)/scale)
			path = append(path, fmt.Sprintf("%d,%d", x(i), y))
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3" fill="%s"><title>%s</title></circle>`, x(i), y, link.Color,
				template.HTMLEscapeString(l.Tf("%s em %s: %s", name, p.Month, l.ppm(p.PPM[li]))))
		}
		fmt.Fprintf(&b, `<polyline class="roll-line" fill="none" stroke="%s" stroke-width="2" points="%s"/>`, link.Color, strings.Join(path, " "))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="12">%s</text>`,
			left+plotW+16, top+li*20, link.Color, left+plotW+32, top+li*20+10, template.HTMLEscapeString(name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and the fixed names above only
}

// exportsDirUsable reports a configured exports folder that exists.
func exportsDirUsable(dir string) bool {
	if dir == "" {
		return false
	}
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}
