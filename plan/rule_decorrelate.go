package plan

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// Subquery decorrelation: every subquery in an expression becomes a join,
// so no subquery runs once per row.
//
//   - In a WHERE conjunct, EXISTS, IN and a quantified comparison become a
//     SEMI join, their negations an ANTI join (NOT IN null-aware).
//   - Anywhere else, EXISTS, IN and quantified comparisons become MARK
//     joins (a BOOLEAN column per outer row) and a scalar subquery a SINGLE
//     join (its value per outer row; two values are an error).
//
// A correlated subquery's references to the outer row are pulled up into
// the join condition where they sit in filters (through projections,
// inner joins, and aggregates, which then group by the correlated columns
// compared with equality). Where that is not possible the subquery is
// evaluated once per distinct outer value instead: the outer relation's
// distinct correlated values (its "domain") are joined into the subquery
// at its leaves, carried through every operator, and the result is joined
// back on them with IS NOT DISTINCT FROM (Neumann and Kemper, "Unnesting
// Arbitrary Queries").

var errNoPull = errors.New("correlation cannot be pulled up")

func decorrelate(n Node) (Node, error) {
	return rewritePlan(n, func(x Node) (Node, error) {
		switch v := x.(type) {
		case *Filter:
			if hasSubquery(v.Pred) {
				return unnestFilter(v)
			}
		case *Project:
			for _, e := range v.Exprs {
				if hasSubquery(e) {
					return unnestProject(v)
				}
			}
		case *Join:
			for _, e := range exprsOf(v) {
				if hasSubquery(e) {
					return nil, fmt.Errorf("subqueries in JOIN ON are not supported: move the condition to WHERE")
				}
			}
		}
		return x, nil
	})
}

// unnestFilter turns the subqueries of a filter into joins.
func unnestFilter(f *Filter) (Node, error) {
	in := f.Input
	width := in.Schema().NumFields()
	var keep []Expr
	for _, c := range Conjuncts(f.Pred) {
		s, not := filterSubquery(c)
		if s == nil {
			keep = append(keep, c)
			continue
		}
		var err error
		if in, err = semiAnti(in, s, not); err != nil {
			return nil, err
		}
	}
	pred, err := And(keep...)
	if err != nil {
		return nil, err
	}
	if pred == nil {
		return in, nil
	}
	var out Node = &Filter{Input: in, Pred: pred}
	if hasSubquery(pred) {
		wide, p, err := unnestValue(in, pred)
		if err != nil {
			return nil, err
		}
		out = &Filter{Input: wide, Pred: p}
		if wide.Schema().NumFields() > width {
			out = NewProject(out, identity(in)[:width], fieldNames(in.Schema())[:width])
		}
	}
	return out, nil
}

// filterSubquery reads a WHERE conjunct that is a subquery test: [NOT]
// EXISTS, x [NOT] IN (...), x op ANY|ALL (...).
func filterSubquery(c Expr) (*SubqueryExpr, bool) {
	not := false
	if call, ok := c.(*Call); ok && call.Op == "NOT" {
		c, not = call.Args[0], true
	}
	s, ok := c.(*SubqueryExpr)
	if !ok || s.Kind == SubScalar || hasSubquery2(s) {
		return nil, false
	}
	return s, not
}

// hasSubquery2 reports whether s's left operand holds a subquery itself.
func hasSubquery2(s *SubqueryExpr) bool { return s.X != nil && hasSubquery(s.X) }

// unnestProject turns the subqueries of a projection into joins.
func unnestProject(p *Project) (Node, error) {
	in := Node(p.Input)
	exprs := make([]Expr, len(p.Exprs))
	for i, e := range p.Exprs {
		var err error
		if in, exprs[i], err = unnestValue(in, e); err != nil {
			return nil, err
		}
	}
	return NewProject(in, exprs, fieldNames(p.schema)), nil
}

// unnestValue replaces each subquery of e (an expression over in) by a
// column of a join appended to in.
func unnestValue(in Node, e Expr) (Node, Expr, error) {
	out, err := TransformDown(e, func(x Expr) (Expr, bool, error) {
		s, ok := x.(*SubqueryExpr)
		if !ok {
			return x, false, nil
		}
		if s.X != nil {
			// The left operand first: it may hold subqueries too.
			nx, err := TransformDown(s.X, func(y Expr) (Expr, bool, error) { return y, false, nil })
			if err != nil {
				return nil, true, err
			}
			if hasSubquery(nx) {
				var err error
				if in, nx, err = unnestValue(in, nx); err != nil {
					return nil, true, err
				}
			}
			c := *s
			c.X = nx
			s = &c
		}
		wide, repl, err := valueJoin(in, s)
		if err != nil {
			return nil, true, err
		}
		in = wide
		return repl, true, nil
	})
	return in, out, err
}

