package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors/kafka"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// runNexmark is `clinksh nexmark`: the Nexmark benchmark. It runs a
// query's SELECT (from the Nexmark query files, unmodified) over a fixed
// number of generated events, from the nexmark generator or from JSON in
// the embedded Kafka broker, discards the result without materialising it,
// and reports events/s and events/s per core (divided by the parallelism).
func runNexmark(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clinksh nexmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	query := fs.String("query", "q0", "the `query` to run (q0 ... q23), or 'all' for every supported one")
	events := fs.Int64("events", 1_000_000, "the number of `events` (people, auctions and bids together)")
	source := fs.String("source", "generator", "where the events come from: 'generator' or 'kafka' (JSON, produced before timing)")
	par := fs.Int("parallelism", 1, "the query's parallelism (`N` subtasks per operator; kafka: N partitions)")
	repeat := fs.Int("repeat", 1, "run each query `K` times and report the best")
	mode := fs.String("mode", "streaming", "'streaming' (as Flink runs Nexmark: streaming joins, changelogs) or 'batch' (the bounded stream's batch operators)")
	dir := fs.String("queries", "", "the `directory` of the Nexmark query files (default: sql/testdata/nexmark, found from here or the executable)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed runs to `FILE`")
	setUsage(fs, "clinksh nexmark [flags]", "Runs Nexmark queries and reports events/s per core.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *source != "generator" && *source != "kafka" {
		fmt.Fprintf(stderr, "clinksh nexmark: --source %q: want 'generator' or 'kafka'\n", *source)
		return exitUsage
	}
	if *mode != "streaming" && *mode != "batch" {
		fmt.Fprintf(stderr, "clinksh nexmark: --mode %q: want 'streaming' or 'batch'\n", *mode)
		return exitUsage
	}
	if *events < 1 || *par < 1 || *repeat < 1 {
		fmt.Fprintf(stderr, "clinksh nexmark: --events, --parallelism and --repeat must be at least 1\n")
		return exitUsage
	}
	qdir, err := findQueryDir(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "clinksh nexmark: %s\n", err)
		return exitUsage
	}
	queries := []string{*query}
	if *query == "all" {
		queries = benchQueries
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	b := &nexmarkBench{dir: qdir, events: *events, par: *par, source: *source, mode: *mode}
	if err := b.setup(ctx); err != nil {
		fmt.Fprintf(stderr, "clinksh nexmark: %s\n", err)
		return exitError
	}
	defer b.close()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "clinksh nexmark: %s\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "clinksh nexmark: %s\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\tsource\tevents\tparallelism\tseconds\tevents/s\tevents/s/core\tcpu s\tevents/cpu-s\tresult rows\t\n")
	code := exitOK
	var failed []string // printed after the table, which stays aligned
	for _, q := range queries {
		r, err := b.run(ctx, q, *repeat)
		if err != nil {
			if ctx.Err() != nil {
				tw.Flush()
				return exitInterrupted
			}
			failed = append(failed, fmt.Sprintf("%s: %s", q, err))
			code = exitError
			continue
		}
		eps := float64(*events) / r.best.Seconds()
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3f\t%.0f\t%.0f\t%.3f\t%.0f\t%d\t\n", q, *source, *events, *par, r.best.Seconds(),
			eps, eps/float64(*par), r.cpu.Seconds(), float64(*events)/r.cpu.Seconds(), r.rows)
	}
	tw.Flush()
	for _, f := range failed {
		fmt.Fprintf(stderr, "clinksh nexmark: %s\n", f)
	}
	return code
}

// benchQueries are the queries `--query all` runs: those clink supports.
var benchQueries = []string{"q0", "q1", "q2", "q3", "q4", "q5", "q6_valid", "q7", "q8", "q9", "q11", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22", "q23"}

func findQueryDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	cands := []string{filepath.Join("sql", "testdata", "nexmark")}
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, filepath.Join(filepath.Dir(exe), "sql", "testdata", "nexmark"))
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "ddl_gen.sql")); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("the Nexmark query files are not in %s: pass --queries DIR", strings.Join(cands, " or "))
}

type nexmarkBench struct {
	dir, source string
	mode        string // the session's 'execution.runtime-mode'
	events      int64
	par         int
	broker      *kafka.Embedded
	stmts       []string // the table and views the queries read
}

