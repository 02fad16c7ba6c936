package ops

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// statSchema: g VARCHAR, x BIGINT, f DOUBLE, d DECIMAL(12, 2), b BOOLEAN;
// x, f and d hold the same numbers.
var (
	statDec    = &arrow.Decimal128Type{Precision: 12, Scale: 2}
	statSchema = arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d", Type: statDec, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
)

// statRows are the groups of the hand-worked examples, interleaved:
//
//	a: 2 4 4 4 5 5 7 9 (the textbook set: mean 5, squared deviations
//	   sum to 32: var_pop 4, stddev_pop 2, var_samp 32/7)
//	b: 1e9+4, 1e9+7, 1e9+13, 1e9+16 (var_samp 30, var_pop 22.5: a sum of
//	   squares near 4e18 would lose them, float64 spacing there is 512)
//	c: 5 (one value: the sample forms NULL, the population forms 0)
//	n: NULL, NULL (no value: all NULL)
//
// and booleans: a TRUE TRUE NULL..., b TRUE FALSE, c FALSE, n NULL.
func statRows() []exec.Row {
	row := func(g string, v any, b any) exec.Row {
		if v == nil {
			return exec.Row{g, nil, nil, nil, b}
		}
		x := v.(int64)
		return exec.Row{g, x, float64(x), decimal128.FromI64(x * 100), b}
	}
	var rows []exec.Row
	a := []int64{2, 4, 4, 4, 5, 5, 7, 9}
	big := []int64{1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}
	for i := range a {
		var ab any
		if i < 2 {
			ab = true
		}
		rows = append(rows, row("a", a[i], ab))
		if i < len(big) {
			rows = append(rows, row("b", big[i], i%2 == 0))
		}
	}
	rows = append(rows, row("c", int64(5), false), row("n", nil, nil), row("n", nil, nil))
	return rows
}

var statSpecs = func() []AggSpec {
	var specs []AggSpec
	for _, f := range []string{"var_pop", "var_samp", "stddev_pop", "stddev_samp", "variance", "stddev"} {
		for _, c := range []int{1, 2, 3} {
			specs = append(specs, AggSpec{Func: f, Col: c, Type: arrow.PrimitiveTypes.Float64})
		}
	}
	for _, f := range []string{"bool_and", "bool_or", "every"} {
		specs = append(specs, AggSpec{Func: f, Col: 4, Type: arrow.FixedWidthTypes.Boolean})
	}
	return specs
}()

