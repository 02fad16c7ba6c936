package explain

import (
	"fmt"
	"strings"
	"time"

	"github.com/clink-sql/clink/plan"
)

// Text renders doc as a tree, root (the result sink) first, stages numbered
// by ID. verbose adds the detail EXPLAIN (VERBOSE) asks for: operator
// kinds, columnar-path counts, watermarks, operators' own counters, filters
// a source was offered but does not use.
func Text(doc *Document, verbose bool) string {
	byID := make(map[int]*Stage, len(doc.Stages))
	for i := range doc.Stages {
		byID[doc.Stages[i].ID] = &doc.Stages[i]
	}
	var sb strings.Builder
	if sw := doc.Switches; sw.DisableColumnar != "" || sw.DisableColumnarOutput != "" || sw.DisableDictionary != "" || sw.DisableLateMaterialization != "" {
		var on []string
		for _, s := range []string{sw.DisableColumnar, sw.DisableColumnarOutput, sw.DisableDictionary, sw.DisableLateMaterialization} {
			if s != "" {
				on = append(on, strings.TrimPrefix(s, "disabled: "))
			}
		}
		fmt.Fprintf(&sb, "A/B switches: %s\n", strings.Join(on, ", "))
	}
	seen := map[int]bool{}
	var walk func(id int, prefix, childPrefix string)
	walk = func(id int, prefix, childPrefix string) {
		s := byID[id]
		if s == nil {
			return
		}
		sb.WriteString(prefix)
		sb.WriteString(headline(s, verbose))
		sb.WriteByte('\n')
		if seen[id] {
			return // a shared input is printed once
		}
		seen[id] = true
		pad := childPrefix + "   "
		if len(s.Inputs) > 0 {
			pad = childPrefix + "│  "
		}
		for _, l := range details(s, id == doc.Root, verbose) {
			sb.WriteString(pad)
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
		for i, c := range s.Inputs {
			if i == len(s.Inputs)-1 {
				walk(c, childPrefix+"└─ ", childPrefix+"   ")
			} else {
				walk(c, childPrefix+"├─ ", childPrefix+"│  ")
			}
		}
	}
	walk(doc.Root, "", "")
	if t := doc.Totals; t != nil {
		fmt.Fprintf(&sb, "Totals: %s %s in %s (%s); materialised by this query: %s; process-wide clink_batch_materializations_total: %d\n",
			Human(t.Rows), plural(t.Rows, "row", "rows"), Duration(time.Duration(t.ElapsedNanos)), endText(t.End),
			batchesRows(t.BatchesMaterialized, t.RowsMaterialized), t.ProcessBatchesMaterialized)
		if c := t.Checkpoints; c != nil {
			fmt.Fprintf(&sb, "Checkpoints: %d completed", c.Completed)
			if c.Completed > 0 {
				fmt.Fprintf(&sb, "; the last, %d, took %s and holds %d bytes", c.LastID, Duration(time.Duration(c.LastNanos)), c.LastSizeBytes)
			}
			sb.WriteByte('\n')
		}
	}
	if verbose && len(doc.Rules) > 0 {
		sb.WriteString("\nLogical plan, as bound and after each rule that changed it:\n")
		for _, st := range doc.Rules {
			fmt.Fprintf(&sb, "-- %s\n", st.Rule)
			for _, line := range strings.Split(strings.TrimRight(st.Plan, "\n"), "\n") {
				sb.WriteString("   " + line + "\n")
			}
		}
	}
	if verbose && len(doc.Passes) > 0 {
		sb.WriteString("\nPhysical passes, in order:\n")
		for _, ps := range doc.Passes {
			fmt.Fprintf(&sb, "-- %s: %s\n", ps.Pass, ps.Why)
			if len(ps.Decisions) == 0 {
				sb.WriteString("   (nothing to decide)\n")
			}
			for _, d := range ps.Decisions {
				sb.WriteString("   " + d + "\n")
			}
		}
	}
	return sb.String()
}

func endText(end string) string {
	switch end {
	case EndLimit:
		return "stopped at LIMIT"
	case EndCancelled:
		return "cancelled; counts cover what ran"
	case EndDuration:
		return "stopped at DURATION; counts cover what ran"
	}
	return end
}

func headline(s *Stage, verbose bool) string {
	h := fmt.Sprintf("[%d] %s", s.ID, s.Operator)
	if s.Args != "" {
		h += " " + s.Args
	}
	if s.Parallelism > 1 {
		h += fmt.Sprintf("  ×%d", s.Parallelism)
	}
	if verbose && s.Kind != "" {
		h += "  {" + s.Kind + "}"
	}
	return h
}

func details(s *Stage, root, verbose bool) []string {
	var out []string
	var line string
	if !s.Source {
		line = "ingests: " + s.Ingests
		if s.IngestsReason != "" {
			line += " (" + s.IngestsReason + ")"
		}
	}
	if !root {
		// The root hands results to the client; it emits nothing.
		if line != "" {
			line += "; "
		}
		line += "emits: " + s.Emits
	}
	if g := s.Gate; g != nil {
		switch {
		case g.Reason == plan.ReasonSourceColumnar:
			if verbose {
				line += " (" + g.Reason + ")"
			}
		case g.Columnar:
			line += " (" + g.Reason
			if g.Cause != "" {
				line += ": " + g.Cause
			}
			line += ")"
		default:
			line += "; output held back to rows: " + g.Reason
			if g.Cause != "" {
				line += " (" + g.Cause + ")"
			}
		}
	}
	out = append(out, line)
	if sc := s.Scan; sc != nil {
		if len(sc.Columns) > 0 {
			out = append(out, "columns read: "+strings.Join(sc.Columns, ", "))
		}
		if len(sc.Dictionary) > 0 {
			l := "dictionary codes to GROUP BY keys and MIN/MAX: " + strings.Join(sc.Dictionary, ", ")
			if sc.DictionaryBatches != nil {
				d, p := sc.DictionaryBatches[0], sc.DictionaryBatches[1]
				l += fmt.Sprintf(" (%d %s as codes, %d plain)", d, plural(d, "batch", "batches"), p)
			}
			out = append(out, l)
		}
		if sc.RowGroupsTotal != nil && (len(sc.SkipFilters) > 0 || verbose) {
			l := fmt.Sprintf("row groups: %d of %d skipped", *sc.RowGroupsSkipped, *sc.RowGroupsTotal)
			if len(sc.SkipFilters) > 0 {
				l += " using " + strings.Join(sc.SkipFilters, " AND ")
			}
			out = append(out, l)
		}
		if len(sc.Predicate) > 0 {
			out = append(out, "predicate evaluated in the scan: "+strings.Join(sc.Predicate, " AND ")+" (other columns decoded only for rows that pass)")
		}
		out = append(out, scanCountLines(sc)...)
		if sc.SharedRanges {
			l := "row ranges: taken from one queue by the subtasks as they finish"
			if sc.RowRanges != nil {
				l = fmt.Sprintf("row ranges: %d, taken from one queue by the subtasks as they finish", *sc.RowRanges)
				if *sc.RowGroupsCut > 0 {
					l += fmt.Sprintf(" (%d %s cut at page boundaries)", *sc.RowGroupsCut, plural(int64(*sc.RowGroupsCut), "row group", "row groups"))
				}
			}
			out = append(out, l)
		}
		if verbose && len(sc.IgnoredFilters) > 0 {
			out = append(out, "filters offered, not used by this source: "+strings.Join(sc.IgnoredFilters, " AND "))
		}
	}
	if rt := s.Runtime; rt != nil {
		out = append(out, runtimeLines(s, rt, root, verbose)...)
	}
	return out
}

func runtimeLines(s *Stage, rt *Runtime, root, verbose bool) []string {
	var out []string
	flow := ""
	if !s.Source {
		flow = "in: " + flowText(rt.RowsIn, rt.BatchesIn, rt.BatchesInColumnar, rt.BatchesInRows)
		if verbose {
			flow += fmt.Sprintf(" [%s by the columnar path]", Human(rt.BatchesColumnarPath))
		}
	}
	if !root {
		if flow != "" {
			flow += "   "
		}
		flow += "out: " + flowText(rt.RowsOut, rt.BatchesOut, rt.BatchesOutColumnar, rt.BatchesOutRows)
	}
	out = append(out, flow)
	mat := "materialised: " + batchesRows(rt.BatchesMaterialized, rt.RowsMaterialized)
	out = append(out, mat+"   time: "+Duration(time.Duration(rt.ElapsedNanos)))
	if (s.Gate != nil && s.Gate.Columnar && !s.Source) || rt.HeldBackEmits > 0 || rt.Damper != nil {
		l := fmt.Sprintf("born-columnar emits: %s, held back to rows: %s", Human(rt.ColumnarEmits), Human(rt.HeldBackEmits))
		if d := rt.Damper; d != nil {
			if d.BackedOffSubtasks > 0 {
				l += "; damper: backed off"
				if d.Subtasks > 1 {
					l += fmt.Sprintf(" in %d of %d subtasks", d.BackedOffSubtasks, d.Subtasks)
				}
				l += fmt.Sprintf(" (%d emissions under %d rows in a row; re-probes every %d)", d.SmallRun, d.MinRows, d.Probe)
			} else {
				l += "; damper: open"
				if verbose {
					l += fmt.Sprintf(" (%d of %d small emissions; min %d rows)", d.SmallRun, d.Threshold, d.MinRows)
				}
			}
		}
		out = append(out, l)
	}
	if rt.DecodeFallbacks > 0 || rt.SkippedRecords > 0 {
		out = append(out, fmt.Sprintf("decode fallbacks: %s; skipped bad records: %s", Human(rt.DecodeFallbacks), Human(rt.SkippedRecords)))
	}
	if l := spillLine(rt.Counters); l != "" && !verbose {
		out = append(out, l) // VERBOSE lists every counter below
	}
	if verbose {
		var parts []string
		for _, c := range rt.Counters {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Name, Human(c.Value)))
		}
		if rt.WatermarksIn > 0 {
			parts = append(parts, "watermarks in: "+Human(rt.WatermarksIn))
		}
		if !rt.Finished {
			parts = append(parts, "did not finish")
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "; "))
		}
	}
	return out
}

