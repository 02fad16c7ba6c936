package ops

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var expandOut = arrow.NewSchema(append(append([]arrow.Field(nil), SampleSchema.Fields()...),
	arrow.Field{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64}), nil)

// refExpand: each row once per set, keys outside the set NULL, and the
// grouping id summing 2^(len-1-j) over the keys keyCols[j] not in the set.
func refExpand(rows []exec.Row, sets [][]int, keyCols []int) []exec.Row {
	var out []exec.Row
	for _, r := range rows {
		for _, set := range sets {
			row := append(exec.Row(nil), r...)
			gid := int64(0)
			for j, c := range keyCols {
				if !slices.Contains(set, c) {
					row[c] = nil
					gid += int64(1) << (len(keyCols) - 1 - j)
				}
			}
			out = append(out, append(row, gid))
		}
	}
	return out
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sets    [][]int
		keyCols []int
		gids    []int64
	}{
		{"rollup(k,s)", [][]int{{0, 1}, {0}, {}}, []int{0, 1}, []int64{0, 1, 3}},
		{"cube(k,s)", [][]int{{0, 1}, {0}, {1}, {}}, []int{0, 1}, []int64{0, 1, 2, 3}},
		{"cube(k,s,v)", [][]int{{0, 1, 2}, {0, 1}, {0, 2}, {0}, {1, 2}, {1}, {2}, {}}, []int{0, 1, 2}, []int64{0, 1, 2, 3, 4, 5, 6, 7}},
		// Keys listed in another order than the columns: s is the high bit.
		{"sets((s),(k),())", [][]int{{1}, {0}, {}}, []int{1, 0}, []int64{1, 2, 3}},
		{"sets(())", [][]int{{}}, []int{3}, []int64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewExpand(tc.sets, tc.keyCols, expandOut, memory.NewGoAllocator()).GroupingIDs(); !slices.Equal(got, tc.gids) {
				t.Errorf("grouping ids %v, want %v", got, tc.gids)
			}
			runCase(t, opCase{
				name:   tc.name,
				newOp:  func(mem memory.Allocator) exec.Operator { return NewExpand(tc.sets, tc.keyCols, expandOut, mem) },
				inputs: sampleInput(40),
				want:   func(ins []input) []exec.Row { return refExpand(ins[0].rows, tc.sets, tc.keyCols) },
			})
		})
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		sets    [][]int
		keyCols []int
		out     *arrow.Schema
		want    string
	}{
		{[][]int{{0}}, []int{0}, SampleSchema, "last column must be the BIGINT grouping id"},
		{nil, []int{0}, expandOut, "no grouping sets"},
		{[][]int{{2}}, []int{0}, expandOut, "names column 2, which is not a key"},
		{[][]int{{0}}, []int{0, 0}, expandOut, "listed twice"},
		{[][]int{{0}}, []int{9}, expandOut, "out of range"},
	} {
		e := NewExpand(tc.sets, tc.keyCols, tc.out, memory.NewGoAllocator())
		if err := e.Finish(context.Background(), 0, &capture{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err = %v, want %q", tc.sets, tc.keyCols, err, tc.want)
		}
	}
}

// chainTo feeds what it is given to the next operator, as a runner would.
type chainTo struct {
	op  exec.Operator
	out exec.Emitter
}

func (c chainTo) Emit(ctx context.Context, b *exec.Batch) error {
	_, err := exec.Dispatch(ctx, c.op, true, 0, b, c.out)
	return err
}

func (c chainTo) EmitWatermark(ctx context.Context, wm int64) error {
	return c.op.OnWatermark(ctx, wm, c.out)
}

// GROUP BY ROLLUP(k, s) as the planner will run it: Expand, then a hash
// aggregate over (k, s, grouping id), columnar end to end, against sums
// computed per grouping set.
func TestExpandRollupThroughAggregate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	sets, keys := [][]int{{0, 1}, {0}, {}}, []int{0, 1}
	aggOut := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: i64T, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "gid", Type: i64T}, {Name: "n", Type: i64T}, {Name: "total", Type: i64T, Nullable: true},
	}, nil)
	rows := sampleRows(3000, true)
	for _, columnar := range []bool{false, true} {
		exp := NewExpand(sets, keys, expandOut, mem)
		agg := NewHashAggregate([]int{0, 1, 5}, []AggSpec{{Func: "count_star", Col: -1, Type: i64T}, {Func: "sum", Col: 2, Type: i64T}}, aggOut, mem)
		agg.SetColumnarOutput(columnar)
		res := &capture{}
		before := exec.Global.BatchesMaterialized.Load()
		for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, 500, columnar) {
			if _, err := exec.Dispatch(ctx, exp, columnar, 0, b, chainTo{agg, res}); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := exp.Finish(ctx, 0, chainTo{agg, res}); err != nil {
			t.Fatal(err)
		}
		if err := agg.Finish(ctx, 0, res); err != nil {
			t.Fatal(err)
		}
		if d := exec.Global.BatchesMaterialized.Load() - before; columnar && d != 0 {
			t.Errorf("%d batches materialised on the columnar chain", d)
		}
		got, _ := res.rows()
		exp.Close()
		agg.Close()
		// The reference: each set's groups from the rows directly.
		type acc struct {
			n     int64
			total any
		}
		want := map[string]acc{}
		for gid, set := range map[int64][]int{0: {0, 1}, 1: {0}, 3: {}} {
			for _, r := range rows {
				k := []any{nil, nil, gid}
				for _, c := range set {
					k[c] = r[c]
				}
				key := fmt.Sprint(k)
				a := want[key]
				a.n++
				if r[2] != nil {
					if a.total == nil {
						a.total = int64(0)
					}
					a.total = a.total.(int64) + r[2].(int64)
				}
				want[key] = a
			}
		}
		var gotS, wantS []string
		for _, r := range got {
			gotS = append(gotS, fmt.Sprint(r))
		}
		for k, a := range want {
			wantS = append(wantS, fmt.Sprint(strings.TrimSuffix(k, "]"), " ", a.n, " ", fmt.Sprint(a.total), "]"))
		}
		sort.Strings(gotS)
		sort.Strings(wantS)
		if strings.Join(gotS, "\n") != strings.Join(wantS, "\n") {
			t.Errorf("columnar=%v: got %d groups\n%s\nwant %d\n%s", columnar, len(gotS), strings.Join(gotS[:min(8, len(gotS))], "\n"),
				len(wantS), strings.Join(wantS[:min(8, len(wantS))], "\n"))
		}
	}
}

