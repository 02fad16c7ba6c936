package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// batchJoinCase is a hash join of snapSchema inputs on k (or, without
// keys, a nested-loop cross join): the probe input (0) may be unbounded,
// the build input (1) is bounded.
func batchJoinCase(name string, typ JoinType, keyed bool) snapCase {
	var fs []arrow.Field
	sides := 2
	if typ.leftOnly() || typ.buildOnly() {
		sides = 1 // the probe's columns, or the build's
	}
	for range sides {
		for _, f := range snapSchema.Fields() {
			f.Nullable = true
			fs = append(fs, f)
		}
	}
	out := arrow.NewSchema(fs, nil)
	return snapCase{name: name, schemas: []*arrow.Schema{snapSchema, snapSchema}, columnarOut: true,
		newOp: func(mem memory.Allocator) exec.Operator {
			if !keyed {
				return NewNestedLoopJoin(NestedLoopJoinSpec{Type: typ, Out: out}, mem)
			}
			return NewHashJoin(typ, []int{0}, []int{0}, out, mem)
		}}
}

// batchJoinSteps: both inputs send batches, the build input ends after a
// random part of them, then the probe input goes on (its batches held
// until the build ended, probed after), then it ends.
func batchJoinSteps(g *snapGen, n int) []snapStep {
	all := g.steps(n, 2, nil)
	all = all[:len(all)-2]
	end := len(all)/3 + g.rng.Intn(len(all)/3)
	steps := append([]snapStep{}, all[:end]...)
	steps = append(steps, snapStep{input: 1, finish: true})
	for _, s := range all[end:] {
		if s.isWM || s.input == 0 {
			steps = append(steps, s)
		}
	}
	return append(steps, snapStep{input: 0, finish: true})
}

// A hash join (or nested-loop join) restored from a snapshot, before or
// after its build input ended, emits what the one that never stopped
// emits: pairs, padded probe rows, and (RIGHT, FULL) the build rows no
// probe row matched, at the end.
func TestBatchJoinSnapshotResumes(t *testing.T) {
	for _, c := range []snapCase{
		batchJoinCase("inner", Inner, true),
		batchJoinCase("left", Left, true),
		batchJoinCase("right", Right, true),
		batchJoinCase("full", Full, true),
		batchJoinCase("semi", Semi, true),
		batchJoinCase("anti", Anti, true),
		batchJoinCase("right semi", RightSemi, true),
		batchJoinCase("right anti", RightAnti, true),
		batchJoinCase("cross (nested loop)", Inner, false),
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(1); seed <= 4; seed++ {
				g := &snapGen{rng: snapRand(seed), now: 1_700_000_000_000, keys: 6}
				n := 50
				if c.name == "cross (nested loop)" {
					n = 16 // every pair comes out
				}
				steps := batchJoinSteps(g, n)
				checkCuts(t, c, steps, randomCuts(g.rng, len(steps), 5))
			}
		})
	}
}

// A snapshot restored into a join whose build input has other columns
// fails with an error that says so.
func TestBatchJoinSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := batchJoinCase("inner", Inner, true)
	g := &snapGen{rng: snapRand(12), now: 1_700_000_000_000, keys: 4}
	steps := batchJoinSteps(g, 30)
	from := c.newOp(mem)
	runSteps(t, mem, c, from, steps[:len(steps)-1])
	narrow := arrow.NewSchema(append(append([]arrow.Field{}, snapSchema.Fields()...), snapSchema.Fields()[:6]...), nil)
	into := NewHashJoin(Inner, []int{0}, []int{0}, narrow, mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), into, "build input")
	into.Close()
	from.Close()
}
