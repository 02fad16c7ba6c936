package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func TestUnionAll(t *testing.T) {
	runCase(t, opCase{
		name:  "two inputs",
		newOp: func(memory.Allocator) exec.Operator { return NewUnionAll(2) },
		inputs: func(nulls bool) []input {
			return []input{{SampleSchema, sampleRows(40, nulls)}, {SampleSchema, sampleRows(7, !nulls)}}
		},
		want: func(ins []input) []exec.Row {
			return append(append([]exec.Row(nil), ins[0].rows...), ins[1].rows...)
		},
	})
}
