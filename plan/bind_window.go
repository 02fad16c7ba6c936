package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
)

// windowTS is the type of window_start, window_end and window_time.
var windowTS = &arrow.TimestampType{Unit: arrow.Millisecond}

// WindowTable is a window table function in FROM (TABLE(TUMBLE(TABLE t,
// DESCRIPTOR(ts), INTERVAL ...))): its input's columns plus window_start,
// window_end and window_time, one row per (row, window). A GROUP BY
// window_start, window_end over it is fused into a WindowAggregate, which
// assigns the windows itself; this node only runs when selected from
// without such a GROUP BY.
type WindowTable struct {
	Input   Node
	Spec    ops.WindowSpec
	TimeCol int
	Call    string // the call in SQL terms, for EXPLAIN
	schema  *arrow.Schema
	// used is set when a window column is referenced below an aggregate
	// (WHERE, group keys or aggregate arguments), which fusion cannot honour.
	used bool
}

func (n *WindowTable) Schema() *arrow.Schema { return n.schema }
func (n *WindowTable) Children() []Node      { return []Node{n.Input} }

// WindowAggregate is GROUP BY keys over event-time windows. Its input is
// the group keys and aggregate arguments (as for Aggregate) followed by the
// time column at TimeCol; its output is the keys, the aggregates, then
// window_start, window_end and window_time.
type WindowAggregate struct {
	Input     Node
	Spec      ops.WindowSpec
	TimeCol   int
	GroupCols []int
	Aggs      []ops.AggSpec
	AggText   []string
	schema    *arrow.Schema
}

func (n *WindowAggregate) Schema() *arrow.Schema { return n.schema }
func (n *WindowAggregate) Children() []Node      { return []Node{n.Input} }

// specFrom turns a window function's kind and interval arguments into a spec.
func specFrom(kind string, ivs []sql.Interval) (ops.WindowSpec, error) {
	ds := make([]time.Duration, len(ivs))
	for i, iv := range ivs {
		d, err := iv.Duration()
		if err != nil {
			return ops.WindowSpec{}, fmt.Errorf("%s: %w", kind, err)
		}
		if d%time.Millisecond != 0 {
			return ops.WindowSpec{}, fmt.Errorf("%s: %s is not a whole number of milliseconds (windows are TIMESTAMP(3))", kind, iv)
		}
		ds[i] = d
	}
	var s ops.WindowSpec
	switch kind {
	case "TUMBLE":
		if len(ds) < 1 || len(ds) > 2 {
			return s, fmt.Errorf("TUMBLE takes a size and an optional offset")
		}
		s = ops.WindowSpec{Kind: ops.Tumble, Size: ds[0]}
		if len(ds) == 2 {
			s.Offset = ds[1]
		}
	case "HOP":
		if len(ds) < 2 || len(ds) > 3 {
			return s, fmt.Errorf("HOP takes a slide, a size and an optional offset")
		}
		s = ops.WindowSpec{Kind: ops.Hop, Slide: ds[0], Size: ds[1]}
		if len(ds) == 3 {
			s.Offset = ds[2]
		}
	case "SESSION":
		if len(ds) != 1 {
			return s, fmt.Errorf("SESSION takes one gap")
		}
		s = ops.WindowSpec{Kind: ops.Session, Gap: ds[0]}
	default:
		return s, fmt.Errorf("%s windows are not supported yet (TUMBLE, HOP and SESSION are)", kind)
	}
	return s, s.Validate()
}

