package report

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteAgingTable prints the aging as an aligned table.
func WriteAgingTable(w io.Writer, a Aging) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "state\tcontracts\tbalance\tshare\t")
	for _, r := range a.Rows {
		share := int64(0)
		if a.BalanceCents > 0 {
			share = r.BalanceCents * 1_000_000 / a.BalanceCents
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", r.State, r.Contracts, BRL(r.BalanceCents), percent(share))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t\t\n", a.Contracts, BRL(a.BalanceCents))
	fmt.Fprintf(tw, "delinquent\t\t%s\t%s\t\n", BRL(a.DelinquentCents), percent(a.DelinquentRatePPM))
	return tw.Flush()
}

// WriteAgingCSV writes the aging as CSV (balances in cents).
func WriteAgingCSV(w io.Writer, a Aging) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"state", "contracts", "balance_cents"})
	for _, r := range a.Rows {
		cw.Write([]string{r.State, strconv.Itoa(r.Contracts), strconv.FormatInt(r.BalanceCents, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteRollTable prints the roll-rate matrix: per cell the contracts and
// their share of the row.
func WriteRollTable(w io.Writer, r RollRate) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "from \\ to\t")
	for _, to := range r.To {
		fmt.Fprintf(tw, "%s\t", to)
	}
	fmt.Fprintln(tw, "total\t")
	for _, from := range r.From {
		fmt.Fprintf(tw, "%s\t", from)
		for _, to := range r.To {
			if n := r.Count(from, to); n > 0 {
				fmt.Fprintf(tw, "%d (%s)\t", n, percent(r.RatePPM(from, to)))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "%d\t\n", r.RowTotal[from])
	}
	return tw.Flush()
}

// WriteRollCSV writes one row per non-empty cell of the matrix.
func WriteRollCSV(w io.Writer, r RollRate) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"from", "to", "contracts", "row_contracts", "rate_ppm", "balance_cents"})
	for _, from := range r.From {
		for _, to := range r.To {
			if n := r.Count(from, to); n > 0 {
				cw.Write([]string{from, to, strconv.Itoa(n), strconv.Itoa(r.RowTotal[from]),
					strconv.FormatInt(r.RatePPM(from, to), 10), strconv.FormatInt(r.BalanceCents(from, to), 10)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// AgingSVG draws the aging as a bar chart of balances per state, each bar
// labelled with its contracts and balance.
func AgingSVG(a Aging, title string) string {
	const width, barH, gap, left, top = 760, 26, 10, 130, 50
	height := top + len(a.Rows)*(barH+gap) + 20
	var maxCents int64 = 1
	for _, r := range a.Rows {
		maxCents = max(maxCents, r.BalanceCents)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<text x="10" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for i, r := range a.Rows {
		y := top + i*(barH+gap)
		w := int(r.BalanceCents * int64(width-left-240) / maxCents)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+barH*2/3, html.EscapeString(r.State))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>`+"\n", left, y, max(w, 1), barH, stateColor(r.State),
			html.EscapeString(fmt.Sprintf("%s: %d contracts, %s", r.State, r.Contracts, BRL(r.BalanceCents))))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%d · %s</text>`+"\n", left+max(w, 1)+6, y+barH*2/3, r.Contracts, html.EscapeString(BRL(r.BalanceCents)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// RollSVG draws the roll-rate matrix as a heat map: the darker the cell,
// the larger its share of the row.
func RollSVG(r RollRate, title string) string {
	const cell, left, top = 86, 120, 80
	width, height := left+len(r.To)*cell+20, top+len(r.From)*cell/2+20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<text x="10" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for j, to := range r.To {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", left+j*cell+cell/2, top-10, html.EscapeString(to))
	}
	for i, from := range r.From {
		y := top + i*cell/2
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+cell/4+4, html.EscapeString(from))
		for j, to := range r.To {
			ppm := r.RatePPM(from, to)
			opacity := float64(ppm) / 1_000_000
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#b2182b" fill-opacity="%.3f" stroke="#ccc"/>`+"\n", left+j*cell, y, cell, cell/2, opacity)
			if n := r.Count(from, to); n > 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%d (%s)</text>`+"\n", left+j*cell+cell/2, y+cell/4+4, n, percent(ppm))
			}
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func stateColor(state string) string {
	switch state {
	case StateCurrent:
		return "#4daf4a"
	case "D001_030":
		return "#fed976"
	case "D031_060":
		return "#fd8d3c"
	case "D061_090":
		return "#e31a1c"
	case "D091_PLUS":
		return "#800026"
	}
	return "#999999"
}
