package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// WindowFuncs evaluates window functions that share one window (PARTITION
// BY and ORDER BY) over a bounded input: its output is every input column
// followed by one column per function, in (partition, order) order.
type WindowFuncs struct {
	Input       Node
	PartitionBy []int
	OrderBy     []ops.SortKey
	Funcs       []WindowFunc
	// Unbounded, over an unbounded input, is the error to report unless a
	// query reading it makes it a StreamRank (bind_rank.go) first.
	Unbounded error
	// EventTime: over an unbounded input, aggregates ordered by its time
	// attribute, run as a StreamOverAgg (bind_over.go).
	EventTime bool
	// Retract: over an updating input (row kind in column 0), ROWS n
	// PRECEDING aggregates that retract, an updating result (bind_over.go).
	Retract bool
	schema  *arrow.Schema
}

// WindowFunc is one function of a WindowFuncs.
type WindowFunc struct {
	Func        string // row_number, rank, ..., count_star, count, sum, avg, min, max
	Args        []int  // input columns
	Param       int64  // lag/lead offset, ntile buckets, nth_value n
	Default     any    // lag/lead default (row form), nil: NULL
	Distinct    bool
	IgnoreNulls bool
	Frame       *WindowFrame // nil: the SQL default
	T           arrow.DataType
	Text        string
}

// WindowFrame is ROWS|RANGE|GROUPS BETWEEN Start AND End.
type WindowFrame struct {
	Unit       ast.FrameUnit
	Start, End FrameBound
}

// FrameBound is one end of a frame; Offset is an int64 for ROWS and
// GROUPS, a value of the ORDER BY key's type (or an interval) for RANGE.
type FrameBound struct {
	Kind   ast.BoundKind
	Offset any
}

func (n *WindowFuncs) Schema() *arrow.Schema { return n.schema }
func (n *WindowFuncs) Children() []Node      { return []Node{n.Input} }

// orderExpr is a bound ORDER BY item.
type orderExpr struct {
	X          Expr
	Desc       bool
	NullsFirst bool
}

// sortKeyOf is the SQL default NULL order: NULLs sort as the largest value
// (last ascending, first descending), as in PostgreSQL and Flink.
func nullsFirst(desc bool, n ast.NullsOrder) bool {
	switch n {
	case ast.NullsFirst:
		return true
	case ast.NullsLast:
		return false
	}
	return desc
}

// winCall is a window function call while its SELECT is bound.
type winCall struct {
	Func        string
	Args        []Expr
	Param       int64
	Default     any
	Distinct    bool
	IgnoreNulls bool
	Partition   []Expr
	Order       []orderExpr
	Frame       *WindowFrame
	T           arrow.DataType
	Text        string
	node        ast.Node
	id          int
}

func (w *winCall) Type() arrow.DataType { return w.T }
func (w *winCall) String() string       { return w.Text }
func (w *winCall) Compile() expr.Expr   { return &placeholder{w.T, w.Text} }
func (w *winCall) hash() uint64         { return mix(hashString("window"), uint64(w.id)) }
func (w *winCall) Children() []Expr {
	out := append([]Expr(nil), w.Args...)
	out = append(out, w.Partition...)
	for _, o := range w.Order {
		out = append(out, o.X)
	}
	return out
}
func (w *winCall) WithChildren(ch []Expr) (Expr, error) {
	c := *w
	c.Args = ch[:len(w.Args)]
	ch = ch[len(w.Args):]
	c.Partition = ch[:len(w.Partition)]
	ch = ch[len(w.Partition):]
	c.Order = append([]orderExpr(nil), w.Order...)
	for i := range c.Order {
		c.Order[i].X = ch[i]
	}
	return &c, nil
}

// sameWindow reports whether two calls share PARTITION BY and ORDER BY.
func (w *winCall) sameWindow(o *winCall) bool {
	if len(w.Partition) != len(o.Partition) || len(w.Order) != len(o.Order) {
		return false
	}
	for i := range w.Partition {
		if !Equal(w.Partition[i], o.Partition[i]) {
			return false
		}
	}
	for i := range w.Order {
		a, c := w.Order[i], o.Order[i]
		if a.Desc != c.Desc || a.NullsFirst != c.NullsFirst || !Equal(a.X, c.X) {
			return false
		}
	}
	return true
}

type winCollector struct{ calls []*winCall }