// bindWindowTable binds FROM TABLE(KIND(TABLE t, DESCRIPTOR(c), ...)).
func (b *binder) bindWindowTable(name, alias string) (Node, *scope, error) {
	tvf, err := sql.ParseWindowTable(name)
	if err != nil {
		return nil, nil, err
	}
	if len(tvf.PartitionBy) > 0 {
		return nil, nil, fmt.Errorf("%s: PARTITION BY in a window table function is not supported yet: GROUP BY the keys instead", tvf)
	}
	spec, err := specFrom(tvf.Kind, tvf.Intervals)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", tvf, err)
	}
	qual := alias
	if qual == "" {
		qual = tvf.Table
	}
	n, in, err := b.bindTableName(sqlparser.TableName{Name: sqlparser.NewTableIdent(tvf.Table)}, qual)
	if err != nil {
		return nil, nil, err
	}
	tc, err := in.resolve("", tvf.TimeCol)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: DESCRIPTOR: %w", tvf, err)
	}
	if _, ok := in.cols[tc].typ.(*arrow.TimestampType); !ok {
		return nil, nil, fmt.Errorf("%s: DESCRIPTOR(%s) is %s; windows need a TIMESTAMP column", tvf, tvf.TimeCol, in.cols[tc].typ)
	}
	wt := &WindowTable{Input: n, Spec: spec, TimeCol: tc, Call: tvf.String()}
	out := &scope{}
	for _, c := range in.cols {
		c.qual = qual
		out.cols = append(out.cols, c)
	}
	for _, wc := range []string{"window_start", "window_end", "window_time"} {
		// A row at or after the watermark has its window end after it,
		// and a window fires when the watermark reaches its end.
		out.cols = append(out.cols, column{qual: qual, name: wc, typ: windowTS, use: func() { wt.used = true },
			rowtime: wc == "window_end" && in.cols[tc].rowtime})
	}
	wt.schema = out.schema()
	return wt, out, nil
}

// bindGroupBy binds a SELECT's aggregation: a windowed one when the GROUP
// BY names a window (window_start and window_end of a window table
// function, or a legacy TUMBLE/HOP/SESSION call), the hash aggregate's
// otherwise.
func (b *binder) bindGroupBy(n Node, in *scope, s *sqlparser.Select, calls []*sqlparser.FuncExpr) (Node, *aggContext, error) {
	if wn, ac, ok, err := b.bindLegacyWindow(n, in, s, calls); ok || err != nil {
		return wn, ac, err
	}
	if wn, ac, ok, err := b.bindWindowTVFAgg(n, in, s, calls); ok || err != nil {
		return wn, ac, err
	}
	return b.bindAggregate(n, in, s.GroupBy, calls)
}

// windowOver wraps the Aggregate bindAggregate made into a WindowAggregate
// reading the time column timeCol of input (the relation under the
// aggregate's pre-projection), and appends the window columns to ac.
func windowOver(agg *Aggregate, input Node, timeCol int, in *scope, spec ops.WindowSpec, ac *aggContext) *WindowAggregate {
	tref := expr.Col(timeCol, in.cols[timeCol].typ, in.cols[timeCol].name)
	var exprs []expr.Expr
	var names []string
	if p, ok := agg.Input.(*Project); ok && len(agg.GroupCols)+countArgs(agg.Aggs) > 0 {
		exprs = append(exprs, p.Exprs...)
		for _, f := range p.schema.Fields() {
			names = append(names, f.Name)
		}
	}
	exprs = append(exprs, tref)
	names = append(names, "__event_time")
	ac.window = true
	first := len(ac.out.cols)
	for _, wc := range []string{"window_start", "window_end", "window_time"} {
		ac.out.cols = append(ac.out.cols, column{name: wc, typ: windowTS})
	}
	ac.groups["window_start"], ac.groups["window_end"], ac.groups["window_time"] = first, first+1, first+2
	return &WindowAggregate{Input: NewProject(input, exprs, names), Spec: spec, TimeCol: len(exprs) - 1,
		GroupCols: agg.GroupCols, Aggs: agg.Aggs, AggText: agg.AggText, schema: ac.out.schema()}
}

func countArgs(aggs []ops.AggSpec) int {
	n := 0
	for _, a := range aggs {
		if a.Func != "count_star" {
			n++
		}
	}
	return n
}

