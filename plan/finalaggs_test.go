package plan

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// bool_and, every and bool_or run in two phases (the final ANDs or ORs
// the partial answers); the variance family does not (its partial result
// alone cannot be merged: the count and mean are lost).
func TestFinalAggsStatAndBool(t *testing.T) {
	b := arrow.FixedWidthTypes.Boolean
	for _, fn := range []string{"bool_and", "every", "bool_or"} {
		a := &Aggregate{GroupCols: []int{0}, Aggs: []ops.AggSpec{{Func: "count_star", Col: -1}, {Func: fn, Col: 1, Type: b}}}
		final, ok := finalAggs(a)
		if !ok || final[1].Func != fn || final[1].Col != 2 {
			t.Errorf("%s: final %v, %v; want %s over partial column 2", fn, final, ok, fn)
		}
	}
	for _, fn := range []string{"stddev_samp", "stddev", "stddev_pop", "var_samp", "variance", "var_pop"} {
		a := &Aggregate{Aggs: []ops.AggSpec{{Func: fn, Col: 0, Type: arrow.PrimitiveTypes.Float64}}}
		if _, ok := finalAggs(a); ok {
			t.Errorf("%s decomposes", fn)
		}
	}
}
