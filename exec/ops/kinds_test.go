package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// runKind feeds one batch per input through Dispatch and finishes every
// input; it reports whether the columnar hook took every batch.
func runKind(t *testing.T, mem memory.Allocator, k Kind, columnar bool) ([]exec.Row, bool) {
	t.Helper()
	op := k.New(mem)
	defer op.Close()
	if s, ok := op.(exec.ColumnarOutputSetter); ok {
		s.SetColumnarOutput(columnar)
	}
	out := &capture{}
	all := true
	for in := 0; in < k.Ports(); in++ {
		b := makeBatches(t, mem, input{SampleSchema, sampleRows(40, true)}, 64, true)[0]
		took, err := exec.Dispatch(t.Context(), op, columnar, in, b, out)
		b.Release()
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		all = all && took
	}
	for in := 0; in < k.Ports(); in++ {
		if err := op.Finish(t.Context(), in, out); err != nil {
			t.Fatalf("%s finish: %v", k.Name, err)
		}
	}
	rows, _ := out.rows()
	return rows, all
}

// Every operator kind's Capabilities (which the planner's gates read) tell
// the truth about what it implements and what Dispatch does with it.
func TestKindsCapabilities(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			op := k.New(mem)
			defer op.Close()
			if seen[op.Kind()] {
				t.Errorf("kind %q listed twice", op.Kind())
			}
			seen[op.Kind()] = true
			caps := op.Capabilities()
			_, isCol := op.(exec.ColumnarOperator)
			_, isSet := op.(exec.ColumnarOutputSetter)
			if caps.IngestsColumnar != isCol {
				t.Errorf("IngestsColumnar = %v but implements ColumnarOperator = %v", caps.IngestsColumnar, isCol)
			}
			if caps.EmitsColumnar != isSet {
				t.Errorf("EmitsColumnar = %v but implements ColumnarOutputSetter = %v", caps.EmitsColumnar, isSet)
			}
			before := exec.Global.BatchesMaterialized.Load()
			colRows, tookCol := runKind(t, mem, k, true)
			if caps.IngestsColumnar && !tookCol {
				t.Error("columnar batch did not take the columnar path")
			}
			if caps.IngestsColumnar && exec.Global.BatchesMaterialized.Load() != before {
				t.Error("columnar run materialised a batch")
			}
			rowRows, tookRow := runKind(t, mem, k, false)
			if tookRow {
				t.Error("columnar path taken with columnar off")
			}
			if !rowsEqual(sortedRows(colRows), sortedRows(rowRows)) {
				t.Errorf("columnar and row runs differ:\n%v\n%v", trunc(colRows), trunc(rowRows))
			}
		})
	}
	for _, want := range []string{"filter", "project", "limit", "union_all", "sort", "top_n", "hash_aggregate", "hash_join", "nested_loop_join", "stream_join", "set_op", "updating_aggregate", "updating_topn", "collect", "window_funcs", "expand"} {
		if !seen[want] {
			t.Errorf("Kinds() misses %q", want)
		}
	}
}