// bindWindowTVFAgg fuses GROUP BY window_start, window_end [, keys] over a
// window table function into a WindowAggregate over the function's input.
func (b *binder) bindWindowTVFAgg(n Node, in *scope, s *sqlparser.Select, calls []*sqlparser.FuncExpr) (Node, *aggContext, bool, error) {
	var wt *WindowTable
	var below Node // n with the window table replaced by its input
	switch x := n.(type) {
	case *WindowTable:
		wt, below = x, x.Input
	case *Filter:
		if w, ok := x.Input.(*WindowTable); ok {
			wt, below = w, &Filter{Input: w.Input, Pred: x.Pred}
		}
	}
	if wt == nil {
		return nil, nil, false, nil
	}
	nIn := len(in.cols) - 3
	var rest sqlparser.GroupBy
	var hasStart, hasEnd bool
	for _, g := range s.GroupBy {
		if cn, ok := g.(*sqlparser.ColName); ok {
			switch i := windowColumn(cn, in, nIn); i {
			case 0:
				hasStart = true
				continue
			case 1:
				hasEnd = true
				continue
			case 2:
				return nil, nil, true, fmt.Errorf("GROUP BY window_time is not supported: group by window_start, window_end")
			}
		}
		rest = append(rest, g)
	}
	if !hasStart || !hasEnd {
		// Not a window aggregation: the window columns are plain columns.
		return nil, nil, false, nil
	}
	if wt.used {
		return nil, nil, true, fmt.Errorf("%s: window columns can only be grouped on and selected in a window aggregation, not used in WHERE", wt.Call)
	}
	agg, ac, err := b.bindAggregate(n, in, rest, calls)
	if err != nil {
		return nil, nil, true, err
	}
	if wt.used {
		return nil, nil, true, fmt.Errorf("%s: window columns cannot be aggregated or grouped on in expressions in a window aggregation", wt.Call)
	}
	a, ok := agg.(*Aggregate)
	if !ok {
		return nil, nil, true, fmt.Errorf("window aggregation: unexpected plan %T", agg)
	}
	wa := windowOver(a, below, wt.TimeCol, in, wt.Spec, ac)
	// Selecting window_start & co. resolves through the input scope.
	for i := 0; i < 3; i++ {
		ac.groupCols[nIn+i] = len(ac.out.cols) - 3 + i
	}
	return wa, ac, true, nil
}

// windowColumn tells which window column cn names (0 start, 1 end, 2
// time), or -1.
func windowColumn(cn *sqlparser.ColName, in *scope, nIn int) int {
	q := cn.Qualifier.Name.String()
	for i := nIn; i < len(in.cols); i++ {
		c := in.cols[i]
		if strings.EqualFold(c.name, cn.Name.String()) && (q == "" || strings.EqualFold(c.qual, q)) {
			return i - nIn
		}
	}
	return -1
}

// legacyWindowFuncs maps the legacy group window auxiliary functions to the
// window column they read.
var legacyWindowFuncs = map[string]int{"_START": 0, "_END": 1, "_ROWTIME": 2}

