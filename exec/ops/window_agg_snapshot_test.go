package ops

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// windowAggCase is a window aggregate over snapSchema (time column t)
// with aggregates that keep each kind of state, DISTINCT among them.
func windowAggCase(name string, spec WindowSpec, groupCols []int, columnarOut bool) snapCase {
	i64 := arrow.PrimitiveTypes.Int64
	specs := []AggSpec{
		{Func: "count_star", Col: -1, Type: i64},
		{Func: "sum", Col: 2, Type: i64},
		{Func: "max", Col: 1, Type: arrow.BinaryTypes.String},
		{Func: "avg", Col: 6, Type: &arrow.Decimal128Type{Precision: 38, Scale: 6}},
		{Func: "var_pop", Col: 3, Type: arrow.PrimitiveTypes.Float64},
		{Func: "count", Distinct: true, Col: 1, Type: i64},
	}
	var fs []arrow.Field
	for _, c := range groupCols {
		fs = append(fs, snapSchema.Field(c))
	}
	for i, s := range specs {
		fs = append(fs, arrow.Field{Name: s.Func + string(rune('a'+i)), Type: s.Type, Nullable: true})
	}
	fs = append(fs, windowCols...)
	out := arrow.NewSchema(fs, nil)
	return snapCase{name: name, schemas: []*arrow.Schema{snapSchema}, columnarOut: columnarOut,
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(spec, 4, groupCols, specs, out, mem)
		}}
}

// A window aggregate restored from a snapshot fires the windows the one
// that never stopped fires, with the same late-row decisions: TUMBLE and
// HOP panes, session windows (kept rows), with and without keys, with
// born-columnar output on and off.
func TestWindowAggregateSnapshotResumes(t *testing.T) {
	tumble := WindowSpec{Kind: Tumble, Size: time.Second}
	hop := WindowSpec{Kind: Hop, Size: 2 * time.Second, Slide: 500 * time.Millisecond}
	session := WindowSpec{Kind: Session, Gap: 700 * time.Millisecond}
	for _, c := range []snapCase{
		windowAggCase("tumble by k", tumble, []int{0}, false),
		windowAggCase("tumble by k, columnar out", tumble, []int{0}, true),
		windowAggCase("tumble no keys", WindowSpec{Kind: Tumble, Size: 1500 * time.Millisecond, Offset: 200 * time.Millisecond}, nil, true),
		windowAggCase("hop by s", hop, []int{1}, false),
		windowAggCase("session by k", session, []int{0}, false),
		windowAggCase("session by s, b", session, []int{1, 5}, true),
		windowAggCase("session no keys", session, nil, false),
		withDict(windowAggCase("tumble by s, dictionaries", tumble, []int{1}, true)),
		withDict(windowAggCase("session by s, dictionaries", session, []int{1}, false)),
	} {
		t.Run(c.name, func(t *testing.T) { checkSeeds(t, c, 1, nil) })
	}
}

// The late-row and fire counters survive a restore.
func TestWindowAggregateSnapshotCounters(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := windowAggCase("tumble", WindowSpec{Kind: Tumble, Size: time.Second}, []int{0}, false)
	g := &snapGen{rng: snapRand(5), now: 1_700_000_000_000, keys: 4}
	steps := g.steps(80, 1, nil)
	steps = steps[:len(steps)-1] // no Finish: the counters at a checkpoint
	b := c.newOp(mem).(*WindowAggregate)
	runSteps(t, mem, c, b, steps)
	if b.late == 0 || b.fires == 0 {
		t.Fatalf("the input has %d late rows and %d fires: the test proves nothing", b.late, b.fires)
	}
	r := c.newOp(mem).(*WindowAggregate)
	if err := roundTrip(b, r, mem); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"late records dropped", "null event times", "fires", "windows fired"} {
		if got, want := counter(r.Report(), name), counter(b.Report(), name); got != want {
			t.Errorf("%s: %d after the restore, %d before", name, got, want)
		}
	}
	if r.OpenWindows() != b.OpenWindows() {
		t.Errorf("%d open windows after the restore, %d before", r.OpenWindows(), b.OpenWindows())
	}
	b.Close()
	r.Close()
}

// A snapshot restored into other windows, or other aggregates, fails
// with an error that says so.
func TestWindowAggregateSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tumble := WindowSpec{Kind: Tumble, Size: time.Second}
	c := windowAggCase("tumble", tumble, []int{0}, false)
	g := &snapGen{rng: snapRand(9), now: 1_700_000_000_000, keys: 4}
	steps := g.steps(20, 1, nil)
	from := c.newOp(mem)
	runSteps(t, mem, c, from, steps[:len(steps)-1])
	if from.(*WindowAggregate).OpenWindows() == 0 {
		t.Fatal("no open window at the snapshot: the test proves nothing")
	}
	for _, tc := range []struct {
		into snapCase
		says string
	}{
		{windowAggCase("tumble 2s", WindowSpec{Kind: Tumble, Size: 2 * time.Second}, []int{0}, false), "not TUMBLE(size 2s)"},
		{windowAggCase("session", WindowSpec{Kind: Session, Gap: time.Second}, []int{0}, false), "not SESSION"},
		{windowAggCase("tumble by s", tumble, []int{1}, false), "columns"},
	} {
		into := tc.into.newOp(mem)
		restoreMustFail(t, mem, from.(exec.Snapshotter), into.(exec.Snapshotter), tc.says)
		into.Close()
	}
	from.Close()
}

func withDict(c snapCase) snapCase {
	c.dictS = true
	return c
}