// bindWindowCall binds f(...) OVER (...).
func (b *binder) bindWindowCall(x *ast.FuncCall, name string, sc *scope, ctx *exprCtx) (Expr, error) {
	if ctx.wins == nil {
		return nil, b.errAt(x, "window functions are not allowed in %s", clauseOr(ctx, "this context"))
	}
	spec, err := b.resolveWindow(x.Over, ctx.windows)
	if err != nil {
		return nil, err
	}
	// Arguments, PARTITION BY and ORDER BY are evaluated over the grouped
	// rows when the query aggregates: aggregates may appear in them.
	inner := &exprCtx{clause: "a window function", aggs: ctx.aggs, windows: ctx.windows}
	w := &winCall{Func: name, Distinct: x.Distinct, IgnoreNulls: x.IgnoreNulls, Text: b.source(x), node: x, id: len(ctx.wins.calls) + 1}
	for _, p := range spec.PartitionBy {
		v, err := b.bindExpr(p, sc, inner)
		if err != nil {
			return nil, err
		}
		w.Partition = append(w.Partition, v)
	}
	for _, o := range spec.OrderBy {
		v, err := b.bindExpr(o.Expr, sc, inner)
		if err != nil {
			return nil, err
		}
		w.Order = append(w.Order, orderExpr{X: v, Desc: o.Desc, NullsFirst: nullsFirst(o.Desc, o.Nulls)})
	}
	nargs := len(x.Args)
	constArg := func(i int, what string) (*Const, error) {
		v, err := b.bindExpr(x.Args[i], &scope{}, &exprCtx{clause: what})
		if err != nil {
			return nil, err
		}
		c, ok := fold(v).(*Const)
		if !ok {
			return nil, b.errAt(x.Args[i], "the %s of %s must be a constant", what, name)
		}
		return c, nil
	}
	intArg := func(i int, what string, min int64) (int64, error) {
		c, err := constArg(i, what)
		if err != nil {
			return 0, err
		}
		n, ok := asInt64(c.Value())
		if !ok || n < min {
			return 0, b.errAt(x.Args[i], "the %s of %s must be an integer of at least %d", what, name, min)
		}
		return n, nil
	}
	bindArg := func(i int) error {
		v, err := b.bindExpr(x.Args[i], sc, inner)
		if err != nil {
			return err
		}
		w.Args = append(w.Args, v)
		return nil
	}
	switch name {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
		if nargs != 0 {
			return nil, b.errAt(x, "%s takes no arguments", name)
		}
		w.T = arrow.PrimitiveTypes.Int64
		if name == "percent_rank" || name == "cume_dist" {
			w.T = arrow.PrimitiveTypes.Float64
		}
	case "ntile":
		if nargs != 1 {
			return nil, b.errAt(x, "ntile takes one argument: the number of buckets")
		}
		if w.Param, err = intArg(0, "number of buckets", 1); err != nil {
			return nil, err
		}
		w.T = arrow.PrimitiveTypes.Int64
	case "lag", "lead":
		if nargs < 1 || nargs > 3 {
			return nil, b.errAt(x, "%s takes a value, an optional offset and an optional default", name)
		}
		if err := bindArg(0); err != nil {
			return nil, err
		}
		w.T, w.Param = w.Args[0].Type(), 1
		if nargs > 1 {
			if w.Param, err = intArg(1, "offset", 0); err != nil {
				return nil, err
			}
		}
		if nargs > 2 {
			c, err := constArg(2, "default")
			if err != nil {
				return nil, err
			}
			cc, err := coerce(c, w.T)
			if err != nil {
				return nil, b.errAt(x.Args[2], "the default of %s: %v", name, err)
			}
			if w.Default, err = cc.Compile().EvalRow(nil); err != nil {
				return nil, b.errAt(x.Args[2], "%v", err)
			}
		}
	case "first_value", "last_value", "nth_value":
		want := 1
		if name == "nth_value" {
			want = 2
		}
		if nargs != want {
			return nil, b.errAt(x, "%s takes %d argument(s)", name, want)
		}
		if err := bindArg(0); err != nil {
			return nil, err
		}
		w.T = w.Args[0].Type()
		if name == "nth_value" {
			if w.Param, err = intArg(1, "position", 1); err != nil {
				return nil, err
			}
		}
	case "count", "sum", "avg", "min", "max", "stddev_samp", "stddev", "stddev_pop", "var_samp", "variance", "var_pop",
		"bool_and", "bool_or", "every":
		switch {
		case x.Star:
			if name != "count" {
				return nil, b.errAt(x, "%s(*) is not valid: only COUNT(*)", strings.ToUpper(name))
			}
			w.Func = "count_star"
		case nargs != 1:
			return nil, b.errAt(x, "%s takes one argument", strings.ToUpper(name))
		default:
			if err := bindArg(0); err != nil {
				return nil, err
			}
		}
		if x.Filter != nil {
			// agg(x) FILTER (WHERE p) OVER w is agg(CASE WHEN p THEN x END):
			// every aggregate skips NULLs.
			f, err := b.bindExpr(x.Filter, sc, inner)
			if err != nil {
				return nil, err
			}
			if f, err = b.asPredicate(f, x.Filter, "FILTER"); err != nil {
				return nil, err
			}
			var val Expr = NewConst(int64(1), arrow.PrimitiveTypes.Int64)
			if w.Func != "count_star" {
				val = w.Args[0]
			} else {
				w.Func = "count"
			}
			cw, err := caseWhen(f, val)
			if err != nil {
				return nil, err
			}
			w.Args = []Expr{cw}
		}
		var argT arrow.DataType
		if len(w.Args) > 0 {
			argT = w.Args[0].Type()
		}
		if w.T, err = aggType(w.Func, argT); err != nil {
			return nil, b.errAt(x, "%s: %v", w.Text, err)
		}
	default:
		if _, ok := expr.LookupFunction(name); ok {
			return nil, b.errAt(x, "%s is not a window or aggregate function: OVER is not allowed", name)
		}
		return nil, b.errAt(x, "unknown window function %s", name)
	}
	if x.Filter != nil && !aggregateFuncs[name] {
		return nil, b.errAt(x, "FILTER is only valid for aggregate window functions, not %s", name)
	}
	if x.Distinct && !aggregateFuncs[name] {
		return nil, b.errAt(x, "DISTINCT is only valid for aggregate functions, not %s", name)
	}
	if spec.Frame != nil {
		if w.Frame, err = b.bindFrame(spec.Frame, w); err != nil {
			return nil, err
		}
	}
	ctx.wins.calls = append(ctx.wins.calls, w)
	return w, nil
}

