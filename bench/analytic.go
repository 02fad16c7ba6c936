package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clink-sql/clink/datagen/clickbench"
	"github.com/clink-sql/clink/datagen/tpch"
)

// The analytic suites: TPC-H's 22 queries and ClickBench's 43, in their
// standard text (testdata/tpch/queries, testdata/clickbench/queries), over
// data of datagen/tpch and datagen/clickbench, on clink and on DuckDB.

// suite is one prepared suite: its tables' setup on each engine and its
// queries.
type suite struct {
	name       string
	about      string // the data, for the report
	clinkSetup []string
	duckSetup  []string
	queries    []suiteQuery
}

// suiteQuery is one query file: its statements (Q15 has three) and which
// of them returns the answer. duck is DuckDB's variant of the file, where
// DuckDB cannot parse the standard text (queries/duckdb/<name>.sql); nil
// when DuckDB runs the standard text too.
type suiteQuery struct {
	name  string
	stmts []string
	main  int
	duck  *suiteQuery
}

// analyticConfig is what runSuite needs.
type analyticConfig struct {
	suite      string // "tpch" or "clickbench"
	sf         float64
	rows       int64
	threads    int
	repeat     int
	timeout    time.Duration // per run of a query on one engine
	data       string        // the data directory ("" for the cache)
	queries    string        // "all" or a comma-separated list (q01,q06)
	queriesDir string        // testdata ("" to look up from the working directory)
	profileDir string        // a CPU profile of clink's first timed run per query goes here ("" for none)
}

// prepareSuite generates (or reuses) the data and reads the queries.
func prepareSuite(ctx context.Context, c analyticConfig, log io.Writer) (*suite, error) {
	if c.queriesDir == "" {
		dir, err := findTestdata()
		if err != nil {
			return nil, err
		}
		c.queriesDir = dir
	}
	var s *suite
	var err error
	switch c.suite {
	case "tpch":
		s, err = prepareTPCH(ctx, c, log)
	case "clickbench":
		s, err = prepareClickBench(ctx, c, log)
	default:
		return nil, fmt.Errorf("unknown suite %q (tpch, clickbench, nexmark)", c.suite)
	}
	if err != nil {
		return nil, err
	}
	s.queries, err = readQueries(filepath.Join(c.queriesDir, c.suite, "queries"), c.queries)
	return s, err
}

// findTestdata finds the repository's testdata directory from the working
// directory up (the bench runs from bench/).
func findTestdata() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "testdata")
		if st, err := os.Stat(filepath.Join(cand, "tpch", "queries")); err == nil && st.IsDir() {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no testdata/tpch/queries above the working directory; give -querydir")
		}
		dir = parent
	}
}

func cacheDir(name string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "clink-bench", name)
}

