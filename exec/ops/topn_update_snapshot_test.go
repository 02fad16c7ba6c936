package ops

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

func topNCase(name string, changelog bool, limit, offset int64) snapCase {
	keys := []SortKey{{Col: 2, Desc: true, NullsFirst: true}, {Col: 3}}
	out := arrow.NewSchema(append(append([]arrow.Field{}, snapSchema.Fields()...),
		arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
	in := snapSchema
	if changelog {
		in = changelogSchema(snapSchema)
	}
	return snapCase{name: name, schemas: []*arrow.Schema{in}, ordered: true,
		newOp: func(memory.Allocator) exec.Operator {
			if changelog {
				return NewRetractingTopN(keys, limit, offset, out)
			}
			return NewUpdatingTopN(keys, limit, offset, out)
		}}
}

// A top-n restored from a snapshot emits the changelog of its window
// the one that never stopped emits: over an append-only input, and over
// a changelog whose retractions reach rows kept before the snapshot.
func TestUpdatingTopNSnapshotResumes(t *testing.T) {
	for _, c := range []snapCase{
		topNCase("append-only", false, 5, 2),
		topNCase("append-only, top 1", false, 1, 0),
		topNCase("changelog", true, 5, 2),
		topNCase("changelog, top 2", true, 2, 0),
		topNCase("changelog, duplicates", true, 3, 1),
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs changelogRows
			if c.name == "changelog, duplicates" {
				// Few distinct rows, many with equal sort keys: copies of
				// one row, and rows tied with it, ranked by arrival.
				logs.row = func() exec.Row {
					n := int64(len(logs.held))
					return exec.Row{n % 5, nil, n % 2, nil, nil, nil, nil}
				}
			}
			var rows func(g *snapGen, in int) exec.Row
			if c.schemas[0].NumFields() > snapSchema.NumFields() {
				rows = func(g *snapGen, _ int) exec.Row { return logs.next(g) }
			}
			checkSeeds(t, c, 1, rows)
		})
	}
}

// A top-n over a changelog does not take the state of one over an
// append-only input (it would not know which rows its input holds), nor
// one of other columns.
func TestUpdatingTopNSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := topNCase("append-only", false, 3, 0)
	g := &snapGen{rng: snapRand(2), now: 1_700_000_000_000, keys: 4}
	from := c.newOp(mem)
	runSteps(t, mem, c, from, g.steps(10, 1, nil)[:10])
	into := topNCase("changelog", true, 3, 0).newOp(mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), into.(exec.Snapshotter), "append-only")
	narrow := arrow.NewSchema(append(append([]arrow.Field{}, snapSchema.Fields()[:6]...),
		arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
	other := NewUpdatingTopN([]SortKey{{Col: 2}}, 3, 0, narrow)
	restoreMustFail(t, mem, from.(exec.Snapshotter), other, "columns")
}
