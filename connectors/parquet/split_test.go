package parquet

import (
	"context"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

type rowCollector struct{ rows []string }

func (c *rowCollector) Emit(_ context.Context, b *exec.Batch) error {
	rec := b.Record()
	for i := 0; i < int(rec.NumRows()); i++ {
		row := ""
		for col := 0; col < int(rec.NumCols()); col++ {
			row += rec.Column(col).ValueStr(i) + "|"
		}
		c.rows = append(c.rows, row)
	}
	return nil
}
func (c *rowCollector) EmitWatermark(context.Context, int64) error { return nil }

// The splits of a table read disjoint row groups whose union is the table.
func TestSplitsShareRowGroups(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tbl, err := Open("../../testdata/parquet/duckdb_groups.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	if tbl.MaxSplits() < 2 {
		t.Fatalf("fixture has %d row groups; the test needs several", tbl.MaxSplits())
	}
	read := func(spec connectors.ScanSpec) []string {
		src, err := tbl.Open(spec)
		if err != nil {
			t.Fatal(err)
		}
		c := &rowCollector{}
		if err := src.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		return c.rows
	}
	whole := read(connectors.ScanSpec{})
	sort.Strings(whole)
	for _, n := range []int{2, 3, tbl.MaxSplits()} {
		var parts []string
		for i := 0; i < n; i++ {
			p := read(connectors.ScanSpec{Split: i, Splits: n})
			if len(p) == 0 || len(p) == len(whole) {
				t.Fatalf("split %d of %d read %d of %d rows", i, n, len(p), len(whole))
			}
			parts = append(parts, p...)
		}
		sort.Strings(parts)
		if len(parts) != len(whole) {
			t.Fatalf("%d splits read %d rows, the table has %d", n, len(parts), len(whole))
		}
		for i := range whole {
			if whole[i] != parts[i] {
				t.Fatalf("%d splits: row %d differs: %s vs %s", n, i, parts[i], whole[i])
			}
		}
	}
}
