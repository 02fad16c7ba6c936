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

// Session windows [ts, ts+gap) that touch merge (Flink's
// TimeWindow.intersects is inclusive): events exactly the gap apart are one
// session; a millisecond more is two.
func TestWindowEdgeSessionTouchingMerge(t *testing.T) {
	edgeRun(t, WindowSpec{Kind: Session, Gap: 10 * time.Second}, func(t *testing.T, w *WindowAggregate, step func(int64, ...exec.Row) []exec.Row) {
		wantRows(t, "wm 9.999s", step(9_999_000,
			exec.Row{int64(1), ms(0), int64(1)}, exec.Row{int64(1), ms(10000), int64(2)},
			exec.Row{int64(2), ms(0), int64(4)}, exec.Row{int64(2), ms(10001), int64(8)}),
			[]exec.Row{{int64(2), int64(1), int64(4), int64(4), ms(0), ms(10000), ms(9999)}})
		wantRows(t, "wm 19.999s", step(19_999_000),
			[]exec.Row{{int64(1), int64(2), int64(3), int64(2), ms(0), ms(20000), ms(19999)}})
		wantRows(t, "wm 20s", step(20_000_000),
			[]exec.Row{{int64(2), int64(1), int64(8), int64(8), ms(10001), ms(20001), ms(20000)}})
		lateCount(t, w, 0)
	})
}

// Lateness of a session event is judged on the window it merges into: an
// event whose own window [ts, ts+gap) already fired is kept when it
// touches a session of its key still open, and dropped otherwise.
func TestWindowEdgeSessionLateMergesIntoOpen(t *testing.T) {
	edgeRun(t, WindowSpec{Kind: Session, Gap: 10 * time.Second}, func(t *testing.T, w *WindowAggregate, step func(int64, ...exec.Row) []exec.Row) {
		wantRows(t, "wm 12s", step(12_000_000, exec.Row{int64(1), ms(15000), int64(1)}), nil)
		// At 12 s: 1 s's own window [1s, 11s) fired and meets nothing
		// open (late); 6 s's own window [6s, 16s) is open and overlaps
		// [15s, 25s): one session [6s, 25s).
		wantRows(t, "wm 13s", step(13_000_000, exec.Row{int64(1), ms(1000), int64(2)}, exec.Row{int64(1), ms(6000), int64(4)}), nil)
		lateCount(t, w, 1)
		// At 13 s: 2 s's own window [2s, 12s) fired, but it merges into
		// the open [6s, 25s): kept. Key 2 has no open session: late.
		wantRows(t, "wm 24.998s", step(24_998_000, exec.Row{int64(1), ms(2000), int64(8)}, exec.Row{int64(2), ms(2000), int64(16)}), nil)
		wantRows(t, "wm 24.999s", step(24_999_000),
			[]exec.Row{{int64(1), int64(3), int64(13), int64(8), ms(2000), ms(25000), ms(24999)}})
		wantRows(t, "end", step(exec.MaxWatermark), nil)
		lateCount(t, w, 2)
	})
}

// HOP counts a late record once, and only when every window it belongs
// to fired (Flink's isSkippedElement): a record kept by a later window is
// not late at all.
func TestWindowEdgeHopLateCountsRecords(t *testing.T) {
	edgeRun(t, WindowSpec{Kind: Hop, Size: 10 * time.Second, Slide: 5 * time.Second}, func(t *testing.T, w *WindowAggregate, step func(int64, ...exec.Row) []exec.Row) {
		wantRows(t, "wm 9.999s", step(9_999_000, exec.Row{int64(1), ms(9000), int64(1)}),
			[]exec.Row{{int64(1), int64(1), int64(1), int64(1), ms(0), ms(10000), ms(9999)}})
		// 7 s: [0s, 10s) fired, [5s, 15s) open: kept there. 3 s: both of
		// its windows, [-5s, 5s) and [0s, 10s), fired: one late record.
		wantRows(t, "end", step(exec.MaxWatermark, exec.Row{int64(1), ms(7000), int64(2)}, exec.Row{int64(1), ms(3000), int64(4)}),
			[]exec.Row{{int64(1), int64(2), int64(3), int64(2), ms(5000), ms(15000), ms(14999)}})
		lateCount(t, w, 1)
	})
}
