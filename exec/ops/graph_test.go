package ops

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// recordSource emits rows in columnar batches of size, then the final
// watermark; endless repeats them until it is stopped.
type recordSource struct {
	mem     memory.Allocator
	rows    []exec.Row
	size    int
	endless bool
	stopped bool
}

func (s *recordSource) Kind() string { return "test_source" }
func (s *recordSource) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

func (s *recordSource) Run(ctx context.Context, out exec.Emitter) error {
	for {
		for start := 0; start < len(s.rows); start += s.size {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := exec.EncodeRows(s.mem, SampleSchema, s.rows[start:min(start+s.size, len(s.rows))])
			if err != nil {
				return err
			}
			err = emitRecord(ctx, out, rec)
			if errors.Is(err, exec.ErrStop) {
				s.stopped = true
				return nil
			}
			if err != nil {
				return err
			}
		}
		if !s.endless {
			return out.EmitWatermark(ctx, exec.MaxWatermark)
		}
	}
}

// source -> filter -> aggregate -> collect through a real exec.Graph: the
// result is right, nothing is materialised on the columnar run, and the
// aggregate's result leaves at Finish followed by the final watermark.
func TestGraphFilterAggregate(t *testing.T) {
	specs := []AggSpec{{Func: "count_star", Col: -1, Type: i64}, {Func: "sum", Col: 2, Type: i64}}
	out := aggSchema(SampleSchema, []int{1}, specs)
	rows := sampleRows(5000, true)
	for _, disable := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		g := exec.NewGraph(exec.Options{DisableColumnar: disable})
		src := g.AddSource("scan", &recordSource{mem: mem, rows: rows, size: 256})
		f := g.AddOperator("filter", NewFilter(tGt{col: 2, k: 0}, mem), src)
		agg := NewHashAggregate([]int{1}, specs, out, mem)
		agg.SetColumnarOutput(!disable)
		a := g.AddOperator("agg", agg, f)
		var mu sync.Mutex
		var got []exec.Row
		columnar := 0
		g.AddOperator("collect", NewCollect(func(_ context.Context, b *exec.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			if b.IsColumnar() {
				columnar++
				got = append(got, exec.DecodeRows(b.Record())...)
			} else {
				got = append(got, b.Rows()...)
			}
			return nil
		}), a)
		before := exec.Global.BatchesMaterialized.Load()
		if err := g.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		var kept []exec.Row
		for _, r := range rows {
			if r[2] != nil && r[2].(int64) > 0 {
				kept = append(kept, r)
			}
		}
		want := refAgg(kept, []int{1}, specs)
		if !rowsEqual(sortedRows(got), sortedRows(want)) {
			t.Errorf("disable=%v: got %v want %v", disable, got, want)
		}
		if !disable {
			if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
				t.Errorf("%d batches materialised", d)
			}
			if columnar != 1 {
				t.Errorf("aggregate output not born columnar")
			}
			if n := a.Stats.BatchesColumnarPath.Load(); n != f.Stats.BatchesOut.Load() {
				t.Errorf("aggregate took %d of %d batches columnar", n, f.Stats.BatchesOut.Load())
			}
		}
		if !a.Stats.Finished.Load() || a.Stats.LastWatermark.Load() != exec.MaxWatermark {
			t.Errorf("aggregate finished=%v watermark=%d", a.Stats.Finished.Load(), a.Stats.LastWatermark.Load())
		}
		mem.AssertSize(t, 0)
	}
}

// LIMIT over an endless source: the limit returns ErrStop, the graph
// finishes normally and the source is stopped.
func TestGraphLimitStopsSource(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := exec.NewGraph(exec.Options{})
	src := &recordSource{mem: mem, rows: sampleRows(10, false), size: 3, endless: true}
	s := g.AddSource("scan", src)
	f := g.AddOperator("filter", NewFilter(tGt{col: 2, k: -100}, mem), s)
	l := g.AddOperator("limit", NewLimit(25, 2), f)
	var n int
	g.AddOperator("collect", NewCollect(func(_ context.Context, b *exec.Batch) error {
		n += b.Len()
		if b.Materialized() {
			t.Error("collect input was materialised")
		}
		return nil
	}), l)
	if err := g.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n != 25 || !src.stopped {
		t.Fatalf("collected %d rows (want 25), source stopped %v", n, src.stopped)
	}
}

// A join in a graph: the probe side may run ahead of the build side (two
// sources on two goroutines); held batches are replayed when the build ends.
func TestGraphJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left := sampleRows(2000, true)
	right := buildRows(30, true)
	g := exec.NewGraph(exec.Options{})
	ls := g.AddSource("left", &recordSource{mem: mem, rows: left, size: 100})
	rs := g.AddSource("right", exec.Source(NewValues(buildSchema, right)))
	j := NewHashJoin(Left, []int{0}, []int{0}, joinSchema(), mem)
	j.SetColumnarOutput(true)
	js := g.AddOperator("join", j, ls, rs)
	var mu sync.Mutex
	var got []exec.Row
	g.AddOperator("collect", NewCollect(func(_ context.Context, b *exec.Batch) error {
		mu.Lock()
		defer mu.Unlock()
		if b.IsColumnar() {
			got = append(got, exec.DecodeRows(b.Record())...)
		} else {
			got = append(got, b.Rows()...)
		}
		return nil
	}), js)
	if err := g.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := refJoin(Left, left, right, []int{0}, []int{0})
	if !rowsEqual(sortedRows(got), sortedRows(want)) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
}