// caseWhen is CASE WHEN p THEN v END.
func caseWhen(p, v Expr) (Expr, error) {
	return NewCall("CASE:false:1:false", []Expr{p, v}, caseBuild(false, 1, false))
}

// resolveWindow merges OVER w / OVER (w ORDER BY ...) with the named
// window it refines, as PostgreSQL does: the reference may add ORDER BY
// where the base has none, and its own frame; never PARTITION BY.
func (b *binder) resolveWindow(spec *ast.WindowSpec, named map[string]*ast.WindowSpec) (*ast.WindowSpec, error) {
	if spec.Base == nil {
		return spec, nil
	}
	base, ok := named[strings.ToLower(spec.Base.Name)]
	if !ok {
		return nil, b.errAt(spec.Base, "window '%s' does not exist", spec.Base.Name)
	}
	base, err := b.resolveWindow(base, named)
	if err != nil {
		return nil, err
	}
	if len(spec.PartitionBy) > 0 {
		return nil, b.errAt(spec, "cannot override PARTITION BY clause of window '%s'", spec.Base.Name)
	}
	if len(spec.OrderBy) > 0 && len(base.OrderBy) > 0 {
		return nil, b.errAt(spec, "cannot override ORDER BY clause of window '%s'", spec.Base.Name)
	}
	if base.Frame != nil {
		return nil, b.errAt(spec, "cannot copy window '%s' because it has a frame clause", spec.Base.Name)
	}
	merged := *base
	merged.Base = nil
	if len(spec.OrderBy) > 0 {
		merged.OrderBy = spec.OrderBy
	}
	merged.Frame = spec.Frame
	return &merged, nil
}

// bindFrame checks a frame clause and evaluates its offsets.
func (b *binder) bindFrame(f *ast.Frame, w *winCall) (*WindowFrame, error) {
	end := f.End
	if end == nil {
		end = &ast.FrameBound{Span: f.Start.Span, Kind: ast.CurrentRow}
	}
	if f.Start.Kind == ast.UnboundedFollowing {
		return nil, b.errAt(f.Start, "frame start cannot be UNBOUNDED FOLLOWING")
	}
	if end.Kind == ast.UnboundedPreceding {
		return nil, b.errAt(end, "frame end cannot be UNBOUNDED PRECEDING")
	}
	if f.Start.Kind > end.Kind && !(f.Start.Kind == ast.Following && end.Kind == ast.Following) {
		return nil, b.errAt(f.Start, "frame starting from %s cannot end with %s", boundText(f.Start.Kind), boundText(end.Kind))
	}
	out := &WindowFrame{Unit: f.Unit}
	for i, fb := range []*ast.FrameBound{f.Start, end} {
		bound := FrameBound{Kind: fb.Kind}
		if fb.Kind == ast.Preceding || fb.Kind == ast.Following {
			v, err := b.bindExpr(fb.Offset, &scope{}, &exprCtx{clause: "a frame offset"})
			if err != nil {
				return nil, err
			}
			c, ok := fold(v).(*Const)
			if !ok || c.IsNull() {
				return nil, b.errAt(fb.Offset, "a frame offset must be a constant")
			}
			switch f.Unit {
			case ast.FrameRows, ast.FrameGroups:
				n, ok := asInt64(c.Value())
				if !ok || n < 0 {
					return nil, b.errAt(fb.Offset, "frame offset must be a non-negative integer")
				}
				bound.Offset = n
			case ast.FrameRange:
				if len(w.Order) != 1 {
					return nil, b.errAt(fb, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
				}
				kt := w.Order[0].X.Type()
				switch {
				case c.Type().ID() == arrow.INTERVAL_MONTH_DAY_NANO:
					if kt.ID() != arrow.DATE32 && kt.ID() != arrow.TIMESTAMP {
						return nil, b.errAt(fb.Offset, "an INTERVAL frame offset needs a DATE or TIMESTAMP ORDER BY column, not %s", sql.TypeString(kt))
					}
					bound.Offset = c.Value()
				default:
					cc, err := coerce(c, kt)
					if err != nil {
						return nil, b.errAt(fb.Offset, "frame offset of type %s does not fit the ORDER BY column's %s", sql.TypeString(c.Type()), sql.TypeString(kt))
					}
					if bound.Offset, err = cc.Compile().EvalRow(nil); err != nil {
						return nil, b.errAt(fb.Offset, "%v", err)
					}
				}
			}
		}
		if i == 0 {
			out.Start = bound
		} else {
			out.End = bound
		}
	}
	return out, nil
}

func boundText(k ast.BoundKind) string {
	return [...]string{"UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING"}[k]
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	}
	return 0, false
}