func statOut(groups int, specs []AggSpec) *arrow.Schema {
	var fs []arrow.Field
	if groups > 0 {
		fs = append(fs, arrow.Field{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	for i, s := range specs {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("a%d", i), Type: s.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// statWant is the hand-worked answer per group, in statSpecs' order.
func statWant() map[string][]any {
	type res struct{ vp, vs any }
	sq := func(v any) any {
		if v == nil {
			return nil
		}
		return math.Sqrt(v.(float64))
	}
	nums := map[string]res{"a": {4.0, 32.0 / 7}, "b": {22.5, 30.0}, "c": {0.0, nil}, "n": {nil, nil}}
	bools := map[string][3]any{"a": {true, true, true}, "b": {false, true, false}, "c": {false, false, false}, "n": {nil, nil, nil}}
	out := map[string][]any{}
	for g, r := range nums {
		var row []any
		for _, v := range []any{r.vp, r.vs, sq(r.vp), sq(r.vs), r.vs, sq(r.vs)} {
			row = append(row, v, v, v) // BIGINT, DOUBLE and DECIMAL inputs
		}
		bs := bools[g]
		out[g] = append(row, bs[:]...)
	}
	return out
}

// closeTo compares results: floats to 1e-12 relative (a different but
// exact order of operations may move the last bits), the rest exactly.
func closeTo(got, want any) bool {
	if g, ok := got.(float64); ok {
		w, ok := want.(float64)
		return ok && math.Abs(g-w) <= 1e-12*math.Max(1, math.Abs(w))
	}
	return got == want
}

// The variance family and the boolean aggregates by the hash aggregate, on
// every path (batch sizes, row and columnar input, columnar output on and
// off; runOp checks no columnar batch is materialised), against the
// hand-worked values; every run agrees with the others to the bit.
func TestStatAggregates(t *testing.T) {
	want := statWant()
	out := statOut(1, statSpecs)
	var first []exec.Row
	for _, size := range []int{1, 3, 1024} {
		for _, colIn := range []bool{false, true} {
			for _, colOn := range []bool{false, true} {
				t.Run(fmt.Sprintf("size=%d/colIn=%v/colOn=%v", size, colIn, colOn), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					res := runOp(t, mem, NewHashAggregate([]int{0}, statSpecs, out, mem), []input{{statSchema, statRows()}}, size, colIn, colOn)
					got := sortedRows(res.rows)
					if len(got) != len(want) {
						t.Fatalf("%d groups, want %d: %v", len(got), len(want), got)
					}
					for _, r := range got {
						w := want[r[0].(string)]
						for i, v := range r[1:] {
							if !closeTo(v, w[i]) {
								t.Errorf("group %s: %s = %v, want %v", r[0], statSpecs[i], v, w[i])
							}
						}
					}
					if first == nil {
						first = got
					} else if !rowsEqual(got, first) {
						t.Errorf("differs from the first run:\n%v\n%v", got, first)
					}
				})
			}
		}
	}
}

// Without GROUP BY over no rows: one row, every aggregate NULL. With
// DISTINCT: stddev_samp(DISTINCT x) over 2 4 4 4 5 5 7 9 reads 2 4 5 7 9
// (mean 5.4, squared deviations 29.2: var_samp 7.3).
func TestStatAggregatesEmptyAndDistinct(t *testing.T) {
	specs := []AggSpec{{Func: "var_samp", Col: 1, Type: arrow.PrimitiveTypes.Float64},
		{Func: "var_pop", Col: 2, Type: arrow.PrimitiveTypes.Float64},
		{Func: "bool_or", Col: 4, Type: arrow.FixedWidthTypes.Boolean}}
	for _, colIn := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		res := runOp(t, mem, NewHashAggregate(nil, specs, statOut(0, specs), mem), []input{{statSchema, nil}}, 4, colIn, true)
		if len(res.rows) != 1 || res.rows[0][0] != nil || res.rows[0][1] != nil || res.rows[0][2] != nil {
			t.Errorf("over no rows: %v, want one row of NULLs", res.rows)
		}
		var a []exec.Row
		for _, r := range statRows() {
			if r[0] == "a" {
				a = append(a, r)
			}
		}
		distinct := []AggSpec{{Func: "var_samp", Distinct: true, Col: 3, Type: arrow.PrimitiveTypes.Float64},
			{Func: "stddev_pop", Distinct: true, Col: 1, Type: arrow.PrimitiveTypes.Float64}}
		res = runOp(t, mem, NewHashAggregate(nil, distinct, statOut(0, distinct), mem), []input{{statSchema, a}}, 3, colIn, true)
		if len(res.rows) != 1 || !closeTo(res.rows[0][0], 7.3) || !closeTo(res.rows[0][1], math.Sqrt(29.2/5)) {
			t.Errorf("DISTINCT: %v, want [7.3 %v]", res.rows, math.Sqrt(29.2/5))
		}
		mem.AssertSize(t, 0)
	}
}

func TestStatAggregateErrors(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, c := range []struct {
		spec AggSpec
		want string
	}{
		{AggSpec{Func: "stddev", Col: 1, Type: arrow.PrimitiveTypes.Int64}, "gives DOUBLE"},
		{AggSpec{Func: "bool_or", Col: 4, Type: arrow.PrimitiveTypes.Float64}, "gives BOOLEAN"},
		{AggSpec{Func: "var_pop", Col: 0, Type: arrow.PrimitiveTypes.Float64}, "takes a number, not utf8"},
		{AggSpec{Func: "every", Col: 1, Type: arrow.FixedWidthTypes.Boolean}, "takes BOOLEAN, not int64"},
	} {
		h := NewHashAggregate(nil, []AggSpec{c.spec}, statOut(0, []AggSpec{c.spec}), mem)
		b := exec.NewRowBatch(statSchema, statRows())
		err := h.Process(context.Background(), 0, b, &capture{})
		h.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.spec, err, c.want)
		}
	}
}

// The updating aggregate (GROUP BY over a stream) emits the variance as
// it changes: 1 then 1, 3 (var_samp 2, stddev_pop 1) then 1, 3, 5
// (var_samp 4); bool_and falls to FALSE with the first FALSE.
func TestUpdatingAggregateStats(t *testing.T) {
	for _, columnar := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		specs := []AggSpec{{Func: "var_samp", Col: 1, Type: arrow.PrimitiveTypes.Float64},
			{Func: "stddev_pop", Col: 1, Type: arrow.PrimitiveTypes.Float64},
			{Func: "bool_and", Col: 4, Type: arrow.FixedWidthTypes.Boolean}}
		out := arrow.NewSchema(append(statOut(1, specs).Fields(), arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
		u := NewUpdatingAggregate([]int{0}, specs, out, mem)
		c := &capture{}
		for _, rows := range [][]exec.Row{
			{{"a", int64(1), nil, nil, true}},
			{{"a", int64(3), nil, nil, true}},
			{{"a", int64(5), nil, nil, false}},
		} {
			for _, b := range makeBatches(t, mem, input{statSchema, rows}, 1, columnar) {
				if _, err := exec.Dispatch(t.Context(), u, true, 0, b, c); err != nil {
					t.Fatal(err)
				}
				b.Release()
			}
		}
		got, _ := c.rows()
		u.Close()
		var lines []string
		for _, r := range got {
			lines = append(lines, fmt.Sprint(r))
		}
		want := []string{"[a <nil> 0 true +I]", "[a <nil> 0 true -U]", "[a 2 1 true +U]", "[a 2 1 true -U]", "[a 4 1.632993161855452 false +U]"}
		if strings.Join(lines, " ") != strings.Join(want, " ") {
			t.Errorf("columnar=%v: changelog\n%s\nwant\n%s", columnar, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
		mem.AssertSize(t, 0)
	}
}

// Event-time windows fold the new aggregates per pane: TUMBLE(100ms) over
// key 0 with 1, 3 in [0, 100) and 2, 4, 6 in [100, 200) gives var_pop 1
// and 8/3, var_samp 2 and 4; bool_or per window.
func TestWindowAggregateStats(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "ts", Type: tsMs, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	out := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "vp", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "vs", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "any", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "window_start", Type: tsMs}, {Name: "window_end", Type: tsMs}, {Name: "window_time", Type: tsMs},
	}, nil)
	specs := []AggSpec{{Func: "var_pop", Col: 2, Type: arrow.PrimitiveTypes.Float64},
		{Func: "variance", Col: 2, Type: arrow.PrimitiveTypes.Float64},
		{Func: "bool_or", Col: 3, Type: arrow.FixedWidthTypes.Boolean}}
	runCase(t, opCase{
		name: "tumble",
		newOp: func(mem memory.Allocator) exec.Operator {
			return NewWindowAggregate(WindowSpec{Kind: Tumble, Size: 100 * time.Millisecond}, 1, []int{0}, specs, out, mem)
		},
		inputs: func(bool) []input {
			return []input{{schema, []exec.Row{
				{int64(0), arrow.Timestamp(10), int64(1), false},
				{int64(0), arrow.Timestamp(120), int64(2), nil},
				{int64(0), arrow.Timestamp(50), int64(3), false},
				{int64(0), arrow.Timestamp(150), int64(4), true},
				{int64(0), arrow.Timestamp(199), int64(6), nil},
			}}}
		},
		want: func([]input) []exec.Row {
			return []exec.Row{
				{int64(0), 1.0, 2.0, false, arrow.Timestamp(0), arrow.Timestamp(100), arrow.Timestamp(99)},
				{int64(0), 8.0 / 3, 4.0, true, arrow.Timestamp(100), arrow.Timestamp(200), arrow.Timestamp(199)},
			}
		},
	})
}
