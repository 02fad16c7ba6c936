package memory_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	mem "github.com/clink-sql/clink/connectors/memory"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// rowsWriter keeps a result as text, read from Arrow without
// materialising the batches.
type rowsWriter struct {
	schema *arrow.Schema
	rows   []string
}

func (w *rowsWriter) Columns(s *arrow.Schema, bounded bool) error { w.schema = s; return nil }

func (w *rowsWriter) Batch(b *exec.Batch) error {
	for i := 0; i < b.Len(); i++ {
		row := ""
		for c := range w.schema.Fields() {
			var v any
			if b.IsColumnar() {
				v = exec.Value(b.Record().Column(c), i)
			} else {
				v = b.Rows()[i][c]
			}
			row += fmt.Sprintf("%v|", v)
		}
		w.rows = append(w.rows, row)
	}
	return nil
}

// INSERT INTO a memory table SELECT ... FROM a Parquet table keeps the
// scan's batches without materialising one, and the table then reads back
// what the query gave, at every parallelism.
func TestInsertSelectThroughTheEngine(t *testing.T) {
	for _, par := range []int{1, 3} {
		t.Run(fmt.Sprintf("p%d", par), func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			s := engine.NewSession(engine.SessionOptions{Mem: alloc, NoDemoCatalog: true})
			defer s.Close()
			run := func(sql string) []string {
				t.Helper()
				w := &rowsWriter{}
				if _, err := s.Execute(context.Background(), sql, w, engine.ExecOptions{}); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return w.rows
			}
			run(fmt.Sprintf("SET 'parallelism' = '%d'", par))
			run("CREATE TABLE p WITH ('connector' = 'filesystem', 'path' = '../../testdata/parquet/duckdb_types.parquet', 'format' = 'parquet')")
			run("CREATE TABLE m (id INT, s VARCHAR, f DOUBLE) WITH ('connector' = 'memory')")

			before := exec.Global.BatchesMaterialized.Load()
			run("INSERT INTO m SELECT id, s, f64 FROM p WHERE id % 3 = 0")
			if n := exec.Global.BatchesMaterialized.Load() - before; n != 0 {
				t.Errorf("INSERT INTO m SELECT ... materialised %d batches, want 0", n)
			}
			want := run("SELECT id, s, f64 FROM p WHERE id % 3 = 0")
			got := run("SELECT * FROM m")
			slices.Sort(want)
			slices.Sort(got)
			if len(want) != 200 || !slices.Equal(got, want) {
				t.Errorf("the table has %d rows, the query gave %d (want 200 equal rows)", len(got), len(want))
			}
			// A second INSERT adds to the first.
			run("INSERT INTO m SELECT id, s, f64 FROM p WHERE id < 5")
			if n := run("SELECT count(*) FROM m"); len(n) != 1 || n[0] != "205|" {
				t.Errorf("count after the second INSERT: %v, want 205", n)
			}

			e, ok := s.Catalog().Lookup("m")
			if !ok {
				t.Fatal("table m is not in the catalog")
			}
			e.Table.(*mem.Table).Close() // what DROP TABLE will do
		})
	}
}
