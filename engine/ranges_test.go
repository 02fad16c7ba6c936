package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	cparquet "github.com/clink-sql/clink/connectors/parquet"
	"github.com/clink-sql/clink/exec"
)

var rowRangesRE = regexp.MustCompile(`row ranges: (\d+), taken from one queue by the subtasks as they finish \((\d+) row groups? cut at page boundaries\)`)

// TestParquetRowRanges: a file of ONE row group (small pages, a dictionary
// that falls back to plain pages late in the chunk, NULLs) is cut into row
// ranges that the subtasks of a parallel scan take from one queue, so even
// a single row group uses every subtask. Every query gives the row path's
// answer at parallelism 1 to 4, EXPLAIN ANALYZE counts the ranges and the
// cut, and the columnar runs materialise nothing.
func TestParquetRowRanges(t *testing.T) {
	old := cparquet.MorselRows
	cparquet.MorselRows = 1000
	defer func() { cparquet.MorselRows = old }()

	path := filepath.Join(t.TempDir(), "one-group.parquet")
	const n = 30000
	writeOneGroupFile(t, path, n)
	queries := []string{
		"SELECT ch, COUNT(*), SUM(price), MIN(name), MAX(name) FROM '%s' GROUP BY ch",
		"SELECT COUNT(*), SUM(price), MAX(ch), MIN(ch), COUNT(DISTINCT name) FROM '%s' WHERE price > 10",
		"SELECT name, COUNT(ch), SUM(price) FROM '%s' WHERE ch LIKE 'late%%' OR price < 3 GROUP BY name",
	}
	ctx := context.Background()
	for _, qf := range queries {
		q := fmt.Sprintf(qf, path)
		var want string
		for _, run := range []struct {
			par      int
			columnar bool
		}{{1, false}, {1, true}, {2, true}, {3, true}, {4, true}, {2, false}} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			sets := []string{fmt.Sprintf("SET 'parallelism' = '%d'", run.par)}
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
				t.Fatalf("%s (parallelism %d, columnar %v): %v", q, run.par, run.columnar, err)
			}
			got := sortLines(w.sb.String())
			if want == "" {
				want = got
			} else if got != want {
				t.Errorf("%s (parallelism %d, columnar %v):\n%s\nwant\n%s", q, run.par, run.columnar, head(got), head(want))
			}
			if run.par > 1 {
				o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
				if err != nil {
					t.Fatal(err)
				}
				m := rowRangesRE.FindStringSubmatch(o.Text)
				if m == nil {
					t.Fatalf("%s (parallelism %d): no row ranges in EXPLAIN ANALYZE:\n%s", q, run.par, o.Text)
				}
				ranges, _ := strconv.Atoi(m[1])
				if ranges < run.par || m[2] != "1" {
					t.Errorf("%s (parallelism %d): %q: want at least one range per subtask from the one row group", q, run.par, m[0])
				}
				if run.columnar && o.Explain.Totals.BatchesMaterialized != 0 {
					t.Errorf("%s: %d batches materialised:\n%s", q, o.Explain.Totals.BatchesMaterialized, o.Text)
				}
			}
			mem.AssertSize(t, 0)
		}
	}
}

// writeOneGroupFile writes writeDictFile's rows as a single row group.
func writeOneGroupFile(t *testing.T, path string, n int) {
	schema, rows := dictRows(n)
	writeParquet(t, path, schema, rows, int64(n),
		parquet.WithDictionaryPageSizeLimit(32<<10), parquet.WithDataPageSize(4<<10))
}

// TestParquetRowRangesBoolean: a BOOLEAN column in one big page (the
// writer's default), so every cut lands inside it, at rows that are not
// multiples of 8: its values must not shift (a review found them shifted
// at parallelism 3 and 4 when parquet-go sliced the page).
func TestParquetRowRangesBoolean(t *testing.T) {
	old := cparquet.MorselRows
	cparquet.MorselRows = 1000
	defer func() { cparquet.MorselRows = old }()
	path := filepath.Join(t.TempDir(), "bools.parquet")
	const n = 30_003
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "cat", Type: arrow.BinaryTypes.String},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "nflag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	rows := make([]exec.Row, n)
	for i := range rows {
		var nf any = i%5 < 2
		if i%7 == 3 {
			nf = nil
		}
		rows[i] = exec.Row{fmt.Sprint("c", i%5), i%3 == 0, nf}
	}
	writeParquet(t, path, schema, rows, n)
	q := fmt.Sprintf("SELECT cat, COUNT(*), SUM(CASE WHEN flag THEN 1 ELSE 0 END), SUM(CASE WHEN nflag THEN 1 ELSE 0 END), COUNT(nflag) FROM '%s' GROUP BY cat", path)
	ctx := context.Background()
	var want string
	for par := 1; par <= 4; par++ {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		if _, err := s.Execute(ctx, fmt.Sprintf("SET 'parallelism' = '%d'", par), nil, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		w := &textWriter{}
		if _, err := s.Execute(ctx, q, w, ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		got := sortLines(w.sb.String())
		if par == 1 {
			want = got
		} else if got != want {
			t.Errorf("parallelism %d:\n%s\nwant\n%s", par, got, want)
		}
		if par > 1 {
			o, err := s.Execute(ctx, "EXPLAIN ANALYZE "+q, nil, ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m := rowRangesRE.FindStringSubmatch(o.Text); m == nil || m[2] != "1" {
				t.Fatalf("parallelism %d: the row group was not cut:\n%s", par, o.Text)
			}
			if o.Explain.Totals.BatchesMaterialized != 0 {
				t.Errorf("parallelism %d: %d batches materialised:\n%s", par, o.Explain.Totals.BatchesMaterialized, o.Text)
			}
		}
		mem.AssertSize(t, 0)
	}
}
