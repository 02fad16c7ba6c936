// Package recycle is an Arrow allocator that hands released blocks out
// again. It serves the producers of short-lived batches (the keyed
// exchange's sub-batches, the Parquet scan's output), whose consumers
// release each batch before the next is made.
package recycle

import (
	"math/bits"
	"os"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Allocator is a memory.Allocator that keeps blocks released by a
// producer's consumers and hands them out again, by power-of-two size
// class. Under the Go allocator every batch block is fresh memory: the
// runtime zeroes it, large blocks (over 32 KB, a batch of a few thousand
// rows) come from pages the scavenger has returned to the OS, and the GC
// runs in step with the bytes produced. That, not the copying, was most of
// the keyed split's cost (madvise and page faults in the profile), and the
// largest part of the Parquet scan's. A recycled block is neither zeroed
// nor faulted in.
//
// The price is the Arrow contract taken literally: memory is reused only
// once its last reference is released (a buffer's refcount reaching zero is
// what calls Free), so a consumer that keeps a sub-batch Retained just keeps
// its block; but one that reads a batch after releasing it, or keeps a
// string aliasing it without Retain, reads another batch's bytes, and a
// producer that hands out bytes it never wrote hands out garbage. The
// users (shuffle.Exchange, the Parquet source) document their audit, and
// the poison mode (SetPoison, switched on by their environment variables)
// makes either mistake show in any test.
//
// Safe for concurrent use: consumers release on their own goroutines.
type Allocator struct {
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

// New returns an allocator over mem holding at most limit bytes of
// released blocks.
func New(mem memory.Allocator, limit int) *Allocator {
	return &Allocator{mem: mem, limit: limit}
}

// FromEnv returns New(mem, limit), poisoned when the environment variable
// name is "poison", or nil when it is "off" (the A/B switch back to mem).
func FromEnv(name string, mem memory.Allocator, limit int) *Allocator {
	switch os.Getenv(name) {
	case "off":
		return nil
	case "poison":
		r := New(mem, limit)
		r.poison = true
		return r
	}
	return New(mem, limit)
}

// SetPoison switches poison mode (see Allocator.poison); call it before
// the first Allocate.
func (r *Allocator) SetPoison(on bool) { r.poison = on }

// Poisoned reports whether poison mode is on.
func (r *Allocator) Poisoned() bool { return r.poison }

// SetLimit changes how many bytes of released blocks are kept.
func (r *Allocator) SetLimit(limit int) {
	r.mu.Lock()
	r.limit = limit
	r.mu.Unlock()
}

// Held is how many bytes of released blocks are kept for reuse.
func (r *Allocator) Held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Base is the allocator under r.
func (r *Allocator) Base() memory.Allocator { return r.mem }

func sizeClass(size int) int {
	if size <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns a block of size bytes (not zeroed when recycled).
func (r *Allocator) Allocate(size int) []byte {
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
func (r *Allocator) fill(b []byte) []byte {
	if r.poison {
		for i := range b {
			b[i] = 0xFF
		}
	}
	return b
}

// Reallocate grows b, keeping its contents.
func (r *Allocator) Reallocate(size int, b []byte) []byte {
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
func (r *Allocator) Free(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) < 1<<minClass || c > maxClass || cap(b) != 1<<c {
		// Not one of our class blocks: back to mem whole, as it allocated
		// it (Reallocate may have shortened it in place).
		r.mem.Free(b[:cap(b)])
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
func (r *Allocator) Close() {
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

var _ memory.Allocator = (*Allocator)(nil)

// Zeroing is mem, or the allocator under it when mem is an Allocator: for
// Arrow code (kernels, builders, Concatenate) that assumes new memory is
// zeroed, as the Go allocator's is.
func Zeroing(mem memory.Allocator) memory.Allocator {
	if r, ok := mem.(*Allocator); ok {
		return r.mem
	}
	return mem
}
