// Command bench runs side-by-side benchmarks of clink and DuckDB: by
// default the nexmark-shaped one (it generates bids, Parquet and NDJSON,
// and auctions once, then runs each query on both engines in this process,
// on the same files, checks that they agree, and prints a markdown table);
// with -suite tpch or -suite clickbench the 22 TPC-H or the 43 ClickBench
// queries in their standard text over generated Parquet data. See
// README.md.
//
// It is a module of its own because DuckDB comes in through cgo
// (duckdb-go): the engine's module must not depend on it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/clink-sql/clink/engine"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type config struct {
	bids    int
	threads int
	data    string
	queries string
	repeat  int
	out     string
	// The analytic suites (-suite tpch|clickbench).
	suite      string
	sf         float64
	rows       int64
	timeout    time.Duration
	queriesDir string
	profileDir string
}

func main() {
	// clink runs in this process: give it the collector setting its
	// executables use (DuckDB manages its own memory).
	engine.TuneRuntime()
	var c config
	flag.IntVar(&c.bids, "events", 2_000_000, "bid rows to generate (the auctions are those of the same nexmark event range)")
	flag.IntVar(&c.threads, "threads", 1, "threads for both engines: clink SET 'parallelism', DuckDB SET threads")
	flag.StringVar(&c.data, "data", "", "directory for the generated files, reused when present (default: <user cache dir>/clink-bench/bids-<events>, tpch-sf<F> or clickbench-<N>)")
	flag.StringVar(&c.queries, "queries", "all", "comma-separated queries to run: "+strings.Join(queryNames(), ", ")+" (nexmark), or q01,q06,... (tpch, clickbench)")
	flag.IntVar(&c.repeat, "repeat", 3, "timed runs per query and engine; the best is reported")
	flag.StringVar(&c.out, "out", "", "also write the markdown report to this file")
	flag.StringVar(&c.suite, "suite", "nexmark", "the benchmark: nexmark (bids), tpch (the 22 TPC-H queries) or clickbench (the 43 ClickBench queries)")
	flag.Float64Var(&c.sf, "sf", 1, "tpch: the scale factor")
	flag.Int64Var(&c.rows, "rows", 10_000_000, "clickbench: the rows of the hits table")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "tpch, clickbench: the longest one run of a query may take on one engine")
	flag.StringVar(&c.queriesDir, "querydir", "", "tpch, clickbench: the testdata directory holding tpch/queries and clickbench/queries (default: found above the working directory)")
	flag.StringVar(&c.profileDir, "cpuprofile", "", "tpch, clickbench: write a CPU profile of clink's first timed run of each query to `DIR`/<query>.prof")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var failed bool
	var err error
	if c.suite == "nexmark" {
		failed, err = run(ctx, c, os.Stdout, os.Stderr)
	} else {
		failed, err = runAnalytic(ctx, c.analytic(), c.out, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// analytic is the part of c the TPC-H and ClickBench suites use. -data
// names their data directory (default: the user cache directory), and
// -queries selects query files by name (q01,q06).
func (c config) analytic() analyticConfig {
	return analyticConfig{suite: c.suite, sf: c.sf, rows: c.rows, threads: c.threads, repeat: c.repeat,
		timeout: c.timeout, data: c.data, queries: c.queries, queriesDir: c.queriesDir, profileDir: c.profileDir}
}

// outcome is one query's measurements.
type outcome struct {
	q           benchQuery
	rows        int64
	clink, duck time.Duration // best of the timed runs; 0 when not run
	clinkErr    error
	duckErr     error
	mismatch    error
}

// run generates or reuses the data, runs the queries and writes the
// report. failed is true when a check failed or a required query errored.
func run(ctx context.Context, c config, stdout, log io.Writer) (failed bool, err error) {
	if c.bids <= 0 || c.threads <= 0 || c.repeat <= 0 {
		return false, errors.New("-events, -threads and -repeat must be positive")
	}
	qs, err := selectQueries(c.queries)
	if err != nil {
		return false, err
	}
	if c.data == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		c.data = filepath.Join(base, "clink-bench", fmt.Sprintf("bids-%d", c.bids))
	}
	if c.data, err = filepath.Abs(c.data); err != nil {
		return false, err
	}
	ds, err := prepareData(ctx, c.data, c.bids, log)
	if err != nil {
		return false, err
	}

	cl, err := newClinkRunner(ctx, c.threads)
	if err != nil {
		return false, err
	}
	defer cl.Close()
	dk, err := newDuckRunner(ctx, c.threads)
	if err != nil {
		return false, err
	}
	defer dk.Close()

	var results []outcome
	for _, q := range qs {
		o, err := runQuery(ctx, q, ds, cl, dk, c.repeat, log)
		if err != nil {
			return false, err
		}
		if o.mismatch != nil {
			fmt.Fprintf(log, "\n!!!!!!!! MISMATCH in query %s !!!!!!!!\n%v\n\n", q.Name, o.mismatch)
			failed = true
		}
		if o.duckErr != nil || (o.clinkErr != nil && !q.Optional) {
			failed = true
		}
		results = append(results, o)
	}
	rep := report(c, ds, results, cl.note, dk.version(ctx))
	fmt.Fprint(stdout, rep)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(rep), 0o644); err != nil {
			return failed, err
		}
	}
	return failed, nil
}

