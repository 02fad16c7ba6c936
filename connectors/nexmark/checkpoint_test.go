package nexmark

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// A source stopped after some batches, its position snapshotted and
// restored into a fresh source, emits exactly the rest: the two runs
// together are one uninterrupted run.
func TestSourceResumesFromSnapshot(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts := map[string]string{"table": "bid", "events.num": "20000", "batch.size": "500"}
	ref := scanRows(t, newTestTable(t, mem, opts, nil), connectors.ScanSpec{})

	tab := newTestTable(t, mem, opts, nil)
	first, err := tab.OpenSource(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{stopAfter: 5}
	if err := first.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	// The fifth batch was refused (ErrStop): the position is after four.
	got := exec.DecodeRows(c.recs[0])
	for _, r := range c.recs[1:4] {
		got = append(got, exec.DecodeRows(r)...)
	}
	c.release()
	second, err := tab.OpenSource(connectors.ScanSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := state.RoundTrip(context.Background(), mem, first, second); err != nil {
		t.Fatal(err)
	}
	rest := &collector{}
	if err := second.Run(context.Background(), rest); err != nil {
		t.Fatal(err)
	}
	got = append(got, rest.rows()...)
	rest.release()
	if len(got) != len(ref) || !reflect.DeepEqual(got, ref) {
		t.Fatalf("resumed run gives %d rows, one run %d (or different rows)", len(got), len(ref))
	}
}
