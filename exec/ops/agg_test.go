package ops

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var (
	i64 = arrow.PrimitiveTypes.Int64
	f64 = arrow.PrimitiveTypes.Float64
	str = arrow.BinaryTypes.String
)

// refAgg is an independent GROUP BY over row values: groups in first-seen
// order, NULL keys one group, aggregates skipping NULLs.
func refAgg(rows []exec.Row, groupCols []int, specs []AggSpec) []exec.Row {
	type group struct {
		key  []any
		rows []exec.Row
	}
	var order []*group
	byKey := map[string]*group{}
	for _, r := range rows {
		var key []any
		for _, c := range groupCols {
			key = append(key, r[c])
		}
		ks := fmt.Sprintf("%#v", key)
		g := byKey[ks]
		if g == nil {
			g = &group{key: key}
			byKey[ks] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, r)
	}
	if len(groupCols) == 0 && len(order) == 0 {
		order = append(order, &group{})
	}
	var out []exec.Row
	for _, g := range order {
		row := append(exec.Row{}, g.key...)
		for _, s := range specs {
			var vals []any
			seen := map[any]bool{}
			for _, r := range g.rows {
				if s.Func == "count_star" {
					vals = append(vals, true)
					continue
				}
				v := r[s.Col]
				if v == nil || (s.Distinct && seen[v]) {
					continue
				}
				seen[v] = true
				vals = append(vals, v)
			}
			row = append(row, refFold(s, vals))
		}
		out = append(out, row)
	}
	return out
}

func refFold(s AggSpec, vals []any) any {
	if s.Func == "count" || s.Func == "count_star" {
		return int64(len(vals))
	}
	if len(vals) == 0 {
		return nil
	}
	switch s.Func {
	case "sum", "avg":
		if s.Type.ID() == arrow.FLOAT64 {
			var sum float64
			for _, v := range vals {
				switch x := v.(type) {
				case int64:
					sum += float64(x)
				case float64:
					sum += x
				}
			}
			if s.Func == "avg" {
				return sum / float64(len(vals))
			}
			return sum
		}
		var sum int64
		for _, v := range vals {
			sum += v.(int64)
		}
		return sum
	}
	best := vals[0]
	for _, v := range vals[1:] {
		var less bool
		switch x := v.(type) {
		case int64:
			less = x < best.(int64)
		case float64:
			less = x < best.(float64)
		case string:
			less = strings.Compare(x, best.(string)) < 0
		}
		if less == (s.Func == "min") && v != best {
			best = v
		}
	}
	return best
}

func aggSchema(in *arrow.Schema, groupCols []int, specs []AggSpec) *arrow.Schema {
	var fs []arrow.Field
	for _, c := range groupCols {
		fs = append(fs, in.Field(c))
	}
	for i, s := range specs {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("a%d", i), Type: s.Type, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

var sampleAggs = []AggSpec{
	{Func: "count_star", Col: -1, Type: i64},
	{Func: "count", Col: 2, Type: i64},
	{Func: "sum", Col: 2, Type: i64},
	{Func: "avg", Col: 3, Type: f64},
	{Func: "avg", Col: 2, Type: f64},
	{Func: "sum", Col: 3, Type: f64},
	{Func: "min", Col: 1, Type: str},
	{Func: "max", Col: 1, Type: str},
	{Func: "max", Col: 3, Type: f64},
	{Func: "min", Col: 2, Type: i64},
	{Func: "count", Distinct: true, Col: 2, Type: i64},
	{Func: "sum", Distinct: true, Col: 0, Type: i64},
}

func TestHashAggregate(t *testing.T) {
	for _, groups := range [][]int{{0}, {1}, {0, 1}, {3}, {}} {
		out := aggSchema(SampleSchema, groups, sampleAggs)
		runCase(t, opCase{
			name: fmt.Sprintf("group%v", groups),
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewHashAggregate(groups, sampleAggs, out, mem)
			},
			inputs: sampleInput(300),
			want:   func(ins []input) []exec.Row { return refAgg(ins[0].rows, groups, sampleAggs) },
		})
	}
}

// Without GROUP BY the result is one row even over no input: COUNT 0, the
// rest NULL. With GROUP BY, no input gives no rows.
func TestHashAggregateEmptyInput(t *testing.T) {
	for _, groups := range [][]int{{}, {0}} {
		out := aggSchema(SampleSchema, groups, sampleAggs)
		runCase(t, opCase{
			name: fmt.Sprintf("empty/group%v", groups),
			newOp: func(mem memory.Allocator) exec.Operator {
				return NewHashAggregate(groups, sampleAggs, out, mem)
			},
			inputs: sampleInput(0),
			want: func([]input) []exec.Row {
				if len(groups) > 0 {
					return nil
				}
				return []exec.Row{{int64(0), int64(0), nil, nil, nil, nil, nil, nil, nil, nil, int64(0), nil}}
			},
		})
	}
}

func TestHashAggregateSumOverflow(t *testing.T) {
	rows := []exec.Row{{int64(1), "a", int64(math.MaxInt64 - 1), 0.0, nil}, {int64(1), "a", int64(2), 0.0, nil}}
	specs := []AggSpec{{Func: "sum", Col: 2, Type: i64}}
	for _, col := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		h := NewHashAggregate([]int{0}, specs, aggSchema(SampleSchema, []int{0}, specs), mem)
		var err error
		for _, b := range makeBatches(t, mem, input{SampleSchema, rows}, 1, col) {
			if err == nil {
				_, err = exec.Dispatch(t.Context(), h, col, 0, b, &capture{})
			}
			b.Release()
		}
		if err == nil || !strings.Contains(err.Error(), "overflow") {
			t.Errorf("columnar=%v: err = %v, want an overflow error", col, err)
		}
		h.Close()
		mem.AssertSize(t, 0)
	}
}

