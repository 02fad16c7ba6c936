package ops

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Window tests read (k BIGINT, ts TIMESTAMP(3), v BIGINT).
var winSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

var tsMs = &arrow.TimestampType{Unit: arrow.Millisecond}

// winOut is k, COUNT(*), SUM(v), MAX(v), window_start, window_end, window_time.
var winOut = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "total", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "top", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "window_start", Type: tsMs},
	{Name: "window_end", Type: tsMs},
	{Name: "window_time", Type: tsMs},
}, nil)

var winAggs = []AggSpec{
	{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64},
	{Func: "sum", Col: 2, Type: arrow.PrimitiveTypes.Int64},
	{Func: "max", Col: 2, Type: arrow.PrimitiveTypes.Int64},
}

// winRows are n rows with times spread out of order over about 2s, and
// runs of close events (sessions) per key.
func winRows(n int, nulls bool) []exec.Row {
	rows := make([]exec.Row, n)
	for i := range rows {
		t := int64(i*37%1000) + int64(i/50)*700
		r := exec.Row{int64(i % 5), arrow.Timestamp(t), int64(i*13%50 - 10)}
		if nulls {
			if i%7 == 0 {
				r[0] = nil
			}
			if i%11 == 3 {
				r[1] = nil // no event time: dropped
			}
			if i%4 == 2 {
				r[2] = nil
			}
		}
		rows[i] = r
	}
	return rows
}

// expectWindows is the reference answer: every (key, window) with its
// rows' COUNT(*), SUM(v), MAX(v), computed by plain loops.
func expectWindows(rows []exec.Row, windows func(r exec.Row, ts int64) [][2]int64) []exec.Row {
	type gk struct {
		k          any
		start, end int64
	}
	type st struct {
		n        int64
		sum, top any
	}
	acc := map[gk]*st{}
	var order []gk
	for _, r := range rows {
		if r[1] == nil {
			continue
		}
		for _, w := range windows(r, int64(r[1].(arrow.Timestamp))) {
			key := gk{r[0], w[0], w[1]}
			s := acc[key]
			if s == nil {
				s = &st{}
				acc[key] = s
				order = append(order, key)
			}
			s.n++
			if v, ok := r[2].(int64); ok {
				if s.sum == nil {
					s.sum, s.top = v, v
				} else {
					s.sum = s.sum.(int64) + v
					s.top = max(s.top.(int64), v)
				}
			}
		}
	}
	var out []exec.Row
	for _, key := range order {
		s := acc[key]
		out = append(out, exec.Row{key.k, s.n, s.sum, s.top,
			arrow.Timestamp(key.start), arrow.Timestamp(key.end), arrow.Timestamp(key.end - 1)})
	}
	return out
}

func winInput(n int) func(nulls bool) []input {
	return func(nulls bool) []input { return []input{{winSchema, winRows(n, nulls)}} }
}

func TestWindowTumbleAgrees(t *testing.T) {
	spec := WindowSpec{Kind: Tumble, Size: 100 * time.Millisecond}
	runCase(t, opCase{
		name: "tumble",
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(spec, 1, []int{0}, winAggs, winOut, mem)
		},
		inputs: winInput(300),
		want: func(ins []input) []exec.Row {
			return expectWindows(ins[0].rows, func(_ exec.Row, ts int64) [][2]int64 {
				s := ts - ts%100 // times are non-negative
				return [][2]int64{{s, s + 100}}
			})
		},
	})
}

func TestWindowHopAgrees(t *testing.T) {
	spec := WindowSpec{Kind: Hop, Size: 100 * time.Millisecond, Slide: 30 * time.Millisecond}
	runCase(t, opCase{
		name: "hop",
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(spec, 1, []int{0}, winAggs, winOut, mem)
		},
		inputs: winInput(300),
		want: func(ins []input) []exec.Row {
			return expectWindows(ins[0].rows, func(_ exec.Row, ts int64) [][2]int64 {
				// Every multiple of 30 in (ts-100, ts] starts a window.
				var out [][2]int64
				for s := int64(-90); s <= ts; s += 30 {
					if s > ts-100 {
						out = append(out, [2]int64{s, s + 100})
					}
				}
				return out
			})
		},
	})
}

