package state

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// counter is a Snapshotter whose state is one record and one value.
type counter struct {
	mem  memory.Allocator
	keys []string
	n    []int64
	wm   byte
}

var counterSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.BinaryTypes.String},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
}, nil)

func (c *counter) SnapshotState(_ context.Context, w exec.StateWriter) error {
	b := array.NewRecordBuilder(c.mem, counterSchema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(c.keys, nil)
	b.Field(1).(*array.Int64Builder).AppendValues(c.n, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Records("counts", counterSchema, rec, rec); err != nil {
		return err
	}
	return w.Value("wm", []byte{c.wm})
}

func TestMemoryRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := &counter{mem: mem, keys: []string{"a", "b"}, n: []int64{3, 4}, wm: 7}
	m := NewMemory(mem)
	if err := c.SnapshotState(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	// The snapshot is a copy: changing the state afterwards does not reach it.
	c.n[0] = 99
	if err := m.Value("wm", nil); err == nil {
		t.Fatal("a value written twice was accepted")
	}
	r := m.Reader()
	schema, recs, ok, err := r.Records("counts")
	if err != nil || !ok {
		t.Fatalf("Records: ok=%v err=%v", ok, err)
	}
	if !schema.Equal(counterSchema) || len(recs) != 2 {
		t.Fatalf("schema %s, %d batches", schema, len(recs))
	}
	for _, rec := range recs {
		if got := rec.Column(1).(*array.Int64).Value(0); got != 3 {
			t.Errorf("n[0] = %d, want 3 (the value at the snapshot)", got)
		}
		if got := rec.Column(0).(*array.String).Value(1); got != "b" {
			t.Errorf("k[1] = %q", got)
		}
		rec.Release()
	}
	v, ok, _ := r.Value("wm")
	if !ok || len(v) != 1 || v[0] != 7 {
		t.Fatalf("wm = %v %v", v, ok)
	}
	if _, _, ok, _ := r.Records("missing"); ok {
		t.Fatal("a part never written was found")
	}
}