func TestHashAggregateDecimal(t *testing.T) {
	dt := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	in := arrow.NewSchema([]arrow.Field{{Name: "g", Type: i64}, {Name: "d", Type: dt, Nullable: true}}, nil)
	specs := []AggSpec{
		{Func: "sum", Col: 1, Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}},
		{Func: "avg", Col: 1, Type: &arrow.Decimal128Type{Precision: 38, Scale: 6}},
		{Func: "max", Col: 1, Type: dt},
		{Func: "count", Distinct: true, Col: 1, Type: i64},
	}
	out := aggSchema(in, []int{0}, specs)
	runCase(t, opCase{
		name:  "decimal",
		newOp: func(mem memory.Allocator) exec.Operator { return NewHashAggregate([]int{0}, specs, out, mem) },
		inputs: func(nulls bool) []input {
			var rows []exec.Row
			for i := 0; i < 40; i++ {
				var d any = decimal128.FromI64(int64(i*125 - 900)) // -9.00 + 1.25*i
				if nulls && i%3 == 0 {
					d = nil
				}
				rows = append(rows, exec.Row{int64(i % 3), d})
			}
			return []input{{in, rows}}
		},
		want: func(ins []input) []exec.Row {
			sums, counts, maxs := map[int64]int64{}, map[int64]int64{}, map[int64]int64{}
			var order []int64
			for _, r := range ins[0].rows {
				g := r[0].(int64)
				if _, ok := counts[g]; !ok {
					order = append(order, g)
					counts[g] = 0
					maxs[g] = math.MinInt64
				}
				if r[1] == nil {
					continue
				}
				v := r[1].(decimal128.Num).LowBits()
				sums[g] += int64(v)
				counts[g]++
				maxs[g] = max(maxs[g], int64(v))
			}
			var rows []exec.Row
			for _, g := range order {
				if counts[g] == 0 {
					rows = append(rows, exec.Row{g, nil, nil, nil, int64(0)})
					continue
				}
				// avg at scale 6, half up: sum*10^4/count
				num, c := sums[g]*10000, counts[g]
				q := num / c
				if r := num % c; 2*abs(r) >= c {
					q += sign(num)
				}
				rows = append(rows, exec.Row{g, decimal128.FromI64(sums[g]), decimal128.FromI64(q),
					decimal128.FromI64(maxs[g]), c})
			}
			return rows
		},
	})
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

func TestHashAggregateConfigErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	specs := []AggSpec{{Func: "median", Col: 2, Type: i64}}
	h := NewHashAggregate(nil, specs, aggSchema(SampleSchema, nil, specs), mem)
	defer h.Close()
	if err := h.Finish(t.Context(), 0, &capture{}); err == nil || !strings.Contains(err.Error(), "median") {
		t.Fatalf("err = %v, want unknown aggregate", err)
	}
	specs = []AggSpec{{Func: "sum", Col: 1, Type: i64}} // SUM over VARCHAR
	h2 := NewHashAggregate(nil, specs, aggSchema(SampleSchema, nil, specs), mem)
	defer h2.Close()
	b := exec.NewRowBatch(SampleSchema, sampleRows(3, false))
	if err := h2.Process(t.Context(), 0, b, &capture{}); err == nil || !strings.Contains(err.Error(), `"s"`) {
		t.Fatalf("err = %v, want an error naming column s", err)
	}
}

// Columnar output is born columnar from the state; off, it is rows.
func TestHashAggregateOutputForm(t *testing.T) {
	for _, on := range []bool{false, true} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		out := aggSchema(SampleSchema, []int{1}, sampleAggs)
		res := runOp(t, mem, NewHashAggregate([]int{1}, sampleAggs, out, mem), []input{{SampleSchema, sampleRows(100, true)}}, 7, true, on)
		wantCol := 0
		if on {
			wantCol = 1
		}
		if res.outBatches != 1 || res.outCol != wantCol {
			t.Errorf("output on=%v: %d batches, %d columnar", on, res.outBatches, res.outCol)
		}
		mem.AssertSize(t, 0)
	}
}
