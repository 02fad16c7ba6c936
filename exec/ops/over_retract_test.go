package ops

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// overChangeIn is a changelog: (op, k, o, v); o orders a key's rows.
var overChangeIn = arrow.NewSchema([]arrow.Field{
	{Name: "op", Type: arrow.BinaryTypes.String},
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

var retractFuncs = []StreamOverFunc{
	{Func: "sum", Arg: 3, Type: arrow.PrimitiveTypes.Int64},
	{Func: "avg", Arg: 3, Type: arrow.PrimitiveTypes.Float64},
	{Func: "count_star", Arg: -1, Type: arrow.PrimitiveTypes.Int64},
	{Func: "max", Arg: 3, Type: arrow.PrimitiveTypes.Int64},
}

func overChangeOut() *arrow.Schema {
	fs := append([]arrow.Field{}, overChangeIn.Fields()...)
	for i, f := range retractFuncs {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("f%d", i), Type: f.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// retractChanges is a seeded changelog over 5 keys: inserts with distinct
// order values, deletes of current rows, and updates (-U, +U) that move a
// row to another order value and value.
func retractChanges(seed uint64, n int, nulls bool) []exec.Row {
	rng := rand.New(rand.NewPCG(seed, 7))
	var cur, out []exec.Row
	next := int64(0)
	val := func() any {
		if nulls && rng.IntN(6) == 0 {
			return nil
		}
		return int64(rng.IntN(100))
	}
	for range n {
		next += 1 + int64(rng.IntN(3))
		o := next
		if rng.IntN(3) == 0 {
			o = -next // earlier than what came before
		}
		switch c := rng.IntN(10); {
		case c < 6 || len(cur) == 0:
			r := exec.Row{int64(rng.IntN(5)), o, val()}
			cur = append(cur, r)
			out = append(out, append(exec.Row{OpInsert}, r...))
		case c < 8:
			i := rng.IntN(len(cur))
			out = append(out, append(exec.Row{OpDelete}, cur[i]...))
			cur = append(cur[:i], cur[i+1:]...)
		default:
			i := rng.IntN(len(cur))
			nr := exec.Row{cur[i][0], o, val()}
			out = append(out, append(exec.Row{OpUpdateBefore}, cur[i]...), append(exec.Row{OpUpdateAfter}, nr...))
			cur[i] = nr
		}
	}
	return out
}

// retractRef is the final table: every current row with sum, avg,
// count(*) and max of v over it and the n rows before it in its key by o.
func retractRef(changes []exec.Row, n int) []exec.Row {
	var cur []exec.Row
	for _, c := range changes {
		switch c[0] {
		case OpInsert, OpUpdateAfter:
			cur = append(cur, c[1:])
		default:
			for i, r := range cur {
				if fmt.Sprint(r) == fmt.Sprint(c[1:]) {
					cur = append(cur[:i], cur[i+1:]...)
					break
				}
			}
		}
	}
	byKey := map[string][]exec.Row{}
	for _, r := range cur {
		byKey[fmt.Sprint(r[0])] = append(byKey[fmt.Sprint(r[0])], r)
	}
	var out []exec.Row
	for _, rs := range byKey {
		sort.Slice(rs, func(i, j int) bool { return rs[i][1].(int64) < rs[j][1].(int64) })
		for i, r := range rs {
			var sum, cnt int64
			var mx any
			frame := rs[max(0, i-n) : i+1]
			for _, x := range frame {
				if v, ok := x[2].(int64); ok {
					sum, cnt = sum+v, cnt+1
					if mx == nil || v > mx.(int64) {
						mx = v
					}
				}
			}
			var s, a any
			if cnt > 0 {
				s, a = sum, float64(sum)/float64(cnt)
			}
			out = append(out, append(append(exec.Row{}, r...), s, a, int64(len(frame)), mx))
		}
	}
	return out
}

func newRetractingOver(n int64) *StreamOverAgg {
	return NewRetractingOverAgg(StreamOverSpec{PartitionBy: []int{1}, OrderBy: []SortKey{{Col: 2}}, Rows: true, Preceding: n, Funcs: retractFuncs}, overChangeOut())
}

// Under the operator harness: the applied changelog is every current row
// with its frame's aggregates.
func TestRetractingOverAgrees(t *testing.T) {
	for _, n := range []int64{0, 2, 10} {
		for _, nulls := range []bool{false, true} {
			for _, size := range []int{1, 3, 1024} {
				for _, colIn := range []bool{false, true} {
					t.Run(fmt.Sprintf("n=%d/nulls=%v/size=%d/colIn=%v", n, nulls, size, colIn), func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						changes := retractChanges(uint64(n)+uint64(size), 300, nulls)
						res := runOp(t, mem, newRetractingOver(n), []input{{overChangeIn, changes}}, size, colIn, true)
						got := sortedRows(applyChangelog(t, res.rows))
						want := sortedRows(retractRef(changes, int(n)))
						if !rowsEqual(got, want) {
							t.Fatalf("applied %d rows %v\nwant %d rows %v", len(got), trunc(got), len(want), trunc(want))
						}
					})
				}
			}
		}
	}
}

func TestRetractingOverSnapshotRoundTrip(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			newOp := func() exec.Operator { return newRetractingOver(3) }
			snapshotCutInput(t, mem, newOp, input{overChangeIn, retractChanges(seed, 200, seed%2 == 1)}, 0, seed)
		})
	}
}
