package plan

import (
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
//   - COUNT(DISTINCT x) (and SUM/MIN/MAX(DISTINCT x)) of one x runs over
//     the distinct (keys, x) pairs, from a GROUP BY keys, x that runs in
//     two phases itself; the other aggregates aggregate the shared input
//     on their own, and the two join on the keys.
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

// distinctFirst plans the DISTINCT aggregates of an aggregate (all over
// one argument x) as GROUP BY keys, x (the distinct pairs, itself
// two-phase) under the same aggregates without DISTINCT. The others, if
// any, aggregate the same input on their own (the input is shared, read
// once), and the two results join on the keys (IS NOT DISTINCT FROM: a
// NULL key is a group too).
func distinctFirst(a *Aggregate) (Node, bool, error) {
	arg := -1
	var dIdx, nIdx []int
	for i, s := range a.Aggs {
		if !s.Distinct {
			nIdx = append(nIdx, i)
			continue
		}
		if s.Col < 0 || (arg >= 0 && s.Col != arg) {
			return a, false, nil // DISTINCT over several arguments: left whole
		}
		switch s.Func {
		case "count", "sum", "min", "max":
		default:
			return a, false, nil
		}
		arg = s.Col
		dIdx = append(dIdx, i)
	}
	if len(dIdx) == 0 {
		return a, false, nil
	}
	in := a.Input.Schema()
	g := len(a.GroupCols)
	keyFields := make([]arrow.Field, g)
	for i := range keyFields {
		keyFields[i] = a.schema.Field(i)
	}
	part := func(input Node, group []int, idx []int, distinctCol int) *Aggregate {
		fs := append([]arrow.Field(nil), keyFields...)
		out := &Aggregate{Input: input, GroupCols: group}
		for _, k := range idx {
			s := a.Aggs[k]
			if distinctCol >= 0 {
				s.Distinct, s.Col = false, distinctCol
			}
			out.Aggs, out.AggText = append(out.Aggs, s), append(out.AggText, a.AggText[k])
			fs = append(fs, a.schema.Field(g+k))
		}
		out.schema = arrow.NewSchema(fs, nil)
		return out
	}
	keys := append(append([]int(nil), a.GroupCols...), arg)
	pfs := make([]arrow.Field, len(keys))
	for i, k := range keys {
		pfs[i] = in.Field(k)
		pfs[i].Nullable = true
	}
	pairs := &Aggregate{Input: a.Input, GroupCols: keys, schema: arrow.NewSchema(pfs, nil)}
	dPart := part(pairs, identityMap(g), dIdx, g)
	if len(nIdx) == 0 {
		return dPart, true, nil
	}
	nPart := part(a.Input, a.GroupCols, nIdx, -1)
	wn := nPart.schema.NumFields()
	var conds []Expr
	for i := 0; i < g; i++ {
		f := keyFields[i]
		eq, err := NewCall("IS NOT DISTINCT FROM", []Expr{NewColRef(i, f.Name, f.Type), NewColRef(wn+i, f.Name, f.Type)}, notDistinct)
		if err != nil {
			return nil, true, err
		}
		conds = append(conds, eq)
	}
	on, err := And(conds...)
	if err != nil {
		return nil, true, err
	}
	j := newJoin(nPart, dPart, JoinInner, on)
	exprs := make([]Expr, 0, a.schema.NumFields())
	for i := 0; i < g; i++ {
		exprs = append(exprs, NewColRef(i, keyFields[i].Name, keyFields[i].Type))
	}
	for k := range a.Aggs {
		f := a.schema.Field(g + k)
		col := -1
		for p, n := range nIdx {
			if n == k {
				col = g + p
			}
		}
		for p, d := range dIdx {
			if d == k {
				col = wn + g + p
			}
		}
		exprs = append(exprs, NewColRef(col, f.Name, f.Type))
	}
	return NewProject(j, exprs, fieldNames(a.schema)), true, nil
}