// sessionsOf is the reference session assignment: per key, events sorted,
// cut where the distance exceeds gap (windows [ts, ts+gap) that touch
// merge, as in Flink).
func sessionsOf(rows []exec.Row, gap int64) map[string][2]int64 {
	byKey := map[any][]int64{}
	for _, r := range rows {
		if r[1] != nil {
			byKey[r[0]] = append(byKey[r[0]], int64(r[1].(arrow.Timestamp)))
		}
	}
	out := map[string][2]int64{} // key|ts -> session
	for k, tss := range byKey {
		sort.Slice(tss, func(i, j int) bool { return tss[i] < tss[j] })
		for i := 0; i < len(tss); {
			j := i + 1
			for j < len(tss) && tss[j]-tss[j-1] <= gap {
				j++
			}
			for _, ts := range tss[i:j] {
				out[fmt.Sprint(k, "|", ts)] = [2]int64{tss[i], tss[j-1] + gap}
			}
			i = j
		}
	}
	return out
}

func TestWindowSessionAgrees(t *testing.T) {
	spec := WindowSpec{Kind: Session, Gap: 40 * time.Millisecond}
	runCase(t, opCase{
		name: "session",
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(spec, 1, []int{0}, winAggs, winOut, mem)
		},
		inputs: winInput(300),
		want: func(ins []input) []exec.Row {
			sess := sessionsOf(ins[0].rows, 40)
			return expectWindows(ins[0].rows, func(r exec.Row, ts int64) [][2]int64 {
				return [][2]int64{sess[fmt.Sprint(r[0], "|", ts)]}
			})
		},
	})
}

func TestWindowGlobalNoKeys(t *testing.T) {
	out := arrow.NewSchema(winOut.Fields()[1:], nil)
	spec := WindowSpec{Kind: Tumble, Size: 250 * time.Millisecond}
	runCase(t, opCase{
		name:   "global",
		newOp:  func(mem memory.Allocator) exec.Operator { return NewWindowAggregate(spec, 1, nil, winAggs, out, mem) },
		inputs: winInput(200),
		want: func(ins []input) []exec.Row {
			var rows []exec.Row
			for _, r := range ins[0].rows {
				rows = append(rows, exec.Row{int64(0), r[1], r[2]})
			}
			got := expectWindows(rows, func(_ exec.Row, ts int64) [][2]int64 {
				s := ts - ts%250
				return [][2]int64{{s, s + 250}}
			})
			for i := range got {
				got[i] = got[i][1:]
			}
			return got
		},
	})
}

// feed drives op directly: one columnar or row batch.
func feed(t *testing.T, mem memory.Allocator, op exec.Operator, out exec.Emitter, columnar bool, rows ...exec.Row) {
	t.Helper()
	bs := makeBatches(t, mem, input{winSchema, rows}, len(rows)+1, columnar)
	for _, b := range bs {
		if _, err := exec.Dispatch(context.Background(), op, true, 0, b, out); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
}

func ms(v int64) arrow.Timestamp { return arrow.Timestamp(v) }

func TestWindowFiresOnlyWhenWatermarkPasses(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			w := NewWindowAggregate(WindowSpec{Kind: Tumble, Size: 10 * time.Second}, 1, []int{0}, winAggs, winOut, mem)
			defer w.Close()
			w.SetColumnarOutput(columnar)
			out := &capture{}
			feed(t, mem, w, out, columnar,
				exec.Row{int64(1), ms(1000), int64(5)},
				exec.Row{int64(1), ms(9999), int64(7)},
				exec.Row{int64(2), ms(12000), int64(1)})
			// 9.998s: the window [0, 10s) is still open; its last
			// millisecond is 9.999s, where Flink fires it.
			if err := w.OnWatermark(ctx, 9_998_000, out); err != nil {
				t.Fatal(err)
			}
			if len(out.batches) != 0 || w.OpenWindows() != 2 {
				t.Fatalf("fired before the watermark passed: %d batches, %d windows", len(out.batches), w.OpenWindows())
			}
			if err := w.OnWatermark(ctx, 9_999_000, out); err != nil {
				t.Fatal(err)
			}
			got, col := out.rows()
			want := []exec.Row{{int64(1), int64(2), int64(12), int64(7), ms(0), ms(10000), ms(9999)}}
			if !rowsEqual(got, want) {
				t.Fatalf("fire at 10s: got %v, want %v", got, want)
			}
			if columnar != (col == 1) {
				t.Errorf("columnar output %v, got %d columnar batches", columnar, col)
			}
			if len(out.wms) != 2 || out.wms[1] != 9_999_000 {
				t.Errorf("watermarks forwarded %v, want [9998000 9999000]", out.wms)
			}
			// A row of the fired window arriving now is late: dropped.
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(3000), int64(100)})
			if err := w.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
			got, _ = out.rows()
			want = []exec.Row{{int64(2), int64(1), int64(1), int64(1), ms(10000), ms(20000), ms(19999)}}
			if !rowsEqual(got, want) {
				t.Fatalf("final fire: got %v, want %v", got, want)
			}
			if r := w.Report(); counter(r, "late records dropped") != 1 {
				t.Errorf("late count %d, want 1", counter(r, "late records dropped"))
			}
		})
	}
}

