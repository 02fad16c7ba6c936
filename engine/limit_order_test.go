package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// A plain LIMIT over files returns the first rows in file order on every
// run, as DuckDB's does, though the scan could run as parallel subtasks:
// two files of 8 row groups each, parallelism 2, each query run 8 times.
// The expected rows follow from how the files were written (id counts up
// from 0 across a.parquet then b.parquet).
func TestPlainLimitKeepsFileOrder(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	const perFile, rowGroup = 4000, 500
	for f, name := range []string{"a.parquet", "b.parquet"} {
		rows := make([]exec.Row, perFile)
		for i := range rows {
			rows[i] = exec.Row{int64(f*perFile + i)}
		}
		writeParquet(t, filepath.Join(dir, name), schema, rows, rowGroup)
	}
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	mustExec(t, s, "SET 'parallelism' = '2'")
	glob := filepath.Join(dir, "*.parquet")
	ids := func(from, step, n int) []exec.Row {
		out := make([]exec.Row, n)
		for i := range out {
			out[i] = exec.Row{int64(from + i*step)}
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want []exec.Row
	}{
		{fmt.Sprintf("SELECT id FROM '%s' LIMIT 5", glob), ids(0, 1, 5)},
		{fmt.Sprintf("SELECT id FROM read_parquet('%s') LIMIT 3 OFFSET 4100", glob), ids(4100, 1, 3)},
		{fmt.Sprintf("SELECT id * 2 AS x FROM '%s' WHERE id %% 7 = 3 LIMIT 4", glob), ids(6, 14, 4)},
		{fmt.Sprintf("SELECT id FROM '%s' LIMIT 1200", filepath.Join(dir, "b.parquet")), ids(perFile, 1, 1200)},
	} {
		for run := range 8 {
			if got := runRows(t, s, c.q); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("run %d of %s:\ngot  %v\nwant %v", run, c.q, firstRows(got), firstRows(c.want))
			}
		}
	}
	// The plan says why the scan runs as one subtask.
	plan := strings.Join(explainLines(t, s, fmt.Sprintf("EXPLAIN SELECT id FROM '%s' LIMIT 5", glob)), "\n")
	if !strings.Contains(plan, "read in file order for a LIMIT without ORDER BY") {
		t.Errorf("plan:\n%s", plan)
	}
}

func firstRows(rows []exec.Row) []exec.Row { return rows[:min(len(rows), 8)] }
