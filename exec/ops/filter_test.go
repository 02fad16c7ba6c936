package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func TestFilter(t *testing.T) {
	for _, k := range []int64{5, -100, 1000} { // some, all, none kept
		runCase(t, opCase{
			name:    "v>k",
			newOp:   func(mem memory.Allocator) exec.Operator { return NewFilter(tGt{col: 2, k: k}, mem) },
			inputs:  sampleInput(200),
			ordered: true,
			want: func(ins []input) []exec.Row {
				var out []exec.Row
				for _, r := range ins[0].rows {
					if r[2] != nil && r[2].(int64) > k {
						out = append(out, r)
					}
				}
				return out
			},
		})
	}
}

func TestFilterRejectsNonBoolean(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f := NewFilter(tCol{col: 0, typ: SampleSchema.Field(0).Type}, mem)
	b := makeBatches(t, mem, input{SampleSchema, sampleRows(4, false)}, 4, true)[0]
	defer b.Release()
	if _, err := exec.Dispatch(t.Context(), f, true, 0, b, &capture{}); err == nil {
		t.Fatal("columnar: want an error for a BIGINT predicate")
	}
	if _, err := exec.Dispatch(t.Context(), f, false, 0, b, &capture{}); err == nil {
		t.Fatal("rows: want an error for a BIGINT predicate")
	}
}

// selectTrue reads the bitmaps a word at a time: compare it with a bit by
// bit reference over lengths around word edges, NULLs, all-true words and
// sliced masks (bit offsets not on a byte).
func TestSelectTrue(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, n := range []int{0, 1, 63, 64, 65, 130, 1000} {
		for _, pattern := range []int{1, 2, 3, 7} {
			b := array.NewBooleanBuilder(mem)
			for i := 0; i < n+11; i++ {
				switch {
				case pattern > 1 && i%(pattern*5) == 1:
					b.AppendNull()
				case i >= 64 && i < 192: // two all-true words
					b.Append(true)
				default:
					b.Append(i%pattern == 0)
				}
			}
			full := b.NewBooleanArray()
			b.Release()
			for _, off := range []int{0, 3, 8, 11} {
				m := array.NewSlice(full, int64(off), int64(off+n)).(*array.Boolean)
				var want []int32
				for i := 0; i < n; i++ {
					if m.IsValid(i) && m.Value(i) {
						want = append(want, int32(i))
					}
				}
				got := selectTrue(m, nil)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("n=%d pattern=%d offset=%d: got %v, want %v", n, pattern, off, got, want)
				}
				m.Release()
			}
			full.Release()
		}
	}
}
