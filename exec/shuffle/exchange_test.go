package shuffle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// out is a routed emitter that records what reaches each target, decoding
// columnar batches itself (exec.DecodeRows counts nothing).
type out struct {
	n       int
	events  []event
	stop    map[int]bool // targets that answer ErrStop
	forward []*exec.Batch
}

type event struct {
	target   int // -1 for a watermark
	wm       int64
	rows     []exec.Row
	columnar bool
}

func (o *out) Targets() int { return o.n }

func (o *out) EmitTo(_ context.Context, t int, b *exec.Batch) error {
	if t < 0 || t >= o.n {
		return fmt.Errorf("target %d of %d", t, o.n)
	}
	if o.stop[t] {
		return exec.ErrStop
	}
	ev := event{target: t, columnar: b.IsColumnar()}
	if b.IsColumnar() {
		// Decoded strings alias the record's memory, which a Recycler
		// reuses once the batch is released: keep copies.
		ev.rows = exec.DecodeRows(b.Record())
		for _, r := range ev.rows {
			cloneStrings(r)
		}
	} else {
		ev.rows = b.Rows()
	}
	o.events = append(o.events, ev)
	return nil
}

func cloneStrings(r exec.Row) {
	for i, v := range r {
		switch x := v.(type) {
		case string:
			r[i] = strings.Clone(x)
		case exec.Row:
			cloneStrings(x)
		}
	}
}

func (o *out) Emit(_ context.Context, b *exec.Batch) error {
	o.forward = append(o.forward, b)
	return nil
}

func (o *out) EmitWatermark(_ context.Context, wm int64) error {
	o.events = append(o.events, event{target: -1, wm: wm})
	return nil
}

// rowsSent counts the data rows recorded so far.
func (o *out) rowsSent() int {
	n := 0
	for _, e := range o.events {
		n += len(e.rows)
	}
	return n
}

func keyString(r exec.Row, keys []int) string {
	parts := make([]any, len(keys))
	for i, c := range keys {
		parts[i] = r[c]
	}
	return fmt.Sprintf("%v", parts)
}

// checkRouting checks that every input row (input[seq]) arrived exactly
// once and intact, at the target the reference routing names, in input
// order per target, so every key is seen by one target only.
func checkRouting(t *testing.T, o *out, keys []int, input []exec.Row) {
	t.Helper()
	seen := make([]bool, len(input))
	last := make([]int64, o.n)
	for i := range last {
		last[i] = -1
	}
	keyTarget := map[string]int{}
	for _, e := range o.events {
		for _, r := range e.rows {
			seq := r[0].(int64)
			if seen[seq] {
				t.Fatalf("row %d delivered twice", seq)
			}
			seen[seq] = true
			if got, want := rowString(r), rowString(input[seq]); got != want {
				t.Fatalf("row %d arrived as %s, sent as %s", seq, got, want)
			}
			if seq <= last[e.target] {
				t.Fatalf("target %d: row %d after row %d", e.target, seq, last[e.target])
			}
			last[e.target] = seq
			if want := refTarget(HashRow(r, keys), o.n); e.target != want {
				t.Fatalf("row %d (key %s) at target %d, want %d", seq, keyString(r, keys), e.target, want)
			}
			k := keyString(r, keys)
			if prev, ok := keyTarget[k]; ok && prev != e.target {
				t.Fatalf("key %s seen by targets %d and %d", k, prev, e.target)
			}
			keyTarget[k] = e.target
		}
	}
	for i, s := range seen {
		if !s {
			t.Fatalf("row %d never delivered", i)
		}
	}
}

