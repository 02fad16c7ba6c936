package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The decline-then-replay contract of exec.Dispatch on a real operator
// path: a streaming join reads a changelog input's row kinds only on its
// row path, so its columnar hook declines a columnar batch on that input,
// before emitting anything, and Dispatch replays the batch through
// Process. Without the replay the join would drop the batch: its +I rows
// would never join and its -D would never retract (this test then fails on
// the missing pairs); a hook that emitted before declining would emit the
// pairs twice.
func TestDispatchReplaysADeclinedBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	i64, str := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	left := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64}, {Name: "op", Type: str}, {Name: "v", Type: i64}}, nil)
	right := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64}, {Name: "w", Type: i64}}, nil)
	out := arrow.NewSchema([]arrow.Field{{Name: "op", Type: str}, {Name: "k", Type: i64}, {Name: "v", Type: i64},
		{Name: "k0", Type: i64}, {Name: "w", Type: i64}}, nil)
	j := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: 1, RightOp: -1, Out: out}, mem)
	defer j.Close()
	if !j.Capabilities().ChangelogOutput {
		t.Fatal("a join over a changelog input must say its output carries row kinds")
	}
	ctx := t.Context()
	emitted := &capture{}

	rb := makeBatches(t, mem, input{right, []exec.Row{{int64(1), int64(100)}, {int64(2), int64(200)}, {int64(3), int64(300)}}}, 8, true)[0]
	took, err := exec.Dispatch(ctx, j, true, 1, rb, emitted)
	rb.Release()
	if err != nil || !took {
		t.Fatalf("append-only columnar input: took the columnar path = %v, err %v", took, err)
	}

	lb := makeBatches(t, mem, input{left, []exec.Row{
		{int64(1), "+I", int64(10)}, {int64(2), "+I", int64(20)}, {int64(1), "-D", int64(10)}, {int64(4), "+I", int64(40)},
	}}, 8, true)[0]
	defer lb.Release()
	// The hook alone declines, and emits nothing before it does.
	probe := &capture{}
	handled, err := j.ProcessColumnar(ctx, 0, lb, probe)
	if err != nil || handled {
		t.Fatalf("changelog input: the columnar hook handled = %v, err %v; want a decline", handled, err)
	}
	if len(probe.batches) != 0 {
		t.Fatalf("the hook emitted %d batches before declining", len(probe.batches))
	}
	took, err = exec.Dispatch(ctx, j, true, 0, lb, emitted)
	if err != nil || took {
		t.Fatalf("changelog input: Dispatch took the columnar path = %v, err %v; want the replay", took, err)
	}
	if !lb.Materialized() {
		t.Error("the replay did not read the batch's rows")
	}
	got, _ := emitted.rows()
	// Worked by hand: +I 1 and +I 2 find their right rows, -D 1 retracts
	// the first pair, 4 has no partner.
	want := []exec.Row{
		{"+I", int64(1), int64(10), int64(1), int64(100)},
		{"+I", int64(2), int64(20), int64(2), int64(200)},
		{"-D", int64(1), int64(10), int64(1), int64(100)},
	}
	if !rowsEqual(sortedRows(got), sortedRows(want)) {
		t.Fatalf("joined\n%v\nwant\n%v", got, want)
	}
}
