package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql/ast"
)

// groupKey is a grouping expression and the name its column gets.
type groupKey struct {
	x    Expr
	name string
}

// legacyWindow is GROUP BY TUMBLE(ts, INTERVAL ...) (HOP, SESSION).
type legacyWindow struct {
	kind    string
	call    *ast.FuncCall
	timeCol int
	spec    ops.WindowSpec
	args    string // the arguments as written, lower-case
}

// bindGroupBy binds GROUP BY: expressions, positions and select-list
// aliases (an input column of the same name wins, as in PostgreSQL),
// GROUPING SETS, ROLLUP and CUBE, and a legacy group window. keys are the
// distinct grouping expressions; sets, when not nil, the grouping sets as
// indexes into keys.
func (b *binder) bindGroupBy(group []ast.Expr, in *scope, items []selItem) (keys []groupKey, sets [][]int, legacy *legacyWindow, err error) {
	keyOf := func(e ast.Expr) (int, error) {
		var x Expr
		name := b.source(e)
		switch g := e.(type) {
		case *ast.NumberLit:
			pos, ok := ordinal(g)
			if !ok || pos < 1 || pos > len(items) {
				return 0, b.errAt(g, "GROUP BY position %s is not in select list (1..%d)", g.Text, len(items))
			}
			x, name = items[pos-1].x, items[pos-1].name
			if hasAggOrWindow(x) {
				return 0, b.errAt(g, "aggregate functions are not allowed in GROUP BY (position %d is %s)", pos, items[pos-1].name)
			}
		case *ast.ColumnRef:
			if len(g.Parts) == 1 {
				if _, err := in.resolve("", g.Parts[0].Name); err != nil {
					for _, it := range items {
						if strings.EqualFold(it.name, g.Parts[0].Name) && !hasAggOrWindow(it.x) {
							x, name = it.x, it.name
							break
						}
					}
				}
			}
		}
		if x == nil {
			v, err := b.bindExpr(e, in, &exprCtx{clause: "GROUP BY"})
			if err != nil {
				return 0, err
			}
			x = v
		}
		if c, ok := x.(*ColRef); ok {
			name = c.Name
		}
		for i, k := range keys {
			if Equal(k.x, x) {
				return i, nil
			}
		}
		keys = append(keys, groupKey{x: x, name: name})
		return len(keys) - 1, nil
	}
	var keyList func(es []ast.Expr) ([]int, error)
	keyList = func(es []ast.Expr) ([]int, error) {
		var out []int
		for _, e := range es {
			if t, ok := e.(*ast.Tuple); ok {
				ks, err := keyList(t.Exprs)
				if err != nil {
					return nil, err
				}
				out = append(out, ks...)
				continue
			}
			k, err := keyOf(e)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	}
	product := [][]int{{}} // the grouping sets so far
	plain := true
	for _, g := range group {
		var alts [][]int // this element's alternatives
		switch x := g.(type) {
		case *ast.GroupingSets:
			plain = false
			for _, set := range x.Sets {
				ks, err := keyList(set)
				if err != nil {
					return nil, nil, nil, err
				}
				alts = append(alts, ks)
			}
		case *ast.Rollup:
			plain = false
			var cols [][]int
			for _, e := range x.Exprs {
				ks, err := keyList([]ast.Expr{e})
				if err != nil {
					return nil, nil, nil, err
				}
				cols = append(cols, ks)
			}
			for i := len(cols); i >= 0; i-- {
				var set []int
				for _, c := range cols[:i] {
					set = append(set, c...)
				}
				alts = append(alts, set)
			}
		case *ast.Cube:
			plain = false
			var cols [][]int
			for _, e := range x.Exprs {
				ks, err := keyList([]ast.Expr{e})
				if err != nil {
					return nil, nil, nil, err
				}
				cols = append(cols, ks)
			}
			if len(cols) > 12 {
				return nil, nil, nil, b.errAt(x, "CUBE of more than 12 elements is not supported")
			}
			for mask := (1 << len(cols)) - 1; mask >= 0; mask-- {
				var set []int
				for i, c := range cols {
					if mask&(1<<(len(cols)-1-i)) != 0 {
						set = append(set, c...)
					}
				}
				alts = append(alts, set)
			}
		case *ast.FuncCall:
			if w, ok, err := b.legacyWindowKey(x, in); ok || err != nil {
				if err != nil {
					return nil, nil, nil, err
				}
				if legacy != nil {
					return nil, nil, nil, b.errAt(x, "GROUP BY has two group windows: %s and %s", legacy.call, x)
				}
				legacy = w
				continue
			}
			k, err := keyOf(g)
			if err != nil {
				return nil, nil, nil, err
			}
			alts = [][]int{{k}}
		default:
			k, err := keyOf(g)
			if err != nil {
				return nil, nil, nil, err
			}
			alts = [][]int{{k}}
		}
		var next [][]int
		for _, p := range product {
			for _, a := range alts {
				next = append(next, append(append([]int(nil), p...), a...))
			}
		}
		product = next
	}
	if plain {
		return keys, nil, legacy, nil
	}
	if legacy != nil {
		return nil, nil, nil, b.errAt(group[0], "GROUPING SETS, ROLLUP and CUBE cannot be combined with a group window")
	}
	return keys, product, nil, nil
}

func hasAggOrWindow(x Expr) bool {
	return Contains(x, func(e Expr) bool {
		switch e.(type) {
		case *aggCall, *winCall, *groupingCall, *windowAux:
			return true
		}
		return false
	})
}

// legacyWindowKey reads GROUP BY TUMBLE(ts, INTERVAL ...), HOP(ts, slide,
// size), SESSION(ts, gap): a group window over the time column ts.
func (b *binder) legacyWindowKey(f *ast.FuncCall, in *scope) (*legacyWindow, bool, error) {
	kind := strings.ToUpper(f.Name.Name)
	switch kind {
	case "TUMBLE", "HOP", "SESSION", "CUMULATE":
	default:
		return nil, false, nil
	}
	if len(f.Args) < 2 {
		return nil, true, b.errAt(f, "GROUP BY %s: expected a time column and intervals", f)
	}
	cn, ok := f.Args[0].(*ast.ColumnRef)
	if !ok {
		return nil, true, b.errAt(f.Args[0], "GROUP BY %s: the first argument must be a time column", f)
	}
	x, err := b.resolveIn(cn, in)
	if err != nil {
		return nil, true, b.errAt(cn, "GROUP BY %s: %v", f, err)
	}
	c, ok := x.(*ColRef)
	if !ok {
		return nil, true, b.errAt(cn, "GROUP BY %s: the first argument must be a time column", f)
	}
	if _, ok := c.T.(*arrow.TimestampType); !ok {
		return nil, true, b.errAt(cn, "GROUP BY %s: %s is %s; windows need a TIMESTAMP column", f, cn, c.T)
	}
	ivs, err := b.intervalArgs(f.Args[1:], "GROUP BY "+f.String())
	if err != nil {
		return nil, true, err
	}
	spec, err := specFrom(kind, ivs)
	if err == nil {
		spec.ProcTime = c.Index < len(in.cols) && in.cols[c.Index].proctime
		err = spec.Validate()
	}
	if err != nil {
		return nil, true, b.errAt(f, "GROUP BY %s: %v", f, err)
	}
	var args []string
	for _, a := range f.Args {
		args = append(args, strings.ToLower(a.String()))
	}
	return &legacyWindow{kind: kind, call: f, timeCol: c.Index, spec: spec, args: strings.Join(args, ", ")}, true, nil
}

// aggPlan is a planned aggregation and how to read its output.
type aggPlan struct {
	node     Node
	updating bool
	keys     []groupKey // the grouping expressions, over the input
	keyOut   []int      // output column of each key
	aggOut   map[*aggCall]int
	gid      int // output column of the grouping-set id, -1
	// winIn is the first window column of the input (a window table
	// function's window_start), -1; winOut are window_start, window_end
	// and window_time in the output (-1: no window).
	winIn  int
	winOut [3]int
	legacy *legacyWindow
	schema *arrow.Schema
}

// planAggregate plans GROUP BY keys with the collected aggregates over n:
// a pre-projection of the keys and the aggregates' arguments, then the
// aggregate (a window aggregate when grouping by a window; behind an
// Expand for grouping sets; updating over an unbounded input).
func (b *binder) planAggregate(n Node, in *scope, keys []groupKey, sets [][]int, legacy *legacyWindow, aggs *aggCollector) (*aggPlan, error) {
	p := &aggPlan{keys: keys, aggOut: map[*aggCall]int{}, gid: -1, winIn: -1, winOut: [3]int{-1, -1, -1}, legacy: legacy}
	// A window table function under GROUP BY window_start, window_end
	// fuses into a window aggregate reading the function's input.
	var wt *WindowTable
	var below Node
	switch x := n.(type) {
	case *WindowTable:
		wt, below = x, x.Input
	case *Filter:
		if w, ok := x.Input.(*WindowTable); ok {
			wt, below = w, x
		}
	}
	if wt != nil {
		nIn := len(in.cols) - 3
		var rest []groupKey
		has := [3]bool{}
		for _, k := range keys {
			if c, ok := k.x.(*ColRef); ok && c.Index >= nIn {
				has[c.Index-nIn] = true
				continue
			}
			rest = append(rest, k)
		}
		if has[0] && has[1] && sets == nil {
			if has[2] {
				return nil, fmt.Errorf("GROUP BY window_time is not supported: group by window_start, window_end")
			}
			for _, k := range rest {
				if usesFrom(k.x, nIn) {
					return nil, fmt.Errorf("%s: window columns can only be grouped on and selected in a window aggregation", wt.Call)
				}
			}
			for _, a := range aggs.calls {
				for _, c := range a.Children() {
					if usesFrom(c, nIn) {
						return nil, fmt.Errorf("%s: window columns cannot be aggregated in a window aggregation", wt.Call)
					}
				}
			}
			if f, ok := below.(*Filter); ok {
				if usesFrom(f.Pred, nIn) {
					return nil, fmt.Errorf("%s: window columns can only be grouped on and selected in a window aggregation, not used in WHERE", wt.Call)
				}
				below = &Filter{Input: wt.Input, Pred: f.Pred}
			}
			p.keys, p.winIn = rest, nIn
			return b.windowAggregate(p, below, wt.TimeCol, wt.Spec, aggs)
		}
	}
	if legacy != nil {
		return b.windowAggregate(p, n, legacy.timeCol, legacy.spec, aggs)
	}

	pre, preNames, specs, texts, err := b.preAggregate(p, aggs)
	if err != nil {
		return nil, err
	}
	var input Node = n
	if len(pre) > 0 {
		input = NewProject(n, pre, preNames)
	}
	nk := len(p.keys)
	group := make([]int, nk)
	for i := range group {
		group[i] = i
	}
	var fs []arrow.Field
	for i, k := range p.keys {
		fs = append(fs, arrow.Field{Name: k.name, Type: k.x.Type(), Nullable: true})
		p.keyOut = append(p.keyOut, i)
	}
	if sets != nil {
		keyCols := make([]int, nk)
		copy(keyCols, group)
		ex := newExpand(input, keyCols, sets)
		input = ex
		group = append(group, ex.gidCol())
		p.gid = nk
		fs = append(fs, arrow.Field{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
		if ex.copies {
			// A set listed twice comes out twice: its copies group apart.
			group = append(group, ex.gidCol()+1)
			fs = append(fs, arrow.Field{Name: "grouping_copy", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
		}
	}
	for i, a := range aggs.calls {
		p.aggOut[a] = len(fs)
		fs = append(fs, arrow.Field{Name: texts[i], Type: specs[i].Type, Nullable: true})
	}
	agg := &Aggregate{Input: input, GroupCols: group, Aggs: specs, AggText: texts}
	if !b.finite(input) {
		// GROUP BY over an unbounded input: a changelog, emitted as the
		// groups change; the row kind travels in a last column.
		if sets != nil {
			return nil, fmt.Errorf("GROUPING SETS, ROLLUP and CUBE over an unbounded input are not supported yet")
		}
		agg.Updating, p.updating = true, true
		fs = append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String})
	}
	agg.schema = arrow.NewSchema(fs, nil)
	p.node, p.schema = agg, agg.schema
	return p, nil
}

// preAggregate is the projection under an aggregate: the keys, then one
// column per aggregate argument (FILTER folded in).
func (b *binder) preAggregate(p *aggPlan, aggs *aggCollector) (pre []Expr, names []string, specs []ops.AggSpec, texts []string, err error) {
	for _, k := range p.keys {
		pre, names = append(pre, k.x), append(names, k.name)
	}
	for i, a := range aggs.calls {
		spec := ops.AggSpec{Func: a.Func, Distinct: a.Distinct, Col: -1, Type: a.T, Text: a.Text}
		var arg Expr
		if len(a.Args) == 1 {
			arg = a.Args[0]
		}
		if a.Filter != nil {
			// agg(x) FILTER (WHERE p) is agg(CASE WHEN p THEN x END) (COUNT(*)
			// counts CASE WHEN p THEN 1 END): every aggregate skips NULLs.
			if arg == nil {
				arg, spec.Func = NewConst(int64(1), arrow.PrimitiveTypes.Int64), "count"
			}
			if arg, err = caseWhen(a.Filter, arg); err != nil {
				return nil, nil, nil, nil, b.errAt(a.node, "%v", err)
			}
		}
		if arg != nil {
			if arg.Type().ID() == arrow.NULL {
				if arg, err = castCall(arg, a.T); err != nil {
					return nil, nil, nil, nil, b.errAt(a.node, "%v", err)
				}
			}
			spec.Col = len(pre)
			pre, names = append(pre, arg), append(names, fmt.Sprintf("__agg%d", i))
		}
		specs, texts = append(specs, spec), append(texts, a.Text)
	}
	return pre, names, specs, texts, nil
}

// windowAggregate plans GROUP BY keys over event-time windows of timeCol
// (a column of input): its output is the keys, the aggregates, then
// window_start, window_end and window_time.
func (b *binder) windowAggregate(p *aggPlan, input Node, timeCol int, spec ops.WindowSpec, aggs *aggCollector) (*aggPlan, error) {
	pre, names, specs, texts, err := b.preAggregate(p, aggs)
	if err != nil {
		return nil, err
	}
	tf := input.Schema().Field(timeCol)
	pre, names = append(pre, NewColRef(timeCol, tf.Name, tf.Type)), append(names, "__event_time")
	group := make([]int, len(p.keys))
	var fs []arrow.Field
	for i, k := range p.keys {
		group[i] = i
		p.keyOut = append(p.keyOut, i)
		fs = append(fs, arrow.Field{Name: k.name, Type: k.x.Type(), Nullable: true})
	}
	for i, a := range aggs.calls {
		p.aggOut[a] = len(fs)
		fs = append(fs, arrow.Field{Name: texts[i], Type: specs[i].Type, Nullable: true})
	}
	for i, wc := range []string{"window_start", "window_end", "window_time"} {
		p.winOut[i] = len(fs)
		fs = append(fs, arrow.Field{Name: wc, Type: windowTS, Nullable: true})
	}
	wa := &WindowAggregate{Input: NewProject(input, pre, names), Spec: spec, TimeCol: len(pre) - 1,
		GroupCols: group, Aggs: specs, AggText: texts, schema: arrow.NewSchema(fs, nil)}
	p.node, p.schema = wa, wa.schema
	return p, nil
}

// usesFrom reports whether x reads a column at index from or beyond.
func usesFrom(x Expr, from int) bool {
	for _, c := range Columns(x) {
		if c >= from {
			return true
		}
	}
	return false
}

// rewrite puts an expression bound over the aggregate's input on top of
// its output: aggregate calls and grouping expressions become columns;
// any other column of the input is an error.
func (p *aggPlan) rewrite(b *binder, x Expr) (Expr, error) {
	return TransformDown(x, func(e Expr) (Expr, bool, error) {
		col := func(i int) Expr {
			f := p.schema.Field(i)
			return NewColRef(i, f.Name, f.Type)
		}
		switch v := e.(type) {
		case *aggCall:
			return col(p.aggOut[v]), true, nil
		case *groupingCall:
			r, err := p.grouping(b, v)
			return r, true, err
		case *windowAux:
			if p.legacy == nil || v.Kind != p.legacy.kind || v.Args != p.legacy.args {
				what := "no group window"
				if p.legacy != nil {
					what = "the GROUP BY window " + p.legacy.call.String()
				}
				return nil, true, b.errAt(v.node, "%s does not match %s", v.Text, what)
			}
			return col(p.winOut[v.Which]), true, nil
		case *winCall:
			// Its arguments, keys and ORDER BY are rewritten in place by the
			// caller (the call is planned from its collected pointer).
			return e, true, nil
		case *SubqueryExpr:
			if hasOuterRefAt(v.Plan, 1) {
				return nil, true, fmt.Errorf("a correlated subquery in the SELECT list of an aggregating query is not supported yet: %s", v.Text)
			}
			return e, false, nil
		}
		for i, k := range p.keys {
			if Equal(k.x, e) {
				return col(p.keyOut[i]), true, nil
			}
		}
		if c, ok := e.(*ColRef); ok {
			if p.winIn >= 0 && c.Index >= p.winIn && c.Index < p.winIn+3 {
				return col(p.winOut[c.Index-p.winIn]), true, nil
			}
			msg := fmt.Sprintf("column '%s' must appear in the GROUP BY clause or be used in an aggregate function", c.Name)
			if c.Pos >= 0 && b.text != "" {
				return nil, true, b.errAt(&ast.ColumnRef{Span: ast.Span{Lo: c.Pos, Hi: c.Pos}}, "%s", msg)
			}
			return nil, true, fmt.Errorf("%s", msg)
		}
		return e, false, nil
	})
}

// grouping is GROUPING(a, ...): bit i (the last argument least
// significant) is set when argument i is rolled up in the row's set.
func (p *aggPlan) grouping(b *binder, g *groupingCall) (Expr, error) {
	if len(g.Args) == 0 {
		return nil, b.errAt(g.node, "GROUPING needs at least one argument")
	}
	if p.gid < 0 {
		for _, a := range g.Args {
			if !p.isKey(a) {
				return nil, b.errAt(g.node, "arguments to GROUPING must be grouping expressions of the associated query level")
			}
		}
		return NewConst(int64(0), arrow.PrimitiveTypes.Int64), nil
	}
	gid := NewColRef(p.gid, "grouping_id", arrow.PrimitiveTypes.Int64)
	var out Expr
	nk := len(p.keys)
	for i, a := range g.Args {
		k := -1
		for j, key := range p.keys {
			if Equal(key.x, a) {
				k = j
			}
		}
		if k < 0 {
			return nil, b.errAt(g.node, "arguments to GROUPING must be grouping expressions of the associated query level")
		}
		// bit (nk-1-k) of the id, moved to bit (len-1-i) of the result.
		bit, err := binaryCall("%", mustBinary("/", gid, NewConst(int64(1)<<(nk-1-k), arrow.PrimitiveTypes.Int64)), NewConst(int64(2), arrow.PrimitiveTypes.Int64))
		if err != nil {
			return nil, err
		}
		if shift := len(g.Args) - 1 - i; shift > 0 {
			if bit, err = binaryCall("*", bit, NewConst(int64(1)<<shift, arrow.PrimitiveTypes.Int64)); err != nil {
				return nil, err
			}
		}
		if out == nil {
			out = bit
		} else if out, err = binaryCall("+", out, bit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *aggPlan) isKey(x Expr) bool {
	for _, k := range p.keys {
		if Equal(k.x, x) {
			return true
		}
	}
	return false
}

func mustBinary(op string, l, r Expr) Expr {
	e, err := binaryCall(op, l, r)
	if err != nil {
		panic(err) // BIGINT arithmetic over BIGINT operands always types
	}
	return e
}

// Expand repeats each input row once per grouping set, with the keys the
// set leaves out set to NULL, and appends the set's grouping id (bit
// nk-1-j set when key j is left out) and, when a set is listed more than
// once, its copy number (ops.SetCopies), so that the GROUP BY above keeps
// the copies apart as SQL does (GROUPING SETS ((a), (a)) gives each group
// twice); GROUPING() reads the id alone.
type Expand struct {
	Input   Node
	KeyCols []int
	Sets    [][]int // per set: indexes into KeyCols that it keeps
	copies  bool    // a set repeats: the copy number follows the id
	schema  *arrow.Schema
}

func newExpand(in Node, keyCols []int, sets [][]int) *Expand {
	fs := append(append([]arrow.Field(nil), in.Schema().Fields()...),
		arrow.Field{Name: "grouping_id", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	copies := ops.SetCopies(sets) != nil
	if copies {
		fs = append(fs, arrow.Field{Name: "grouping_copy", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	return &Expand{Input: in, KeyCols: keyCols, Sets: sets, copies: copies, schema: arrow.NewSchema(fs, nil)}
}

// gidCol is the output column of the grouping id.
func (n *Expand) gidCol() int { return n.Input.Schema().NumFields() }

func (n *Expand) Schema() *arrow.Schema { return n.schema }
func (n *Expand) Children() []Node      { return []Node{n.Input} }
