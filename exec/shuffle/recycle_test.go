package shuffle

import (
	"math/rand/v2"
	"testing"

	"github.com/clink-sql/clink/exec"
)

// TestSplitRecycledMatchesReference: recycled blocks are not zeroed, so a
// gather that left any byte of a buffer unwritten (a validity bitmap, the
// tail of a bool bitmap, an offset) would show the previous batch's data.
// Batches with and without nulls alternate so bitmaps come and go.
func TestSplitRecycledMatchesReference(t *testing.T) {
	base := newMem(t)
	r := NewRecycler(base, 8<<20)
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
	if r.held == 0 {
		t.Fatal("nothing was recycled")
	}
	r.Close()
}

func TestRecyclerReusesAndBounds(t *testing.T) {
	base := newMem(t)
	r := NewRecycler(base, 4096)
	a := r.Allocate(1000)
	if len(a) != 1000 || cap(a) != 1024 {
		t.Fatalf("len %d cap %d", len(a), cap(a))
	}
	a[0] = 7
	r.Free(a)
	b := r.Allocate(900)
	if &b[0] != &a[0] {
		t.Fatal("a freed block of the same class was not reused")
	}
	big := r.Allocate(8000) // over the limit once freed: goes back to base
	r.Free(big)
	if r.held != 0 {
		t.Fatalf("held %d bytes over a 4096-byte limit", r.held)
	}
	huge := r.Allocate(1<<maxClass + 1) // past the classes: straight from base
	r.Free(huge)
	r.Free(b)
	r.Close()
	c := r.Allocate(100) // after Close: still works, nothing kept
	r.Free(c)
	if r.held != 0 {
		t.Fatal("a closed recycler kept a block")
	}
}

// TestExchangeRecycled: with recycling on, split and coalesced sub-batches
// arrive intact (recycled blocks are not zeroed).
func TestExchangeRecycled(t *testing.T) {
	mem := newMem(t)
	ex := NewExchange([]int{1, 7}, mem)
	ex.Recycle(4 << 20)
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
