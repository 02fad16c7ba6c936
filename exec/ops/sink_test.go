package ops

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Collect hands batches on untouched: a columnar batch is not decoded.
func TestCollectDoesNotMaterialise(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var got []*exec.Batch
	c := NewCollect(func(_ context.Context, b *exec.Batch) error {
		got = append(got, b)
		return nil
	})
	col := makeBatches(t, mem, input{SampleSchema, sampleRows(5, true)}, 5, true)[0]
	defer col.Release()
	rows := exec.NewRowBatch(SampleSchema, sampleRows(3, false))
	took, err := exec.Dispatch(t.Context(), c, true, 0, col, nil)
	if err != nil || !took {
		t.Fatalf("columnar: took=%v err=%v", took, err)
	}
	if took, err = exec.Dispatch(t.Context(), c, true, 0, rows, nil); err != nil || took {
		t.Fatalf("rows: took=%v err=%v", took, err)
	}
	if len(got) != 2 || got[0] != col || got[1] != rows || col.Materialized() {
		t.Fatalf("collect changed or decoded its input")
	}
}

func TestValues(t *testing.T) {
	rows := sampleRows(3, true)
	v := NewValues(SampleSchema, rows)
	out := &capture{}
	if err := v.Run(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	got, _ := out.rows()
	if !rowsEqual(got, rows) || len(out.wms) != 1 || out.wms[0] != exec.MaxWatermark {
		t.Fatalf("got %v, watermarks %v", got, out.wms)
	}
	// A stopped consumer ends the source without an error.
	if err := v.Run(t.Context(), stopEmitter{}); err != nil {
		t.Fatal(err)
	}
}

type stopEmitter struct{}

func (stopEmitter) Emit(context.Context, *exec.Batch) error    { return exec.ErrStop }
func (stopEmitter) EmitWatermark(context.Context, int64) error { return exec.ErrStop }
