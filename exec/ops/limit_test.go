package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func TestLimit(t *testing.T) {
	const n = 50
	for _, tc := range []struct {
		limit, offset int64
		stops         bool
	}{
		{10, 0, true}, {10, 5, true}, {0, 0, true}, {-1, 45, false}, {-1, 0, false}, {100, 3, false}, {50, 0, true},
	} {
		runCase(t, opCase{
			name:    fmt.Sprintf("limit=%d,offset=%d", tc.limit, tc.offset),
			newOp:   func(memory.Allocator) exec.Operator { return NewLimit(tc.limit, tc.offset) },
			inputs:  sampleInput(n),
			ordered: true,
			stops:   tc.stops,
			want: func(ins []input) []exec.Row {
				rows := ins[0].rows
				lo := min(int(tc.offset), len(rows))
				hi := len(rows)
				if tc.limit >= 0 {
					hi = min(hi, lo+int(tc.limit))
				}
				return rows[lo:hi]
			},
		})
	}
}

// A LIMIT stops as soon as it has its rows: later batches are not offered.
func TestLimitStopsEarly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	res := runOp(t, mem, NewLimit(4, 0), []input{{SampleSchema, sampleRows(100, false)}}, 3, true, true)
	if !res.stopped || len(res.rows) != 4 || res.columnarIn != 2 {
		t.Fatalf("stopped=%v rows=%d batches taken=%d; want true, 4, 2", res.stopped, len(res.rows), res.columnarIn)
	}
}
