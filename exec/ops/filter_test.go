package ops

import (
	"testing"

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
