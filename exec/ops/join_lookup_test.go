package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// The lookup join answers as a nested-loop INNER or LEFT join, whichever
// of its inputs arrives first (the harness interleaves them: stream rows
// wait for the table).
func TestLookupJoin(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left} {
		for _, keys := range [][2][]int{{{0}, {0}}, {{0, 1}, {0, 1}}} {
			lk, rk := keys[0], keys[1]
			runCase(t, opCase{
				name: fmt.Sprintf("%s/keys%v=%v", typ, lk, rk),
				newOp: func(mem memory.Allocator) exec.Operator {
					return NewLookupJoin(HashJoinSpec{Type: typ, LeftKeys: lk, RightKeys: rk, Out: joinSchema()}, mem)
				},
				inputs: func(nulls bool) []input {
					return []input{{SampleSchema, sampleRows(60, nulls)}, {buildSchema, buildRows(12, nulls)}}
				},
				want: func(ins []input) []exec.Row { return refJoin(typ, ins[0].rows, ins[1].rows, lk, rk) },
			})
		}
	}
}

func TestLookupJoinRefusesRightAndFull(t *testing.T) {
	for _, typ := range []JoinType{Right, Full} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		j := NewLookupJoin(HashJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, Out: joinSchema()}, mem)
		b := exec.NewRowBatch(buildSchema, buildRows(2, false))
		if err := j.Process(context.Background(), 1, b, &capture{}); err == nil {
			t.Errorf("%s: no error", typ)
		}
		b.Release()
		j.Close()
		mem.AssertSize(t, 0)
	}
}

// A checkpoint at any point (stream rows waiting for the table, part of
// the table read, the table complete) restores into a fresh operator that
// then gives exactly the rest of the answer: the output before the cut
// plus the restored operator's output after it is the reference join.
func TestLookupJoinSnapshotRestore(t *testing.T) {
	type step struct {
		input  int
		rows   []exec.Row
		finish bool
	}
	stream, table := sampleRows(60, true), buildRows(12, true)
	steps := []step{
		{input: 0, rows: stream[:10]},
		{input: 1, rows: table[:5]},
		{input: 0, rows: stream[10:20]},
		{input: 1, rows: table[5:]},
		{input: 1, finish: true},
		{input: 0, rows: stream[20:45]},
		{input: 0, rows: stream[45:]},
		{input: 0, finish: true},
	}
	for _, typ := range []JoinType{Inner, Left} {
		for _, columnar := range []bool{false, true} {
			for cut := 0; cut <= len(steps); cut++ {
				t.Run(fmt.Sprintf("%s/columnar=%v/cut=%d", typ, columnar, cut), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					ctx := context.Background()
					spec := HashJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, Out: joinSchema()}
					a, b := NewLookupJoin(spec, mem), NewLookupJoin(spec, mem)
					defer a.Close()
					defer b.Close()
					out := &capture{}
					run := func(op *LookupJoin, s step) {
						if s.finish {
							if err := op.Finish(ctx, s.input, out); err != nil {
								t.Fatal(err)
							}
							return
						}
						schema := SampleSchema
						if s.input == 1 {
							schema = buildSchema
						}
						for _, bt := range makeBatches(t, mem, input{schema, s.rows}, 4, columnar) {
							if _, err := exec.Dispatch(ctx, op, columnar, s.input, bt, out); err != nil {
								t.Fatal(err)
							}
							bt.Release()
						}
					}
					for _, s := range steps[:cut] {
						run(a, s)
					}
					if err := state.RoundTrip(ctx, mem, a, b); err != nil {
						t.Fatal(err)
					}
					for _, s := range steps[cut:] {
						run(b, s)
					}
					got, _ := out.rows()
					want := refJoin(typ, stream, table, []int{0}, []int{0})
					if !rowsEqual(sortedRows(got), sortedRows(want)) {
						t.Errorf("got %d rows, want %d\n%v\n%v", len(got), len(want), trunc(sortedRows(got)), trunc(sortedRows(want)))
					}
				})
			}
		}
	}
}
