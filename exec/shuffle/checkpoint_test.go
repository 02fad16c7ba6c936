package shuffle

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

var seqSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)

// seqPosSource emits columnar batches of consecutive values from next up
// to limit; next is its checkpointed position.
type seqPosSource struct {
	mem         memory.Allocator
	size, limit int64
	next        int64
}

func (s *seqPosSource) Kind() string { return "seq_pos" }
func (s *seqPosSource) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}
func (s *seqPosSource) Run(ctx context.Context, out exec.Emitter) error {
	for s.next < s.limit {
		n := min(s.size, s.limit-s.next)
		bld := array.NewInt64Builder(s.mem)
		for i := range n {
			bld.Append(s.next + i)
		}
		col := bld.NewArray()
		bld.Release()
		b := exec.NewColumnarBatch(array.NewRecordBatch(seqSchema, []arrow.Array{col}, n))
		col.Release()
		err := exec.EmitThen(ctx, out, b, func() { s.next += n })
		b.Release()
		if err != nil {
			return err
		}
		time.Sleep(20 * time.Microsecond) // let the coordinator in between batches
	}
	return out.EmitWatermark(ctx, exec.MaxWatermark)
}
func (s *seqPosSource) SnapshotState(_ context.Context, w exec.StateWriter) error {
	return w.Value("next", binary.LittleEndian.AppendUint64(nil, uint64(s.next)))
}
func (s *seqPosSource) RestoreState(context.Context, exec.StateReader) error {
	return errors.New("not restored in this test")
}

// summer sums the values it receives (its state).
type summer struct {
	exec.Base
	sum int64
}

func (s *summer) Kind() string                    { return "summer" }
func (s *summer) Capabilities() exec.Capabilities { return exec.Capabilities{} }
func (s *summer) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	for _, r := range b.Rows() {
		s.sum += r[0].(int64)
	}
	return nil
}
func (s *summer) SnapshotState(_ context.Context, w exec.StateWriter) error {
	return w.Value("sum", binary.LittleEndian.AppendUint64(nil, uint64(s.sum)))
}
func (s *summer) RestoreState(context.Context, exec.StateReader) error {
	return errors.New("not restored in this test")
}

func u64(t *testing.T, c *state.MemoryCheckpoint, st *exec.Stage, name string) (int64, bool) {
	t.Helper()
	m, ok := c.StageState(st.ID)
	if !ok {
		t.Fatalf("checkpoint %d: no state for %s", c.ID, st.Name)
	}
	v, ok, _ := m.ReadValue(name)
	if !ok {
		return 0, false // the stage had ended: its final state is checked at the end
	}
	return int64(binary.LittleEndian.Uint64(v)), true
}

// Two sources through two parallel exchanges (which coalesce small
// sub-batches) into two keyed consumers: at every checkpoint the
// consumers' sums add up to exactly the sources' pre-barrier prefixes, so
// no row the exchanges held crossed the cut.
func TestExchangeFlushesBeforeBarrier(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	g := exec.NewGraph(exec.Options{})
	var srcs []*exec.Stage
	var exs []*exec.Stage
	for _, size := range []int64{7, 13} {
		src := g.AddSource("src", &seqPosSource{mem: mem, size: size, limit: 6000})
		srcs = append(srcs, src)
		exs = append(exs, g.AddOperator("exchange", NewExchange([]int{0}, mem), src))
	}
	sums := []*summer{{}, {}}
	var cons []*exec.Stage
	for _, s := range sums {
		cons = append(cons, g.AddOperatorPorts("sum", s, 1))
	}
	for _, ex := range exs {
		for _, c := range cons {
			g.Connect(ex, c, 0)
		}
	}
	store := state.NewMemoryStore(mem)
	g.EnableCheckpoints(exec.CheckpointConfig{Interval: time.Millisecond, Store: store})
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	tri := func(p int64) int64 { return p * (p - 1) / 2 }
	checked := 0
	for _, c := range store.Completed() {
		p0, ok0 := u64(t, c, srcs[0], "next")
		p1, ok1 := u64(t, c, srcs[1], "next")
		s0, ok2 := u64(t, c, cons[0], "sum")
		s1, ok3 := u64(t, c, cons[1], "sum")
		if !ok0 || !ok1 || !ok2 || !ok3 {
			continue
		}
		checked++
		if s0+s1 != tri(p0)+tri(p1) {
			t.Fatalf("checkpoint %d: consumers hold %d, the prefixes sum to %d", c.ID, s0+s1, tri(p0)+tri(p1))
		}
	}
	if checked < 3 {
		t.Fatalf("%d checkpoints taken while the graph ran, want at least 3", checked)
	}
	if sums[0].sum+sums[1].sum != 2*tri(6000) {
		t.Fatalf("final %d, want %d", sums[0].sum+sums[1].sum, 2*tri(6000))
	}
}