func counter(r exec.OperatorReport, name string) int64 {
	for _, c := range r.Counters {
		if c.Name == name {
			return c.Value
		}
	}
	return -1
}

func TestWindowSessionMerges(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			w := NewWindowAggregate(WindowSpec{Kind: Session, Gap: 10 * time.Second}, 1, []int{0}, winAggs, winOut, mem)
			defer w.Close()
			w.SetColumnarOutput(columnar)
			out := &capture{}
			// Two sessions of key 1 (0s and 15s: 15s apart) ...
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(0), int64(1)}, exec.Row{int64(1), ms(15000), int64(2)})
			if err := w.OnWatermark(ctx, 5_000_000, out); err != nil {
				t.Fatal(err)
			}
			// ... joined by an event at 8s into one session [0s, 25s).
			feed(t, mem, w, out, columnar, exec.Row{int64(1), ms(8000), int64(4)}, exec.Row{int64(2), ms(30000), int64(9)})
			if err := w.OnWatermark(ctx, 24_998_000, out); err != nil {
				t.Fatal(err)
			}
			if len(out.batches) != 0 {
				t.Fatalf("a session fired before its end")
			}
			if err := w.OnWatermark(ctx, 24_999_000, out); err != nil {
				t.Fatal(err)
			}
			got, _ := out.rows()
			want := []exec.Row{{int64(1), int64(3), int64(7), int64(4), ms(0), ms(25000), ms(24999)}}
			if !rowsEqual(got, want) {
				t.Fatalf("merged session: got %v, want %v", got, want)
			}
			if err := w.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
			got, _ = out.rows()
			want = []exec.Row{{int64(2), int64(1), int64(9), int64(9), ms(30000), ms(40000), ms(39999)}}
			if !rowsEqual(got, want) {
				t.Fatalf("final session: got %v, want %v", got, want)
			}
		})
	}
}

// A fire of a few panes is small: after 4 small columnar emissions the
// damper backs off to rows and re-probes every 64th.
func TestWindowDamperBacksOff(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	w := NewWindowAggregate(WindowSpec{Kind: Tumble, Size: time.Second}, 1, []int{0}, winAggs, winOut, mem)
	defer w.Close()
	w.SetColumnarOutput(true)
	out := &capture{}
	var colFires []int
	for i := 0; i < 70; i++ {
		feed(t, mem, w, out, true, exec.Row{int64(i), ms(int64(i) * 1000), int64(i)})
		if err := w.OnWatermark(ctx, int64(i+1)*1_000_000, out); err != nil {
			t.Fatal(err)
		}
		if len(out.batches) != 1 {
			t.Fatalf("fire %d: %d batches", i, len(out.batches))
		}
		if out.batches[0].IsColumnar() {
			colFires = append(colFires, i)
		}
		out.rows()
	}
	// Fires 0-3 probe columnar, then every 64th: fire 67.
	if want := []int{0, 1, 2, 3, 67}; fmt.Sprint(colFires) != fmt.Sprint(want) {
		t.Errorf("columnar fires %v, want %v", colFires, want)
	}
	r := w.Report()
	if r.ColumnarEmits != 5 || r.HeldBackEmits != 65 || r.Damper == nil || !r.Damper.BackedOff {
		t.Errorf("report: %d columnar, %d held back, damper %+v", r.ColumnarEmits, r.HeldBackEmits, r.Damper)
	}
}

