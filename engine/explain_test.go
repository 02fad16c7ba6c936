package engine

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/explain"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

var update = flag.Bool("update", false, "rewrite the golden EXPLAIN files in testdata/explain")

const goldenDir = "../testdata/explain"

// Golden EXPLAIN tests. Each testdata/explain/NAME.sql holds statements
// separated by ";" at the end of a line; the last one is the EXPLAIN whose
// output is compared with NAME.out (timings and the process-wide counter,
// which depends on what ran before, are redacted). Directives in leading
// comments:
//
//	-- env: KEY=VALUE      set an environment variable for the case
//	-- sink: row-only      plan the query with rowOnlySink as its consumer
//
// `go test ./engine -run TestExplainGolden -update` rewrites the .out files.
func TestExplainGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases in %s (%v)", goldenDir, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out, doc := runGolden(t, string(src))
			checkDocument(t, doc)
			got := redact(out)
			want := filepath.Join(goldenDir, name+".out")
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(exp) {
				t.Errorf("EXPLAIN output differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", want, got, exp)
			}
		})
	}
}

// runGolden runs one case's statements and returns the last one's text.
func runGolden(t *testing.T, src string) (string, *explain.Document) {
	t.Helper()
	rowOnly := false
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "--") {
			continue
		}
		d := strings.TrimSpace(strings.TrimPrefix(l, "--"))
		switch {
		case strings.HasPrefix(d, "env:"):
			k, v, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(d, "env:")), "=")
			t.Setenv(k, v)
		case d == "sink: row-only":
			rowOnly = true
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	// Parallelism defaults to the number of cores; the cases fix it so the
	// counts do not depend on the machine (a case may SET it again).
	stmts := append([]string{"SET 'parallelism' = '1'"}, splitGolden(src)...)
	ctx := context.Background()
	for _, st := range stmts[:len(stmts)-1] {
		if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	last := stmts[len(stmts)-1]
	if !rowOnly {
		o, err := s.Execute(ctx, last, nil, ExecOptions{})
		if err != nil {
			t.Fatalf("%s: %v", last, err)
		}
		return o.Text, o.Explain
	}
	st, err := sql.Parse(last)
	if err != nil {
		t.Fatal(err)
	}
	x, ok := st.(*ast.Explain)
	if !ok {
		t.Fatalf("sink: row-only needs an EXPLAIN, got %T", st)
	}
	o, err := s.explainWith(ctx, x, last, ExecOptions{}, rowOnlySinkPlan)
	if err != nil {
		t.Fatalf("%s: %v", last, err)
	}
	return o.Text, o.Explain
}

func splitGolden(src string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--") {
			continue
		}
		cur.WriteString(l)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(l), ";") {
			if st := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"); st != "" {
				out = append(out, st)
			}
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}

var (
	durationRE = regexp.MustCompile(`\d+(\.\d+)? (µs|ms|s)\b`)
	processRE  = regexp.MustCompile(`(clink_batch_materializations_total: )\d+`)
	jsonTimeRE = regexp.MustCompile(`("(elapsed_ns|process_batches_materialized|process_rows_materialized)": )\d+`)
)

// redact replaces what changes from run to run: timings, and the
// process-wide counter (it counts whatever else this process ran).
func redact(s string) string {
	s = durationRE.ReplaceAllString(s, "<time>")
	s = processRE.ReplaceAllString(s, "${1}<n>")
	return jsonTimeRE.ReplaceAllString(s, "${1}0")
}

// checkDocument asserts what every document must satisfy: the tree is
// connected from the root, and after ANALYZE the totals add up.
func checkDocument(t *testing.T, doc *explain.Document) {
	t.Helper()
	if doc == nil {
		t.Fatal("Outcome.Explain is nil")
	}
	ids := map[int]bool{}
	for _, s := range doc.Stages {
		ids[s.ID] = true
	}
	if !ids[doc.Root] {
		t.Fatalf("root %d is not a stage", doc.Root)
	}
	for _, s := range doc.Stages {
		for _, in := range s.Inputs {
			if !ids[in] {
				t.Errorf("stage %d: input %d is not a stage", s.ID, in)
			}
		}
		if strings.Contains(s.Operator+s.Args, "*ops.") || strings.Contains(s.Operator+s.Args, "exec.") {
			t.Errorf("stage %d shows a Go type name: %s %s", s.ID, s.Operator, s.Args)
		}
	}
	if doc.Totals != nil {
		var mat int64
		for _, s := range doc.Stages {
			mat += s.Runtime.BatchesMaterialized
		}
		if mat != doc.Totals.BatchesMaterialized {
			t.Errorf("totals say %d materialisations, stages add up to %d", doc.Totals.BatchesMaterialized, mat)
		}
	}
}

// rowOnlySinkPlan makes the EXPLAIN's consumer rowOnlySink.
func rowOnlySinkPlan(fn func(context.Context, *exec.Batch) error) (exec.Operator, string) {
	return &rowOnlySink{fn: fn}, "RowOnlySink"
}

// rowOnlySink is a TEST-ONLY consumer with no columnar hook: clink has no
// row-only SQL operator or sink yet, so the golden cases that need one
// (materialisation counted at exactly one stage, a gate holding output back
// to rows) plan their query with this sink instead of the result sink. The
// plan, the run and the rendering are the real ones.
type rowOnlySink struct {
	exec.Base
	fn func(context.Context, *exec.Batch) error
}

