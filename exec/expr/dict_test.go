package expr

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// An expression over a VARCHAR column that arrives dictionary-encoded
// reads the plain values (the column reference decodes them), so a kernel
// never meets codes it does not expect.
func TestColRefDecodesDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"x", "y"}, nil)
	dict := sb.NewArray()
	sb.Release()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{1, 0, 1}, []bool{true, true, false})
	codes := ib.NewArray()
	ib.Release()
	defer codes.Release()
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	col := array.NewDictionaryArray(typ, codes, dict)
	defer col.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "s", Type: typ, Nullable: true}}, nil), []arrow.Array{col}, 3)
	defer rec.Release()

	ref := Col(0, arrow.BinaryTypes.String, "s")
	eq, err := newCompare("=", ref, Lit("y", arrow.BinaryTypes.String))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Expr{ref, eq} {
		got, err := e.EvalColumnar(mem, rec)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !arrow.TypeEqual(got.DataType(), e.Type()) {
			t.Errorf("%s gave %s, its type is %s", e, got.DataType(), e.Type())
		}
		want := []any{"y", "x", nil}
		if e == eq {
			want = []any{true, false, nil}
		}
		for i, w := range want {
			if v := exec.Value(got, i); v != w {
				t.Errorf("%s row %d: %v, want %v", e, i, v, w)
			}
		}
		got.Release()
	}
}
