package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
)

func isAggregate(name string) bool {
	switch strings.ToLower(name) {
	case "count", "sum", "avg", "min", "max", sql.FilterFunc:
		return true
	}
	return false
}

// unwrapFilter turns agg(x) FILTER (WHERE p), which the dialect layer
// hands over as __clink_filter(agg(x), p), into agg(CASE WHEN p THEN x END)
// (COUNT(*) into COUNT(CASE WHEN p THEN 1 END)): every supported aggregate
// ignores nulls, so the rows p rejects drop out, and the aggregate kernels
// need no filter of their own.
func unwrapFilter(f *sqlparser.FuncExpr) (*sqlparser.FuncExpr, error) {
	if !strings.EqualFold(f.Name.String(), sql.FilterFunc) {
		return f, nil
	}
	if len(f.Exprs) != 2 {
		return nil, fmt.Errorf("FILTER: malformed clause %s", sqlparser.String(f))
	}
	ae, ok1 := f.Exprs[0].(*sqlparser.AliasedExpr)
	pe, ok2 := f.Exprs[1].(*sqlparser.AliasedExpr)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("FILTER: malformed clause %s", sqlparser.String(f))
	}
	agg, ok := ae.Expr.(*sqlparser.FuncExpr)
	if !ok || !isAggregate(agg.Name.String()) || strings.EqualFold(agg.Name.String(), sql.FilterFunc) {
		return nil, fmt.Errorf("FILTER (WHERE ...) applies to an aggregate call, not to %s", sqlparser.String(ae.Expr))
	}
	if len(agg.Exprs) != 1 {
		return agg, nil // bindAggCall reports the arity
	}
	var val sqlparser.Expr
	switch a := agg.Exprs[0].(type) {
	case *sqlparser.StarExpr:
		if !strings.EqualFold(agg.Name.String(), "count") || agg.Distinct {
			return agg, nil // bindAggCall reports it
		}
		val = sqlparser.NewIntVal([]byte("1"))
	case *sqlparser.AliasedExpr:
		val = a.Expr
	default:
		return agg, nil
	}
	cas := &sqlparser.CaseExpr{Whens: []*sqlparser.When{{Cond: pe.Expr, Val: val}}}
	return &sqlparser.FuncExpr{Name: agg.Name, Distinct: agg.Distinct,
		Exprs: sqlparser.SelectExprs{&sqlparser.AliasedExpr{Expr: cas}}}, nil
}

// aggContext resolves expressions above an aggregate: a GROUP BY
// expression or an aggregate call becomes a reference to its output column.
type aggContext struct {
	groups map[string]int // sqlparser.String of a GROUP BY expression
	// groupCols maps an input column index grouped on bare to its output.
	groupCols map[int]int
	aggs      map[string]int // sqlparser.String of an aggregate call
	out       *scope
	// window: a window aggregate, whose rows come out once the watermark
	// passes their window's end.
	window bool
}

// bindAggregate builds Project(group keys, aggregate arguments) ->
// Aggregate, and the context that binds what sits above it.
func (b *binder) bindAggregate(n Node, in *scope, groupBy sqlparser.GroupBy, calls []*sqlparser.FuncExpr) (Node, *aggContext, error) {
	ac := &aggContext{groups: map[string]int{}, groupCols: map[int]int{}, aggs: map[string]int{}, out: &scope{}}
	var pre []expr.Expr
	var preNames []string
	for _, g := range groupBy {
		// GROUP BY 1 or an alias is not SQL-standard; Flink rejects it too.
		x, err := b.bindExprIn(g, in, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("GROUP BY: %w", err)
		}
		key := sqlparser.String(g)
		if _, dup := ac.groups[key]; dup {
			continue
		}
		idx := len(pre)
		ac.groups[key] = idx
		name := key
		if c, ok := x.(*expr.ColRef); ok {
			ac.groupCols[c.Index] = idx
			name = in.cols[c.Index].name
			ac.out.cols = append(ac.out.cols, column{qual: in.cols[c.Index].qual, name: name, typ: x.Type()})
		} else {
			ac.out.cols = append(ac.out.cols, column{name: name, typ: x.Type()})
		}
		pre = append(pre, x)
		preNames = append(preNames, name)
	}
	groupCols := make([]int, len(pre))
	for i := range groupCols {
		groupCols[i] = i
	}
	var specs []ops.AggSpec
	var texts []string
	for _, f := range calls {
		key := sqlparser.String(f)
		if _, dup := ac.aggs[key]; dup {
			continue
		}
		spec, arg, err := b.bindAggCall(f, in)
		if err != nil {
			return nil, nil, err
		}
		if arg != nil {
			spec.Col = len(pre)
			pre = append(pre, arg)
			preNames = append(preNames, fmt.Sprintf("__agg%d", len(specs)))
		}
		ac.aggs[key] = len(groupCols) + len(specs)
		ac.out.cols = append(ac.out.cols, column{name: key, typ: spec.Type})
		specs = append(specs, spec)
		texts = append(texts, key)
	}
	if len(pre) == 0 {
		// COUNT(*) alone: the aggregate still needs rows to count; keep the
		// input as it is.
		return &Aggregate{Input: n, Aggs: specs, AggText: texts, schema: ac.out.schema()}, ac, nil
	}
	proj := NewProject(n, pre, preNames)
	return &Aggregate{Input: proj, GroupCols: groupCols, Aggs: specs, AggText: texts, schema: ac.out.schema()}, ac, nil
}

