package ops

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// fakeClock is a settable wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(ms int64) {
	c.mu.Lock()
	c.t = time.UnixMilli(ms)
	c.mu.Unlock()
}

// procTimeRows are winRows with every row timed: a processing-time
// operator counts a row whatever its time column holds.
func procTimeRows(n int, nulls bool) []exec.Row {
	rows := winRows(n, nulls)
	for _, r := range rows {
		if r[1] == nil {
			r[1] = ms(0)
		}
	}
	return rows
}

// With the clock standing still, every row falls into the window(s) of
// that instant, whatever its time column says; the input's end fires them.
func TestProcTimeWindowAgrees(t *testing.T) {
	const at = 12_345 // ms
	for _, c := range []struct {
		name    string
		spec    WindowSpec
		windows [][2]int64
	}{
		{"tumble", WindowSpec{Kind: Tumble, Size: time.Second}, [][2]int64{{12_000, 13_000}}},
		// Windows of 1s every 400ms holding 12.345s start at 12.0 and
		// 11.6s (the one at 11.2s ends at 12.2s).
		{"hop", WindowSpec{Kind: Hop, Size: time.Second, Slide: 400 * time.Millisecond},
			[][2]int64{{12_000, 13_000}, {11_600, 12_600}}},
	} {
		runCase(t, opCase{
			name: "proctime " + c.name,
			newOp: func(mem memory.Allocator) exec.Operator {
				w := NewProcTimeWindowAggregate(c.spec, 1, []int{0}, winAggs, winOut, mem)
				clk := &fakeClock{}
				clk.set(at)
				w.SetClock(clk.now)
				return w
			},
			inputs: func(nulls bool) []input { return []input{{winSchema, procTimeRows(300, nulls)}} },
			want: func(ins []input) []exec.Row {
				return expectWindows(ins[0].rows, func(exec.Row, int64) [][2]int64 { return c.windows })
			},
		})
	}
}

// Windows fire when the clock reaches their end, on the timer, not on
// records; a row is never late (a clock stepped back puts it in the open
// window); event-time watermarks pass through and fire nothing.
func TestProcTimeWindowFiresOnTimer(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			clk := &fakeClock{}
			w := NewProcTimeWindowAggregate(WindowSpec{Kind: Tumble, Size: time.Second}, 1, []int{0}, winAggs, winOut, mem)
			w.SetClock(clk.now)
			defer w.Close()
			w.SetColumnarOutput(columnar)
			out := &capture{}
			if _, ok := w.NextProcessingTime(); ok {
				t.Fatal("a timer without any window")
			}
			// The time column (here 99s) is not what places a row.
			clk.set(200)
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(99_000), int64(5)})
			clk.set(700)
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(99_000), int64(7)}, exec.Row{int64(2), ms(99_000), int64(1)})
			clk.set(1300)
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(0), int64(3)})
			if at, ok := w.NextProcessingTime(); !ok || at.UnixMilli() != 1000 {
				t.Fatalf("next timer %v %v, want 1s", at.UnixMilli(), ok)
			}
			if err := w.OnWatermark(ctx, 50_000_000, out); err != nil {
				t.Fatal(err)
			}
			if len(out.batches) != 0 || len(out.wms) != 1 || out.wms[0] != 50_000_000 {
				t.Fatalf("a watermark fired %d batches, forwarded %v", len(out.batches), out.wms)
			}
			// The timer is early (a timer may be): nothing is due.
			clk.set(999)
			if err := w.OnProcessingTime(ctx, out); err != nil {
				t.Fatal(err)
			}
			if len(out.batches) != 0 || w.OpenWindows() != 2 {
				t.Fatalf("fired before the window's end: %d batches, %d windows", len(out.batches), w.OpenWindows())
			}
			clk.set(1000)
			if err := w.OnProcessingTime(ctx, out); err != nil {
				t.Fatal(err)
			}
			got, col := out.rows()
			want := []exec.Row{
				{int64(1), int64(2), int64(12), int64(7), ms(0), ms(1000), ms(999)},
				{int64(2), int64(1), int64(1), int64(1), ms(0), ms(1000), ms(999)},
			}
			if !rowsEqual(sortedRows(got), want) {
				t.Fatalf("fire at 1s: got %v, want %v", got, want)
			}
			if columnar != (col == 1) {
				t.Errorf("columnar output %v, got %d columnar batches", columnar, col)
			}
			if at, ok := w.NextProcessingTime(); !ok || at.UnixMilli() != 2000 {
				t.Fatalf("next timer %v %v, want 2s", at.UnixMilli(), ok)
			}
			// The wall clock steps back into the fired window: the row
			// goes to the open one.
			clk.set(900)
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(0), int64(4)})
			if err := w.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
			got, _ = out.rows()
			want = []exec.Row{{int64(1), int64(2), int64(7), int64(4), ms(1000), ms(2000), ms(1999)}}
			if !rowsEqual(got, want) {
				t.Fatalf("final fire: got %v, want %v", got, want)
			}
			if r := w.Report(); counter(r, "late records dropped") != 0 {
				t.Errorf("late count %d, want 0", counter(r, "late records dropped"))
			}
		})
	}
}