// TestExchangeInterleavesRowAndColumnarBatches: the same keys arrive in
// columnar and in row batches; the row split must route them exactly as
// the columnar split.
func TestExchangeInterleavesRowAndColumnarBatches(t *testing.T) {
	ctx := context.Background()
	for _, targets := range []int{2, 3, 8} {
		for _, keys := range [][]int{{1}, {7}, {1, 7}, {3, 6, 11}} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			rng := rand.New(rand.NewPCG(uint64(targets), uint64(len(keys))))
			ex := NewExchange(keys, mem)
			o := &out{n: targets}
			before := exec.Global.BatchesMaterialized.Load()
			total := 0
			var input []exec.Row
			for i := range 24 {
				n := 1 + rng.IntN(1000)
				rows := genRows(rng, total, n, 30, 10)
				input = append(input, rows...)
				total += n
				var b *exec.Batch
				if i%2 == 0 {
					b = exec.NewColumnarBatch(encode(t, mem, allTypes, rows))
				} else {
					b = exec.NewRowBatch(allTypes, rows)
				}
				columnar, err := exec.Dispatch(ctx, ex, true, 0, b, o)
				if err != nil {
					t.Fatal(err)
				}
				if columnar != b.IsColumnar() || b.Materialized() {
					t.Fatalf("batch %d: columnar path %v for a columnar=%v batch, materialised %v", i, columnar, b.IsColumnar(), b.Materialized())
				}
				b.Release()
				if i%7 == 6 {
					if err := ex.OnWatermark(ctx, int64(i), o); err != nil {
						t.Fatal(err)
					}
					if got := o.rowsSent(); got != total {
						t.Fatalf("watermark after %d rows forwarded with %d sent: held rows would arrive late", total, got)
					}
				}
			}
			if err := ex.Finish(ctx, 0, o); err != nil {
				t.Fatal(err)
			}
			ex.Close()
			if exec.Global.BatchesMaterialized.Load() != before {
				t.Fatal("the exchange materialised a columnar batch")
			}
			checkRouting(t, o, keys, input)
			var col, row int
			for _, e := range o.events {
				if e.target >= 0 && e.columnar {
					col++
				} else if e.target >= 0 {
					row++
				}
			}
			if col == 0 || row == 0 {
				t.Fatalf("%d columnar and %d row outputs: both kinds should pass", col, row)
			}
			mem.AssertSize(t, 0)
		}
	}
}

// TestExchangeCoalesces: 10-row batches leave as batches of at least
// CoalesceRows, except what a watermark or the end flushes; order is kept.
func TestExchangeCoalesces(t *testing.T) {
	ctx := context.Background()
	for _, columnar := range []bool{true, false} {
		t.Run(fmt.Sprintf("columnar=%v", columnar), func(t *testing.T) {
			mem := newMem(t)
			rng := rand.New(rand.NewPCG(77, 1))
			ex := NewExchange([]int{1}, mem)
			defer ex.Close()
			o := &out{n: 2}
			total, inBatches := 0, 0
			var input []exec.Row
			wmAt := -1 // event index of the watermark
			for i := range 600 {
				rows := genRows(rng, total, 10, 1000, 5)
				input = append(input, rows...)
				total += 10
				inBatches++
				b := exec.NewRowBatch(allTypes, rows)
				if columnar {
					b = exec.NewColumnarBatch(encode(t, mem, allTypes, rows))
				}
				if _, err := exec.Dispatch(ctx, ex, true, 0, b, o); err != nil {
					t.Fatal(err)
				}
				b.Release()
				for tg, p := range ex.pend {
					if len(p.segs) >= maxHeldSegments {
						t.Fatalf("target %d pins %d input batches", tg, len(p.segs))
					}
				}
				if i == 299 {
					if err := ex.OnWatermark(ctx, 42, o); err != nil {
						t.Fatal(err)
					}
					wmAt = len(o.events) - 1
					if o.rowsSent() != total {
						t.Fatalf("watermark forwarded with %d of %d rows sent", o.rowsSent(), total)
					}
				}
			}
			sentBeforeFinish := len(o.events)
			if err := ex.Finish(ctx, 0, o); err != nil {
				t.Fatal(err)
			}
			if o.rowsSent() != total {
				t.Fatalf("%d of %d rows sent after Finish", o.rowsSent(), total)
			}
			checkRouting(t, o, []int{1}, input)
			// Each target's outputs are >= CoalesceRows except its last one
			// before the watermark and its last one at Finish.
			lastBefore := map[int]int{}
			lastAfter := map[int]int{}
			for i, e := range o.events {
				if e.target < 0 {
					continue
				}
				if e.columnar != columnar {
					t.Fatalf("event %d: columnar %v", i, e.columnar)
				}
				if i < wmAt {
					lastBefore[e.target] = i
				} else {
					lastAfter[e.target] = i
				}
			}
			outBatches := 0
			for i, e := range o.events {
				if e.target < 0 {
					continue
				}
				outBatches++
				small := len(e.rows) < CoalesceRows
				allowed := lastBefore[e.target] == i || lastAfter[e.target] == i
				if small && !allowed {
					t.Fatalf("event %d: %d rows sent to target %d before a flush was due", i, len(e.rows), e.target)
				}
			}
			if outBatches > 10 || sentBeforeFinish == len(o.events) {
				t.Fatalf("%d input batches became %d outputs (%d before Finish)", inBatches, outBatches, sentBeforeFinish)
			}
		})
	}
}

