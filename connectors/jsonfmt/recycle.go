package jsonfmt

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/recycle"
)

// A decoded batch's buffers are fresh each time (Arrow owns them once
// emitted), and the Go allocator's Free is a no-op, so without recycling
// every batch pays for zeroed memory (and page faults) the GC then has to
// collect. The decoders of a process share one recycling allocator (the
// one the keyed exchange and the Parquet scan use): the decoder writes
// every byte it exposes (validity bits are set or cleared per value,
// padding bits are cleared at finish), so a reused block is safe.
//
// It is used only over the Go allocator: over any other allocator (a
// CheckedAllocator in tests) the decoder allocates from it directly, so
// leak checks see every buffer.
var sharedRecycle = recycle.New(memory.NewGoAllocator(), 64<<20)

// decodeAllocator picks the allocator the decoder builds batches with.
func decodeAllocator(mem memory.Allocator) memory.Allocator {
	if _, ok := mem.(*memory.GoAllocator); ok && recycleOn {
		return sharedRecycle
	}
	return mem
}

// recycleOn is the A/B switch for BenchmarkDecodeBids.
var recycleOn = true
