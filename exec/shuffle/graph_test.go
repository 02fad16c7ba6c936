package shuffle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// keyedSource emits batches of allTypes rows, alternating columnar and row
// batches, with a watermark after each; seq is unique across sources.
type keyedSource struct {
	t       *testing.T
	mem     memory.Allocator
	seed    uint64
	first   int
	batches int
}

func (s *keyedSource) Kind() string                    { return "keyed_source" }
func (s *keyedSource) Capabilities() exec.Capabilities { return exec.Capabilities{EmitsColumnar: true} }
func (s *keyedSource) Run(ctx context.Context, out exec.Emitter) error {
	rng := rand.New(rand.NewPCG(s.seed, s.seed))
	seq := s.first
	for i := range s.batches {
		n := 1 + rng.IntN(700)
		rows := genRows(rng, seq, n, 200, 5)
		seq += n
		b := exec.NewRowBatch(allTypes, rows)
		if i%3 != 2 {
			rec, err := exec.EncodeRows(s.mem, allTypes, rows)
			if err != nil {
				return err
			}
			b = exec.NewColumnarBatch(rec)
		}
		err := out.Emit(ctx, b)
		b.Release()
		if err != nil {
			return err
		}
		if err := out.EmitWatermark(ctx, int64(i)); err != nil {
			return err
		}
	}
	return out.EmitWatermark(ctx, exec.MaxWatermark)
}

// keyedRecorder is a keyed stage: it counts every key (column 1) it sees,
// reading columnar batches without materialising them, and fails on data
// after the final watermark.
type keyedRecorder struct {
	exec.Base
	keys     map[string]int
	rows     int
	columnar int
	final    atomic.Bool
}

func (r *keyedRecorder) Kind() string { return "keyed_recorder" }
func (r *keyedRecorder) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true}
}

func (r *keyedRecorder) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	for _, row := range b.Rows() {
		r.note(fmt.Sprint(row[1]))
	}
	return nil
}

func (r *keyedRecorder) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	col := b.Record().Column(1).(*array.Int64)
	for i := range col.Len() {
		if col.IsNull(i) {
			r.note("<nil>")
		} else {
			r.note(fmt.Sprint(col.Value(i)))
		}
	}
	r.columnar++
	return true, nil
}

func (r *keyedRecorder) note(k string) {
	if r.final.Load() {
		panic("data after the final watermark")
	}
	r.keys[k]++
	r.rows++
}

func (r *keyedRecorder) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	if wm == exec.MaxWatermark {
		r.final.Store(true)
	}
	return nil
}

// TestExchangeInGraph: 2 sources -> 2 exchanges -> 2 keyed stages, each
// keyed stage fed by both exchanges (the parallel instances of one keyed
// operator). Every key must be seen by one keyed stage only, and every row
// must arrive.
func TestExchangeInGraph(t *testing.T) {
	for _, opts := range []exec.Options{{}, {DisableColumnar: true}} {
		t.Run(fmt.Sprintf("disableColumnar=%v", opts.DisableColumnar), func(t *testing.T) {
			mem := newMem(t)
			g := exec.NewGraph(opts)
			s0 := g.AddSource("src0", &keyedSource{t: t, mem: mem, seed: 1, first: 0, batches: 60})
			s1 := g.AddSource("src1", &keyedSource{t: t, mem: mem, seed: 2, first: 1 << 30, batches: 60})
			x0 := g.AddOperator("exchange0", NewExchange([]int{1}, mem), s0)
			x1 := g.AddOperator("exchange1", NewExchange([]int{1}, mem), s1)
			recs := []*keyedRecorder{{keys: map[string]int{}}, {keys: map[string]int{}}}
			for i, r := range recs {
				st := g.AddOperatorPorts(fmt.Sprintf("keyed%d", i), r, 1)
				g.Connect(x0, st, 0) // target i of each exchange is keyed stage i
				g.Connect(x1, st, 0)
			}
			before := exec.Global.BatchesMaterialized.Load()
			if err := g.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			var inRows int64
			for _, s := range []*exec.Stage{s0, s1} {
				inRows += s.Stats.RowsOut.Load()
			}
			got := 0
			for i, r := range recs {
				got += r.rows
				if !r.final.Load() {
					t.Fatalf("keyed stage %d never saw the final watermark", i)
				}
				if r.rows == 0 {
					t.Fatalf("keyed stage %d got no rows", i)
				}
				for k := range r.keys {
					if other := recs[1-i]; other.keys[k] > 0 {
						t.Fatalf("key %s seen by both keyed stages (%d and %d rows)", k, r.keys[k], other.keys[k])
					}
				}
			}
			if int64(got) != inRows {
				t.Fatalf("%d rows reached the keyed stages, %d left the sources", got, inRows)
			}
			mat := exec.Global.BatchesMaterialized.Load() - before
			if opts.DisableColumnar {
				if mat == 0 {
					t.Fatal("row path: expected the columnar batches to be decoded")
				}
			} else {
				if mat != 0 {
					t.Fatalf("columnar path materialised %d batches", mat)
				}
				if recs[0].columnar == 0 || recs[1].columnar == 0 {
					t.Fatal("the keyed stages received no columnar batches")
				}
				if x0.Stats.BatchesColumnarPath.Load() == 0 {
					t.Fatal("the exchange never took the columnar path")
				}
			}
		})
	}
}

// TestExchangeGraphStop: a keyed stage that stops (ErrStop) ends the run
// without error and without leaking held sub-batches.
func TestExchangeGraphStop(t *testing.T) {
	mem := newMem(t)
	g := exec.NewGraph(exec.Options{})
	s0 := g.AddSource("src0", &keyedSource{t: t, mem: mem, seed: 3, batches: 50})
	x0 := g.AddOperator("exchange0", NewExchange([]int{1}, mem), s0)
	for i := range 2 {
		st := g.AddOperatorPorts(fmt.Sprintf("stop%d", i), &stopper{after: 3}, 1)
		g.Connect(x0, st, 0)
	}
	if err := g.Run(context.Background()); err != nil && !errors.Is(err, exec.ErrStop) {
		t.Fatal(err)
	}
}

type stopper struct {
	exec.Base
	after int
}

func (s *stopper) Kind() string                    { return "stopper" }
func (s *stopper) Capabilities() exec.Capabilities { return exec.Capabilities{} }
func (s *stopper) Process(context.Context, int, *exec.Batch, exec.Emitter) error {
	s.after--
	if s.after <= 0 {
		return exec.ErrStop
	}
	return nil
}
