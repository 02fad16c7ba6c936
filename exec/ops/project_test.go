package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

func TestProject(t *testing.T) {
	out := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "neg_v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	runCase(t, opCase{
		name: "k,-v,s",
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewProject([]expr.Expr{tCol{0, out.Field(0).Type}, tNeg{2}, sampleCol{1}}, out, mem)
		},
		inputs:  sampleInput(100),
		ordered: true,
		want: func(ins []input) []exec.Row {
			var rows []exec.Row
			for _, r := range ins[0].rows {
				var nv any
				if r[2] != nil {
					nv = -r[2].(int64)
				}
				rows = append(rows, exec.Row{r[0], nv, r[1]})
			}
			return rows
		},
	})
}

func TestProjectZeroCopyColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := arrow.NewSchema([]arrow.Field{SampleSchema.Field(1)}, nil)
	p := NewProject([]expr.Expr{sampleCol{1}}, out, mem)
	b := makeBatches(t, mem, input{SampleSchema, sampleRows(10, true)}, 10, true)[0]
	defer b.Release()
	c := &capture{}
	if took, err := exec.Dispatch(t.Context(), p, true, 0, b, c); err != nil || !took {
		t.Fatalf("took=%v err=%v", took, err)
	}
	got := c.batches[0].Record().Column(0)
	if got.Data().Buffers()[2] != b.Record().Column(1).Data().Buffers()[2] {
		t.Error("a bare column reference was copied")
	}
	c.rows()
}

func TestProjectTypeMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String}}, nil)
	p := NewProject([]expr.Expr{tNeg{2}}, out, mem)
	b := makeBatches(t, mem, input{SampleSchema, sampleRows(3, false)}, 3, true)[0]
	defer b.Release()
	if _, err := exec.Dispatch(t.Context(), p, true, 0, b, &capture{}); err == nil {
		t.Fatal("want a type error")
	}
}

// The planner passes package expr's column references: they project zero
// copy too (their EvalColumnar retains the input column).
func TestProjectExprColRef(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	out := arrow.NewSchema([]arrow.Field{SampleSchema.Field(1), SampleSchema.Field(0)}, nil)
	p := NewProject([]expr.Expr{expr.Col(1, out.Field(0).Type, "s"), expr.Col(0, out.Field(1).Type, "k")}, out, mem)
	b := makeBatches(t, mem, input{SampleSchema, sampleRows(10, true)}, 10, true)[0]
	defer b.Release()
	c := &capture{}
	if took, err := exec.Dispatch(t.Context(), p, true, 0, b, c); err != nil || !took {
		t.Fatalf("took=%v err=%v", took, err)
	}
	if c.batches[0].Record().Column(1) == nil || c.batches[0].Record().Column(0).Data() != b.Record().Column(1).Data() {
		t.Error("column reference was copied")
	}
	got, _ := c.rows()
	for i, r := range sampleRows(10, true) {
		if got[i][0] != r[1] || got[i][1] != r[0] {
			t.Fatalf("row %d: %v", i, got[i])
		}
	}
}
