package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// spillFixture writes n rows (k VARCHAR, nearly all distinct; g BIGINT;
// v BIGINT with NULLs) and returns its path.
func spillFixture(t *testing.T, n int) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "g", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	rows := make([]exec.Row, n)
	for i := range rows {
		var v any = int64(i * 7 % 1001)
		if i%13 == 0 {
			v = nil
		}
		rows[i] = exec.Row{fmt.Sprintf("key-%07d", (i*7919)%(n-n/10)), int64(i % 97), v}
	}
	path := filepath.Join(t.TempDir(), "spill.parquet")
	writeParquet(t, path, schema, rows, 16384)
	return path
}

// TestMemoryLimitSpillsAndAgrees: under SET 'execution.memory-limit' far
// below what the hash tables take, GROUP BY, ORDER BY and the join build
// spill (EXPLAIN
// ANALYZE says how much), give the unlimited answer at parallelism 1 and
// 2, columnar and row, and leave nothing in the spill directory.
func TestMemoryLimitSpillsAndAgrees(t *testing.T) {
	path := spillFixture(t, 120000)
	spillDir := t.TempDir()
	queries := []string{
		"SELECT k, COUNT(*), SUM(v), MIN(g), MAX(v), AVG(v) FROM '%s' GROUP BY k",
		"SELECT k, g, COUNT(v) FROM '%s' GROUP BY k, g",
		"SELECT g, k, v FROM '%s' ORDER BY g DESC, k, v NULLS FIRST",
		"SELECT a.k, a.g, b.v, b.g FROM '%[1]s' a LEFT JOIN '%[1]s' b ON a.k = b.k AND a.v = b.g",
	}
	ctx := context.Background()
	for _, qf := range queries {
		q := fmt.Sprintf(qf, path)
		var want string
		for _, run := range []struct {
			limit    string
			par      int
			columnar bool
		}{{"unlimited", 1, true}, {"1mb", 1, true}, {"1mb", 2, true}, {"1mb", 1, false}, {"2mb", 2, false}} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			sets := []string{fmt.Sprintf("SET 'parallelism' = '%d'", run.par),
				fmt.Sprintf("SET 'execution.memory-limit' = '%s'", run.limit),
				fmt.Sprintf("SET 'execution.spill-dir' = '%s'", spillDir)}
			if !run.columnar {
				sets = append(sets, "SET 'columnar' = 'off'")
			}
			for _, st := range sets {
				if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w := &textWriter{}
			if _, err := s.Execute(ctx, q, w, ExecOptions{}); err != nil {
				t.Fatalf("%s (%+v): %v", q, run, err)
			}
			got := w.sb.String()
			if !strings.Contains(q, "ORDER BY") {
				got = sortLines(got)
			}
			if want == "" {
				want = got
				if strings.Count(want, "\n") < 100000 {
					t.Fatalf("fixture too small: %d groups", strings.Count(want, "\n"))
				}
			} else if got != want {
				t.Errorf("%s (%+v):\n%s\nwant\n%s", q, run, head(got), head(want))
			}
			o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			spilled := strings.Contains(o.Text, "spilled bytes")
			if spilled != (run.limit != "unlimited") {
				t.Errorf("%s (%+v): spilled = %v in EXPLAIN ANALYZE:\n%s", q, run, spilled, o.Text)
			}
			s.Close()
			mem.AssertSize(t, 0)
		}
	}
	if ents, _ := os.ReadDir(spillDir); len(ents) != 0 {
		t.Errorf("spill dir not empty: %v", ents)
	}
}

// TestMemoryLimitErrorKeepsSession: a query that cannot spill its way
// under the limit fails naming the operator and the limit, and the next
// query in the same session runs.
func TestMemoryLimitErrorKeepsSession(t *testing.T) {
	path := spillFixture(t, 120000)
	ctx := context.Background()
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	for _, st := range []string{"SET 'execution.memory-limit' = '1mb'", "SET 'parallelism' = '1'"} {
		if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Two DISTINCTs without GROUP BY: one group, which no spill can split.
	_, err := s.Execute(ctx, fmt.Sprintf("SELECT COUNT(DISTINCT k), SUM(DISTINCT v) FROM '%s'", path), nil, ExecOptions{})
	var lim *exec.MemoryLimitError
	if !errors.As(err, &lim) || !strings.Contains(err.Error(), "aggregate needs more than the memory limit of 1.0 MB (execution.memory-limit)") {
		t.Fatalf("err = %v, want the GROUP BY memory limit error", err)
	}
	w := &textWriter{}
	if _, err := s.Execute(ctx, fmt.Sprintf("SELECT COUNT(*) FROM '%s'", path), w, ExecOptions{}); err != nil {
		t.Fatalf("the next query: %v", err)
	}
	if strings.TrimSpace(w.sb.String()) != "120000" {
		t.Errorf("the next query gave %q", w.sb.String())
	}
	for _, bad := range []string{"lots", "12 parsecs", "100b"} {
		if _, err := s.Execute(ctx, fmt.Sprintf("SET 'execution.memory-limit' = '%s'", bad), nil, ExecOptions{}); err == nil {
			t.Errorf("SET 'execution.memory-limit' = '%s' accepted", bad)
		}
	}
}

// cancelOnFirst cancels its query when the first result batch arrives,
// noting whether the spill directory held anything then.
type cancelOnFirst struct {
	cancel  context.CancelFunc
	dir     string
	spilled bool
	batches int
}

func (w *cancelOnFirst) Columns(*arrow.Schema, bool) error { return nil }
func (w *cancelOnFirst) Batch(*exec.Batch) error {
	if w.batches++; w.batches == 1 {
		ents, _ := os.ReadDir(w.dir)
		w.spilled = len(ents) > 0
		w.cancel()
	}
	return nil
}

// TestMemoryLimitSpillCancel: a spilling GROUP BY or ORDER BY cancelled
// while it reads its partitions or merges its runs returns (bounded: 60 s,
// a hang rather than a timing) with the cancellation, and its spill files
// are gone.
func TestMemoryLimitSpillCancel(t *testing.T) {
	path := spillFixture(t, 120000)
	spillDir := t.TempDir()
	for _, q := range []string{
		"SELECT k, COUNT(*), SUM(v) FROM '%s' GROUP BY k",
		"SELECT k, v FROM '%s' ORDER BY k DESC",
	} {
		q = fmt.Sprintf(q, path)
		s := NewSession(SessionOptions{NoDemoCatalog: true})
		for _, st := range []string{"SET 'execution.memory-limit' = '1mb'", "SET 'parallelism' = '1'",
			fmt.Sprintf("SET 'execution.spill-dir' = '%s'", spillDir)} {
			if _, err := s.Execute(context.Background(), st, nil, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelOnFirst{cancel: cancel, dir: spillDir}
		done := make(chan error, 1)
		go func() {
			_, err := s.Execute(ctx, q, w, ExecOptions{})
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: err = %v, want the cancellation", q, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still running 60 s after the cancel", q)
		}
		cancel()
		s.Close()
		if !w.spilled {
			t.Errorf("%s: nothing on disk when the result began", q)
		}
		if ents, _ := os.ReadDir(spillDir); len(ents) != 0 {
			t.Errorf("%s: spill dir not empty after the cancel: %v", q, ents)
		}
	}
}