// Large fires stay columnar, and a columnar run materialises nothing.
func TestWindowColumnarNoMaterialisation(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	w := NewWindowAggregate(WindowSpec{Kind: Hop, Size: 2 * time.Second, Slide: time.Second}, 1, []int{0}, winAggs, winOut, mem)
	defer w.Close()
	w.SetColumnarOutput(true)
	out := &capture{}
	before := exec.Global.BatchesMaterialized.Load()
	for sec := 0; sec < 10; sec++ {
		rows := make([]exec.Row, 500)
		for i := range rows {
			rows[i] = exec.Row{int64(i % 200), ms(int64(sec*1000 + i)), int64(i)}
		}
		feed(t, mem, w, out, true, rows...)
		if err := w.OnWatermark(ctx, int64(sec)*1_000_000, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(ctx, 0, out); err != nil {
		t.Fatal(err)
	}
	if d := exec.Global.BatchesMaterialized.Load() - before; d != 0 {
		t.Errorf("%d batches materialised", d)
	}
	total := 0
	for _, b := range out.batches {
		if !b.IsColumnar() {
			t.Errorf("a %d-row fire was not columnar", b.Len())
		}
		total += b.Len()
	}
	out.rows()
	// Windows start at -1s..9s (11 of them), each holding 200 keys.
	if total != 11*200 {
		t.Errorf("%d rows, want %d", total, 11*200)
	}
}

func TestWatermarkAssigner(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			a := NewWatermarkAssigner(1, 2*time.Second, mem)
			defer a.Close()
			out := &capture{}
			feed(t, mem, a, out, columnar, exec.Row{int64(1), ms(5000), int64(1)}, exec.Row{int64(2), ms(3000), int64(2)})
			// A source clock far ahead bounds nothing.
			if err := a.OnWatermark(ctx, 100_000_000, out); err != nil {
				t.Fatal(err)
			}
			// 2.9s is behind the watermark 3s: kept (windows drop late
			// records, the assigner does not) and counted; so is a NULL time.
			feed(t, mem, a, out, columnar, exec.Row{int64(3), ms(2900), int64(3)}, exec.Row{int64(4), ms(3000), int64(4)},
				exec.Row{int64(5), nil, int64(5)})
			// A batch that does not advance the clock emits no watermark.
			feed(t, mem, a, out, columnar, exec.Row{int64(6), ms(4000), int64(6)})
			// A source clock behind the records holds the watermark back:
			// 9s records with the source at 6s give 6s - 2s = 4s, not 7s.
			if err := a.OnWatermark(ctx, 6_000_000, out); err != nil {
				t.Fatal(err)
			}
			feed(t, mem, a, out, columnar, exec.Row{int64(7), ms(9000), int64(7)})
			if err := a.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
			if want := []int64{3_000_000, 4_000_000, exec.MaxWatermark}; fmt.Sprint(out.wms) != fmt.Sprint(want) {
				t.Errorf("watermarks %v, want %v", out.wms, want)
			}
			got, _ := out.rows()
			var ks []int64
			for _, r := range got {
				ks = append(ks, r[0].(int64))
			}
			if fmt.Sprint(ks) != "[1 2 3 4 5 6 7]" {
				t.Errorf("kept keys %v, want every row", ks)
			}
			if a.Behind() != 1 || counter(a.Report(), "records behind the watermark (kept)") != 1 {
				t.Errorf("behind %d, want 1", a.Behind())
			}
		})
	}
}

// An assigner following a source with per-partition clocks emits nothing
// before the source's first watermark (a partition that has not produced
// yet may bring the oldest records), then never runs ahead of it.
func TestWatermarkAssignerFollowsSource(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprint("columnar=", columnar), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			a := NewWatermarkAssigner(1, 4*time.Second, mem)
			a.FollowSource()
			defer a.Close()
			out := &capture{}
			// One partition's minute of records: no watermark yet.
			feed(t, mem, a, out, columnar, exec.Row{int64(1), ms(10_000), int64(1)}, exec.Row{int64(2), ms(59_000), int64(2)})
			if len(out.wms) != 0 {
				t.Fatalf("watermarks %v before the source reported its clock", out.wms)
			}
			// The other partition's first records (2 s) are not behind.
			feed(t, mem, a, out, columnar, exec.Row{int64(3), ms(2000), int64(3)})
			if a.Behind() != 0 {
				t.Fatalf("%d records behind, want none", a.Behind())
			}
			// The source's clock (min over partitions, 2 s) bounds it.
			if err := a.OnWatermark(ctx, 2_000_000, out); err != nil {
				t.Fatal(err)
			}
			if err := a.OnWatermark(ctx, 30_000_000, out); err != nil {
				t.Fatal(err)
			}
			if err := a.Finish(ctx, 0, out); err != nil {
				t.Fatal(err)
			}
			if want := []int64{-2_000_000, 26_000_000, exec.MaxWatermark}; fmt.Sprint(out.wms) != fmt.Sprint(want) {
				t.Errorf("watermarks %v, want %v", out.wms, want)
			}
			out.rows()
		})
	}
}