// runQuery runs q on both engines: one untimed run each whose rows are
// compared (it also warms the page cache), then repeat timed runs each.
func runQuery(ctx context.Context, q benchQuery, ds dataset, cl *clinkRunner, dk *duckRunner, repeat int, log io.Writer) (outcome, error) {
	o := outcome{q: q}
	clinkSQL, err := bind(q.Clink, ds)
	if err != nil {
		return o, err
	}
	duckSQL, err := bind(q.Duck, ds)
	if err != nil {
		return o, err
	}
	fmt.Fprintf(log, "%s: ", q.Name)

	clinkRows, err := cl.result(ctx, clinkSQL)
	if err != nil {
		o.clinkErr = err
		fmt.Fprintf(log, "clink error: %v; ", firstLine(err))
	}
	duckRows, err := dk.result(ctx, duckSQL)
	if err != nil {
		o.duckErr = err
		fmt.Fprintf(log, "DuckDB error: %v; ", firstLine(err))
	}
	if ctx.Err() != nil {
		return o, ctx.Err()
	}
	if o.clinkErr == nil && o.duckErr == nil {
		o.mismatch = compareResults(clinkRows, duckRows)
	}
	o.rows = int64(len(duckRows))
	if o.duckErr != nil {
		o.rows = int64(len(clinkRows))
	}

	// The engines' timed runs alternate, so that a change in the machine's
	// load during the run hits both rather than one.
	for i := 0; i < repeat && (o.clinkErr == nil || o.duckErr == nil); i++ {
		if o.clinkErr == nil {
			runtime.GC() // garbage of the previous run is not this run's cost
			d, n, err := cl.time(ctx, clinkSQL)
			switch {
			case err != nil:
				o.clinkErr = err
			case n != int64(len(clinkRows)) && o.mismatch == nil:
				o.mismatch = fmt.Errorf("clink returned %d rows in a timed run, %d in the checked run", n, len(clinkRows))
			}
			if err == nil && (o.clink == 0 || d < o.clink) {
				o.clink = d
			}
		}
		if o.duckErr == nil {
			runtime.GC()
			d, _, err := dk.time(ctx, duckSQL)
			if err != nil {
				o.duckErr = err
			} else if o.duck == 0 || d < o.duck {
				o.duck = d
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return o, ctx.Err()
	}
	fmt.Fprintf(log, "%d rows, clink %s, DuckDB %s, %s\n", o.rows, fmtDur(o.clink, o.clinkErr, q.Optional), fmtDur(o.duck, o.duckErr, false), o.check())
	return o, nil
}

func (o outcome) check() string {
	switch {
	case o.mismatch != nil:
		return "**MISMATCH**"
	case o.clinkErr != nil || o.duckErr != nil:
		return "-"
	}
	return "same"
}

func (o outcome) ratio() string {
	if o.clink == 0 || o.duck == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", o.duck.Seconds()/o.clink.Seconds())
}

func fmtDur(d time.Duration, err error, optional bool) string {
	switch {
	case err != nil && optional:
		return "not available"
	case err != nil:
		return "error"
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
