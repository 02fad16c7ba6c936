package parquet

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// streamer decodes each batch as it arrives and does not keep it, as the
// engine's operators do: the batch's blocks go back to the scan's
// recycler before the next batch is read, so later batches are built in
// reused (unzeroed, or in poison mode 0xFF-filled) memory.
type streamer struct {
	rows []exec.Row
}

func (s *streamer) Emit(_ context.Context, b *exec.Batch) error {
	rec := b.Record()
	// The offsets must be well formed: a stray one would otherwise only
	// show as a wrong string, or a slice out of range.
	for i, col := range rec.Columns() {
		if v, ok := col.(interface{ ValidateFull() error }); ok {
			if err := v.ValidateFull(); err != nil {
				return fmt.Errorf("column %d: %w", i, err)
			}
		}
	}
	s.rows = append(s.rows, exec.DecodeRows(rec)...)
	return nil
}

func (s *streamer) EmitWatermark(context.Context, int64) error { return nil }

// countingMem counts the allocations that reach the allocator under the
// scan's recycler.
type countingMem struct {
	memory.Allocator
	n atomic.Int64
}

func (c *countingMem) Allocate(size int) []byte {
	c.n.Add(1)
	return c.Allocator.Allocate(size)
}

// TestScanRecycled: the scan builds its batches in recycled memory by
// default, and every cell still reads back exactly, also when every block
// is filled with 0xFF before the readers write it (poison): a byte of a
// validity bitmap, a boolean bitmap or an offset that a reader leaves
// unwritten shows as a wrong value or a failed validation. The fixture has
// nulls in every nullable column, dictionary and plain pages, and several
// row groups; small batches give many batches per page and pages per batch.
func TestScanRecycled(t *testing.T) {
	for _, mode := range []string{"", "poison", "off"} {
		for _, bs := range []int{3, 64, 300, 8192} {
			t.Run(fmt.Sprintf("mode=%s/batch%d", mode, bs), func(t *testing.T) {
				t.Setenv("CLINK_PARQUET_RECYCLE", mode)
				checked := checkedMem(t)
				defer checked.AssertSize(t, 0)
				mem := &countingMem{Allocator: checked}
				tbl, err := Open(fixtures+"arrow_types.parquet", nil)
				if err != nil {
					t.Fatal(err)
				}
				tbl.WithAllocator(mem)
				src, err := tbl.NewSource(connectors.ScanSpec{BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				s := &streamer{}
				if err := src.Run(context.Background(), s); err != nil {
					t.Fatal(err)
				}
				checkRows(t, s.rows, arrowRow, arrowRows, nil)

				// Every batch allocates a buffer or more per column; with
				// recycling only the first batches of each size reach the
				// allocator.
				batches := (arrowRows + bs - 1) / bs
				allocs := int(mem.n.Load())
				if mode == "off" {
					if allocs < batches*arrowSchema.NumFields() {
						t.Fatalf("%d allocations for %d batches without recycling", allocs, batches)
					}
				} else if batches >= 10 && allocs > batches*arrowSchema.NumFields()/4 {
					t.Fatalf("%d allocations for %d batches of %d columns: blocks are not reused", allocs, batches, arrowSchema.NumFields())
				}
			})
		}
	}
}