// bindAggCall binds one aggregate call, deciding its output type.
func (b *binder) bindAggCall(f *sqlparser.FuncExpr, in *scope) (ops.AggSpec, expr.Expr, error) {
	f, err := unwrapFilter(f)
	if err != nil {
		return ops.AggSpec{}, nil, err
	}
	name := strings.ToLower(f.Name.String())
	if len(f.Exprs) == 1 {
		if _, star := f.Exprs[0].(*sqlparser.StarExpr); star {
			if name != "count" {
				return ops.AggSpec{}, nil, fmt.Errorf("%s(*) is not valid: only COUNT(*)", strings.ToUpper(name))
			}
			if f.Distinct {
				return ops.AggSpec{}, nil, fmt.Errorf("COUNT(DISTINCT *) is not valid")
			}
			return ops.AggSpec{Func: "count_star", Col: -1, Type: arrow.PrimitiveTypes.Int64}, nil, nil
		}
	}
	if len(f.Exprs) != 1 {
		return ops.AggSpec{}, nil, fmt.Errorf("%s takes one argument, got %d", strings.ToUpper(name), len(f.Exprs))
	}
	ae, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
	if !ok {
		return ops.AggSpec{}, nil, fmt.Errorf("invalid argument to %s", strings.ToUpper(name))
	}
	arg, err := b.bindExprIn(ae.Expr, in, nil)
	if err != nil {
		return ops.AggSpec{}, nil, err
	}
	t := arg.Type()
	spec := ops.AggSpec{Func: name, Distinct: f.Distinct, Text: strings.ToUpper(name) + "(" + sqlparser.String(ae.Expr) + ")"}
	if f.Distinct {
		spec.Text = strings.ToUpper(name) + "(DISTINCT " + sqlparser.String(ae.Expr) + ")"
	}
	switch name {
	case "count":
		spec.Type = arrow.PrimitiveTypes.Int64
	case "sum", "avg":
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			spec.Type = arrow.PrimitiveTypes.Int64
			if name == "avg" {
				spec.Type = arrow.PrimitiveTypes.Float64 // AVG(1, 2) is 1.5, not 1
			}
		case arrow.FLOAT32, arrow.FLOAT64:
			spec.Type = arrow.PrimitiveTypes.Float64
		case arrow.DECIMAL128:
			d := t.(*arrow.Decimal128Type)
			scale := d.Scale
			if name == "avg" && scale < 6 {
				scale = 6 // Flink: AVG(DECIMAL(p, s)) is DECIMAL(38, max(s, 6))
			}
			spec.Type = &arrow.Decimal128Type{Precision: 38, Scale: scale}
		default:
			return ops.AggSpec{}, nil, fmt.Errorf("%s(%s): cannot apply %s to %s", strings.ToUpper(name), sqlparser.String(ae.Expr), strings.ToUpper(name), t)
		}
	case "min", "max":
		switch t.ID() {
		case arrow.STRUCT, arrow.LIST, arrow.MAP, arrow.NULL:
			return ops.AggSpec{}, nil, fmt.Errorf("%s(%s): cannot apply %s to %s", strings.ToUpper(name), sqlparser.String(ae.Expr), strings.ToUpper(name), t)
		}
		spec.Type = t
	}
	return spec, arg, nil
}
