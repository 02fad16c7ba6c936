package shuffle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// TestSplitRecycledMatchesReference: recycled blocks are not zeroed, so a
// gather that left any byte of a buffer unwritten (a validity bitmap, the
// tail of a bool bitmap, an offset) would show the previous batch's data.
// Batches with and without nulls alternate so bitmaps come and go.
func TestSplitRecycledMatchesReference(t *testing.T) {
	base := newMem(t)
	r := recycle.New(base, 8<<20)
	rng := rand.New(rand.NewPCG(21, 22))
	var sc Scratch
	for i := range 40 {
		nullPct := 0
		if i%2 == 1 {
			nullPct = 30
		}
		rows := genRows(rng, 0, 1+rng.IntN(3000), 80, nullPct)
		rec := encode(t, base, allTypes, rows)
		for _, targets := range []int{2, 5, 16} {
			releaseAll(checkSplitRows(t, r, rec, rows, []int{1, 7}, targets, &sc))
		}
		rec.Release()
	}
	if r.Held() == 0 {
		t.Fatal("nothing was recycled")
	}
	r.Close()
}

// TestExchangeRecycled: recycling is the default, and split and coalesced
// sub-batches arrive intact (recycled blocks are not zeroed), also with
// every block poisoned and with recycling switched off.
func TestExchangeRecycled(t *testing.T) {
	for _, mode := range []string{"", "poison", "off"} {
		t.Run("mode="+mode, func(t *testing.T) {
			t.Setenv("CLINK_SHUFFLE_RECYCLE", mode)
			ex := NewExchange([]int{1, 7}, newMem(t))
			if got := ex.recycle != nil; got != (mode != "off") {
				t.Fatalf("recycling %v in mode %q", got, mode)
			}
			if mode == "poison" && !ex.recycle.Poisoned() {
				t.Fatal("poison mode did not poison")
			}
			exchangeRoundTrip(t, ex)
		})
	}
}

func exchangeRoundTrip(t *testing.T, ex *Exchange) {
	mem := newMem(t)
	o := &out{n: 3}
	rng := rand.New(rand.NewPCG(8, 8))
	total := 0
	var input []exec.Row
	for range 30 {
		n := 1 + rng.IntN(2000)
		rows := genRows(rng, total, n, 50, 10)
		input = append(input, rows...)
		b := exec.NewColumnarBatch(encode(t, mem, allTypes, rows))
		total += n
		if _, err := exec.Dispatch(t.Context(), ex, true, 0, b, o); err != nil {
			t.Fatal(err)
		}
		b.Release()
	}
	if err := ex.Finish(t.Context(), 0, o); err != nil {
		t.Fatal(err)
	}
	ex.Close()
	checkRouting(t, o, []int{1, 7}, input)
}

// TestSplitPoisonedMatchesReference: with every block 0xFF before the
// gather writes it, any byte of a buffer the gather leaves unwritten (the
// tail bits of a bitmap, an offset) shows as a wrong value.
func TestSplitPoisonedMatchesReference(t *testing.T) {
	base := newMem(t)
	r := recycle.New(base, 8<<20)
	r.SetPoison(true)
	defer r.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	var sc Scratch
	for i := range 12 {
		rows := genRows(rng, 0, 1+rng.IntN(2000), 60, 25*(i%2))
		rec := encode(t, base, allTypes, rows)
		for _, targets := range []int{2, 3, 8} {
			releaseAll(checkSplitRows(t, r, rec, rows, []int{1, 7}, targets, &sc))
		}
		rec.Release()
	}
}

// keeper is a consumer that keeps every sub-batch it gets (Retained, as a
// join build or a sort does) and reads them only at the end.
type keeper struct {
	n    int
	kept [][]*exec.Batch // per target
}

func (k *keeper) Targets() int { return k.n }
func (k *keeper) EmitTo(_ context.Context, t int, b *exec.Batch) error {
	b.Retain()
	k.kept[t] = append(k.kept[t], b)
	return nil
}
func (k *keeper) Emit(context.Context, *exec.Batch) error    { return nil }
func (k *keeper) EmitWatermark(context.Context, int64) error { return nil }

// TestExchangeRecycledKeptBatches: sub-batches a consumer keeps are never
// handed out again while it holds them, however many batches follow (a
// kept block is not Freed, so the recycler cannot have it); poisoned, a
// reused kept block would read 0xFF or another batch's rows.
func TestExchangeRecycledKeptBatches(t *testing.T) {
	t.Setenv("CLINK_SHUFFLE_RECYCLE", "poison")
	mem := newMem(t)
	ex := NewExchange([]int{1}, mem)
	defer ex.Close()
	k := &keeper{n: 4, kept: make([][]*exec.Batch, 4)}
	rng := rand.New(rand.NewPCG(9, 9))
	var input []exec.Row
	for range 20 {
		rows := genRows(rng, len(input), 3000+rng.IntN(3000), 40, 10)
		input = append(input, rows...)
		b := exec.NewColumnarBatch(encode(t, mem, allTypes, rows))
		if _, err := exec.Dispatch(t.Context(), ex, true, 0, b, k); err != nil {
			t.Fatal(err)
		}
		b.Release()
		// Releasing a share of what is kept lets the recycler reuse those
		// blocks for the next batches while the rest stay kept.
		for tg := range k.kept {
			if n := len(k.kept[tg]); n > 0 && rng.IntN(2) == 0 {
				k.kept[tg][n-1].Release()
				k.kept[tg] = k.kept[tg][:n-1]
			}
		}
	}
	if err := ex.Finish(t.Context(), 0, k); err != nil {
		t.Fatal(err)
	}
	held := ex.recycle.Held()
	if held == 0 {
		t.Fatal("nothing was recycled: the test does not exercise reuse")
	}
	seen := 0
	for tg, bs := range k.kept {
		for _, b := range bs {
			for _, r := range b.Rows() {
				want := input[r[0].(int64)]
				if got, w := fmt.Sprint(r), fmt.Sprint(want); got != w {
					t.Fatalf("target %d: kept row %s changed to %s", tg, w, got)
				}
				if TargetOf(HashRow(r, []int{1}), 4) != tg {
					t.Fatalf("row %v at target %d", r, tg)
				}
				seen++
			}
			b.Release()
		}
	}
	if seen == 0 {
		t.Fatal("no kept rows to check")
	}
}
