// Package explain renders a physical plan, its gate decisions and, after a
// run, its runtime counters. It computes nothing itself: everything it shows
// was recorded by the planner (plan.Stage, plan.Gate) or counted by the
// executor (exec.StageStats).
package explain

import (
	"fmt"
	"strings"
	"time"

	"github.com/clink-sql/clink/plan"
)

// Report is what EXPLAIN ANALYZE adds to a plan.
type Report struct {
	Elapsed time.Duration
	// Process-wide materialisation totals before and after the run.
	MatBefore, MatAfter int64
	Rows                int64
	Cancelled           bool
}

// Text renders p as a tree, root (the result sink) first. With r set it
// adds each stage's counters.
func Text(p *plan.Physical, r *Report) string {
	var sb strings.Builder
	var walk func(s *plan.Stage, prefix, childPrefix string)
	walk = func(s *plan.Stage, prefix, childPrefix string) {
		sb.WriteString(prefix)
		sb.WriteString(headline(s))
		sb.WriteByte('\n')
		pad := childPrefix
		if len(s.Children) > 0 {
			pad += "│  "
		} else {
			pad += "   "
		}
		for _, l := range details(s, r != nil) {
			sb.WriteString(pad)
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
		for i, c := range s.Children {
			if i == len(s.Children)-1 {
				walk(c, childPrefix+"└─ ", childPrefix+"   ")
			} else {
				walk(c, childPrefix+"├─ ", childPrefix+"│  ")
			}
		}
	}
	walk(p.Root, "", "")
	if r != nil {
		var mat int64
		for _, s := range p.Stages {
			mat += s.Exec.Stats.BatchesMaterialized.Load()
		}
		state := "finished"
		if r.Cancelled {
			state = "cancelled"
		}
		fmt.Fprintf(&sb, "Totals: %s rows out in %s (%s); batches materialised by this query: %d; process-wide clink_batch_materializations_total: %d\n",
			Human(r.Rows), Duration(r.Elapsed), state, mat, r.MatAfter)
	}
	return sb.String()
}

func headline(s *plan.Stage) string {
	h := fmt.Sprintf("[%d] %s", s.ID, s.Op)
	if s.Detail != "" {
		h += " " + s.Detail
	}
	return h
}

func details(s *plan.Stage, analyze bool) []string {
	var out []string
	in := "rows"
	if s.Caps.IngestsColumnar {
		in = "columnar"
	}
	line := ""
	if s.Source == nil {
		line = "ingests: " + in + "; "
	}
	line += "emits: " + string(s.Output)
	if g := s.Gate; g != nil && g.Reason != plan.ReasonSourceColumnar {
		if g.Columnar {
			line += " (" + g.Reason + ")"
		} else {
			line += "; output held back to rows: " + g.Reason
			if g.Cause != "" {
				line += " (" + g.Cause + ")"
			}
		}
	}
	out = append(out, line)
	if len(s.Columns) > 0 {
		out = append(out, "columns read: "+strings.Join(s.Columns, ", "))
	}
	if len(s.Filters) > 0 {
		out = append(out, "row-group skipping on: "+strings.Join(s.Filters, " AND "))
	}
	if analyze {
		st := &s.Exec.Stats
		if s.Source == nil {
			out = append(out, fmt.Sprintf("in: %s rows, %s batches (%s columnar, %s rows; %s taken by the columnar path)",
				Human(st.RowsIn.Load()), Human(st.BatchesIn.Load()), Human(st.BatchesInColumnar.Load()),
				Human(st.BatchesInRows.Load()), Human(st.BatchesColumnarPath.Load())))
		}
		out = append(out, fmt.Sprintf("out: %s rows, %s batches (%s columnar, %s rows)",
			Human(st.RowsOut.Load()), Human(st.BatchesOut.Load()), Human(st.BatchesOutColumnar.Load()), Human(st.BatchesOutRows.Load())))
		out = append(out, fmt.Sprintf("materialised: %s batches, %s rows; time: %s",
			Human(st.BatchesMaterialized.Load()), Human(st.RowsMaterialized.Load()), Duration(st.Elapsed())))
	}
	return out
}

// Human prints a count in human units: 950, 12.3K, 1.2M.
func Human(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	}
}

// Duration prints a duration in human units: 340 ms, 1.2 s, 85 µs.
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}