// bindLegacyWindow binds GROUP BY TUMBLE(ts, INTERVAL ...) [, keys] (HOP,
// SESSION), with TUMBLE_START(ts, INTERVAL ...) and the like above it.
func (b *binder) bindLegacyWindow(n Node, in *scope, s *sqlparser.Select, calls []*sqlparser.FuncExpr) (Node, *aggContext, bool, error) {
	var win *sqlparser.FuncExpr
	var rest sqlparser.GroupBy
	for _, g := range s.GroupBy {
		if f, ok := g.(*sqlparser.FuncExpr); ok {
			switch strings.ToUpper(f.Name.String()) {
			case "TUMBLE", "HOP", "SESSION", "CUMULATE":
				if win != nil {
					return nil, nil, true, fmt.Errorf("GROUP BY has two group windows: %s and %s", sqlparser.String(win), sqlparser.String(f))
				}
				win = f
				continue
			}
		}
		rest = append(rest, g)
	}
	if win == nil {
		return nil, nil, false, nil
	}
	kind := strings.ToUpper(win.Name.String())
	tc, ivs, err := b.windowCallArgs(win, in)
	if err != nil {
		return nil, nil, true, err
	}
	spec, err := specFrom(kind, ivs)
	if err != nil {
		return nil, nil, true, fmt.Errorf("GROUP BY %s: %w", sqlparser.String(win), err)
	}
	agg, ac, err := b.bindAggregate(n, in, rest, calls)
	if err != nil {
		return nil, nil, true, err
	}
	a, ok := agg.(*Aggregate)
	if !ok {
		return nil, nil, true, fmt.Errorf("window aggregation: unexpected plan %T", agg)
	}
	wa := windowOver(a, n, tc, in, spec, ac)
	first := len(ac.out.cols) - 3
	// TUMBLE_START(ts, INTERVAL ...) and friends read the window columns;
	// their arguments must repeat the GROUP BY window's.
	var bad error
	visit := func(node sqlparser.SQLNode) {
		_ = sqlparser.Walk(func(x sqlparser.SQLNode) (bool, error) {
			f, ok := x.(*sqlparser.FuncExpr)
			if !ok {
				return true, nil
			}
			name := strings.ToUpper(f.Name.String())
			for suffix, i := range legacyWindowFuncs {
				fk, ok := strings.CutSuffix(name, suffix)
				if !ok || (fk != "TUMBLE" && fk != "HOP" && fk != "SESSION") {
					continue
				}
				if fk != kind || !sameArgs(f, win) {
					if bad == nil {
						bad = fmt.Errorf("%s does not match the GROUP BY window %s", sqlparser.String(f), sqlparser.String(win))
					}
					return false, nil
				}
				ac.groups[sqlparser.String(f)] = first + i
				return false, nil
			}
			return true, nil
		}, node)
	}
	visit(s.SelectExprs)
	if s.Having != nil {
		visit(s.Having.Expr)
	}
	visit(s.OrderBy)
	if bad != nil {
		return nil, nil, true, bad
	}
	return wa, ac, true, nil
}

// windowCallArgs reads (time column, interval, ...) of a legacy window call.
func (b *binder) windowCallArgs(f *sqlparser.FuncExpr, in *scope) (int, []sql.Interval, error) {
	call := sqlparser.String(f)
	if len(f.Exprs) < 2 {
		return 0, nil, fmt.Errorf("GROUP BY %s: expected a time column and intervals", call)
	}
	ae, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
	cn, ok2 := ae.Expr.(*sqlparser.ColName)
	if !ok || !ok2 {
		return 0, nil, fmt.Errorf("GROUP BY %s: the first argument must be a time column", call)
	}
	tc, err := in.resolve(cn.Qualifier.Name.String(), cn.Name.String())
	if err != nil {
		return 0, nil, fmt.Errorf("GROUP BY %s: %w", call, err)
	}
	if _, ok := in.cols[tc].typ.(*arrow.TimestampType); !ok {
		return 0, nil, fmt.Errorf("GROUP BY %s: %s is %s; windows need a TIMESTAMP column", call, sqlparser.String(cn), in.cols[tc].typ)
	}
	var ivs []sql.Interval
	for _, a := range f.Exprs[1:] {
		ae, ok := a.(*sqlparser.AliasedExpr)
		if !ok {
			return 0, nil, fmt.Errorf("GROUP BY %s: expected an INTERVAL argument", call)
		}
		iv, ok, err := intervalArg(ae.Expr)
		if err != nil || !ok {
			return 0, nil, fmt.Errorf("GROUP BY %s: %s is not an INTERVAL literal", call, sqlparser.String(ae.Expr))
		}
		ivs = append(ivs, iv)
	}
	return tc, ivs, nil
}

func sameArgs(a, b *sqlparser.FuncExpr) bool {
	if len(a.Exprs) != len(b.Exprs) {
		return false
	}
	for i := range a.Exprs {
		if !strings.EqualFold(sqlparser.String(a.Exprs[i]), sqlparser.String(b.Exprs[i])) {
			return false
		}
	}
	return true
}
