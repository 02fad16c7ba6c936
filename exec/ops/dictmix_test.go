package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// Stateful operators meet dictionary-encoded and plain batches of the same
// VARCHAR column in one stream: a Parquet scan hands out both when a column
// chunk falls back to plain pages, and restored state is always plain.
// These tests feed dictBatches (dictionary A, A, B, plain, ...) and check
// the answers against the reference of the plain rows.

// pairSchema is SampleSchema joined with itself.
func pairSchema() *arrow.Schema {
	return arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), SampleSchema.Fields()...), nil)
}

// feedTwo dispatches the batches of two inputs columnar, interleaved, and
// ends both; it returns the captured output (the batches are released).
func feedTwo(t *testing.T, op exec.Operator, ins [2][]*exec.Batch) *capture {
	t.Helper()
	ctx := context.Background()
	c := &capture{}
	for i := 0; i < max(len(ins[0]), len(ins[1])); i++ {
		for s := range ins {
			if i >= len(ins[s]) {
				continue
			}
			b := ins[s][i]
			took, err := exec.Dispatch(ctx, op, true, s, b, c)
			b.Release()
			if err != nil {
				t.Fatalf("input %d batch %d: %v", s, i, err)
			}
			if !took {
				t.Fatalf("input %d batch %d: the columnar path did not take it", s, i)
			}
		}
	}
	for s := range ins {
		if err := op.Finish(ctx, s, c); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestStreamJoinDictionaryMix: both inputs of a streaming join carry the
// VARCHAR column as dictionaries and plain by turns, held rows of both
// kinds are gathered into one output column, and the output column has the
// declared (plain) type.
func TestStreamJoinDictionaryMix(t *testing.T) {
	for _, typ := range []JoinType{Inner, Left, Full} {
		for _, keys := range [][]int{{0}, {1}, {0, 1}} {
			for _, size := range []int{1, 7, 64} {
				t.Run(fmt.Sprintf("%s/keys%v/size=%d", typ, keys, size), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					left, right := sampleRows(90, true), sampleRows(40, true)
					out := pairSchema()
					if typ != Inner {
						out = changelogSchema(out)
					}
					j := streamJoin(typ, keys, keys, out, mem)
					j.SetColumnarOutput(true)
					c := feedTwo(t, j, [2][]*exec.Batch{dictBatches(t, mem, left, 1, size), dictBatches(t, mem, right, 1, size)})
					j.Close()
					j.Report() // EXPLAIN ANALYZE reads it after Close
					for _, b := range c.batches {
						if b.IsColumnar() && !b.Record().Schema().Equal(out) {
							t.Fatalf("output batch schema %s, want %s", b.Record().Schema(), out)
						}
					}
					got, _ := c.rows()
					want := refJoin(Inner, left, right, keys, keys)
					if typ != Inner {
						got = applyChangelog(t, got)
						want = append(want, unmatched(left, right, keys, false)...)
					}
					if typ == Full {
						want = append(want, unmatched(right, left, keys, true)...)
					}
					if !rowsEqual(sortedRows(got), sortedRows(want)) {
						t.Errorf("got %d rows %v\nwant %d %v", len(got), trunc(sortedRows(got)), len(want), trunc(sortedRows(want)))
					}
				})
			}
		}
	}
}

// unmatched is the rows of a that no row of b matches on keys, padded with
// NULLs for b's columns: after a's, or before them when padLeft.
func unmatched(a, b []exec.Row, keys []int, padLeft bool) []exec.Row {
	var out []exec.Row
	for _, r := range a {
		if len(refJoin(Inner, []exec.Row{r}, b, keys, keys)) > 0 {
			continue
		}
		pad := make(exec.Row, len(r))
		if padLeft {
			out = append(out, append(pad, r...))
		} else {
			out = append(out, append(append(exec.Row{}, r...), pad...))
		}
	}
	return out
}

// runKindMixed feeds every port of k's sample the batches of mk (one list per
// port, interleaved), restoring into a fresh operator after cut batches
// when cut > 0 (the kind must be a Snapshotter), and returns the sorted
// output rows.
func runKindMixed(t *testing.T, mem memory.Allocator, k Kind, mk func(port int) []*exec.Batch, cut int) []exec.Row {
	t.Helper()
	ctx := context.Background()
	op := k.New(mem)
	defer func() { op.Close() }()
	c := &capture{}
	ins := make([][]*exec.Batch, k.Ports())
	for p := range ins {
		ins[p] = mk(p)
	}
	fed := 0
	for i := 0; ; i++ {
		more := false
		for p := range ins {
			if i >= len(ins[p]) {
				continue
			}
			more = true
			if fed == cut && cut > 0 {
				fresh := k.New(mem)
				if err := state.RoundTrip(ctx, mem, op.(exec.Snapshotter), fresh.(exec.Snapshotter)); err != nil {
					fresh.Close()
					t.Fatalf("%s: restore after %d batches: %v", k.Name, cut, err)
				}
				op.Close()
				op = fresh
			}
			fed++
			_, err := exec.Dispatch(ctx, op, true, p, ins[p][i], c)
			ins[p][i].Release()
			ins[p][i] = nil
			if err != nil {
				for _, rest := range ins {
					for _, b := range rest {
						if b != nil {
							b.Release()
						}
					}
				}
				t.Fatalf("%s: port %d batch %d: %v", k.Name, p, i, err)
			}
		}
		if !more {
			break
		}
	}
	for p := range ins {
		if err := op.Finish(ctx, p, c); err != nil {
			t.Fatalf("%s: finish %d: %v", k.Name, p, err)
		}
	}
	rows, _ := c.rows()
	return sortedRows(rows)
}

// TestEveryKindDictionaryMix: every operator kind gives the same output
// for a VARCHAR column that comes dictionary-encoded (two dictionaries)
// and plain by turns as for the column always plain, cut at the same
// batch boundaries; a Snapshotter also when it is restored midway (its
// state plain, the batches after it dictionaries again).
func TestEveryKindDictionaryMix(t *testing.T) {
	for _, k := range append(Kinds(), keyedOnS()...) {
		if k.Name == "collect" {
			continue // a sink: it emits nothing to compare
		}
		for _, size := range []int{1, 7} {
			t.Run(fmt.Sprintf("%s/size=%d", k.Name, size), func(t *testing.T) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rows := func(port int) []exec.Row { return sampleRows(60, true)[port*20 : 40+port*20] }
				plain := func(port int) []*exec.Batch {
					return makeBatches(t, mem, input{SampleSchema, rows(port)}, size, true)
				}
				mixed := func(port int) []*exec.Batch { return dictBatches(t, mem, rows(port), 1, size) }
				want := runKindMixed(t, mem, k, plain, 0)
				if len(want) == 0 {
					t.Fatalf("the sample gives no output: the test would prove nothing")
				}
				if got := runKindMixed(t, mem, k, mixed, 0); !rowsEqual(got, want) {
					t.Errorf("mixed input: got %d rows %v\nwant %d %v", len(got), trunc(got), len(want), trunc(want))
				}
				if _, ok := k.New(mem).(exec.Snapshotter); !ok {
					return
				}
				for _, cut := range []int{3, 11} {
					if got := runKindMixed(t, mem, k, mixed, cut); !rowsEqual(got, want) {
						t.Errorf("mixed input restored after %d batches: got %d rows %v\nwant %d %v", cut, len(got), trunc(got), len(want), trunc(want))
					}
				}
			})
		}
	}
}