// scanCountLines are the ANALYZE lines of a scan's pruning and late
// materialisation counters, each only when there is something to say.
func scanCountLines(sc *Scan) []string {
	c := sc.Counts
	if c == nil {
		return nil
	}
	var out []string
	if c.RowGroupsByDictionary > 0 || c.RowGroupsByPages > 0 || c.RowsByPages > 0 {
		out = append(out, fmt.Sprintf("skipped when read: %s %s by dictionary, %s by page statistics; %s %s ruled out by page statistics",
			Human(c.RowGroupsByDictionary), plural(c.RowGroupsByDictionary, "row group", "row groups"), Human(c.RowGroupsByPages),
			Human(c.RowsByPages), plural(c.RowsByPages, "row", "rows")))
	}
	if c.PagesRead > 0 || c.PagesJumped > 0 {
		out = append(out, fmt.Sprintf("pages: %s read (%s decoded), %s jumped over", Human(c.PagesRead), Bytes(c.PageBytes), Human(c.PagesJumped)))
	}
	if len(sc.Predicate) > 0 {
		l := fmt.Sprintf("late materialisation: predicate on %s %s, %s passed; other columns decoded for %s %s",
			Human(c.RowsEvaluated), plural(c.RowsEvaluated, "row", "rows"), Human(c.RowsPassed), Human(c.RowsDecoded), plural(c.RowsDecoded, "row", "rows"))
		if c.BatchesUnevaluated > 0 {
			l += fmt.Sprintf("; %s %s read whole without evaluating", Human(c.BatchesUnevaluated), plural(c.BatchesUnevaluated, "batch", "batches"))
		}
		out = append(out, l)
	}
	return out
}

