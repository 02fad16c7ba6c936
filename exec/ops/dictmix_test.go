package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
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
