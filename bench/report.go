package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// report renders the run as markdown: what ran where, the table, the
// queries and any errors or mismatches in full.
func report(c config, ds dataset, results []outcome, clinkNote, duckVersion string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## clink vs DuckDB, nexmark bids\n\n")
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- machine: %s, %d cores, %s/%s, %s\n", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- load average (1, 5, 15 min) at the end: %s (other work on the machine skews the times)\n", loadAvg())
	fmt.Fprintf(&b, "- data: %d bids in %s (%s), %s (%s); auctions %s (%s)\n", c.bids,
		ds.Bids, fileSize(ds.Bids), ds.BidsJSON, fileSize(ds.BidsJSON), ds.Auctions, fileSize(ds.Auctions))
	fmt.Fprintf(&b, "- threads: %d (%s; DuckDB SET threads = %d), DuckDB %s\n", c.threads, clinkNote, c.threads, duckVersion)
	fmt.Fprintf(&b, "- best of %d runs after one untimed run per engine whose rows are compared; both in-process,"+
		" clink through engine.Session with the rows discarded, DuckDB through duckdb-go with every row fetched\n\n", c.repeat)

	b.WriteString("| query | rows | clink | DuckDB | DuckDB/clink | same answer |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, o := range results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", o.q.Name, o.rows,
			fmtDur(o.clink, o.clinkErr, o.q.Optional), fmtDur(o.duck, o.duckErr, false), o.ratio(), o.check())
	}
	b.WriteString("\nDuckDB/clink > 1 means clink is faster.\n\n")

	b.WriteString("Queries (clink form; DuckDB reads the same files through read_parquet / read_json):\n\n")
	for _, o := range results {
		fmt.Fprintf(&b, "- %s, %s: `%s`\n", o.q.Name, o.q.About, o.q.Clink)
	}
	var notes []string
	for _, o := range results {
		if o.mismatch != nil {
			notes = append(notes, fmt.Sprintf("%s: MISMATCH: %v", o.q.Name, o.mismatch))
		}
		if o.clinkErr != nil {
			what := "clink error"
			if o.q.Optional {
				what = "clink not available"
			}
			notes = append(notes, fmt.Sprintf("%s: %s: %v", o.q.Name, what, firstLine(o.clinkErr)))
		}
		if o.duckErr != nil {
			notes = append(notes, fmt.Sprintf("%s: DuckDB error: %v", o.q.Name, firstLine(o.duckErr)))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(n, "\n", " "))
		}
	}
	return b.String()
}

func (r *duckRunner) version(ctx context.Context) string {
	var v string
	if err := r.db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "(version unknown)"
	}
	return v
}

// cpuModel is the first "model name" of /proc/cpuinfo, where there is one.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func fileSize(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.0f MB", float64(st.Size())/1e6)
}

// loadAvg is the first three fields of /proc/loadavg, where there is one:
// a benchmark run on a busy machine says so.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