// Bytes prints a byte count in binary units: 512 B, 3.4 MiB.
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
}

// flowText is "1.2M rows, 150 batches (columnar)", naming the mix only when
// both representations occurred.
func flowText(rows, batches, columnar, rowBatches int64) string {
	t := fmt.Sprintf("%s %s, %s %s", Human(rows), plural(rows, "row", "rows"), Human(batches), plural(batches, "batch", "batches"))
	switch {
	case batches == 0:
	case rowBatches == 0:
		t += " (columnar)"
	case columnar == 0:
		t += " (rows)"
	default:
		t += fmt.Sprintf(" (%s columnar, %s rows)", Human(columnar), Human(rowBatches))
	}
	return t
}

func batchesRows(batches, rows int64) string {
	if batches == 0 {
		return "none"
	}
	return fmt.Sprintf("%s %s, %s rows", Human(batches), plural(batches, "batch", "batches"), Human(rows))
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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

// spillLine is what a stage wrote to disk under its memory limit (the
// operators' "spilled ..." counters), or "".
func spillLine(cs []Count) string {
	var parts []string
	for _, c := range cs {
		switch c.Name {
		case "spilled bytes", "spilled rows", "spill partitions", "sorted runs", "early flushes":
			parts = append(parts, fmt.Sprintf("%s: %s", c.Name, Human(c.Value)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ")
}
