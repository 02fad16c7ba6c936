package shuffle

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Recycler is a memory.Allocator that keeps blocks released by the split's
// consumers and hands them out again, by power-of-two size class. Under the
// Go allocator every sub-record block is fresh memory: the runtime zeroes it,
// large blocks (over 32 KB, a sub-batch of a few thousand rows) come from
// pages the scavenger has returned to the OS, and the GC runs in step with
// the bytes split. That, not the copying, was most of the split's cost in
// BenchmarkSplit (madvise and page faults in the profile). A recycled block
// is neither zeroed nor faulted in.
//
// The price is the Arrow contract taken literally: memory is reused only
// once its last reference is released (a buffer's refcount reaching zero is
// what calls Free), so a consumer that keeps a sub-batch Retained just keeps
// its block; but one that reads a batch after releasing it, or keeps a
// string aliasing it without Retain, reads another batch's bytes, and code
// that reads bytes it never wrote reads garbage. The exchange's consumers
// were audited for both (see Exchange), and the poison mode
// (CLINK_SHUFFLE_RECYCLE=poison) makes either mistake show in any test.
//
// Safe for concurrent use: consumers release on their own goroutines.
type Recycler struct {
	mem   memory.Allocator
	limit int // bytes held at most
	// poison fills every block handed out, and every block kept for reuse,
	// with 0xFF: a test mode that turns a read of unwritten bytes or of a
	// released batch into a visible wrong value instead of a rare one.
	poison bool

	mu     sync.Mutex
	free   [maxClass + 1][][]byte
	held   int
	closed bool
}

const (
	minClass = 6  // 64 B: Arrow pads buffers to 64 bytes anyway
	maxClass = 24 // 16 MB: bigger blocks go straight to mem
)

// NewRecycler returns a recycler over mem holding at most limit bytes of
// released blocks.
func NewRecycler(mem memory.Allocator, limit int) *Recycler {
	return &Recycler{mem: mem, limit: limit}
}

func sizeClass(size int) int {
	if size <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a block of size bytes (not zeroed when recycled).
func (r *Recycler) Allocate(size int) []byte {
	c := sizeClass(size)
	if c > maxClass {
		return r.fill(r.mem.Allocate(size))
	}
	r.mu.Lock()
	if n := len(r.free[c]); n > 0 {
		b := r.free[c][n-1]
		r.free[c] = r.free[c][:n-1]
		r.held -= len(b)
		r.mu.Unlock()
		return r.fill(b[:size])
	}
	r.mu.Unlock()
	return r.fill(r.mem.Allocate(1 << c)[:size])
}

// fill poisons b in poison mode.
func (r *Recycler) fill(b []byte) []byte {
	if r.poison {
		for i := range b {
			b[i] = 0xFF
		}
	}
	return b
}

// Reallocate grows b, keeping its contents.
func (r *Recycler) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free keeps b for reuse, or hands it back to mem when the recycler is
// full or closed.
func (r *Recycler) Free(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) < 1<<minClass || c > maxClass || cap(b) != 1<<c {
		r.mem.Free(b) // not one of our class blocks
		return
	}
	b = b[:cap(b)] // the whole block, as mem allocated it
	r.mu.Lock()
	if r.closed || r.held+len(b) > r.limit {
		r.mu.Unlock()
		r.mem.Free(b)
		return
	}
	r.free[c] = append(r.free[c], r.fill(b))
	r.held += len(b)
	r.mu.Unlock()
}

// Close hands every held block back to mem; blocks released later go
// straight back too.
func (r *Recycler) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for c := range r.free {
		for _, b := range r.free[c] {
			r.mem.Free(b)
		}
		r.free[c] = nil
	}
	r.held = 0
}

var _ memory.Allocator = (*Recycler)(nil)

// zeroing is mem, or the allocator under it when mem is a Recycler: for
// Arrow code (kernels, builders, Concatenate) that assumes new memory is
// zeroed, as the Go allocator's is.
func zeroing(mem memory.Allocator) memory.Allocator {
	if r, ok := mem.(*Recycler); ok {
		return r.mem
	}
	return mem
}