func (r *rowOnlySink) Kind() string                    { return "row_only_sink" }
func (r *rowOnlySink) Capabilities() exec.Capabilities { return exec.Capabilities{} }
func (r *rowOnlySink) Process(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	_ = b.Rows() // a row consumer reads rows
	return r.fn(ctx, b)
}
func (r *rowOnlySink) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// The JSON document is the same information as the text: FORMAT JSON
// unmarshals into the Outcome's document, and rendering it gives the text
// EXPLAIN prints.
func TestExplainJSONIsTheDocument(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	o, err := s.Execute(ctx, "EXPLAIN ANALYZE (FORMAT JSON) SELECT cat, COUNT(*) FROM '../testdata/parquet/duckdb_types.parquet' WHERE id > 10 GROUP BY cat", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc explain.Document
	if err := json.Unmarshal([]byte(o.Text), &doc); err != nil {
		t.Fatalf("FORMAT JSON is not JSON: %v\n%s", err, o.Text)
	}
	if doc.Version != explain.SchemaVersion || !doc.Analyze || doc.Totals == nil {
		t.Fatalf("document header: %+v", doc)
	}
	if doc.Totals.Rows != 6 || doc.Totals.End != explain.EndFinished {
		t.Errorf("totals %+v, want 6 rows, finished", *doc.Totals)
	}
	a, b := explain.Text(&doc, true), explain.Text(o.Explain, true)
	if a != b {
		t.Errorf("text from the JSON document differs from the outcome's:\n%s\n%s", a, b)
	}
}

// The A/B switches change counters and reasons, never results.
func TestExplainSwitchesKeepResults(t *testing.T) {
	queries := []string{
		"SELECT cat, COUNT(*), SUM(i64) FROM '../testdata/parquet/duckdb_types.parquet' WHERE id > 100 GROUP BY cat ORDER BY cat",
		"SELECT a.id, b.s FROM '../testdata/parquet/duckdb_types.parquet' a JOIN '../testdata/parquet/duckdb_types.parquet' b ON a.id = b.id WHERE a.id < 50 ORDER BY a.id",
	}
	for _, q := range queries {
		var base string
		for _, sets := range [][]string{nil, {"SET 'columnar' = 'off'"}, {"SET 'columnar.output' = 'off'"}} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			for _, st := range sets {
				if _, err := s.Execute(context.Background(), st, nil, ExecOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w := &textWriter{}
			if _, err := s.Execute(context.Background(), q, w, ExecOptions{}); err != nil {
				t.Fatalf("%v %s: %v", sets, q, err)
			}
			mem.AssertSize(t, 0)
			if base == "" {
				base = w.sb.String()
				if base == "" {
					t.Fatalf("%s: no rows", q)
				}
			} else if got := w.sb.String(); got != base {
				t.Errorf("%v changed the result of %s:\n%s\nwant\n%s", sets, q, got, base)
			}
		}
	}
}

// A cancelled EXPLAIN ANALYZE still reports what ran; a DURATION bound
// stops an unbounded run and says so.
func TestExplainAnalyzeCancelAndDuration(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
	ctx := context.Background()
	if _, err := s.Execute(ctx, "CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid', 'first-event.rate' = '20000', 'next-event.rate' = '20000')", nil, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Execute(ctx, "EXPLAIN ANALYZE (DURATION '300ms') SELECT auction, price FROM bids WHERE price > 10", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Explain.Totals.End != explain.EndDuration || !strings.Contains(o.Text, "stopped at DURATION") {
		t.Fatalf("want a run stopped by its DURATION, got %q:\n%s", o.Explain.Totals.End, o.Text)
	}
	if o.Explain.Totals.Rows == 0 {
		t.Errorf("a 300ms run at 20000 events/s delivered no rows:\n%s", o.Text)
	}

	before := exec.OperatorTotals()["nexmark-source"].RowsOut
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var co Outcome
	var cerr error
	go func() {
		defer close(done)
		co, cerr = s.Execute(cctx, "EXPLAIN ANALYZE SELECT auction, price FROM bids", nil, ExecOptions{})
	}()
	// Cancel once rows have flowed: poll the process-wide per-kind totals
	// (which include running graphs).
	for {
		if exec.OperatorTotals()["nexmark-source"].RowsOut > before {
			break
		}
		select {
		case <-done:
			t.Fatalf("unbounded EXPLAIN ANALYZE ended by itself: %v", cerr)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if cerr != nil {
		t.Fatalf("a cancelled EXPLAIN ANALYZE must still report, got %v", cerr)
	}
	if co.Explain.Totals.End != explain.EndCancelled || !strings.Contains(co.Text, "cancelled") {
		t.Fatalf("want a cancelled run, got %q:\n%s", co.Explain.Totals.End, co.Text)
	}
}

func TestExplainOptionErrors(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	for q, want := range map[string]string{
		"EXPLAIN (FORMAT XML) SELECT 1":           "unknown format",
		"EXPLAIN (DURATION '5s') SELECT 1":        "needs ANALYZE",
		"EXPLAIN ANALYZE (DURATION 'x') SELECT 1": "not a duration",
		"EXPLAIN (COLOR) SELECT 1":                "unknown EXPLAIN option",
	} {
		_, err := s.Execute(context.Background(), q, nil, ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error containing %q, got %v", q, want, err)
		}
	}
}

// textWriter renders every result row as text, one line per row.
type textWriter struct{ sb strings.Builder }

func (w *textWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *textWriter) Batch(b *exec.Batch) error {
	for _, r := range b.Rows() {
		w.sb.WriteString(fmt.Sprintln(r...))
	}
	return nil
}