// dataDir is -data, or the suite's directory in the user cache, made
// absolute and checked to need no quoting in SQL.
func dataDir(c analyticConfig, cached string) (string, error) {
	dir := c.data
	if dir == "" {
		dir = cacheDir(cached)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(dir, `'\`) {
		return "", fmt.Errorf("data path %q contains a quote or backslash; use -data with a plain path", dir)
	}
	return dir, nil
}

func prepareTPCH(ctx context.Context, c analyticConfig, log io.Writer) (*suite, error) {
	dir, err := dataDir(c, "tpch-sf"+strconv.FormatFloat(c.sf, 'g', -1, 64))
	if err != nil {
		return nil, err
	}
	m, err := tpch.ReadManifest(dir)
	if err == nil && m.SF == c.sf && m.Seed == tpch.DefaultSeed {
		fmt.Fprintf(log, "reusing TPC-H SF %v in %s\n", c.sf, dir)
	} else {
		fmt.Fprintf(log, "generating TPC-H SF %v in %s ...\n", c.sf, dir)
		if m, err = tpch.Generate(ctx, tpch.Options{SF: c.sf, Dir: dir, Seed: tpch.DefaultSeed}); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "generated in %s\n", m.Took)
	}
	s := &suite{name: "tpch", about: fmt.Sprintf("TPC-H SF %v (%d lineitems) in %s", c.sf, m.Rows[tpch.Lineitem], dir)}
	for _, t := range tpch.Tables() {
		path := filepath.Join(dir, t)
		s.clinkSetup = append(s.clinkSetup, fmt.Sprintf("CREATE TABLE %s WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", t, path))
		s.duckSetup = append(s.duckSetup, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT * FROM read_parquet('%s/*.parquet')", t, path))
	}
	return s, nil
}

func prepareClickBench(ctx context.Context, c analyticConfig, log io.Writer) (*suite, error) {
	dir, err := dataDir(c, fmt.Sprintf("clickbench-%d", c.rows))
	if err != nil {
		return nil, err
	}
	m, err := clickbench.ReadManifest(dir)
	if err == nil && m.Rows == c.rows && m.Seed == clickbench.DefaultSeed {
		fmt.Fprintf(log, "reusing ClickBench hits (%d rows) in %s\n", c.rows, dir)
	} else {
		fmt.Fprintf(log, "generating ClickBench hits (%d rows) in %s ...\n", c.rows, dir)
		if m, err = clickbench.Generate(ctx, clickbench.Options{Rows: c.rows, Dir: dir, Seed: clickbench.DefaultSeed}); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "generated in %s\n", m.Took)
	}
	path := filepath.Join(dir, "hits")
	return &suite{
		name:       "clickbench",
		about:      fmt.Sprintf("ClickBench hits, %d rows (DuckDB-typed: TIMESTAMP EventTime, DATE EventDate) in %s", c.rows, dir),
		clinkSetup: []string{fmt.Sprintf("CREATE TABLE hits WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'parquet')", path)},
		duckSetup:  []string{fmt.Sprintf("CREATE OR REPLACE VIEW hits AS SELECT * FROM read_parquet('%s/*.parquet')", path)},
	}, nil
}

// readQueries reads dir's qNN.sql files, in name order, keeping those
// named in list ("all": every one).
func readQueries(dir, list string) ([]suiteQuery, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "q*.sql"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no query files in %s", dir)
	}
	sort.Strings(paths)
	want := map[string]bool{}
	list = strings.TrimSpace(list)
	all := list == "" || list == "all"
	if !all {
		for _, n := range strings.Split(list, ",") {
			want[strings.TrimSpace(n)] = true
		}
	}
	var out []suiteQuery
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".sql")
		if !all && !want[name] {
			continue
		}
		delete(want, name)
		q, err := readQuery(p, name)
		if err != nil {
			return nil, err
		}
		variant := filepath.Join(dir, "duckdb", name+".sql")
		if _, err := os.Stat(variant); err == nil {
			d, err := readQuery(variant, name)
			if err != nil {
				return nil, err
			}
			q.duck = &d
		}
		out = append(out, q)
	}
	if len(want) > 0 {
		var missing []string
		for n := range want {
			missing = append(missing, n)
		}
		sort.Strings(missing)
		return nil, fmt.Errorf("-queries: no such query in %s: %s", dir, strings.Join(missing, ", "))
	}
	return out, nil
}

func readQuery(path, name string) (suiteQuery, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return suiteQuery{}, err
	}
	q := suiteQuery{name: name, stmts: splitStatements(string(text)), main: -1}
	for i, st := range q.stmts {
		if returnsRows(st) {
			q.main = i
		}
	}
	if q.main < 0 {
		return q, fmt.Errorf("%s: no statement returns rows", path)
	}
	return q, nil
}

// queryOutcome is one query's result on both engines.
type queryOutcome struct {
	name        string
	rows        int64 // DuckDB's row count (clink's when DuckDB failed)
	clink, duck time.Duration
	clinkErr    error
	duckErr     error
	mismatch    error
	check       checkKind
}

func (o queryOutcome) failed() bool {
	return o.clinkErr != nil || o.duckErr != nil || o.mismatch != nil
}

// status is the report's verdict: match, MISMATCH or the error, shortened.
func (o queryOutcome) status() string {
	switch {
	case o.duckErr != nil:
		return "DuckDB error: " + shorten(o.duckErr)
	case o.clinkErr != nil:
		return "clink error: " + shorten(o.clinkErr)
	case o.mismatch != nil:
		return "**MISMATCH**: " + shorten(o.mismatch)
	case o.check != checkFull:
		return "match, " + o.check.String()
	}
	return "match"
}

// shorten is an error's first line, at most 140 characters, with the
// markdown table's separator escaped.
func shorten(err error) string {
	s := firstLine(err)
	if len(s) > 140 {
		s = s[:137] + "..."
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// runSuite runs every query of s on both engines.
func runSuite(ctx context.Context, s *suite, c analyticConfig, log io.Writer) ([]queryOutcome, string, string, error) {
	cl, err := newClinkRunner(ctx, c.threads)
	if err != nil {
		return nil, "", "", err
	}
	defer cl.Close()
	dk, err := newDuckRunner(ctx, c.threads)
	if err != nil {
		return nil, "", "", err
	}
	defer dk.Close()
	for _, st := range s.duckSetup {
		if err := dk.exec(ctx, st); err != nil {
			return nil, "", "", fmt.Errorf("DuckDB: %s: %w", st, err)
		}
	}
	// A clink setup error is every query's error, not the run's: the
	// report still shows DuckDB's times and what failed.
	var clinkSetupErr error
	for _, st := range s.clinkSetup {
		if err := cl.exec(ctx, st); err != nil {
			clinkSetupErr = fmt.Errorf("setup %q: %w", st, err)
			break
		}
	}
	var out []queryOutcome
	for _, q := range s.queries {
		o := runSuiteQuery(ctx, q, cl, dk, c, clinkSetupErr)
		if ctx.Err() != nil {
			return out, cl.note, dk.version(ctx), ctx.Err()
		}
		fmt.Fprintf(log, "%s %s: %d rows, clink %s, DuckDB %s, %s\n", s.name, q.name, o.rows,
			fmtDur(o.clink, o.clinkErr, false), fmtDur(o.duck, o.duckErr, false), o.status())
		out = append(out, o)
	}
	return out, cl.note, dk.version(ctx), nil
}

// runSuiteQuery: one checked run per engine (rows compared), then repeat
// timed runs per engine, alternating.
func runSuiteQuery(ctx context.Context, q suiteQuery, cl *clinkRunner, dk *duckRunner, c analyticConfig, clinkSetupErr error) queryOutcome {
	o := queryOutcome{name: q.name}
	names, duckRows, err := dk.script(ctx, q, c.timeout, true)
	o.duckErr = err
	o.rows = int64(len(duckRows))
	var clinkRows [][]string
	if clinkSetupErr != nil {
		o.clinkErr = clinkSetupErr
	} else {
		clinkRows, _, o.clinkErr = cl.script(ctx, q, c.timeout, true)
		if o.duckErr != nil {
			o.rows = int64(len(clinkRows))
		}
	}
	if o.clinkErr == nil && o.duckErr == nil {
		spec := parseOrder(q.stmts[q.main], names)
		o.check, o.mismatch = compareAnswers(clinkRows, duckRows, spec)
	}
	for i := 0; i < c.repeat && ctx.Err() == nil; i++ {
		if o.clinkErr == nil {
			runtime.GC()
			stopProfile := startProfile(c.profileDir, q.name, i)
			start := time.Now()
			_, n, err := cl.script(ctx, q, c.timeout, false)
			stopProfile()
			if err != nil {
				o.clinkErr = err
			} else if n != int64(len(clinkRows)) && o.mismatch == nil {
				o.mismatch = fmt.Errorf("clink returned %d rows in a timed run, %d in the checked run", n, len(clinkRows))
			} else if d := time.Since(start); o.clink == 0 || d < o.clink {
				o.clink = d
			}
		}
		if o.duckErr == nil {
			runtime.GC()
			start := time.Now()
			if _, _, err := dk.script(ctx, q, c.timeout, false); err != nil {
				o.duckErr = err
			} else if d := time.Since(start); o.duck == 0 || d < o.duck {
				o.duck = d
			}
		}
	}
	return o
}

// runAnalytic is `-suite tpch|clickbench`: prepare, run, report.
func runAnalytic(ctx context.Context, c analyticConfig, out string, stdout, log io.Writer) (failed bool, err error) {
	if c.threads <= 0 || c.repeat <= 0 {
		return false, errors.New("-threads and -repeat must be positive")
	}
	if c.suite == "tpch" && !(c.sf > 0) {
		return false, errors.New("-sf must be positive")
	}
	if c.suite == "clickbench" && c.rows <= 0 {
		return false, errors.New("-rows must be positive")
	}
	s, err := prepareSuite(ctx, c, log)
	if err != nil {
		return false, err
	}
	results, clinkNote, duckVersion, err := runSuite(ctx, s, c, log)
	if err != nil {
		return false, err
	}
	rep := suiteReport(s, c, results, clinkNote, duckVersion)
	fmt.Fprint(stdout, rep)
	if out != "" {
		if err := os.WriteFile(out, []byte(rep), 0o644); err != nil {
			return true, err
		}
	}
	for _, o := range results {
		failed = failed || o.failed()
	}
	return failed, nil
}

// startProfile starts a CPU profile of clink's first timed run of query
// name into dir/<name>.prof (only clink runs in this process's Go code
// while it is on; DuckDB's time shows up as cgo). It returns the stop.
func startProfile(dir, name string, run int) func() {
	if dir == "" || run != 0 {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".prof"))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: cpu profile:", err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
