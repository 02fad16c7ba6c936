package ops

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec/recycle"
)

// outputRecycleLimit is how many bytes of released output blocks one
// filter or join instance keeps for reuse.
const outputRecycleLimit = 8 << 20

// outputAllocator is where a filter or a hash join builds the batches it
// gathers: a recycler over mem (exec/recycle), so a batch's columns reuse
// the blocks of batches the consumers have released instead of fresh,
// zeroed Go memory (runtime.memclr and page faults were a tenth of a join's
// profile). Only the gathers in gather.go write into it, and they write
// every byte they hand out; Arrow code that assumes zeroed memory (the
// Take kernel, builders, expression kernels) gets mem or
// recycle.Zeroing. CLINK_OPERATOR_RECYCLE=off is the A/B switch back to
// mem, =poison the test mode the engine's tests run in.
func outputAllocator(mem memory.Allocator) (memory.Allocator, *recycle.Allocator) {
	if r := recycle.FromEnv("CLINK_OPERATOR_RECYCLE", mem, outputRecycleLimit); r != nil {
		return r, r
	}
	return mem, nil
}