// keyedOnS are samples of the stateful kinds whose keys (join keys, groups,
// sort keys) read the VARCHAR column s itself.
func keyedOnS() []Kind {
	joined := pairSchema()
	str := arrow.BinaryTypes.String
	countOut := func(extra ...arrow.Field) *arrow.Schema {
		return arrow.NewSchema(append([]arrow.Field{{Name: "s", Type: str, Nullable: true}, {Name: "n", Type: i64}}, extra...), nil)
	}
	count := []AggSpec{{Func: "count_star", Col: -1, Type: i64}}
	op := arrow.Field{Name: "op", Type: str}
	return []Kind{
		{"hash_join on s", func(mem memory.Allocator) exec.Operator { return NewHashJoin(Inner, []int{1}, []int{1}, joined, mem) }, 2},
		{"stream_join on s", func(mem memory.Allocator) exec.Operator { return streamJoin(Inner, []int{1}, []int{1}, joined, mem) }, 2},
		{"updating_aggregate by s", func(mem memory.Allocator) exec.Operator {
			return NewUpdatingAggregate([]int{1}, count, countOut(op), mem)
		}, 1},
		{"window_aggregate by s", func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(WindowSpec{Kind: Tumble, Size: time.Second}, 4, []int{1}, count, countOut(windowCols...), mem)
		}, 1},
		{"updating_topn by s", func(memory.Allocator) exec.Operator {
			return NewUpdatingTopN([]SortKey{{Col: 1}, {Col: 2}}, 5, 0,
				arrow.NewSchema(append(append([]arrow.Field{}, SampleSchema.Fields()...), op), nil))
		}, 1},
		{"set_op except all", func(mem memory.Allocator) exec.Operator { return NewSetOp(Except, true, SampleSchema, mem) }, 2},
		{"set_op intersect", func(mem memory.Allocator) exec.Operator { return NewSetOp(Intersect, false, SampleSchema, mem) }, 2},
	}
}