// expandCopyOut is expandOut with the copy number a repeated set needs.
var expandCopyOut = arrow.NewSchema(append(append([]arrow.Field(nil), expandOut.Fields()...),
	arrow.Field{Name: "grouping_copy", Type: arrow.PrimitiveTypes.Int64}), nil)

func TestSetCopies(t *testing.T) {
	for _, c := range []struct {
		sets [][]int
		want []int64
	}{
		{[][]int{{0, 1}, {0}, {}}, nil},
		{[][]int{{0}, {0}}, []int64{0, 1}},
		// (k, s) and (s, k) are one set; so are (k, k) and (k).
		{[][]int{{0}, {0, 1}, {1, 0}, {}, {0, 0}, {0}}, []int64{0, 0, 1, 0, 1, 2}},
	} {
		if got := SetCopies(c.sets); !slices.Equal(got, c.want) {
			t.Errorf("SetCopies(%v) = %v, want %v", c.sets, got, c.want)
		}
	}
}

// GROUPING SETS ((k), (k), ()): each row leaves three times, the two
// copies of (k) with one grouping id and copy numbers 0 and 1.
func TestExpandRepeatedSets(t *testing.T) {
	sets, keys := [][]int{{0}, {0}, {}}, []int{0}
	runCase(t, opCase{
		name:   "sets((k),(k),())",
		newOp:  func(mem memory.Allocator) exec.Operator { return NewExpand(sets, keys, expandCopyOut, mem) },
		inputs: sampleInput(40),
		want: func(ins []input) []exec.Row {
			var out []exec.Row
			for i, r := range refExpand(ins[0].rows, sets, keys) {
				out = append(out, append(r, []int64{0, 1, 0}[i%3]))
			}
			return out
		},
	})
	// Repeated sets without the copy column: the configuration is wrong.
	e := NewExpand(sets, keys, expandOut, memory.NewGoAllocator())
	if err := e.Finish(context.Background(), 0, &capture{}); err == nil || !strings.Contains(err.Error(), "copy number") {
		t.Errorf("err = %v, want the copy number missing", err)
	}
}

// Through the aggregate, as the planner runs GROUPING SETS ((k), (k)):
// grouped on (k, grouping id, copy), every group comes out twice with the
// same count, as PostgreSQL and DuckDB give it.
func TestExpandRepeatedSetsThroughAggregate(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sets, keys := [][]int{{0}, {0}}, []int{0}
	aggOut := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: i64T, Nullable: true}, {Name: "gid", Type: i64T}, {Name: "copy", Type: i64T}, {Name: "n", Type: i64T},
	}, nil)
	rows := sampleRows(700, true)
	counts := map[any]int64{}
	for _, r := range rows {
		counts[r[0]]++
	}
	for _, columnar := range []bool{false, true} {
		exp := NewExpand(sets, keys, expandCopyOut, mem)
		agg := NewHashAggregate([]int{0, 5, 6}, []AggSpec{{Func: "count_star", Col: -1, Type: i64T}}, aggOut, mem)
		agg.SetColumnarOutput(columnar)
		res := &capture{}
		for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, 128, columnar) {
			if _, err := exec.Dispatch(context.Background(), exp, columnar, 0, b, chainTo{agg, res}); err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if err := agg.Finish(context.Background(), 0, res); err != nil {
			t.Fatal(err)
		}
		got, _ := res.rows()
		exp.Close()
		agg.Close()
		if len(got) != 2*len(counts) {
			t.Fatalf("columnar=%v: %d groups, want %d (each of %d twice)", columnar, len(got), 2*len(counts), len(counts))
		}
		seen := map[string]bool{}
		for _, r := range got {
			if r[3] != counts[r[0]] || r[1] != int64(0) {
				t.Errorf("columnar=%v: group %v, want count %d and grouping id 0", columnar, r, counts[r[0]])
			}
			seen[fmt.Sprint(r[0], r[2])] = true
		}
		if len(seen) != len(got) {
			t.Errorf("columnar=%v: a (key, copy) pair came out twice: %v", columnar, got)
		}
	}
}