// setup prepares the statements that declare the 'nexmark' table and its
// views; for Kafka it also starts the broker and produces the events as
// JSON (untimed).
func (b *nexmarkBench) setup(ctx context.Context) error {
	gen, err := b.ddl("ddl_gen.sql", "nexmark", "${TPS}", "0")
	if err != nil {
		return err
	}
	if b.source == "generator" {
		b.stmts = gen
		return nil
	}
	b.broker, err = kafka.StartEmbedded(ctx, kafka.EmbeddedOptions{Topics: []string{fmt.Sprintf("nexmark:%d", b.par)}})
	if err != nil {
		return err
	}
	kt, err := b.ddl("ddl_kafka.sql", "nexmark", "${BOOTSTRAP_SERVERS}", b.broker.Addr())
	if err != nil {
		return err
	}
	// Bounded by the topic's end when the query starts.
	kt[0] = strings.Replace(kt[0], "'format' = 'json'", "'format' = 'json', 'scan.bounded.mode' = 'latest-offset'", 1)
	// Produce: the generator table as 'gen', inserted into the Kafka table.
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	genTable := strings.Replace(gen[0], "CREATE TABLE nexmark", "CREATE TABLE gen", 1)
	// One producer, so that each partition holds its events in event-time
	// order: parallel generator splits would interleave them further apart
	// than the watermark's 4 s and the query would drop them as late.
	for _, st := range []string{"SET 'parallelism' = '1'", genTable, kt[0], "INSERT INTO nexmark SELECT event_type, person, auction, bid FROM gen"} {
		if _, err := s.Execute(ctx, st, discard{}, engine.ExecOptions{}); err != nil {
			return fmt.Errorf("producing the events to Kafka: %s: %w", firstLine(st), err)
		}
	}
	b.stmts = kt
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func (b *nexmarkBench) close() {
	if b.broker != nil {
		b.broker.Close()
	}
}

// ddl is a DDL file made concrete (table renamed, placeholders filled)
// followed by ddl_views.sql over it.
func (b *nexmarkBench) ddl(file, table string, repl ...string) ([]string, error) {
	text, err := b.read(file)
	if err != nil {
		return nil, err
	}
	r := strings.NewReplacer(append([]string{"${EVENTS_NUM}", fmt.Sprint(b.events), "${PERSON_PROPORTION}", "1",
		"${AUCTION_PROPORTION}", "3", "${BID_PROPORTION}", "46"}, repl...)...)
	text = regexp.MustCompile(`(?i)CREATE TABLE \w+`).ReplaceAllString(r.Replace(text), "CREATE TABLE "+table)
	views, err := b.read("ddl_views.sql")
	if err != nil {
		return nil, err
	}
	return append(statements(text), statements(strings.ReplaceAll(views, "${NEXMARK_TABLE}", table))...), nil
}

// read returns a query file without its whole-line comments.
func (b *nexmarkBench) read(name string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(b.dir, name))
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String(), nil
}

func statements(s string) []string {
	var out []string
	for _, st := range strings.Split(s, ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

var insertInto = regexp.MustCompile(`(?is)\bINSERT\s+INTO\s+\S+\s+(.*)$`)

// selectOf is the query of qN.sql's INSERT INTO, unmodified.
func (b *nexmarkBench) selectOf(q string) (string, error) {
	text, err := b.read(q + ".sql")
	if err != nil {
		return "", err
	}
	m := insertInto.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("%s.sql has no INSERT INTO", q)
	}
	return strings.TrimSuffix(strings.TrimSpace(m[1]), ";"), nil
}

type benchResult struct {
	best time.Duration
	cpu  time.Duration // process CPU time (user + system) of the best run
	rows int64
}

// cpuTime is the process's CPU time so far. Per core figures divide by the
// parallelism, but a run at parallelism 1 still uses more than one core
// (the Kafka client's fetch goroutines, the GC): the CPU column says how
// much, so events per CPU-second can be read off too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run times the query repeat times, each in a fresh session (a Kafka
// table's bounded end is fixed when its scan starts, and a fresh session
// starts from the earliest offset again).
func (b *nexmarkBench) run(ctx context.Context, q string, repeat int) (benchResult, error) {
	sel, err := b.selectOf(q)
	if err != nil {
		return benchResult{}, err
	}
	var res benchResult
	for i := 0; i < repeat; i++ {
		s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
		stmts := append([]string{fmt.Sprintf("SET 'parallelism' = '%d'", b.par),
			fmt.Sprintf("SET 'execution.runtime-mode' = '%s'", b.mode)}, b.stmts...)
		for _, st := range stmts {
			if _, err := s.Execute(ctx, st, discard{}, engine.ExecOptions{}); err != nil {
				s.Close()
				return res, fmt.Errorf("%s: %w", firstLine(st), err)
			}
		}
		w := &countingWriter{}
		cpu0 := cpuTime()
		start := time.Now()
		_, err := s.Execute(ctx, sel, w, engine.ExecOptions{})
		d := time.Since(start)
		cpu := cpuTime() - cpu0
		s.Close()
		if err != nil {
			return res, err
		}
		if i == 0 || d < res.best {
			res.best, res.cpu = d, cpu
		}
		res.rows = w.rows
		runtime.GC() // the next run starts from a clean heap
	}
	return res, nil
}

// countingWriter discards the result, counting rows without decoding them.
type countingWriter struct{ rows int64 }

func (w *countingWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *countingWriter) Batch(b *exec.Batch) error {
	w.rows += int64(b.Len())
	return nil
}

type discard struct{}

func (discard) Columns(*arrow.Schema, bool) error { return nil }
func (discard) Batch(*exec.Batch) error           { return nil }
