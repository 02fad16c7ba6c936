package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// suiteReport renders an analytic suite's run as markdown: what ran where,
// one table row per query (times, ratio, verdict), a tally, and every
// mismatch and error in full.
func suiteReport(s *suite, c analyticConfig, results []queryOutcome, clinkNote, duckVersion string) string {
	var b strings.Builder
	title := map[string]string{"tpch": "TPC-H", "clickbench": "ClickBench"}[s.name]
	fmt.Fprintf(&b, "## clink vs DuckDB, %s\n\n", title)
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- machine: %s, %d cores, %s/%s, %s\n", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) at the end: %s (other work on the machine skews the times)\n", loadAvg())
	fmt.Fprintf(&b, "- data: %s\n", s.about)
	fmt.Fprintf(&b, "- threads: %d (%s; DuckDB SET threads = %d), DuckDB %s\n", c.threads, clinkNote, c.threads, duckVersion)
	fmt.Fprintf(&b, "- best of %d runs after one untimed run per engine whose answers are compared; both in-process and reading the same Parquet files"+
		" (clink: CREATE TABLE ... 'filesystem'; DuckDB: views over read_parquet); every value of every result row is read on both sides\n", c.repeat)
	fmt.Fprintf(&b, "- queries: the standard text of testdata/%s/queries, unmodified", s.name)
	var variants []string
	for _, q := range s.queries {
		if q.duck != nil {
			variants = append(variants, q.name)
		}
	}
	if len(variants) > 0 {
		fmt.Fprintf(&b, "; DuckDB runs its variant (testdata/%s/queries/duckdb/, where its parser rejects the standard text) of %s", s.name, strings.Join(variants, ", "))
	}
	b.WriteString("\n\n")

	b.WriteString("| query | rows | clink | DuckDB | DuckDB/clink | answer |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | --- |\n")
	var match, mismatch, clinkErr, duckErr int
	var clinkTotal, duckTotal time.Duration
	var both int
	for _, o := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", o.name, o.rows,
			fmtDur(o.clink, o.clinkErr, false), fmtDur(o.duck, o.duckErr, false), ratio(o.clink, o.duck), o.status())
		switch {
		case o.duckErr != nil:
			duckErr++
		case o.clinkErr != nil:
			clinkErr++
		case o.mismatch != nil:
			mismatch++
		default:
			match++
			clinkTotal += o.clink
			duckTotal += o.duck
			both++
		}
	}
	fmt.Fprintf(&b, "\n%d queries: %d same answer, %d MISMATCH, %d clink errors, %d DuckDB errors.", len(results), match, mismatch, clinkErr, duckErr)
	if both > 0 {
		fmt.Fprintf(&b, " Over the %d that both answered alike: clink %.3f s, DuckDB %.3f s in total.", both, clinkTotal.Seconds(), duckTotal.Seconds())
	}
	b.WriteString("\nDuckDB/clink > 1 means clink is faster.\n")

	var notes []string
	for _, o := range results {
		if o.mismatch != nil {
			notes = append(notes, fmt.Sprintf("%s: MISMATCH (checked %s):\n%v", o.name, o.check, o.mismatch))
		}
		if o.clinkErr != nil {
			notes = append(notes, fmt.Sprintf("%s: clink error: %v", o.name, o.clinkErr))
		}
		if o.duckErr != nil {
			notes = append(notes, fmt.Sprintf("%s: DuckDB error: %v", o.name, o.duckErr))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nDetails:\n\n```\n")
		for _, n := range notes {
			b.WriteString(n)
			b.WriteString("\n")
		}
		b.WriteString("```\n")
	}
	return b.String()
}

func ratio(clink, duck time.Duration) string {
	if clink == 0 || duck == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", duck.Seconds()/clink.Seconds())
}
