package exec

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PlainArray decodes a dictionary-encoded VARCHAR into the plain column it
// stands for: NULL codes and codes of a NULL entry are NULL; a code out of
// range is an error, not a wrong value.
func TestPlainArray(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"b", "", "a"}, []bool{true, false, true})
	dict := sb.NewArray()
	sb.Release()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{2, 0, 0, 1, 2}, []bool{true, true, false, true, true})
	codes := ib.NewArray()
	defer codes.Release()
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	d := array.NewDictionaryArray(typ, codes, dict)
	defer d.Release()

	for _, a := range []arrow.Array{d, array.NewSlice(d, 1, 5)} {
		p, err := PlainArray(mem, a)
		if err != nil {
			t.Fatal(err)
		}
		if !arrow.TypeEqual(p.DataType(), arrow.BinaryTypes.String) || p.Len() != a.Len() {
			t.Fatalf("got %s of %d", p.DataType(), p.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if got, want := Value(p, i), Value(a, i); got != want {
				t.Errorf("row %d: %v, want %v", i, got, want)
			}
		}
		if a != d {
			a.Release()
		}
		p.Release()
	}

	ib.AppendValues([]int32{0, 3}, nil)
	bad := ib.NewArray()
	ib.Release()
	defer bad.Release()
	bd := array.NewDictionaryArray(typ, bad, dict)
	defer bd.Release()
	if _, err := PlainArray(mem, bd); err == nil || !strings.Contains(err.Error(), "code 3 out of range") {
		t.Errorf("out-of-range code: %v", err)
	}
	if !SameColumnType(typ, arrow.BinaryTypes.String) || SameColumnType(typ, arrow.BinaryTypes.Binary) {
		t.Errorf("SameColumnType")
	}
}
