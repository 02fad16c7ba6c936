package nexmark

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// countTo is a terminal operator that counts rows without touching them
// (Len never decodes) and stops its input after limit rows, like a LIMIT.
type countTo struct {
	exec.Base
	limit   int
	rows    int
	lastWM  int64
	batches int
}

func (c *countTo) Kind() string                    { return "count-to" }
func (c *countTo) Capabilities() exec.Capabilities { return exec.Capabilities{} }
func (c *countTo) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	c.rows += b.Len()
	c.batches++
	if c.limit > 0 && c.rows >= c.limit {
		return exec.ErrStop
	}
	return nil
}
func (c *countTo) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	c.lastWM = wm
	return nil
}

// The source in a real graph: a LIMIT-like stop ends an unbounded paced
// source, the batches stay columnar (nothing is materialised), and a bounded
// run delivers the final watermark.
func TestInGraph(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	matBefore := exec.Global.BatchesMaterialized.Load()
	tab := newTestTable(t, mem, map[string]string{"table": "bid", "first-event.rate": "50000"}, nil)
	src, err := tab.Open(connectors.ScanSpec{Columns: []int{2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	g := exec.NewGraph(exec.Options{})
	s := g.AddSource("nexmark", src)
	op := &countTo{limit: 1000}
	g.AddOperator("count", op, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx); err != nil {
		t.Fatalf("unbounded run with a stop: %v", err)
	}
	if op.rows < 1000 {
		t.Errorf("stopped after %d rows", op.rows)
	}
	if got := exec.Global.BatchesMaterialized.Load() - matBefore; got != 0 {
		t.Errorf("%d batches materialised", got)
	}
	if s.Stats.BatchesOutColumnar.Load() == 0 || s.Stats.BatchesOutRows.Load() != 0 {
		t.Errorf("source emitted %d columnar, %d row batches", s.Stats.BatchesOutColumnar.Load(), s.Stats.BatchesOutRows.Load())
	}

	bounded := newTestTable(t, mem, map[string]string{"events.num": "20000"}, nil)
	src2, _ := bounded.Open(connectors.ScanSpec{})
	g2 := exec.NewGraph(exec.Options{})
	op2 := &countTo{}
	g2.AddOperator("count", op2, g2.AddSource("nexmark", src2))
	if err := g2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if op2.rows != 20000 || op2.lastWM != exec.MaxWatermark {
		t.Errorf("bounded: %d rows, last watermark %d", op2.rows, op2.lastWM)
	}
}

// Sources of one table may run at the same time (a self-join); they share
// the table's generator and its channel tables.
func TestConcurrentSources(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tab := newTestTable(t, mem, map[string]string{"events.num": "5000", "table": "bid"}, nil)
	var wg sync.WaitGroup
	results := make([]*collector, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src, _ := tab.OpenSource(connectors.ScanSpec{})
			c := &collector{}
			if err := src.Run(context.Background(), c); err != nil {
				t.Error(err)
			}
			results[i] = c
		}()
	}
	wg.Wait()
	ref := results[0].rows()
	for _, c := range results {
		if got := c.rows(); !reflect.DeepEqual(got, ref) {
			t.Error("concurrent sources disagree")
		}
		c.release()
	}
}
