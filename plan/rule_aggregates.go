package plan

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// decomposeAggregates rewrites aggregates whose partial results do not
// merge into ones that do, so the two-phase rule can split them and no
// plan gathers every row into one aggregate:
//
//   - AVG(x) of integers or floats is SUM(x) / COUNT(x), divided above
//     the aggregate (SUM and COUNT merge). AVG of DECIMAL(p, s) is
//     DECIMAL(38, max(s, 6)): SUM(x) is DECIMAL(38, s) and the DECIMAL
//     division by a BIGINT gives exactly that type, rounding half away
//     from zero as the AVG accumulator does (exec/expr's decDivRound,
//     exec/ops' decResult), so it splits too; otherwise every row of
//     TPC-H Q1 crossed the exchange to 4 groups on 2 subtasks.
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

// avgAsSumCount replaces AVG of numbers by SUM and COUNT.
func avgAsSumCount(a *Aggregate) (Node, error) {
	in := a.Input.Schema()
	// split reports whether AVG s becomes SUM / COUNT, and the SUM's type.
	split := func(s ops.AggSpec) (arrow.DataType, bool) {
		if s.Func != "avg" || s.Distinct || s.Col < 0 {
			return nil, false
		}
		switch s.Type.ID() {
		case arrow.FLOAT64:
			switch in.Field(s.Col).Type.ID() {
			case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
				return arrow.PrimitiveTypes.Int64, true
			case arrow.INT64:
				// AVG sums BIGINTs in 128 bits; a BIGINT SUM would fail
				// where AVG does not (ClickBench q03's AVG(UserID)), so
				// the sum is an exact DECIMAL(38, 0), divided as DOUBLE.
				return &arrow.Decimal128Type{Precision: 38, Scale: 0}, true
			}
			return arrow.PrimitiveTypes.Float64, true
		case arrow.DECIMAL128:
			d, ok := in.Field(s.Col).Type.(*arrow.Decimal128Type)
			if !ok {
				return nil, false
			}
			return &arrow.Decimal128Type{Precision: 38, Scale: d.Scale}, true
		}
		return nil, false
	}
	found := false
	for _, s := range a.Aggs {
		if _, ok := split(s); ok {
			found = true
		}
	}
	if !found {
		return a, nil
	}
	g := len(a.GroupCols)
	c := *a
	c.Aggs, c.AggText = nil, nil
	// Where each old aggregate lands: one column, or a sum and a count.
	type place struct{ col, count int }
	places := make([]place, len(a.Aggs))
	fs := append([]arrow.Field(nil), a.schema.Fields()[:g]...)
	// add returns the output column of aggregate s, merging equal ones
	// (TPC-H Q1's SUM(l_quantity) and the SUM of its AVG(l_quantity)).
	add := func(s ops.AggSpec, text string) int {
		s.Col = firstEqualColumn(a.Input, s.Col)
		for j, t := range c.Aggs {
			if sameAggregate(a.Input, s, t) {
				return g + j
			}
		}
		c.Aggs, c.AggText = append(c.Aggs, s), append(c.AggText, text)
		fs = append(fs, arrow.Field{Name: text, Type: s.Type, Nullable: true})
		return g + len(c.Aggs) - 1
	}
	for i, s := range a.Aggs {
		text := a.AggText[i]
		sumT, ok := split(s)
		if !ok {
			places[i] = place{col: add(s, text), count: -1}
			continue
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
		var num, den Expr = col, NewColRef(p.count, fs[p.count].Name, fs[p.count].Type)
		want := a.schema.Field(len(exprs)).Type
		if want.ID() == arrow.FLOAT64 {
			var err error
			if num, err = castCall(num, want); err != nil {
				return nil, err
			}
			if den, err = castCall(den, want); err != nil {
				return nil, err
			}
		}
		// COUNT is 0 exactly when SUM is NULL: x / 0 is NULL, as AVG of
		// no values is.
		avg, err := binaryCall("/", num, den)
		if err != nil {
			return nil, err
		}
		if !arrow.TypeEqual(avg.Type(), want) {
			return nil, fmt.Errorf("internal error: %s is %s, the AVG it replaces %s", avg, avg.Type(), want)
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

// sameAggregate reports whether aggregates s and t over input in compute
// the same value: the same function of the same column, or of columns
// that in's projection computes alike (the binder projects each
// aggregate's argument on its own, so SUM(x) and AVG(x) read two copies
// of x).
func sameAggregate(in Node, s, t ops.AggSpec) bool {
	if s.Func != t.Func || s.Distinct != t.Distinct || !arrow.TypeEqual(s.Type, t.Type) {
		return false
	}
	if s.Col == t.Col {
		return true
	}
	p, ok := in.(*Project)
	return ok && s.Col >= 0 && t.Col >= 0 && s.Col < len(p.Exprs) && t.Col < len(p.Exprs) && Equal(p.Exprs[s.Col], p.Exprs[t.Col])
}

// firstEqualColumn is the first column of in's projection that computes
// what column col does, so the copies an aggregate no longer reads are
// pruned; col itself where in is no projection.
func firstEqualColumn(in Node, col int) int {
	p, ok := in.(*Project)
	if !ok || col < 0 || col >= len(p.Exprs) {
		return col
	}
	for j := range col {
		if Equal(p.Exprs[j], p.Exprs[col]) {
			return j
		}
	}
	return col
}

// foldSumOfShifts rewrites SUM(x + k) and SUM(x - k), x a narrow integer
// (at most INT, so SUM(x) cannot overflow its BIGINT) and k an integer
// constant, as SUM(x) ± k * COUNT(x) above the aggregate, and merges the
// aggregates that are then the same. ClickBench's q29 sums
// ResolutionWidth + 0 .. 89: instead of 90 argument columns computed per
// batch and 90 sums per row, one SUM and one COUNT per row and 90
// additions per group. The value is the same: a group of no non-NULL x is
// NULL either way (NULL + k * 0), and otherwise both are the exact sum;
// x + k overflowing INT was an error and is now the sum.
func foldSumOfShifts(n Node, _ *RuleOptions) (Node, error) {
	return rewritePlan(n, func(x Node) (Node, error) {
		a, ok := x.(*Aggregate)
		if !ok || a.Updating {
			return x, nil
		}
		p, ok := a.Input.(*Project)
		if !ok {
			return x, nil
		}
		return sumOfShifts(a, p)
	})
}

// shiftedArg matches x + k, k + x or x - k: x, and k signed for a sum.
func shiftedArg(e Expr) (Expr, int64, bool) {
	c, ok := e.(*Call)
	if !ok || len(c.Args) != 2 || (c.Op != "+" && c.Op != "-") {
		return nil, 0, false
	}
	for i, arg := range c.Args {
		k, isConst := arg.(*Const)
		if !isConst || (c.Op == "-" && i == 0) {
			continue
		}
		var v int64
		switch kv := k.Value().(type) {
		case int32:
			v = int64(kv)
		case int64:
			v = kv
		default:
			continue
		}
		x := c.Args[1-i]
		switch x.Type().ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16:
		default:
			continue
		}
		if c.Op == "-" {
			if v == math.MinInt64 {
				return nil, 0, false
			}
			v = -v
		}
		return x, v, true
	}
	return nil, 0, false
}

func sumOfShifts(a *Aggregate, p *Project) (Node, error) {
	type shift struct {
		x Expr
		k int64
	}
	shifts := make([]*shift, len(a.Aggs))
	found := false
	for i, s := range a.Aggs {
		if s.Func != "sum" || s.Distinct || s.Col < 0 || s.Type.ID() != arrow.INT64 {
			continue
		}
		if x, k, ok := shiftedArg(p.Exprs[s.Col]); ok {
			shifts[i], found = &shift{x, k}, true
		}
	}
	if !found {
		return a, nil
	}
	exprs := append([]Expr(nil), p.Exprs...)
	names := fieldNames(p.schema)
	// column is the projection's column of x, added when missing.
	column := func(x Expr) int {
		for j, e := range exprs {
			if Equal(e, x) {
				return j
			}
		}
		exprs, names = append(exprs, x), append(names, fmt.Sprintf("__agg_arg%d", len(exprs)))
		return len(exprs) - 1
	}
	g := len(a.GroupCols)
	c := *a
	c.Aggs, c.AggText = nil, nil
	fs := append([]arrow.Field(nil), a.schema.Fields()[:g]...)
	// add returns the output column of aggregate s, merging equal ones.
	add := func(s ops.AggSpec, text string) int {
		for j, t := range c.Aggs {
			if sameAggregate(p, s, t) {
				return g + j
			}
		}
		c.Aggs, c.AggText = append(c.Aggs, s), append(c.AggText, text)
		fs = append(fs, arrow.Field{Name: text, Type: s.Type, Nullable: true})
		return g + len(c.Aggs) - 1
	}
	type place struct{ sum, count int }
	places := make([]place, len(a.Aggs))
	for i, s := range a.Aggs {
		sh := shifts[i]
		if sh == nil {
			places[i] = place{sum: add(s, a.AggText[i]), count: -1}
			continue
		}
		col := column(sh.x)
		text := "SUM(" + sh.x.String() + ")"
		sum := add(ops.AggSpec{Func: "sum", Col: col, Type: s.Type, Text: text}, text)
		text = "COUNT(" + sh.x.String() + ")"
		cnt := add(ops.AggSpec{Func: "count", Col: col, Type: arrow.PrimitiveTypes.Int64, Text: text}, text)
		places[i] = place{sum: sum, count: cnt}
		if sh.k == 0 {
			places[i].count = -1
		}
	}
	c.Input = NewProject(p.Input, exprs, names)
	c.schema = arrow.NewSchema(fs, nil)
	out := make([]Expr, 0, a.schema.NumFields())
	for i := 0; i < g; i++ {
		out = append(out, NewColRef(i, fs[i].Name, fs[i].Type))
	}
	for i, pl := range places {
		col := Expr(NewColRef(pl.sum, fs[pl.sum].Name, fs[pl.sum].Type))
		if pl.count >= 0 {
			k := NewConst(shifts[i].k, arrow.PrimitiveTypes.Int64)
			times, err := binaryCall("*", k, NewColRef(pl.count, fs[pl.count].Name, fs[pl.count].Type))
			if err != nil {
				return nil, err
			}
			if col, err = binaryCall("+", col, times); err != nil {
				return nil, err
			}
		}
		if !arrow.TypeEqual(col.Type(), a.schema.Field(g+i).Type) {
			return nil, fmt.Errorf("internal error: %s is %s, the aggregate %s", col, col.Type(), a.schema.Field(g+i).Type)
		}
		out = append(out, col)
	}
	return NewProject(&c, out, fieldNames(a.schema)), nil
}
