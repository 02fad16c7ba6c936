package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// aggregateFuncs are the aggregate functions (lower-case).
var aggregateFuncs = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"stddev_samp": true, "stddev": true, "stddev_pop": true, "var_samp": true, "variance": true, "var_pop": true,
	"bool_and": true, "bool_or": true, "every": true}

// windowOnlyFuncs are the functions that exist only with OVER.
var windowOnlyFuncs = map[string]bool{"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true, "nth_value": true}

// aggCall is an aggregate call while its SELECT is bound: the binder
// replaces it by a column of the Aggregate it plans.
type aggCall struct {
	Func     string // count_star, count, sum, avg, min, max
	Args     []Expr
	Distinct bool
	Filter   Expr // FILTER (WHERE ...), nil when absent
	T        arrow.DataType
	Text     string // as written, for EXPLAIN and errors
	node     ast.Node
	h        uint64
}

func (a *aggCall) Type() arrow.DataType { return a.T }
func (a *aggCall) String() string       { return a.Text }
func (a *aggCall) Compile() expr.Expr   { return &placeholder{a.T, a.Text} }
func (a *aggCall) hash() uint64         { return a.h }
func (a *aggCall) Children() []Expr {
	if a.Filter == nil {
		return a.Args
	}
	return append(append([]Expr(nil), a.Args...), a.Filter)
}
func (a *aggCall) WithChildren(ch []Expr) (Expr, error) {
	c := *a
	c.Args = ch[:len(a.Args)]
	if a.Filter != nil {
		c.Filter = ch[len(a.Args)]
	}
	return &c, nil
}

func (a *aggCall) same(o *aggCall) bool {
	if a.Func != o.Func || a.Distinct != o.Distinct || len(a.Args) != len(o.Args) || (a.Filter == nil) != (o.Filter == nil) {
		return false
	}
	for i := range a.Args {
		if !Equal(a.Args[i], o.Args[i]) {
			return false
		}
	}
	return a.Filter == nil || Equal(a.Filter, o.Filter)
}

// aggCollector gathers a SELECT's aggregate calls, each once.
type aggCollector struct {
	calls []*aggCall
	// grouping: GROUPING(...) calls, which need the grouping sets.
	grouping []*groupingCall
	// aux: the legacy group window functions (TUMBLE_START(ts, ...)).
	aux []*windowAux
}

func (c *aggCollector) add(a *aggCall) *aggCall {
	for _, o := range c.calls {
		if o.same(a) {
			return o
		}
	}
	c.calls = append(c.calls, a)
	return a
}

// groupingCall is GROUPING(a, b, ...): which of the keys a row of a
// grouping set has rolled up (bit set), the first key most significant.
type groupingCall struct {
	Args []Expr
	Text string
	node ast.Node
	id   int
}

func (g *groupingCall) Type() arrow.DataType { return arrow.PrimitiveTypes.Int64 }
func (g *groupingCall) String() string       { return g.Text }
func (g *groupingCall) Compile() expr.Expr   { return &placeholder{g.Type(), g.Text} }
func (g *groupingCall) hash() uint64         { return mix(hashString("grouping"), uint64(g.id)) }
func (g *groupingCall) Children() []Expr     { return nil }
func (g *groupingCall) WithChildren([]Expr) (Expr, error) {
	return g, nil
}

// windowAux is a legacy group window's auxiliary function (TUMBLE_START,
// HOP_END, SESSION_ROWTIME, ...): a column of the window aggregate.
type windowAux struct {
	Kind  string // TUMBLE, HOP, SESSION
	Which int    // 0 start, 1 end, 2 rowtime
	Args  string // the arguments as written, to match the GROUP BY window
	Text  string
	node  ast.Node
	id    int
}

func (w *windowAux) Type() arrow.DataType { return windowTS }
func (w *windowAux) String() string       { return w.Text }
func (w *windowAux) Compile() expr.Expr   { return &placeholder{windowTS, w.Text} }
func (w *windowAux) hash() uint64         { return mix(hashString("windowaux"), uint64(w.id)) }
func (w *windowAux) Children() []Expr     { return nil }
func (w *windowAux) WithChildren([]Expr) (Expr, error) {
	return w, nil
}

// bindCall binds a function call: an aggregate, a window function, or a
// scalar function of the registry.
func (b *binder) bindCall(x *ast.FuncCall, sc *scope, ctx *exprCtx) (Expr, error) {
	name := strings.ToLower(x.Name.Name)
	if x.Over != nil {
		return b.bindWindowCall(x, name, sc, ctx)
	}
	if name == "proctime" {
		if len(x.Args) > 0 || x.Star || x.Distinct {
			return nil, b.errAt(x, "PROCTIME() takes no arguments")
		}
		return procTimeCall{}, nil
	}
	if windowOnlyFuncs[name] {
		return nil, b.errAt(x, "window function %s requires an OVER clause", name)
	}
	if aggregateFuncs[name] {
		return b.bindAggCall(x, name, sc, ctx)
	}
	if x.Distinct {
		return nil, b.errAt(x, "DISTINCT specified, but %s is not an aggregate function", name)
	}
	if x.Filter != nil {
		return nil, b.errAt(x, "FILTER specified, but %s is not an aggregate function", name)
	}
	if x.Star {
		return nil, b.errAt(x, "%s(*) is not valid: only COUNT(*)", name)
	}
	if name == "grouping" {
		if ctx.aggs == nil {
			return nil, b.errAt(x, "GROUPING is not allowed in %s", clauseOr(ctx, "this clause"))
		}
		g := &groupingCall{Text: b.source(x), node: x, id: len(ctx.aggs.grouping) + 1}
		for _, a := range x.Args {
			v, err := b.bindExpr(a, sc, &exprCtx{clause: "GROUPING"})
			if err != nil {
				return nil, err
			}
			g.Args = append(g.Args, v)
		}
		ctx.aggs.grouping = append(ctx.aggs.grouping, g)
		return g, nil
	}
	if kind, which, ok := legacyWindowAux(name); ok {
		if ctx.aggs == nil {
			return nil, b.errAt(x, "%s is only valid in a query grouped by %s(...)", strings.ToUpper(name), kind)
		}
		var args []string
		for _, a := range x.Args {
			args = append(args, strings.ToLower(a.String()))
		}
		w := &windowAux{Kind: kind, Which: which, Args: strings.Join(args, ", "), Text: b.source(x), node: x, id: len(ctx.aggs.aux) + 1}
		ctx.aggs.aux = append(ctx.aggs.aux, w)
		return w, nil
	}
	args := make([]Expr, len(x.Args))
	for i, a := range x.Args {
		v, err := b.bindExpr(a, sc, ctx)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	clock := b.clock
	return NewCall("fn:"+name, args, func(a []expr.Expr) (expr.Expr, error) { return expr.NewFuncContext(clock, name, a) })
}

func clauseOr(ctx *exprCtx, def string) string {
	if ctx.clause != "" {
		return ctx.clause
	}
	return def
}

// legacyWindowAux reads TUMBLE_START, HOP_END, SESSION_ROWTIME and the like.
func legacyWindowAux(name string) (kind string, which int, ok bool) {
	for suffix, i := range map[string]int{"_start": 0, "_end": 1, "_rowtime": 2} {
		k, found := strings.CutSuffix(name, suffix)
		if found && (k == "tumble" || k == "hop" || k == "session") {
			return strings.ToUpper(k), i, true
		}
	}
	return "", 0, false
}

// bindAggCall binds an aggregate call and collects it.
func (b *binder) bindAggCall(x *ast.FuncCall, name string, sc *scope, ctx *exprCtx) (Expr, error) {
	if ctx.inAgg {
		return nil, b.errAt(x, "aggregate function calls cannot be nested")
	}
	if ctx.aggs == nil {
		return nil, b.errAt(x, "aggregate functions are not allowed in %s", clauseOr(ctx, "this context"))
	}
	inner := &exprCtx{clause: "an aggregate's argument", inAgg: true}
	a := &aggCall{Func: name, Distinct: x.Distinct, Text: b.source(x), node: x}
	switch {
	case x.Star:
		if name != "count" {
			return nil, b.errAt(x, "%s(*) is not valid: only COUNT(*)", strings.ToUpper(name))
		}
		if x.Distinct {
			return nil, b.errAt(x, "COUNT(DISTINCT *) is not valid")
		}
		a.Func = "count_star"
	case len(x.Args) != 1:
		return nil, b.errAt(x, "%s takes one argument, got %d", strings.ToUpper(name), len(x.Args))
	default:
		v, err := b.bindExpr(x.Args[0], sc, inner)
		if err != nil {
			return nil, err
		}
		a.Args = []Expr{v}
	}
	if x.Filter != nil {
		f, err := b.bindExpr(x.Filter, sc, inner)
		if err != nil {
			return nil, err
		}
		if a.Filter, err = b.asPredicate(f, x.Filter, "FILTER"); err != nil {
			return nil, err
		}
	}
	if len(x.OrderBy) > 0 {
		return nil, b.errAt(x, "ORDER BY inside %s is not supported", strings.ToUpper(name))
	}
	var argT arrow.DataType
	if len(a.Args) == 1 {
		argT = a.Args[0].Type()
	}
	t, err := aggType(a.Func, argT)
	if err != nil {
		return nil, b.errAt(x, "%s: %v", a.Text, err)
	}
	a.T = t
	h := mix(hashString("agg:"+a.Func+fmt.Sprint(a.Distinct)), 0)
	for _, c := range a.Children() {
		h = mix(h, c.hash())
	}
	a.h = h
	return ctx.aggs.add(a), nil
}

// aggType is an aggregate's result type, as PostgreSQL and DuckDB give
// it: COUNT is BIGINT; SUM of integers BIGINT (an overflow is an error),
// of DECIMAL(p, s) DECIMAL(38, s), of floats DOUBLE; AVG of integers and
// floats DOUBLE, of DECIMAL(p, s) DECIMAL(38, max(s, 6)); MIN and MAX keep
// the type; the variance family (stddev_samp, stddev, stddev_pop,
// var_samp, variance, var_pop) is DOUBLE over any number (DuckDB;
// PostgreSQL's numeric result for integers is DuckDB's DOUBLE here);
// bool_and, bool_or and every take and give BOOLEAN.
func aggType(fn string, t arrow.DataType) (arrow.DataType, error) {
	switch fn {
	case "stddev_samp", "stddev", "stddev_pop", "var_samp", "variance", "var_pop":
		switch t.ID() {
		case arrow.NULL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
			arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			return arrow.PrimitiveTypes.Float64, nil
		}
		return nil, fmt.Errorf("cannot apply %s to %s", strings.ToUpper(fn), sql.TypeString(t))
	case "bool_and", "bool_or", "every":
		switch t.ID() {
		case arrow.NULL, arrow.BOOL:
			return arrow.FixedWidthTypes.Boolean, nil
		}
		return nil, fmt.Errorf("cannot apply %s to %s: it takes BOOLEAN", strings.ToUpper(fn), sql.TypeString(t))
	case "count", "count_star":
		return arrow.PrimitiveTypes.Int64, nil
	case "sum", "avg":
		switch t.ID() {
		case arrow.NULL:
			if fn == "avg" {
				return arrow.PrimitiveTypes.Float64, nil
			}
			return arrow.PrimitiveTypes.Int64, nil
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			if fn == "avg" {
				return arrow.PrimitiveTypes.Float64, nil
			}
			return arrow.PrimitiveTypes.Int64, nil
		case arrow.FLOAT32, arrow.FLOAT64:
			return arrow.PrimitiveTypes.Float64, nil
		case arrow.DECIMAL128:
			s := t.(*arrow.Decimal128Type).Scale
			if fn == "avg" && s < 6 {
				s = 6
			}
			return &arrow.Decimal128Type{Precision: 38, Scale: s}, nil
		}
		return nil, fmt.Errorf("cannot apply %s to %s", strings.ToUpper(fn), sql.TypeString(t))
	case "min", "max":
		switch t.ID() {
		case arrow.STRUCT, arrow.LIST, arrow.MAP:
			return nil, fmt.Errorf("cannot apply %s to %s", strings.ToUpper(fn), sql.TypeString(t))
		case arrow.NULL:
			return arrow.PrimitiveTypes.Int64, nil
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown aggregate %s", fn)
}
