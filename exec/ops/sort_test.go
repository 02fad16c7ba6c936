package ops

import (
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// refSort is an independent ORDER BY over BIGINT / VARCHAR / DOUBLE /
// TIMESTAMP keys.
func refSort(rows []exec.Row, keys []SortKey, limit int64) []exec.Row {
	out := append([]exec.Row(nil), rows...)
	less := func(a, b exec.Row) int {
		for _, k := range keys {
			x, y := a[k.Col], b[k.Col]
			if x == nil && y == nil {
				continue
			}
			if x == nil || y == nil {
				if (x == nil) == k.NullsFirst {
					return -1
				}
				return 1
			}
			var c int
			switch xv := x.(type) {
			case int64:
				c = map[bool]int{true: -1, false: 1}[xv < y.(int64)]
				if xv == y.(int64) {
					c = 0
				}
			case string:
				c = map[bool]int{true: -1, false: 1}[xv < y.(string)]
				if xv == y.(string) {
					c = 0
				}
			case float64:
				c = map[bool]int{true: -1, false: 1}[xv < y.(float64)]
				if xv == y.(float64) {
					c = 0
				}
			case arrow.Timestamp:
				c = map[bool]int{true: -1, false: 1}[xv < y.(arrow.Timestamp)]
				if xv == y.(arrow.Timestamp) {
					c = 0
				}
			}
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) < 0 })
	if limit >= 0 && int64(len(out)) > limit {
		out = out[:limit]
	}
	return out
}

func TestSort(t *testing.T) {
	for _, tc := range []struct {
		keys  []SortKey
		limit int64
		n     int
	}{
		{[]SortKey{{Col: 0}, {Col: 2, Desc: true, NullsFirst: true}}, -1, 120},
		{[]SortKey{{Col: 1, NullsFirst: true}, {Col: 3, Desc: true}}, -1, 120},
		{[]SortKey{{Col: 2, Desc: true, NullsFirst: true}, {Col: 0}}, 7, 120}, // top-n, no compaction
		{[]SortKey{{Col: 3}}, 0, 30},
		// top-n past its compaction of held rows on both paths
		{[]SortKey{{Col: 2}, {Col: 1, Desc: true}}, 25, 9000},
	} {
		sizes := "all"
		if tc.n > 1000 {
			sizes = "large"
		}
		c := opCase{
			name: fmt.Sprintf("%v/limit=%d/n=%d", tc.keys, tc.limit, tc.n),
			newOp: func(mem memory.Allocator) exec.Operator {
				if tc.limit >= 0 {
					return NewTopN(tc.keys, tc.limit, mem)
				}
				return NewSort(tc.keys, mem)
			},
			inputs:  sampleInput(tc.n),
			ordered: true,
			want:    func(ins []input) []exec.Row { return refSort(ins[0].rows, tc.keys, tc.limit) },
		}
		if sizes == "large" {
			// batch size 1 over 9000 rows is slow and adds nothing here
			runLarge(t, c)
			continue
		}
		runCase(t, c)
	}
}

// runLarge is runCase with batch sizes 1024 and 500 only.
func runLarge(t *testing.T, c opCase) {
	for _, nulls := range []bool{false, true} {
		for _, size := range []int{500, 1024} {
			for _, col := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/nulls=%v/size=%d/col=%v", c.name, nulls, size, col), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					ins := c.inputs(nulls)
					res := runOp(t, mem, c.newOp(mem), ins, size, col, col)
					if want := c.want(ins); !rowsEqual(res.rows, want) {
						t.Errorf("got %v\nwant %v", trunc(res.rows), trunc(want))
					}
				})
			}
		}
	}
}

// Sorting columnar input yields columnar output.
func TestSortEmitsColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	res := runOp(t, mem, NewSort([]SortKey{{Col: 0}}, mem), []input{{SampleSchema, sampleRows(20000, false)}}, 1024, true, true)
	if res.outCol != res.outBatches || res.outBatches != 3 {
		t.Fatalf("%d of %d output batches columnar; want 3 of 3 (chunks of %d)", res.outCol, res.outBatches, emitChunk)
	}
}

// A mix of columnar and row batches sorts as one input.
func TestSortMixedInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := sampleRows(50, true)
	s := NewSort([]SortKey{{Col: 2}, {Col: 0, Desc: true}}, mem)
	defer s.Close()
	rec, err := exec.EncodeRows(mem, SampleSchema, rows[:25])
	if err != nil {
		t.Fatal(err)
	}
	cb := exec.NewColumnarBatch(rec)
	defer cb.Release()
	c := &capture{}
	ctx := t.Context()
	if _, err := exec.Dispatch(ctx, s, true, 0, cb, c); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Dispatch(ctx, s, true, 0, exec.NewRowBatch(SampleSchema, rows[25:]), c); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, 0, c); err != nil {
		t.Fatal(err)
	}
	got, _ := c.rows()
	want := refSort(rows, s.keys, -1)
	// ties may interleave differently across the two halves: compare keys
	for i := range want {
		if fmt.Sprint(got[i][2], got[i][0]) != fmt.Sprint(want[i][2], want[i][0]) {
			t.Fatalf("row %d: got %v want %v", i, got[i], want[i])
		}
	}
}
