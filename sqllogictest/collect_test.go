package sqllogictest

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The collector renders columnar batches without materialising them and
// row batches the same way.
func TestCollectorReadsArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rows := []exec.Row{{2.5, "x"}, {nil, ""}}
	rec, err := exec.EncodeRows(mem, schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2", "x", "NULL", "(empty)"}
	for _, columnar := range []bool{true, false} {
		c := &collector{types: "IT"}
		if err := c.Columns(schema, true); err != nil {
			t.Fatal(err)
		}
		var b *exec.Batch
		if columnar {
			rec.Retain()
			b = exec.NewColumnarBatch(rec)
		} else {
			b = exec.NewRowBatch(schema, rows)
		}
		before := exec.Global.BatchesMaterialized.Load()
		if err := c.Batch(b); err != nil {
			t.Fatal(err)
		}
		if columnar && exec.Global.BatchesMaterialized.Load() != before {
			t.Error("collecting a columnar batch materialised it")
		}
		b.Release()
		if len(c.values) != len(want) {
			t.Fatalf("columnar=%v: %q, want %q", columnar, c.values, want)
		}
		for i := range want {
			if c.values[i] != want[i] {
				t.Errorf("columnar=%v: %q, want %q", columnar, c.values, want)
				break
			}
		}
	}
	rec.Release()

	if err := (&collector{types: "I"}).Columns(schema, true); err == nil {
		t.Error("a result of 2 columns was accepted for a record of 1")
	}
	if err := (&collector{types: "IT"}).Columns(schema, false); err == nil {
		t.Error("an unbounded result was accepted")
	}
	// A statement's collector takes any columns and keeps nothing.
	d := &collector{discard: true}
	if err := d.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	b := exec.NewRowBatch(schema, rows)
	defer b.Release()
	if err := d.Batch(b); err != nil || len(d.values) != 0 || d.rows != 2 {
		t.Errorf("discarding collector: %v %v %d", err, d.values, d.rows)
	}
}
