package ops

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// setOpCase is kind [ALL] over two snapSchema inputs.
func setOpCase(kind SetOpKind, all, dict bool) snapCase {
	return snapCase{name: fmt.Sprintf("%s all=%v dictionary s=%v", kind, all, dict), schemas: []*arrow.Schema{snapSchema, snapSchema}, dictS: dict,
		newOp: func(mem memory.Allocator) exec.Operator { return NewSetOp(kind, all, snapSchema, mem) }}
}

// An INTERSECT/EXCEPT [ALL] restored from a snapshot (before or after the
// right input ended, with left batches held or streaming through) emits what the one that
// never stopped emits. Rows come from a small domain, so both inputs
// share many and repeat them, and some left rows have no right copy.
func TestSetOpSnapshotResumes(t *testing.T) {
	for _, kind := range []SetOpKind{Intersect, Except} {
		for _, all := range []bool{false, true} {
			for _, dict := range []bool{false, true} {
				c := setOpCase(kind, all, dict)
				t.Run(c.name, func(t *testing.T) {
					for seed := int64(1); seed <= 4; seed++ {
						g := &snapGen{rng: snapRand(seed), now: 1_700_000_000_000}
						steps := g.steps(60, 2, func(in int) exec.Row {
							r := make(exec.Row, snapSchema.NumFields())
							r[0] = g.maybeNull(int64(g.rng.Intn(4 - in))) // k = 3 only on the left
							r[1] = g.maybeNull(string(rune('a' + g.rng.Intn(3))))
							return r
						})
						if seed%2 == 0 {
							steps = rightEndsEarly(steps)
						}
						checkCuts(t, c, steps, randomCuts(g.rng, len(steps), 5))
					}
				})
			}
		}
	}
}

// A snapshot restored into a set operation over other columns fails with
// an error that says so.
func TestSetOpSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := setOpCase(Intersect, true, false)
	g := &snapGen{rng: snapRand(1), now: 1_700_000_000_000, keys: 4}
	from := c.newOp(mem)
	runSteps(t, mem, c, from, g.steps(20, 2, nil))
	into := NewSetOp(Intersect, true, SampleSchema, mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), into, "columns")
	into.Close()
	from.Close()
}

// rightEndsEarly ends input 1 halfway: its batches after that go to
// input 0 instead, so left batches stream through after the right's end
// (and cuts fall there).
func rightEndsEarly(steps []snapStep) []snapStep {
	mid := len(steps) / 2
	out := make([]snapStep, 0, len(steps))
	for i, s := range steps {
		if i == mid {
			out = append(out, snapStep{input: 1, finish: true})
		}
		if s.finish && s.input == 1 {
			continue
		}
		if i >= mid && !s.finish && !s.isWM {
			s.input = 0
		}
		out = append(out, s)
	}
	return out
}
