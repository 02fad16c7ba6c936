package recycle

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A block past the size classes, shrunk in place by Reallocate, goes back
// to mem whole: the base allocator's accounting balances.
func TestHugeBlockShrunkIsFreedWhole(t *testing.T) {
	base := memory.NewCheckedAllocator(memory.NewGoAllocator())
	r := New(base, 8<<20)
	buf := memory.NewResizableBuffer(r)
	buf.Resize(1<<maxClass + 4096) // 16 MB + 4 KB: straight from base
	buf.Resize(1000)               // shrink: Reallocate(1024, b) -> b[:1024]
	buf.Release()                  // Free(b[:1024]) -> base.Free with len 1024
	r.Close()
	if got := base.CurrentAlloc(); got != 0 {
		t.Fatalf("base still accounts %d bytes after every buffer was released", got)
	}
}
