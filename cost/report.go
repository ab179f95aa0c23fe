package cost

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// indexColumns are the table's global secondary indexes, in the order
// docs/design.md lists them.
var indexColumns = []string{"agenda", "portfolio", "tenant-debtors"}

// Print writes results as a table: RRU and WRU of the table arm and of
// each index apart, the total, and the budget.
func Print(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	head := []string{"operation", "table RRU", "table WRU"}
	for _, ix := range indexColumns {
		head = append(head, ix+" RRU", ix+" WRU")
	}
	head = append(head, "total RRU", "total WRU", "budget", "")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range results {
		row := []string{r.Name, num(r.Capacity.Table.RRU), num(r.Capacity.Table.WRU)}
		for _, ix := range indexColumns {
			u := r.Capacity.Index(ix)
			row = append(row, num(u.RRU), num(u.WRU))
		}
		t := r.Capacity.Total()
		verdict := ""
		switch {
		case r.Budget == "":
		case r.Over == "":
			verdict = "met"
		default:
			verdict = "OVER: " + r.Over
		}
		row = append(row, num(t.RRU), num(t.WRU), r.Budget, verdict)
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range results {
		line := fmt.Sprintf("%-28s %s", r.Name, r.What)
		if r.Detail != "" {
			line += "; " + r.Detail
		}
		if len(r.Parts) > 0 {
			var ps []string
			for _, name := range sortedKeys(r.Parts) {
				u := r.Parts[name]
				ps = append(ps, fmt.Sprintf("%s %s/%s", name, num(u.RRU), num(u.WRU)))
			}
			line += " [engine operations RRU/WRU: " + strings.Join(ps, ", ") + "]"
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// num prints capacity units: integers plainly, halves (eventually
// consistent reads) with one decimal, nothing for zero.
func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}
