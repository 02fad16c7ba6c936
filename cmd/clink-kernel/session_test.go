package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

type rows struct{ rows []exec.Row }

func (r *rows) Columns(*arrow.Schema, bool) error { return nil }
func (r *rows) Batch(b *exec.Batch) error {
	for _, row := range b.Rows() {
		r.rows = append(r.rows, append(exec.Row(nil), row...))
	}
	return nil
}

// A quoted path of FROM opens for inspection: its schema, and per column
// the rows and min/max its Parquet footers hold, which agree with what a
// query over the data computes.
func TestFileTableStatsAgreeWithTheData(t *testing.T) {
	s := session{engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})}
	defer s.Close()
	const path = "../../testdata/parquet/duckdb_scan.parquet"
	ti, ok := s.FileTable(path)
	if !ok || ti.Kind != "file" || ti.Schema == nil || !ti.Bounded {
		t.Fatalf("FileTable: %+v %v", ti, ok)
	}
	if _, ok := s.FileTable("../../testdata/parquet/no-such.parquet"); ok {
		t.Fatal("a missing file opened")
	}
	for _, col := range []string{"id", "v", "x"} {
		i := ti.Schema.FieldIndices(col)[0]
		st, ok := s.ColumnStats(ti, i)
		if !ok || !st.HasRange {
			t.Fatalf("%s: %+v %v", col, st, ok)
		}
		r := &rows{}
		q := fmt.Sprintf("SELECT count(*), min(%s), max(%s) FROM '%s'", col, col, path)
		if _, err := s.Execute(context.Background(), q, r, engine.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		want := r.rows[0]
		if fmt.Sprint(st.Rows, st.Min, st.Max) != fmt.Sprint(want[0], want[1], want[2]) {
			t.Errorf("%s: footers say %d rows, %v..%v; the data %v", col, st.Rows, st.Min, st.Max, want)
		}
	}
}
