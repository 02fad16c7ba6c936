package nexmark

import (
	"context"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type collectIDs struct{ ids []int64 }

func (c *collectIDs) Emit(_ context.Context, b *exec.Batch) error {
	col := b.Record().Column(0).(*array.Int64)
	c.ids = append(c.ids, col.Int64Values()...)
	return nil
}
func (c *collectIDs) EmitWatermark(context.Context, int64) error { return nil }

// Splits of a table generate disjoint parts whose union is the whole table.
func TestSplitsPartitionTheEvents(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl, err := NewTable(map[string]string{"table": "bid", "events.num": "20000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	auction := tbl.Schema().FieldIndices("auction")[0]
	price := tbl.Schema().FieldIndices("price")[0]
	whole := &collectIDs{}
	src, err := tbl.Open(connectors.ScanSpec{Columns: []int{price, auction}})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Run(context.Background(), whole); err != nil {
		t.Fatal(err)
	}
	for _, splits := range []int{2, 3, 7} {
		var parts []int64
		for i := 0; i < splits; i++ {
			c := &collectIDs{}
			src, err := tbl.Open(connectors.ScanSpec{Columns: []int{price, auction}, Split: i, Splits: splits})
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if len(c.ids) == 0 || len(c.ids) == len(whole.ids) {
				t.Fatalf("split %d/%d has %d of %d rows", i, splits, len(c.ids), len(whole.ids))
			}
			parts = append(parts, c.ids...)
		}
		a := append([]int64(nil), whole.ids...)
		sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		if len(a) != len(parts) {
			t.Fatalf("%d splits: %d rows, want %d", splits, len(parts), len(a))
		}
		for i := range a {
			if a[i] != parts[i] {
				t.Fatalf("%d splits: the parts are not the whole table (row %d: %d vs %d)", splits, i, parts[i], a[i])
			}
		}
	}
}
