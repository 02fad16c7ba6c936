package ops

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// A skewed key: every build (or held) row and most probe rows share key 1,
// so one probe batch has nBuild*nProbe matches. The joins must stream them
// in batches of at most joinPairChunk pairs, with the same pairs whether
// the run is columnar or rows, and stop between batches once cancelled.

// skewInputs are nBuild right rows (key 1, w = i), nProbe left rows on key
// 1 (v = i) and nMiss left rows on key 2, which nothing matches (v =
// nProbe+i).
func skewInputs(nBuild, nProbe, nMiss int) (left, right []exec.Row) {
	for i := 0; i < nBuild; i++ {
		right = append(right, exec.Row{int64(1), "r", int64(i)})
	}
	for i := 0; i < nProbe; i++ {
		left = append(left, exec.Row{int64(1), "l", int64(i)})
	}
	for i := 0; i < nMiss; i++ {
		left = append(left, exec.Row{int64(2), "m", int64(nProbe + i)})
	}
	return left, right
}

// skewSizes keeps the product well over a chunk, smaller under -short
// (the race detector's runs).
func skewSizes() (nBuild, nProbe int) {
	if testing.Short() {
		return 5000, 40
	}
	return 20000, 100
}

// pairSink checks each output batch against the bound and counts the
// (v, w) pairs of refOut's layout (v at 2, w at 5) by reading the columns
// (or rows) directly: millions of boxed rows would dominate the test.
type pairSink struct {
	bound           int
	nBuild          int
	batches, over   int
	matched         []int32 // v*nBuild + w
	padded          map[int64]int
	rows, malformed int
}

func newPairSink(bound, nBuild, nProbe int) *pairSink {
	return &pairSink{bound: bound, nBuild: nBuild, matched: make([]int32, nBuild*nProbe), padded: map[int64]int{}}
}

func (p *pairSink) Emit(_ context.Context, b *exec.Batch) error {
	p.batches++
	if b.Len() > p.bound {
		p.over++
	}
	if b.IsColumnar() {
		rec := b.Record()
		v, w := rec.Column(2).(*array.Int64), rec.Column(5).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			p.pair(v.Value(i), w.IsNull(i), w.Value(i))
		}
		return nil
	}
	for _, r := range b.Rows() {
		w, ok := r[5].(int64)
		p.pair(r[2].(int64), !ok, w)
	}
	return nil
}

func (p *pairSink) pair(v int64, wNull bool, w int64) {
	p.rows++
	switch {
	case wNull:
		p.padded[v]++
	case v < 0 || w < 0 || int(w) >= p.nBuild || int(v)*p.nBuild+int(w) >= len(p.matched):
		p.malformed++
	default:
		p.matched[int(v)*p.nBuild+int(w)]++
	}
}

func (p *pairSink) EmitWatermark(context.Context, int64) error { return nil }

// check compares with the join's definition: every key-1 probe row pairs
// once with every build row; a key-2 row comes out padded once when pad.
func (p *pairSink) check(t *testing.T, nProbe, nMiss int, pad bool) {
	t.Helper()
	if p.over > 0 || p.malformed > 0 {
		t.Errorf("%d of %d batches over %d rows; %d malformed rows", p.over, p.batches, p.bound, p.malformed)
	}
	for k, n := range p.matched {
		if n != 1 {
			t.Fatalf("pair (v=%d, w=%d) came out %d times, want once", k/p.nBuild, k%p.nBuild, n)
		}
	}
	wantPadded := 0
	if pad {
		wantPadded = nMiss
	}
	if len(p.padded) != wantPadded {
		t.Errorf("%d padded probe rows, want %d", len(p.padded), wantPadded)
	}
	for v, n := range p.padded {
		if v < int64(nProbe) || n != 1 {
			t.Errorf("probe row v=%d padded %d times", v, n)
		}
	}
	if want := len(p.matched) + wantPadded; p.rows != want {
		t.Errorf("%d rows, want %d", p.rows, want)
	}
	if min := len(p.matched) / p.bound; p.batches < min {
		t.Errorf("%d batches, want at least %d", p.batches, min)
	}
}

// skewJoins are the operators under test: the batch hash join (build side
// input 1) and the streaming join (input 1's rows held as state).
var skewJoins = []struct {
	name  string
	types []JoinType
	newOp func(typ JoinType, mem memory.Allocator) exec.Operator
}{
	{"hash", []JoinType{Inner, Left}, func(typ JoinType, mem memory.Allocator) exec.Operator {
		return NewHashJoin(typ, []int{0}, []int{0}, refOut(typ), mem)
	}},
	// An outer streaming join emits a changelog (another layout): INNER
	// is the case whose output size the skew decides.
	{"stream", []JoinType{Inner}, func(typ JoinType, mem memory.Allocator) exec.Operator {
		return NewStreamJoin(StreamJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0},
			LeftOp: -1, RightOp: -1, Out: refOut(typ)}, mem)
	}},
}

func TestJoinSkewedKeyBoundedBatches(t *testing.T) {
	nBuild, nProbe := skewSizes()
	const nMiss = 7
	left, right := skewInputs(nBuild, nProbe, nMiss)
	for _, sj := range skewJoins {
		for _, typ := range sj.types {
			for _, columnar := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/columnar=%v", sj.name, typ, columnar), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					op := sj.newOp(typ, mem)
					defer op.Close()
					op.(exec.ColumnarOutputSetter).SetColumnarOutput(columnar)
					sink := newPairSink(joinPairChunk, nBuild, nProbe)
					if err := feedAs(t, context.Background(), mem, op, left, right, columnar, sink); err != nil {
						t.Fatal(err)
					}
					sink.check(t, nProbe, nMiss, typ == Left)
				})
			}
		}
	}
}

// A cancelled context stops the probe of a skewed batch after the chunk
// being emitted: the sink cancels on the first batch and sees no second.
func TestJoinSkewedKeyCancel(t *testing.T) {
	nBuild, nProbe := skewSizes()
	left, right := skewInputs(nBuild, nProbe, 0)
	for _, sj := range skewJoins {
		for _, columnar := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/columnar=%v", sj.name, columnar), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				op := sj.newOp(Inner, mem)
				defer op.Close()
				op.(exec.ColumnarOutputSetter).SetColumnarOutput(columnar)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := &rowCounter{after: cancel}
				err := feedAs(t, ctx, mem, op, left, right, columnar, c)
				if !errors.Is(err, context.Canceled) || c.batches != 1 || c.rows > joinPairChunk {
					t.Errorf("after cancelling: %v, %d batches, %d rows", err, c.batches, c.rows)
				}
			})
		}
	}
}

// The bound is the operator's own: a small one set by a test holds too,
// and the pairs stay the same.
func TestJoinSkewedKeySmallChunk(t *testing.T) {
	const nBuild, nProbe, nMiss, bound = 300, 9, 3, 64
	left, right := skewInputs(nBuild, nProbe, nMiss)
	for _, sj := range skewJoins {
		for _, typ := range sj.types {
			t.Run(fmt.Sprintf("%s/%s", sj.name, typ), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				op := sj.newOp(typ, mem)
				defer op.Close()
				op.(interface{ setPairChunk(int) }).setPairChunk(bound)
				op.(exec.ColumnarOutputSetter).SetColumnarOutput(true)
				sink := newPairSink(bound, nBuild, nProbe)
				if err := feedAs(t, context.Background(), mem, op, left, right, true, sink); err != nil {
					t.Fatal(err)
				}
				sink.check(t, nProbe, nMiss, typ == Left)
			})
		}
	}
}
