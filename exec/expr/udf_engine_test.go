package expr_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// sumWriter totals a BIGINT result column straight from Arrow, so reading
// the result materialises nothing either.
type sumWriter struct {
	schema   *arrow.Schema
	rows     int64
	sum      int64
	columnar int
}

func (w *sumWriter) Columns(s *arrow.Schema, _ bool) error { w.schema = s; return nil }

func (w *sumWriter) Batch(b *exec.Batch) error {
	if !b.IsColumnar() {
		return fmt.Errorf("a row batch reached the sink")
	}
	w.columnar++
	c := b.Record().Column(0).(*array.Int64)
	for i := 0; i < c.Len(); i++ {
		w.rows++
		if c.IsValid(i) {
			w.sum += c.Value(i)
		}
	}
	return nil
}

// count_char is registered through the public UDF API; used in a query over
// a bounded nexmark table it runs inside the columnar pipeline: not one
// batch is materialised into rows. A vectorised UDF likewise.
func TestUDFInQueryDoesNotMaterialise(t *testing.T) {
	expr.MustRegister(expr.VectorFunc("test_engine_len", []arrow.DataType{arrow.BinaryTypes.String}, nil,
		func(mem memory.Allocator, args []arrow.Array, n int, _ arrow.DataType) (arrow.Array, error) {
			s := args[0].(*array.String)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			for i := 0; i < n; i++ {
				if s.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(int64(len(s.Value(i))))
				}
			}
			return b.NewArray(), nil
		}).Returns(arrow.PrimitiveTypes.Int64))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := engine.NewSession(engine.SessionOptions{Mem: mem, NoDemoCatalog: true})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Execute(ctx, "CREATE TABLE b WITH ('connector'='nexmark','table'='bid','events.num'='10000')", nil, engine.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	// The reference answer, computed from the rows themselves.
	want := int64(0)
	var extraRows int64
	refW := &rowWriter{f: func(v any) {
		extraRows++
		if v != nil {
			want += int64(strings.Count(v.(string), "a"))
		}
	}}
	if _, err := s.Execute(ctx, "SELECT extra FROM b", refW, engine.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT count_char(extra, 'a') FROM b", "SELECT test_engine_len(extra) FROM b"} {
		w := &sumWriter{}
		before := exec.Global.BatchesMaterialized.Load()
		if _, err := s.Execute(ctx, q, w, engine.ExecOptions{}); err != nil {
			t.Fatal(q, err)
		}
		if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
			t.Fatalf("%s: %d batches materialised", q, d)
		}
		if w.rows != extraRows || w.rows == 0 || w.columnar == 0 {
			t.Fatalf("%s: %d rows in %d batches, want %d", q, w.rows, w.columnar, extraRows)
		}
		if strings.HasPrefix(q, "SELECT count_char") && w.sum != want {
			t.Fatalf("%s: sum %d, want %d", q, w.sum, want)
		}
	}
	// EXPLAIN names the row-at-a-time call.
	out, err := s.Execute(ctx, "EXPLAIN SELECT count_char(extra, 'a') FROM b", nil, engine.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Text, "[row-at-a-time UDF]") {
		t.Errorf("EXPLAIN does not mark the row-at-a-time UDF:\n%s", out.Text)
	}
}

// rowWriter reads the first column in whatever form it comes.
type rowWriter struct{ f func(any) }

func (w *rowWriter) Columns(*arrow.Schema, bool) error { return nil }

func (w *rowWriter) Batch(b *exec.Batch) error {
	if b.IsColumnar() {
		c := b.Record().Column(0)
		for i := 0; i < c.Len(); i++ {
			w.f(exec.Value(c, i))
		}
		return nil
	}
	for _, r := range b.Rows() {
		w.f(r[0])
	}
	return nil
}
