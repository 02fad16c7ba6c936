package jsonfmt

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// recycler is an Arrow allocator over the Go allocator that takes freed
// buffers back. A decoded batch's buffers are fresh each time (Arrow owns
// them once emitted), and the Go allocator's Free is a no-op, so without it
// every batch pays for zeroed memory (and page faults) the GC then has to
// collect. Buffers of 64 KiB and up are kept in power-of-two classes; the
// decoder writes every byte it exposes (validity bits are set or cleared
// per value, padding bits are cleared at finish), so a dirty buffer is safe.
//
// It is used only over the Go allocator: over any other allocator (a
// CheckedAllocator in tests) the decoder allocates from it directly, so
// leak checks see every buffer.
type recycler struct {
	pools [48]sync.Pool
}

const minRecycleClass = 16 // 64 KiB

var (
	goAlloc       = memory.NewGoAllocator()
	sharedRecycle = &recycler{}
)

func class(size int) int { return bits.Len(uint(size - 1)) }

func (r *recycler) Allocate(size int) []byte {
	k := class(size)
	if k < minRecycleClass || k >= len(r.pools) {
		return goAlloc.Allocate(size)
	}
	if v := r.pools[k].Get(); v != nil {
		return (*(v.(*[]byte)))[:size]
	}
	return goAlloc.Allocate(1 << k)[:size]
}

func (r *recycler) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		return b[:size]
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

func (r *recycler) Free(b []byte) {
	k := class(cap(b))
	if k >= minRecycleClass && k < len(r.pools) && cap(b) == 1<<k {
		b = b[:cap(b)]
		r.pools[k].Put(&b)
	}
}

// decodeAllocator picks the allocator the decoder builds batches with.
func decodeAllocator(mem memory.Allocator) memory.Allocator {
	if _, ok := mem.(*memory.GoAllocator); ok && recycleOn {
		return sharedRecycle
	}
	return mem
}

// recycleOn is the A/B switch for BenchmarkDecodeBids.
var recycleOn = true