// newJoin is a batch join of l and r with condition on (over l's columns
// followed by r's); the rules split on into keys and a residual.
func newJoin(l, r Node, kind JoinKind, on Expr) *Join {
	j := &Join{Left: l, Right: r, Kind: kind, On: on, LeftOp: -1, RightOp: -1}
	if on != nil {
		j.Cond = DisplayText(on)
	}
	j.schema = joinSchema(l.Schema(), r.Schema(), kind)
	return j
}

func joinSchema(l, r *arrow.Schema, kind JoinKind) *arrow.Schema {
	fs := append([]arrow.Field(nil), l.Fields()...)
	switch kind {
	case JoinSemi, JoinAnti:
	case JoinMark:
		fs = append(fs, arrow.Field{Name: "mark", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	default:
		for _, f := range r.Fields() {
			f.Nullable = true
			fs = append(fs, f)
		}
	}
	return arrow.NewSchema(fs, nil)
}

// rightCol is column i of a join's right input, in the condition's layout.
func rightCol(in Node, r Node, i int) Expr {
	f := r.Schema().Field(i)
	return NewColRef(in.Schema().NumFields()+i, f.Name, f.Type)
}

// semiAnti plans a WHERE conjunct [NOT] s as a SEMI or ANTI join of in.
func semiAnti(in Node, s *SubqueryExpr, not bool) (Node, error) {
	p, err := decorrelate(s.Plan)
	if err != nil {
		return nil, err
	}
	if s.Kind == SubExists {
		var always *bool
		if p, always = stripForExists(p); always != nil {
			if *always != not {
				return in, nil // EXISTS of a one-row subquery: TRUE for every row
			}
			return &Filter{Input: in, Pred: NewConst(false, arrow.FixedWidthTypes.Boolean)}, nil
		}
	} else {
		p = stripSort(p)
	}
	p, conds, err := correlate(p, in)
	if err != nil {
		return nil, fmt.Errorf("subquery %s: %w", s.Text, err)
	}
	kind := JoinSemi
	if not {
		kind = JoinAnti
	}
	var cond Expr
	nullAware := false
	switch s.Kind {
	case SubIn:
		eq, err := binaryCall("=", s.X, rightCol(in, p, 0))
		if err != nil {
			return nil, err
		}
		cond = eq
		if not {
			if len(conds) == 0 {
				nullAware = true // NOT IN: a NULL anywhere makes it unknown
			} else {
				// Correlated NOT IN is NOT EXISTS of a row where the
				// comparison is TRUE or unknown.
				xn, err := isNullCall(s.X, false)
				if err != nil {
					return nil, err
				}
				yn, err := isNullCall(rightCol(in, p, 0), false)
				if err != nil {
					return nil, err
				}
				if cond, err = orAll(eq, xn, yn); err != nil {
					return nil, err
				}
			}
		}
	case SubQuantified:
		cmp, err := binaryCall(s.Op, s.X, rightCol(in, p, 0))
		if err != nil {
			return nil, err
		}
		// ANY: a row where cmp is TRUE; ALL: none where it is not TRUE.
		// NOT ANY: none where it is TRUE or unknown; NOT ALL: one FALSE.
		switch {
		case !s.All && !not:
			cond = cmp
		case s.All && !not:
			kind = JoinAnti
			cond, err = isBool(cmp, ptrBool(true), true)
		case !s.All && not:
			kind = JoinAnti
			cond, err = isBool(cmp, ptrBool(false), true)
		default:
			kind = JoinSemi
			cond, err = isBool(cmp, ptrBool(false), false)
		}
		if err != nil {
			return nil, err
		}
	}
	on, err := And(append(conds, cond)...)
	if err != nil {
		return nil, err
	}
	j := newJoin(in, p, kind, on)
	j.NullAware = nullAware
	return j, nil
}

func ptrBool(b bool) *bool { return &b }

func orAll(es ...Expr) (Expr, error) {
	out := es[0]
	for _, e := range es[1:] {
		var err error
		if out, err = binaryCall("OR", out, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// valueJoin plans subquery s as a value: in joined with the subquery
// (MARK for EXISTS, IN and quantified comparisons, SINGLE for a scalar),
// and the expression over the joined columns that replaces s.
func valueJoin(in Node, s *SubqueryExpr) (Node, Expr, error) {
	p, err := decorrelate(s.Plan)
	if err != nil {
		return nil, nil, err
	}
	width := in.Schema().NumFields()
	markOf := func(p Node, conds []Expr, extra Expr, nullAware bool) (*Join, Expr, error) {
		on, err := And(append(append([]Expr(nil), conds...), extra)...)
		if err != nil {
			return nil, nil, err
		}
		j := newJoin(in, p, JoinMark, on)
		j.NullAware = nullAware
		in = j
		return j, NewColRef(in.Schema().NumFields()-1, "mark", arrow.FixedWidthTypes.Boolean), nil
	}
	switch s.Kind {
	case SubExists:
		var always *bool
		if p, always = stripForExists(p); always != nil {
			return in, NewConst(*always, arrow.FixedWidthTypes.Boolean), nil
		}
		p, conds, err := correlate(p, in)
		if err != nil {
			return nil, nil, fmt.Errorf("subquery %s: %w", s.Text, err)
		}
		j, mark, err := markOf(p, conds, nil, false)
		if err != nil {
			return nil, nil, err
		}
		return j, mark, nil
	case SubIn, SubQuantified:
		p = stripSort(p)
		p, conds, err := correlate(p, in)
		if err != nil {
			return nil, nil, fmt.Errorf("subquery %s: %w", s.Text, err)
		}
		op := "="
		if s.Kind == SubQuantified {
			op = s.Op
		}
		y := rightCol(in, p, 0)
		cmp, err := binaryCall(op, s.X, y)
		if err != nil {
			return nil, nil, err
		}
		if s.Kind == SubIn && len(conds) == 0 {
			j, mark, err := markOf(p, nil, cmp, true)
			return j, mark, err
		}
		// Three-valued: TRUE when some comparison is TRUE (ALL: none is
		// FALSE), else NULL when some is unknown, else FALSE (ALL: TRUE).
		var decide, unknown Expr
		if s.Kind == SubQuantified && s.All {
			decide, err = isBool(cmp, ptrBool(false), false)
		} else {
			decide = cmp
		}
		if err != nil {
			return nil, nil, err
		}
		if unknown, err = isNullCall(cmp, false); err != nil {
			return nil, nil, err
		}
		_, m1, err := markOf(p, conds, decide, false)
		if err != nil {
			return nil, nil, err
		}
		conds2 := make([]Expr, len(conds))
		copy(conds2, conds)
		_, m2, err := markOf(p, conds2, unknown, false)
		if err != nil {
			return nil, nil, err
		}
		hit, miss := true, false
		if s.Kind == SubQuantified && s.All {
			hit, miss = false, true
		}
		v, err := NewCallCase([]Expr{m1, NewConst(hit, arrow.FixedWidthTypes.Boolean),
			m2, NewConst(nil, arrow.FixedWidthTypes.Boolean)}, NewConst(miss, arrow.FixedWidthTypes.Boolean))
		return in, v, err
	}
	// A scalar subquery.
	p = stripSort(p)
	empty, hasEmpty := emptyValue(p)
	correlated := hasOuterRefAt(p, 1)
	p, conds, err := correlate(p, in)
	if err != nil {
		return nil, nil, fmt.Errorf("subquery %s: %w", s.Text, err)
	}
	flag := -1
	if correlated && hasEmpty && !empty.(*Const).IsNull() {
		// An aggregate over no rows still has a value (COUNT is 0): an
		// outer row without a group gets it, told apart by a flag.
		exprs := append(identity(p), NewConst(true, arrow.FixedWidthTypes.Boolean))
		p = NewProject(p, exprs, append(fieldNames(p.Schema()), "__matched"))
		flag = p.Schema().NumFields() - 1
	}
	on, err := And(conds...)
	if err != nil {
		return nil, nil, err
	}
	j := newJoin(in, p, JoinSingle, on)
	f := p.Schema().Field(0)
	var v Expr = NewColRef(width, f.Name, f.Type)
	if flag >= 0 {
		m := NewColRef(width+flag, "__matched", arrow.FixedWidthTypes.Boolean)
		miss, err := isNullCall(m, false)
		if err != nil {
			return nil, nil, err
		}
		ev, err := coerce(empty, v.Type())
		if err != nil {
			return nil, nil, err
		}
		if v, err = NewCallCase([]Expr{miss, ev}, v); err != nil {
			return nil, nil, err
		}
	}
	return j, v, nil
}

// NewCallCase is CASE WHEN c1 THEN v1 ... ELSE els END over (c, v) pairs.
func NewCallCase(pairs []Expr, els Expr) (Expr, error) {
	args := append(append([]Expr(nil), pairs...), els)
	n := len(pairs) / 2
	return NewCall(fmt.Sprintf("CASE:false:%d:true", n), args, caseBuild(false, n, true))
}

// stripSort drops an ORDER BY at the top of a subquery whose order means
// nothing (IN, a scalar, EXISTS); a LIMIT keeps it.
func stripSort(p Node) Node {
	for {
		switch x := p.(type) {
		case *Sort:
			if x.Limit < 0 {
				p = x.Input
				continue
			}
		case *Project:
			if s, ok := x.Input.(*Sort); ok && s.Limit < 0 {
				p = withChildren(x, []Node{s.Input})
				continue
			}
		}
		return p
	}
}

// stripForExists drops what EXISTS does not look at (the select list, an
// ORDER BY, a LIMIT of at least one row). always is set when the answer
// does not depend on the rows: an aggregate without GROUP BY always has
// one row; LIMIT 0 never any.
func stripForExists(p Node) (Node, *bool) {
	for {
		switch x := p.(type) {
		case *Project:
			if len(x.Input.Schema().Fields()) == 0 {
				return p, nil
			}
			p = x.Input
			continue
		case *Sort:
			if x.Limit != 0 {
				p = x.Input
				continue
			}
			return p, ptrBool(false)
		case *Limit:
			if x.N == 0 {
				return p, ptrBool(false)
			}
			if x.Offset == 0 {
				p = x.Input
				continue
			}
		case *Aggregate:
			if len(x.GroupCols) == 0 && !x.Updating {
				return p, ptrBool(true)
			}
		}
		return p, nil
	}
}

// emptyValue is the value a scalar subquery that is an aggregate without
// GROUP BY has over no rows (COUNT 0, the others NULL, and what the
// projections above make of them).
func emptyValue(p Node) (Expr, bool) {
	var chain []*Project
	n := p
	for {
		if pr, ok := n.(*Project); ok {
			chain = append(chain, pr)
			n = pr.Input
			continue
		}
		break
	}
	agg, ok := n.(*Aggregate)
	if !ok || len(agg.GroupCols) != 0 || agg.Updating {
		return nil, false
	}
	vals := make([]Expr, len(agg.Aggs))
	for i, a := range agg.Aggs {
		if a.Func == "count" || a.Func == "count_star" {
			vals[i] = NewConst(int64(0), a.Type)
		} else {
			vals[i] = NewConst(nil, a.Type)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		next := make([]Expr, len(chain[i].Exprs))
		for k, e := range chain[i].Exprs {
			v, err := Substitute(e, vals)
			if err != nil {
				return nil, false
			}
			next[k] = fold(v)
		}
		vals = next
	}
	if len(vals) == 0 {
		return nil, false
	}
	c, ok := vals[0].(*Const)
	return c, ok
}

// correlate makes p independent of the outer row: it returns p' and the
// conditions (over in's columns followed by p”s) that join it to in.
// p”s first columns are p's, in order.
func correlate(p Node, in Node) (Node, []Expr, error) {
	if !hasOuterRefAt(p, 1) {
		return lowerOuter(p)
	}
	width := in.Schema().NumFields()
	pulled, conds, m, err := pull(p)
	if err == nil {
		_ = m
		out := make([]Expr, len(conds))
		for i, c := range conds {
			if out[i], err = toJoinCond(c, width); err != nil {
				return nil, nil, err
			}
		}
		pulled, err := lowerOuterNode(pulled)
		return pulled, out, err
	}
	if !errors.Is(err, errNoPull) {
		return nil, nil, err
	}
	return domainJoin(p, in)
}

// toJoinCond turns a pulled-up condition (over the subquery's columns and
// outer references) into one over in ++ subquery.
func toJoinCond(c Expr, width int) (Expr, error) {
	return Transform(c, func(x Expr) (Expr, error) {
		switch v := x.(type) {
		case *ColRef:
			n := *v
			n.Index += width
			return &n, nil
		case *OuterRef:
			if v.Level == 1 {
				return &ColRef{Index: v.Index, Name: v.Name, T: v.T, Pos: -1}, nil
			}
			n := *v
			n.Level--
			return &n, nil
		}
		return x, nil
	})
}

// lowerOuter moves a subquery plan up one level: its references to
// queries further out now count one level less. It fails on a reference
// to the level it moves into (correlate removed those).
func lowerOuter(p Node) (Node, []Expr, error) {
	n, err := lowerOuterNode(p)
	return n, nil, err
}

func lowerOuterNode(p Node) (Node, error) {
	if !hasOuterRefAt(p, 2) && !deeperOuter(p) {
		return p, nil
	}
	return rewritePlan(p, func(x Node) (Node, error) {
		es := exprsOf(x)
		if len(es) == 0 {
			return x, nil
		}
		out := make([]Expr, len(es))
		for i, e := range es {
			ne, err := Transform(e, func(y Expr) (Expr, error) {
				if o, ok := y.(*OuterRef); ok {
					if o.Level <= 1 {
						return nil, fmt.Errorf("internal error: an outer reference was left behind")
					}
					n := *o
					n.Level--
					return &n, nil
				}
				return y, nil
			})
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return withExprs(x, out), nil
	})
}

// deeperOuter reports whether p references a level beyond 2.
func deeperOuter(p Node) bool {
	found := false
	visitPlan(p, func(x Node) {
		for _, e := range exprsOf(x) {
			if Contains(e, func(y Expr) bool { o, ok := y.(*OuterRef); return ok && o.Level > 2 }) {
				found = true
			}
		}
	})
	return found
}

// pull pulls the correlated conjuncts of p's filters up to its top. It
// returns the rewritten plan, the conditions over its output columns and
// outer references, and where each old output column went (m).
func pull(n Node) (Node, []Expr, []int, error) {
	width := n.Schema().NumFields()
	if !hasOuterRefAt(n, 1) {
		return n, nil, identityMap(width), nil
	}
	switch x := n.(type) {
	case *Filter:
		child, cs, m, err := pull(x.Input)
		if err != nil {
			return nil, nil, nil, err
		}
		pred, err := Remap(x.Pred, m)
		if err != nil {
			return nil, nil, nil, err
		}
		var rest []Expr
		for _, c := range Conjuncts(pred) {
			if exprHasOuterRefAt(c, 1) {
				cs = append(cs, c)
			} else {
				rest = append(rest, c)
			}
		}
		if len(rest) > 0 {
			p, err := And(rest...)
			if err != nil {
				return nil, nil, nil, err
			}
			child = &Filter{Input: child, Pred: p}
		}
		return child, cs, m, nil
	case *Project:
		for _, e := range x.Exprs {
			if exprHasOuterRefAt(e, 1) {
				return nil, nil, nil, errNoPull
			}
		}
		child, cs, m, err := pull(x.Input)
		if err != nil {
			return nil, nil, nil, err
		}
		exprs := make([]Expr, len(x.Exprs))
		for i, e := range x.Exprs {
			if exprs[i], err = Remap(e, m); err != nil {
				return nil, nil, nil, err
			}
		}
		names := fieldNames(x.schema)
		// The conditions read child columns: carry them through.
		at := map[int]int{}
		for i, e := range exprs {
			if c, ok := e.(*ColRef); ok {
				if _, seen := at[c.Index]; !seen {
					at[c.Index] = i
				}
			}
		}
		fs := child.Schema().Fields()
		for _, c := range cs {
			for _, k := range Columns(c) {
				if _, ok := at[k]; !ok {
					at[k] = len(exprs)
					exprs = append(exprs, NewColRef(k, fs[k].Name, fs[k].Type))
					names = append(names, fs[k].Name)
				}
			}
		}
		cm := make([]int, len(fs))
		for i := range cm {
			cm[i] = -1
			if v, ok := at[i]; ok {
				cm[i] = v
			}
		}
		for i, c := range cs {
			if cs[i], err = Remap(c, cm); err != nil {
				return nil, nil, nil, err
			}
		}
		return NewProject(child, exprs, names), cs, identityMap(width), nil
	case *Aggregate:
		if x.Updating {
			return nil, nil, nil, errNoPull
		}
		child, cs, m, err := pull(x.Input)
		if err != nil {
			return nil, nil, nil, err
		}
		// Each condition must be input column = outer value: the column
		// becomes a grouping key and the condition reads the key.
		group := make([]int, len(x.GroupCols))
		for i, g := range x.GroupCols {
			group[i] = m[g]
		}
		var newKeys []int
		var conds []Expr
		for _, c := range cs {
			col, other, ok := equalityOnColumn(c)
			if !ok {
				return nil, nil, nil, errNoPull
			}
			k := -1
			for i, g := range append(append([]int(nil), group...), newKeys...) {
				if g == col {
					k = i
				}
			}
			if k < 0 {
				newKeys = append(newKeys, col)
				k = len(group) + len(newKeys) - 1
			}
			f := child.Schema().Field(col)
			eq, err := binaryCall("=", NewColRef(k, f.Name, f.Type), other)
			if err != nil {
				return nil, nil, nil, err
			}
			conds = append(conds, eq)
		}
		// Conditions that name the same new key twice still read it once.
		for i, c := range conds {
			_ = i
			_ = c
		}
		agg := &Aggregate{Input: child, GroupCols: append(group, newKeys...), AggText: x.AggText}
		var fs []arrow.Field
		for i := range x.GroupCols {
			fs = append(fs, x.schema.Field(i))
		}
		for _, k := range newKeys {
			fs = append(fs, child.Schema().Field(k))
		}
		for i, a := range x.Aggs {
			a.Col = mapCol(m, a.Col)
			agg.Aggs = append(agg.Aggs, a)
			fs = append(fs, x.schema.Field(len(x.GroupCols)+i))
		}
		agg.schema = arrow.NewSchema(fs, nil)
		om := make([]int, width)
		for i := range om {
			if i < len(x.GroupCols) {
				om[i] = i
			} else {
				om[i] = i + len(newKeys)
			}
		}
		return agg, conds, om, nil
	case *Join:
		if x.Stream || (x.Kind != JoinInner && !(x.Kind.preservesLeft() && !hasOuterRefAt(x.Right, 1))) {
			return nil, nil, nil, errNoPull
		}
		l, lcs, lm, err := pull(x.Left)
		if err != nil {
			return nil, nil, nil, err
		}
		r, rcs, rm, err := pull(x.Right)
		if err != nil {
			return nil, nil, nil, err
		}
		if x.Kind != JoinInner && len(rcs) > 0 {
			return nil, nil, nil, errNoPull
		}
		nl, nlNew := x.Left.Schema().NumFields(), l.Schema().NumFields()
		jm := make([]int, nl+x.Right.Schema().NumFields())
		for i := range jm {
			if i < nl {
				jm[i] = lm[i]
			} else {
				jm[i] = nlNew + rm[i-nl]
			}
		}
		var on Expr
		var cs []Expr
		cs = append(cs, lcs...)
		for _, c := range rcs {
			cs = append(cs, Shift(c, nlNew))
		}
		if x.On != nil {
			o, err := Remap(x.On, jm)
			if err != nil {
				return nil, nil, nil, err
			}
			var rest []Expr
			for _, c := range Conjuncts(o) {
				if exprHasOuterRefAt(c, 1) && x.Kind == JoinInner {
					cs = append(cs, c)
				} else {
					rest = append(rest, c)
				}
			}
			if on, err = And(rest...); err != nil {
				return nil, nil, nil, err
			}
			if on != nil && exprHasOuterRefAt(on, 1) {
				return nil, nil, nil, errNoPull
			}
		}
		j := newJoin(l, r, x.Kind, on)
		j.Cond = x.Cond
		om := jm
		if x.Kind == JoinSemi || x.Kind == JoinAnti {
			om = jm[:nl]
		} else if x.Kind == JoinMark {
			om = append(append([]int(nil), jm[:nl]...), nlNew)
		}
		return j, cs, om[:width], nil
	case *Sort:
		if x.Limit >= 0 {
			return nil, nil, nil, errNoPull
		}
		return pull(x.Input)
	}
	return nil, nil, nil, errNoPull
}

func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func mapCol(m []int, c int) int {
	if c < 0 {
		return c
	}
	return m[c]
}

// equalityOnColumn reads c as col = e (either order), e free of the
// relation's columns (outer references and constants).
func equalityOnColumn(c Expr) (int, Expr, bool) {
	call, ok := c.(*Call)
	if !ok || call.Op != "=" {
		return 0, nil, false
	}
	for _, pair := range [][2]Expr{{call.Args[0], call.Args[1]}, {call.Args[1], call.Args[0]}} {
		col, ok := pair[0].(*ColRef)
		if ok && len(Columns(pair[1])) == 0 {
			return col.Index, pair[1], true
		}
	}
	return 0, nil, false
}

// domainJoin evaluates p once per distinct correlated value of in: the
// domain D (in's distinct correlated columns) is joined into p where p
// reads them, and p's result is joined back on D with IS NOT DISTINCT
// FROM. It returns p' (p's columns first, then D's) and that condition.
func domainJoin(p Node, in Node) (Node, []Expr, error) {
	var cols []int
	seen := map[int]bool{}
	visitPlan(p, func(x Node) {
		for _, e := range exprsOf(x) {
			Visit(e, func(y Expr) bool {
				if o, ok := y.(*OuterRef); ok && o.Level == 1 && !seen[o.Index] {
					seen[o.Index] = true
					cols = append(cols, o.Index)
				}
				return true
			})
		}
	})
	fs := in.Schema().Fields()
	dexprs := make([]Expr, len(cols))
	dnames := make([]string, len(cols))
	pos := map[int]int{}
	for i, c := range cols {
		dexprs[i], dnames[i], pos[c] = NewColRef(c, fs[c].Name, fs[c].Type), fs[c].Name, i
	}
	d := distinct(NewProject(in, dexprs, dnames))
	pd, err := pushDomain(p, d, pos)
	if err != nil {
		return nil, nil, err
	}
	k := len(cols)
	width := p.Schema().NumFields()
	// Put p's columns first, D's after them.
	reorder := make([]Expr, 0, k+width)
	names := make([]string, 0, k+width)
	pfs := pd.Schema().Fields()
	for i := 0; i < width; i++ {
		reorder, names = append(reorder, NewColRef(k+i, pfs[k+i].Name, pfs[k+i].Type)), append(names, pfs[k+i].Name)
	}
	for i := 0; i < k; i++ {
		reorder, names = append(reorder, NewColRef(i, pfs[i].Name, pfs[i].Type)), append(names, pfs[i].Name)
	}
	out, err := lowerOuterNode(NewProject(pd, reorder, names))
	if err != nil {
		return nil, nil, err
	}
	var conds []Expr
	nin := in.Schema().NumFields()
	for i, c := range cols {
		l := NewColRef(c, fs[c].Name, fs[c].Type)
		r := NewColRef(nin+width+i, dnames[i], fs[c].Type)
		eq, err := NewCall("IS NOT DISTINCT FROM", []Expr{l, r}, notDistinct)
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, eq)
	}
	return out, conds, nil
}

// pushDomain returns n joined with the domain d: d's columns first, then
// n's, with n's references to the outer row (pos: outer column -> domain
// column) read from d.
func pushDomain(n Node, d Node, pos map[int]int) (Node, error) {
	k := d.Schema().NumFields()
	if !hasOuterRefAt(n, 1) {
		return newJoin(d, n, JoinInner, nil), nil
	}
	sub := func(e Expr, shift int, at int) (Expr, error) {
		return Transform(e, func(x Expr) (Expr, error) {
			switch v := x.(type) {
			case *ColRef:
				c := *v
				c.Index += shift
				return &c, nil
			case *OuterRef:
				if v.Level == 1 {
					p, ok := pos[v.Index]
					if !ok {
						return nil, fmt.Errorf("internal error: outer column %s not in the domain", v.Name)
					}
					return NewColRef(at+p, v.Name, v.T), nil
				}
			case *SubqueryExpr:
				return nil, fmt.Errorf("internal error: a subquery inside a decorrelated subquery")
			}
			return x, nil
		})
	}
	dcols := func() []Expr { return identity(d) }
	switch x := n.(type) {
	case *Filter:
		child, err := pushDomain(x.Input, d, pos)
		if err != nil {
			return nil, err
		}
		p, err := sub(x.Pred, k, 0)
		if err != nil {
			return nil, err
		}
		return &Filter{Input: child, Pred: p}, nil
	case *Project:
		child, err := pushDomain(x.Input, d, pos)
		if err != nil {
			return nil, err
		}
		exprs := dcols()
		names := fieldNames(d.Schema())
		for i, e := range x.Exprs {
			ne, err := sub(e, k, 0)
			if err != nil {
				return nil, err
			}
			exprs, names = append(exprs, ne), append(names, x.schema.Field(i).Name)
		}
		return NewProject(child, exprs, names), nil
	case *Aggregate:
		if x.Updating {
			return nil, fmt.Errorf("a correlated subquery over an updating aggregate is not supported")
		}
		child, err := pushDomain(x.Input, d, pos)
		if err != nil {
			return nil, err
		}
		group := identityMap(k)
		for _, g := range x.GroupCols {
			group = append(group, g+k)
		}
		agg := &Aggregate{Input: child, GroupCols: group, AggText: x.AggText}
		for _, a := range x.Aggs {
			if a.Col >= 0 {
				a.Col += k
			}
			agg.Aggs = append(agg.Aggs, a)
		}
		agg.schema = arrow.NewSchema(append(append([]arrow.Field(nil), d.Schema().Fields()...), x.schema.Fields()...), nil)
		return agg, nil
	case *Join:
		lc, rc := hasOuterRefAt(x.Left, 1), hasOuterRefAt(x.Right, 1)
		nl := x.Left.Schema().NumFields()
		switch {
		case x.Stream:
			return nil, fmt.Errorf("a correlated subquery over a streaming join is not supported")
		case lc && !rc, !lc && !rc:
			// Into the left input: D's columns stay first.
			l, err := pushDomain(x.Left, d, pos)
			if err != nil {
				return nil, err
			}
			var on Expr
			if x.On != nil {
				if on, err = sub(x.On, k, 0); err != nil {
					return nil, err
				}
			}
			j := newJoin(l, x.Right, x.Kind, on)
			return j, nil
		case rc && !lc && (x.Kind == JoinInner || x.Kind == JoinLeft || x.Kind == JoinSemi || x.Kind == JoinAnti):
			if x.Kind != JoinInner {
				return nil, fmt.Errorf("a correlated reference inside the right input of a %s join is not supported", x.Kind)
			}
			r, err := pushDomain(x.Right, d, pos)
			if err != nil {
				return nil, err
			}
			var on Expr
			if x.On != nil {
				// Left columns stay; right ones move past D's.
				if on, err = Transform(x.On, func(e Expr) (Expr, error) {
					switch v := e.(type) {
					case *ColRef:
						if v.Index >= nl {
							c := *v
							c.Index += k
							return &c, nil
						}
					case *OuterRef:
						if v.Level == 1 {
							return NewColRef(nl+pos[v.Index], v.Name, v.T), nil
						}
					}
					return e, nil
				}); err != nil {
					return nil, err
				}
			}
			j := newJoin(x.Left, r, JoinInner, on)
			// Move D's columns (after the left's) to the front.
			jf := j.Schema().Fields()
			var exprs []Expr
			var names []string
			for i := 0; i < k; i++ {
				exprs, names = append(exprs, NewColRef(nl+i, jf[nl+i].Name, jf[nl+i].Type)), append(names, jf[nl+i].Name)
			}
			for i := range jf {
				if i >= nl && i < nl+k {
					continue
				}
				exprs, names = append(exprs, NewColRef(i, jf[i].Name, jf[i].Type)), append(names, jf[i].Name)
			}
			return NewProject(j, exprs, names), nil
		}
		if x.Kind != JoinInner {
			return nil, fmt.Errorf("correlated references on both sides of a %s join are not supported", x.Kind)
		}
		l, err := pushDomain(x.Left, d, pos)
		if err != nil {
			return nil, err
		}
		r, err := pushDomain(x.Right, d, pos)
		if err != nil {
			return nil, err
		}
		nlNew := nl + k
		var conds []Expr
		for i := 0; i < k; i++ {
			f := d.Schema().Field(i)
			eq, err := NewCall("IS NOT DISTINCT FROM", []Expr{NewColRef(i, f.Name, f.Type), NewColRef(nlNew+i, f.Name, f.Type)}, notDistinct)
			if err != nil {
				return nil, err
			}
			conds = append(conds, eq)
		}
		if x.On != nil {
			on, err := Transform(x.On, func(e Expr) (Expr, error) {
				switch v := e.(type) {
				case *ColRef:
					c := *v
					if v.Index < nl {
						c.Index += k
					} else {
						c.Index += 2 * k
					}
					return &c, nil
				case *OuterRef:
					if v.Level == 1 {
						return NewColRef(pos[v.Index], v.Name, v.T), nil
					}
				}
				return e, nil
			})
			if err != nil {
				return nil, err
			}
			conds = append(conds, on)
		}
		on, err := And(conds...)
		if err != nil {
			return nil, err
		}
		j := newJoin(l, r, JoinInner, on)
		jf := j.Schema().Fields()
		var exprs []Expr
		var names []string
		for i := range jf {
			if i >= nlNew && i < nlNew+k {
				continue // the right copy of D
			}
			exprs, names = append(exprs, NewColRef(i, jf[i].Name, jf[i].Type)), append(names, jf[i].Name)
		}
		return NewProject(j, exprs, names), nil
	case *Sort:
		if x.Limit < 0 {
			return pushDomain(x.Input, d, pos)
		}
	case *Union:
		var ins []Node
		for _, c := range x.Inputs {
			pc, err := pushDomain(c, d, pos)
			if err != nil {
				return nil, err
			}
			ins = append(ins, pc)
		}
		return &Union{Inputs: ins}, nil
	}
	return nil, fmt.Errorf("a correlated reference under %s is not supported yet", nodeName(n))
}

func nodeName(n Node) string {
	switch x := n.(type) {
	case *Limit:
		return "LIMIT"
	case *Sort:
		if x.Limit >= 0 {
			return "ORDER BY ... LIMIT"
		}
		return "ORDER BY"
	case *WindowFuncs:
		return "a window function"
	case *SetOp:
		return "INTERSECT or EXCEPT"
	}
	return fmt.Sprintf("%T", n)
}

var _ = ops.SortKey{}