// planWindows plans the window calls of a SELECT over n (the relation its
// SELECT list reads: the FROM clause, or the aggregate's output): one
// WindowFuncs per distinct window, each appending its results to the
// columns of its input, and returns the replacement of each call.
func (b *binder) planWindows(n Node, calls []*winCall, changelog bool) (Node, map[*winCall]Expr, error) {
	if len(calls) == 0 {
		return n, nil, nil
	}
	// Over an unbounded input: a lone ROW_NUMBER waits for the WHERE of
	// the query reading it (bind_rank.go); aggregates must be event-time
	// OVER aggregates (bind_over.go).
	var unbounded error
	rowNumber := len(calls) == 1 && calls[0].Func == "row_number"
	if !b.finite(n) {
		unbounded = b.unboundedOver(calls)
	}
	repl := map[*winCall]Expr{}
	done := make([]bool, len(calls))
	for i, c := range calls {
		if done[i] {
			continue
		}
		var group []*winCall
		for j := i; j < len(calls); j++ {
			if !done[j] && calls[j].sameWindow(c) {
				group, done[j] = append(group, calls[j]), true
			}
		}
		// A pre-projection appends every argument, key and ORDER BY
		// expression that is not already a column.
		exprs := identity(n)
		names := fieldNames(n.Schema())
		colOf := func(x Expr) int {
			if r, ok := x.(*ColRef); ok {
				return r.Index
			}
			for k, e := range exprs {
				if Equal(e, x) {
					return k
				}
			}
			exprs = append(exprs, x)
			names = append(names, fmt.Sprintf("__w%d", len(exprs)))
			return len(exprs) - 1
		}
		wf := &WindowFuncs{}
		for _, p := range c.Partition {
			wf.PartitionBy = append(wf.PartitionBy, colOf(p))
		}
		for _, o := range c.Order {
			wf.OrderBy = append(wf.OrderBy, ops.SortKey{Col: colOf(o.X), Desc: o.Desc, NullsFirst: o.NullsFirst})
		}
		for _, w := range group {
			f := WindowFunc{Func: w.Func, Param: w.Param, Default: w.Default, Distinct: w.Distinct,
				IgnoreNulls: w.IgnoreNulls, Frame: w.Frame, T: w.T, Text: w.Text}
			for _, a := range w.Args {
				f.Args = append(f.Args, colOf(a))
			}
			wf.Funcs = append(wf.Funcs, f)
		}
		in := n
		if len(exprs) > n.Schema().NumFields() {
			in = NewProject(n, exprs, names)
		}
		wf.Input = in
		switch {
		case changelog:
			// Over an updating result (its row kind column 0): an OVER
			// aggregate that retracts (bind_over.go).
			if err := b.retractingOver(wf, group); err != nil {
				return nil, nil, err
			}
			wf.Retract = true
		case unbounded != nil && rowNumber:
			wf.Unbounded = unbounded
		case unbounded != nil:
			if err := b.eventTimeOver(wf, group, unbounded); err != nil {
				return nil, nil, err
			}
			wf.EventTime = true
		}
		fs := append([]arrow.Field(nil), in.Schema().Fields()...)
		for k, f := range wf.Funcs {
			repl[group[k]] = NewColRef(len(fs), f.Text, f.T)
			fs = append(fs, arrow.Field{Name: f.Text, Type: f.T, Nullable: true})
		}
		wf.schema = arrow.NewSchema(fs, nil)
		n = wf
	}
	return n, repl, nil
}
