package plan

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

type fakeETSrc struct {
	exec.Source
	f func(b *exec.Batch) (int64, bool, error)
}

func (s *fakeETSrc) SetEventTime(f func(b *exec.Batch) (int64, bool, error)) { s.f = f }

// The event-time clock handed to a source reads the WATERMARK column and
// floors nanoseconds to microseconds as the assigner does (a clock ahead of
// its record would make the record late).
func TestSourceEventTimeFloorsNanoseconds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond}
	sch := arrow.NewSchema([]arrow.Field{{Name: "t", Type: ts, Nullable: true}}, nil)
	scan := &Scan{schema: sch}
	src := &fakeETSrc{}
	st := &Stage{Op: "Scan", Instances: []*exec.Stage{{Src: src}}}
	setSourceEventTime(&WatermarkAssign{Input: scan, TimeCol: 0}, st, mem)
	if src.f == nil {
		t.Fatal("not set")
	}
	bld := array.NewTimestampBuilder(mem, ts)
	bld.Append(-1_500)
	arr := bld.NewArray()
	rec := array.NewRecordBatch(sch, []arrow.Array{arr}, 1)
	arr.Release()
	bld.Release()
	b := exec.NewColumnarBatch(rec)
	defer b.Release()
	us, ok, err := src.f(b)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if us != -2 {
		t.Fatalf("-1500 ns read as %d us, want -2 (floor, as the assigner)", us)
	}
}
