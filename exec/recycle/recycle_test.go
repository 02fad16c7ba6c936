package recycle

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func newMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func TestRecyclerReusesAndBounds(t *testing.T) {
	base := newMem(t)
	r := New(base, 4096)
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

// TestRecyclerPoison: poison mode fills what it hands out and what it keeps,
// so a string still aliasing a released batch reads 0xFF bytes: the
// mistake recycling punishes (and the Go allocator forgives) becomes
// visible at once in any test.
func TestRecyclerPoison(t *testing.T) {
	r := New(newMem(t), 1<<20)
	r.SetPoison(true)
	defer r.Close()
	a := r.Allocate(100)
	for i, c := range a {
		if c != 0xFF {
			t.Fatalf("byte %d of a poisoned allocation is %#x", i, c)
		}
	}
	r.Free(a)

	b := array.NewStringBuilder(r)
	b.Append("auction-42")
	arr := b.NewStringArray()
	b.Release()
	alias := arr.Value(0) // no copy: points into the array's data buffer
	arr.Release()
	if alias == "auction-42" {
		t.Fatal("a string aliasing a released block still reads its old bytes: poison would miss a use after release")
	}
	if alias != strings.Repeat("\xff", len("auction-42")) {
		t.Fatalf("aliased string after release: %q", alias)
	}
}
