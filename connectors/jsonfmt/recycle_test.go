package jsonfmt

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Over the Go allocator, batch buffers are recycled dirty: batches decoded
// into reused memory must equal the row decode, nulls included.
func TestRecycledBuffersDecodeCleanly(t *testing.T) {
	col := newDec(t, memory.NewGoAllocator(), allTypes, Options{})
	row := newDec(t, memory.NewGoAllocator(), allTypes, Options{RowOnly: true})
	if col.root.mem != sharedRecycle {
		t.Fatal("the decoder over the Go allocator should recycle")
	}
	for round := 0; round < 4; round++ {
		var batch []string
		for i := 0; i < 12000; i++ {
			// Rotate the lines so nulls and values land on different
			// positions of recycled buffers each round.
			batch = append(batch, allTypesLines[(i+round)%len(allTypesLines)])
		}
		cres, err := col.Decode(lines(batch...))
		if err != nil || cres.Rec == nil {
			t.Fatalf("round %d: %v", round, err)
		}
		rres, _ := row.Decode(lines(batch...))
		got, want := rowsOf(cres), rowsOf(rres) // releases the record: its buffers go back
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: recycled decode differs", round)
		}
	}
}
