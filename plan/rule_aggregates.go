package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// decomposeAggregates rewrites aggregates whose partial results do not
// merge into ones that do, so the two-phase rule can split them and no
// plan gathers every row into one aggregate:
//
//   - AVG(x) of integers or floats is SUM(x) / COUNT(x), divided above
//     the aggregate (SUM and COUNT merge; AVG of DECIMAL keeps its own
//     rounding and stays whole).
//   - When every aggregate is COUNT(DISTINCT x) (or SUM/MIN/MAX(DISTINCT
//     x)) of one x, the distinct (keys, x) pairs come first, from a GROUP
//     BY keys, x that runs in two phases itself, and the aggregates then
//     run plainly over them.
func decomposeAggregates(n Node, o *RuleOptions) (Node, error) {
	if o.Parallelism < 2 {
		return n, nil
	}
	return rewritePlan(n, func(x Node) (Node, error) {
		a, ok := x.(*Aggregate)
		if !ok || a.Updating {
			return x, nil
		}
		if r, ok, err := distinctFirst(a); ok || err != nil {
			return r, err
		}
		return avgAsSumCount(a)
	})
}

// avgAsSumCount replaces AVG of integers and floats by SUM and COUNT.
func avgAsSumCount(a *Aggregate) (Node, error) {
	found := false
	for _, s := range a.Aggs {
		if s.Func == "avg" && !s.Distinct && s.Type.ID() == arrow.FLOAT64 {
			found = true
		}
	}
	if !found {
		return a, nil
	}
	g := len(a.GroupCols)
	in := a.Input.Schema()
	c := *a
	c.Aggs, c.AggText = nil, nil
	// Where each old aggregate lands: one column, or a sum and a count.
	type place struct{ col, count int }
	places := make([]place, len(a.Aggs))
	fs := append([]arrow.Field(nil), a.schema.Fields()[:g]...)
	add := func(s ops.AggSpec, text string) int {
		c.Aggs, c.AggText = append(c.Aggs, s), append(c.AggText, text)
		fs = append(fs, arrow.Field{Name: text, Type: s.Type, Nullable: true})
		return g + len(c.Aggs) - 1
	}
	for i, s := range a.Aggs {
		text := a.AggText[i]
		if s.Func != "avg" || s.Distinct || s.Type.ID() != arrow.FLOAT64 {
			places[i] = place{col: add(s, text), count: -1}
			continue
		}
		sumT := arrow.DataType(arrow.PrimitiveTypes.Float64)
		switch in.Field(s.Col).Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			sumT = arrow.PrimitiveTypes.Int64
		}
		sum := add(ops.AggSpec{Func: "sum", Col: s.Col, Type: sumT, Text: text}, "sum of "+text)
		cnt := add(ops.AggSpec{Func: "count", Col: s.Col, Type: arrow.PrimitiveTypes.Int64, Text: text}, "count of "+text)
		places[i] = place{col: sum, count: cnt}
	}
	c.schema = arrow.NewSchema(fs, nil)
	exprs := make([]Expr, 0, a.schema.NumFields())
	for i := 0; i < g; i++ {
		f := fs[i]
		exprs = append(exprs, NewColRef(i, f.Name, f.Type))
	}
	for _, p := range places {
		col := NewColRef(p.col, fs[p.col].Name, fs[p.col].Type)
		if p.count < 0 {
			exprs = append(exprs, col)
			continue
		}
		num, err := castCall(col, arrow.PrimitiveTypes.Float64)
		if err != nil {
			return nil, err
		}
		den, err := castCall(NewColRef(p.count, fs[p.count].Name, fs[p.count].Type), arrow.PrimitiveTypes.Float64)
		if err != nil {
			return nil, err
		}
		// COUNT is 0 exactly when SUM is NULL: x / 0 is NULL, as AVG of
		// no values is.
		avg, err := binaryCall("/", num, den)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, avg)
	}
	return NewProject(&c, exprs, fieldNames(a.schema)), nil
}

// distinctFirst plans an aggregate whose every aggregate is DISTINCT over
// one argument as GROUP BY keys, x (the distinct pairs, itself two-phase)
// under the same aggregates without DISTINCT.
func distinctFirst(a *Aggregate) (Node, bool, error) {
	if len(a.Aggs) == 0 {
		return a, false, nil
	}
	arg := -1
	for _, s := range a.Aggs {
		if !s.Distinct || s.Col < 0 || (arg >= 0 && s.Col != arg) {
			return a, false, nil
		}
		switch s.Func {
		case "count", "sum", "min", "max":
		default:
			return a, false, nil
		}
		arg = s.Col
	}
	in := a.Input.Schema()
	keys := append(append([]int(nil), a.GroupCols...), arg)
	fs := make([]arrow.Field, len(keys))
	for i, k := range keys {
		fs[i] = in.Field(k)
		fs[i].Nullable = true
	}
	pairs := &Aggregate{Input: a.Input, GroupCols: keys, schema: arrow.NewSchema(fs, nil)}
	g := len(a.GroupCols)
	group := identityMap(g)
	top := &Aggregate{Input: pairs, GroupCols: group, AggText: a.AggText, schema: a.schema}
	for _, s := range a.Aggs {
		s.Distinct, s.Col = false, g
		top.Aggs = append(top.Aggs, s)
	}
	if top.schema.NumFields() != g+len(top.Aggs) {
		return nil, true, fmt.Errorf("internal error: an aggregate's schema does not match its keys and aggregates")
	}
	return top, true, nil
}