// blockingSource emits its batches one at a time, each after the previous
// one's window has reached the sink, then ends: the windows must fire on
// the wall clock while the source sends nothing.
type blockingSource struct {
	mem     memory.Allocator
	batches [][]exec.Row
	fired   chan struct{}
}

func (s *blockingSource) Kind() string { return "test_source" }
func (s *blockingSource) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

func (s *blockingSource) Run(ctx context.Context, out exec.Emitter) error {
	for i, rows := range s.batches {
		rec, err := exec.EncodeRows(s.mem, winSchema, rows)
		if err != nil {
			return err
		}
		if err := emitRecord(ctx, out, rec); err != nil {
			return err
		}
		select {
		case <-s.fired:
		case <-time.After(10 * time.Second): // bounded: a broken timer fails, not hangs
			return fmt.Errorf("batch %d: its window did not fire within 10s", i)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Through a real exec.Graph with the wall clock: each window fires while
// the source is idle, so each fire holds exactly one batch's rows.
func TestProcTimeWindowFiresInGraph(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &blockingSource{mem: mem, fired: make(chan struct{}, 4), batches: [][]exec.Row{
		{{int64(1), ms(0), int64(1)}, {int64(1), ms(0), int64(2)}},
		{{int64(1), ms(0), int64(10)}, {int64(2), ms(0), int64(20)}, {int64(2), ms(0), int64(30)}},
	}}
	var mu sync.Mutex
	var got [][]exec.Row
	g := exec.NewGraph(exec.Options{})
	s := g.AddSource("src", src)
	w := g.AddOperator("win", NewProcTimeWindowAggregate(WindowSpec{Kind: Tumble, Size: 50 * time.Millisecond}, 1, []int{0}, winAggs, winOut, mem), s)
	g.AddOperator("sink", NewCollect(func(_ context.Context, b *exec.Batch) error {
		var rows []exec.Row
		if b.IsColumnar() {
			rows = exec.DecodeRows(b.Record())
		} else {
			rows = b.Rows()
		}
		mu.Lock()
		got = append(got, rows)
		mu.Unlock()
		src.fired <- struct{}{}
		return nil
	}), w)
	if err := g.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("got %d fires, want 2: %v", len(got), got)
	}
	sums := func(rows []exec.Row) map[any][2]int64 {
		m := map[any][2]int64{}
		for _, r := range rows {
			m[r[0]] = [2]int64{r[1].(int64), r[2].(int64)}
		}
		return m
	}
	if s := sums(got[0]); len(s) != 1 || s[int64(1)] != [2]int64{2, 3} {
		t.Errorf("first fire %v, want key 1: 2 rows, sum 3", got[0])
	}
	if s := sums(got[1]); len(s) != 2 || s[int64(1)] != [2]int64{1, 10} || s[int64(2)] != [2]int64{2, 50} {
		t.Errorf("second fire %v, want key 1: 1 row sum 10, key 2: 2 rows sum 50", got[1])
	}
	for _, rows := range got {
		for _, r := range rows {
			if d := int64(r[5].(arrow.Timestamp)) - int64(r[4].(arrow.Timestamp)); d != 50 {
				t.Errorf("window %v..%v is not 50ms", r[4], r[5])
			}
		}
	}
}
