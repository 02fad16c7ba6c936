package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Flink's event-time edges, in the style of its WindowOperatorTest: hand
// made event sequences and watermarks, the expected fires worked out from
// Flink's rules (WindowOperator: a window fires when the watermark reaches
// its maxTimestamp, end - 1 ms; an element is late when every window it
// would join is at or before the watermark; session windows that
// intersect, touching included, merge).

// edgeRun runs fn over both input paths with a checked allocator.
func edgeRun(t *testing.T, spec WindowSpec, fn func(t *testing.T, w *WindowAggregate, step func(wm int64, rows ...exec.Row) []exec.Row)) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			w := NewWindowAggregate(spec, 1, []int{0}, winAggs, winOut, mem)
			defer w.Close()
			w.SetColumnarOutput(columnar)
			out := &capture{}
			// step feeds rows, then the watermark wm (µs; MaxWatermark
			// finishes), and returns what fired.
			step := func(wm int64, rows ...exec.Row) []exec.Row {
				t.Helper()
				if len(rows) > 0 {
					feed(t, mem, w, out, columnar, rows...)
				}
				var err error
				if wm == exec.MaxWatermark {
					err = w.Finish(context.Background(), 0, out)
				} else {
					err = w.OnWatermark(context.Background(), wm, out)
				}
				if err != nil {
					t.Fatal(err)
				}
				got, _ := out.rows()
				return sortedRows(got)
			}
			fn(t, w, step)
		})
	}
}

func wantRows(t *testing.T, what string, got, want []exec.Row) {
	t.Helper()
	if !rowsEqual(got, sortedRows(want)) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func lateCount(t *testing.T, w *WindowAggregate, want int64) {
	t.Helper()
	if n := counter(w.Report(), "late records dropped"); n != want {
		t.Fatalf("late records dropped %d, want %d", n, want)
	}
}

// A TUMBLE window [0, 10s) fires when the watermark reaches 9.999 s, its
// last millisecond; then a record at 9.999 s is late and one at 10 s is not.
func TestWindowEdgeTumbleLastMillisecond(t *testing.T) {
	edgeRun(t, WindowSpec{Kind: Tumble, Size: 10 * time.Second}, func(t *testing.T, w *WindowAggregate, step func(int64, ...exec.Row) []exec.Row) {
		wantRows(t, "wm 9.998s", step(9_998_000, exec.Row{int64(1), ms(0), int64(1)}, exec.Row{int64(1), ms(9999), int64(2)}), nil)
		wantRows(t, "wm 9.999s", step(9_999_000),
			[]exec.Row{{int64(1), int64(2), int64(3), int64(2), ms(0), ms(10000), ms(9999)}})
		wantRows(t, "end", step(exec.MaxWatermark, exec.Row{int64(1), ms(9999), int64(4)}, exec.Row{int64(1), ms(10000), int64(8)}),
			[]exec.Row{{int64(1), int64(1), int64(8), int64(8), ms(10000), ms(20000), ms(19999)}})
		lateCount(t, w, 1)
	})
}