// TestExchangeOneTargetForwards: with one consumer there is nothing to
// route; the batch itself goes on.
func TestExchangeOneTargetForwards(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	ex := NewExchange([]int{1}, mem)
	defer ex.Close()
	o := &out{n: 1}
	b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(1, 9)), 0, 50, 10, 0)))
	defer b.Release()
	if _, err := exec.Dispatch(ctx, ex, true, 0, b, o); err != nil {
		t.Fatal(err)
	}
	r := exec.NewRowBatch(allTypes, genRows(rand.New(rand.NewPCG(1, 9)), 0, 5, 10, 0))
	if _, err := exec.Dispatch(ctx, ex, true, 0, r, o); err != nil {
		t.Fatal(err)
	}
	if len(o.forward) != 2 || o.forward[0] != b || o.forward[1] != r || len(o.events) != 0 {
		t.Fatalf("forwarded %d batches, %d routed", len(o.forward), len(o.events))
	}
	if b.Materialized() {
		t.Fatal("forwarding materialised the batch")
	}
}

// TestExchangeTargetStops: a target that stops gets nothing more, the rest
// go on; when every target has stopped, the exchange stops.
func TestExchangeTargetStops(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	ex := NewExchange([]int{1}, mem)
	defer ex.Close()
	o := &out{n: 2, stop: map[int]bool{0: true}}
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 5 {
		b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rng, i*2000, 2000, 500, 0)))
		_, err := exec.Dispatch(ctx, ex, true, 0, b, o)
		b.Release()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	for _, e := range o.events {
		if e.target == 0 {
			t.Fatal("a stopped target got data")
		}
	}
	if o.rowsSent() == 0 {
		t.Fatal("the live target got nothing")
	}
	o.stop[1] = true
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rng, 0, 2000, 500, 0)))
		_, err = exec.Dispatch(ctx, ex, true, 0, b, o)
		b.Release()
	}
	if !errors.Is(err, exec.ErrStop) {
		t.Fatalf("every target stopped, got %v", err)
	}
}

// TestExchangeCloseReleasesHeld: sub-batches held for coalescing are
// released by Close when the run ends early (the checked allocator fails
// the test otherwise).
func TestExchangeCloseReleasesHeld(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	ex := NewExchange([]int{1}, mem)
	o := &out{n: 4}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 20 {
		b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rng, i*10, 10, 100, 0)))
		if _, err := exec.Dispatch(ctx, ex, true, 0, b, o); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if len(o.events) != 0 {
		t.Fatalf("%d small batches sent before a flush was due", len(o.events))
	}
	ex.Close()
}

func TestExchangeBadKey(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t)
	ex := NewExchange([]int{40}, mem)
	defer ex.Close()
	o := &out{n: 2}
	b := exec.NewColumnarBatch(encode(t, mem, allTypes, genRows(rand.New(rand.NewPCG(5, 5)), 0, 10, 100, 0)))
	defer b.Release()
	if _, err := exec.Dispatch(ctx, ex, true, 0, b, o); err == nil {
		t.Fatal("columnar: no error for a key column out of range")
	}
	r := exec.NewRowBatch(allTypes, genRows(rand.New(rand.NewPCG(5, 5)), 0, 10, 100, 0))
	if _, err := exec.Dispatch(ctx, ex, false, 0, r, o); err == nil {
		t.Fatal("rows: no error for a key column out of range")
	}
	if ex.Kind() != "exchange" || !ex.Capabilities().IngestsColumnar || !ex.Capabilities().PassesThrough {
		t.Fatalf("kind %q capabilities %+v", ex.Kind(), ex.Capabilities())
	}
}
