package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec/expr"
)

// pushDownFilters moves each filter conjunct as far down as it can go
// with the same answer: below projections (substituting their
// expressions), below an aggregate when it reads only grouping keys, into
// every input of a UNION ALL, into the inputs of joins (an inner join's
// conjuncts of one side; the preserved side's conjuncts of an outer join
// from above, the other side's from ON), and onto the join it spans as
// part of the join's condition (a comma FROM list's WHERE equalities
// become the joins' keys that way). A filter right above a scan also
// tells the scan what it may skip (Parquet row groups by their
// statistics); it stays, since skipping is coarse.
//
// A node with several parents (a shared CTE) receives no conjunct: it
// would filter for the other parent too.
func pushDownFilters(root Node) (Node, error) {
	p := &pusher{parents: map[Node]int{}, memo: map[Node]Node{}}
	visitPlan(root, func(x Node) {
		for _, c := range x.Children() {
			p.parents[c]++
		}
	})
	return p.push(root, nil)
}

type pusher struct {
	parents map[Node]int
	memo    map[Node]Node
}

// over is preds (over n's columns) as a filter over n.
func over(n Node, preds []Expr) (Node, error) {
	pred, err := And(preds...)
	if err != nil || pred == nil {
		return n, err
	}
	f := &Filter{Input: n, Pred: pred}
	if s, ok := n.(*Scan); ok {
		// Work on a copy: a scan node may be shared by plans still held.
		c := *s
		c.Filters = scanFilters(preds, &c)
		if c.Pred, err = scanPredicate(preds, &c); err != nil {
			return nil, err
		}
		f.Input = &c
	}
	return f, nil
}

// scanPredicate is the part of the conjuncts preds (over scan's output)
// that the scan may evaluate itself, over the table's columns. The Filter
// stays above the scan: the scan evaluating them is an optimisation, and
// the Filter's row path stays the authority. A volatile conjunct is left
// to the Filter alone, since evaluating it twice would filter twice.
func scanPredicate(preds []Expr, scan *Scan) ([]Expr, error) {
	var out []Expr
	for _, c := range preds {
		if isVolatile(c) {
			continue
		}
		t, err := Remap(c, scan.Columns)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// push returns n with preds applied, pushed as deep as they go.
func (p *pusher) push(n Node, preds []Expr) (Node, error) {
	if p.parents[n] > 1 {
		r, ok := p.memo[n]
		if !ok {
			var err error
			if r, err = p.pushInto(n, nil); err != nil {
				return nil, err
			}
			p.memo[n] = r
		}
		return over(r, preds)
	}
	return p.pushInto(n, preds)
}

func (p *pusher) pushInto(n Node, preds []Expr) (Node, error) {
	switch x := n.(type) {
	case *Filter:
		for _, c := range Conjuncts(x.Pred) {
			fc, err := factorOr(c)
			if err != nil {
				return nil, err
			}
			preds = append(preds, Conjuncts(fc)...)
		}
		return p.push(x.Input, preds)
	case *Project:
		var below, above []Expr
		for _, c := range preds {
			s, err := Substitute(c, x.Exprs)
			if err != nil {
				return nil, err
			}
			if isVolatile(s) {
				above = append(above, c)
				continue
			}
			below = append(below, s)
		}
		in, err := p.push(x.Input, below)
		if err != nil {
			return nil, err
		}
		return over(&Project{Input: in, Exprs: x.Exprs, schema: x.schema}, above)
	case *Aggregate:
		// A conjunct over grouping keys only filters whole groups: it can
		// run on the input rows.
		var below, above []Expr
		nk := len(x.GroupCols)
		subs := make([]Expr, x.schema.NumFields())
		for i, g := range x.GroupCols {
			f := x.Input.Schema().Field(g)
			subs[i] = NewColRef(g, f.Name, f.Type)
		}
		for _, c := range preds {
			onKeys := true
			for _, k := range Columns(c) {
				onKeys = onKeys && k < nk
			}
			if onKeys && nk > 0 {
				s, err := Substitute(c, subs)
				if err != nil {
					return nil, err
				}
				below = append(below, s)
			} else {
				above = append(above, c)
			}
		}
		in, err := p.push(x.Input, below)
		if err != nil {
			return nil, err
		}
		c := *x
		c.Input = in
		return over(&c, above)
	case *Union:
		ins := make([]Node, len(x.Inputs))
		for i, in := range x.Inputs {
			var err error
			if ins[i], err = p.push(in, append([]Expr(nil), preds...)); err != nil {
				return nil, err
			}
		}
		return &Union{Inputs: ins}, nil
	case *Sort:
		if x.Limit < 0 {
			in, err := p.push(x.Input, preds)
			if err != nil {
				return nil, err
			}
			c := *x
			c.Input = in
			return &c, nil
		}
	case *Join:
		return p.pushJoin(x, preds)
	case *Scan, *Values:
		return over(n, preds)
	}
	// Anything else keeps the conjuncts above it; its inputs are pushed
	// into on their own.
	ch := n.Children()
	next := make([]Node, len(ch))
	for i, c := range ch {
		var err error
		if next[i], err = p.push(c, nil); err != nil {
			return nil, err
		}
	}
	if len(ch) > 0 {
		n = withChildren(n, next)
	}
	return over(n, preds)
}

// pushJoin distributes conjuncts over a join: from above (over its output)
// and from its ON condition (over its inputs).
func (p *pusher) pushJoin(j *Join, preds []Expr) (Node, error) {
	nl := j.Left.Schema().NumFields()
	var left, right, cond, above []Expr
	side := func(c Expr) (l, r bool) {
		for _, k := range Columns(c) {
			if k < nl {
				l = true
			} else {
				r = true
			}
		}
		return l, r
	}
	var on []Expr
	if j.On != nil {
		on = Conjuncts(j.On)
	}
	// A changelog join's output moves the row kinds; conjuncts from above
	// stay there. So do they over a FULL join and for the padded side of
	// an outer join.
	passAbove := j.Changelog
	switch {
	case j.Kind == JoinInner && !j.Changelog:
		for _, c := range append(append([]Expr(nil), preds...), on...) {
			l, r := side(c)
			switch {
			case l && r:
				cond = append(cond, c)
				// An OR over both sides implies an OR over each side's own
				// conjuncts: (a1 AND b1) OR (a2 AND b2) filters the left
				// input by a1 OR a2 before the join (TPC-H Q7's nations).
				if li, ri, err := impliedBySide(c, nl); err != nil {
					return nil, err
				} else {
					if li != nil {
						left = append(left, li)
					}
					if ri != nil {
						right = append(right, Shift(ri, -nl))
					}
				}
			case r:
				right = append(right, Shift(c, -nl))
			default:
				left = append(left, c)
			}
		}
	case j.Kind == JoinInner:
		above = preds
		cond = on
	case j.Kind == JoinFull:
		above, cond = preds, on
	default: // left-preserving: LEFT, SEMI, ANTI, MARK, SINGLE
		for _, c := range preds {
			_, r := side(c)
			if !r && !passAbove && !(j.Kind == JoinMark && referencesMark(c, j)) {
				left = append(left, c)
			} else {
				above = append(above, c)
			}
		}
		for _, c := range on {
			l, r := side(c)
			// A null-aware join's condition is the IN comparison itself:
			// filtering the right input by it would lose the NULLs that
			// make the answer unknown.
			if r && !l && !j.Stream && !j.NullAware {
				right = append(right, Shift(c, -nl))
			} else {
				cond = append(cond, c)
			}
		}
	}
	l, err := p.push(j.Left, left)
	if err != nil {
		return nil, err
	}
	r, err := p.push(j.Right, right)
	if err != nil {
		return nil, err
	}
	c := *j
	c.Left, c.Right = l, r
	if c.On, err = And(cond...); err != nil {
		return nil, err
	}
	if len(cond) != len(on) && c.On != nil {
		c.Cond = DisplayText(c.On) // WHERE conjuncts joined the written ON
	}
	return over(&c, above)
}

// referencesMark reports whether c reads a MARK join's mark column.
func referencesMark(c Expr, j *Join) bool {
	mark := j.Left.Schema().NumFields()
	for _, k := range Columns(c) {
		if k == mark {
			return true
		}
	}
	return false
}

// scanFilters picks the conjuncts a scan can use to skip data (row
// groups): column op constant, where the constant converts to the
// column's type without changing its value. Skipping is an optimisation
// only: the full predicate still runs above the scan.
func scanFilters(preds []Expr, scan *Scan) []connectors.ColumnFilter {
	var out []connectors.ColumnFilter
	for _, c := range preds {
		call, ok := c.(*Call)
		if !ok {
			continue
		}
		switch call.Op {
		case "=", "<", ">", "<=", ">=":
			col, lit, op := call.Args[0], call.Args[1], call.Op
			if _, ok := col.(*ColRef); !ok {
				col, lit, op = call.Args[1], call.Args[0], flip(op)
			}
			cr, ok := col.(*ColRef)
			k, ok2 := lit.(*Const)
			if !ok || !ok2 || cr.Index >= len(scan.Columns) {
				continue
			}
			v, ok := constantAs(k, cr.T)
			if !ok {
				continue
			}
			out = append(out, connectors.ColumnFilter{Column: scan.Columns[cr.Index], Op: op, Value: v})
		case "IS NULL", "IS NOT NULL":
			cr, ok := call.Args[0].(*ColRef)
			if !ok || cr.Index >= len(scan.Columns) {
				continue
			}
			out = append(out, connectors.ColumnFilter{Column: scan.Columns[cr.Index], Op: call.Op})
		case "IN":
			if f, ok := inFilter(call, scan); ok {
				out = append(out, f)
			}
		case "LIKE":
			cr, ok := call.Args[0].(*ColRef)
			k, ok2 := call.Args[1].(*Const)
			if !ok || !ok2 || cr.Index >= len(scan.Columns) || cr.T.ID() != arrow.STRING || k.IsNull() {
				continue
			}
			pat, ok := k.Lit.Value().(string)
			if !ok {
				continue
			}
			if prefix := likePrefix(pat); prefix != "" {
				out = append(out, connectors.ColumnFilter{Column: scan.Columns[cr.Index], Op: "LIKE", Value: prefix})
			}
		}
	}
	return out
}

// inFilter is column IN (constants) as a skip filter. A NULL in the list
// never makes the IN TRUE, so it is left out; a constant that does not
// convert exactly leaves the whole IN unpushed.
func inFilter(call *Call, scan *Scan) (connectors.ColumnFilter, bool) {
	cr, ok := call.Args[0].(*ColRef)
	if !ok || cr.Index >= len(scan.Columns) {
		return connectors.ColumnFilter{}, false
	}
	var vals []any
	for _, a := range call.Args[1:] {
		k, ok := a.(*Const)
		if !ok {
			return connectors.ColumnFilter{}, false
		}
		if k.IsNull() {
			continue
		}
		v, ok := constantAs(k, cr.T)
		if !ok {
			return connectors.ColumnFilter{}, false
		}
		vals = append(vals, v)
	}
	return connectors.ColumnFilter{Column: scan.Columns[cr.Index], Op: "IN", Values: vals}, true
}

// likePrefix is the literal text every string matching the LIKE pattern
// starts with: the characters before the first unescaped % or _ (a
// backslash escapes, the only escape LIKE takes here).
func likePrefix(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '%', '_':
			return b.String()
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteByte(pat[i])
				continue
			}
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// flip mirrors a comparison for constant-op-column.
func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case ">":
		return "<"
	case "<=":
		return ">="
	case ">=":
		return "<="
	}
	return op
}

// constantAs converts a constant to typ, only when the conversion is
// exact (5.5 is not pushed against a BIGINT column).
func constantAs(lit *Const, typ arrow.DataType) (any, bool) {
	if lit.IsNull() {
		return nil, false
	}
	cast, err := expr.NewCast(lit.Lit, typ)
	if err != nil {
		return nil, false
	}
	v, err := cast.EvalRow(nil)
	if err != nil || v == nil {
		return nil, false
	}
	// Exact: converting back compares equal to the literal.
	eq, err := expr.NewBinary("=", expr.Lit(v, typ), lit.Lit)
	if err != nil {
		return nil, false
	}
	ok, err := eq.EvalRow(nil)
	if err != nil || ok != true {
		return nil, false
	}
	return v, true
}

func isVolatile(e Expr) bool {
	return Contains(e, func(x Expr) bool { c, ok := x.(*Call); return ok && volatile[c.Op] })
}

// factorOr takes the conjuncts every disjunct of an OR shares out of it:
// (a AND b) OR (a AND c) is a AND (b OR c), so a join key written in each
// branch (TPC-H Q19) becomes a key.
func factorOr(e Expr) (Expr, error) {
	c, ok := e.(*Call)
	if !ok || c.Op != "OR" {
		return e, nil
	}
	var disj []Expr
	var flat func(Expr)
	flat = func(x Expr) {
		if o, ok := x.(*Call); ok && o.Op == "OR" {
			flat(o.Args[0])
			flat(o.Args[1])
			return
		}
		disj = append(disj, x)
	}
	flat(e)
	parts := make([][]Expr, len(disj))
	for i, d := range disj {
		parts[i] = Conjuncts(d)
	}
	var common []Expr
	for _, c := range parts[0] {
		inAll := true
		for _, p := range parts[1:] {
			found := false
			for _, q := range p {
				if Equal(c, q) {
					found = true
					break
				}
			}
			inAll = inAll && found
		}
		if inAll && !isVolatile(c) {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return e, nil
	}
	var rest Expr
	for _, p := range parts {
		var keep []Expr
		for _, q := range p {
			isCommon := false
			for _, c := range common {
				if Equal(c, q) {
					isCommon = true
				}
			}
			if !isCommon {
				keep = append(keep, q)
			}
		}
		if len(keep) == 0 {
			return And(common...) // one branch is only the common part: the OR is TRUE
		}
		k, err := And(keep...)
		if err != nil {
			return nil, err
		}
		if rest == nil {
			rest = k
		} else if rest, err = binaryCall("OR", rest, k); err != nil {
			return nil, err
		}
	}
	return And(append(common, rest)...)
}

// impliedBySide derives from an OR whose every disjunct has conjuncts over
// the left input alone the OR of those (and likewise for the right): a
// filter each input can apply before the join without changing its result,
// since the OR itself still holds above.
func impliedBySide(c Expr, nl int) (left, right Expr, err error) {
	call, ok := c.(*Call)
	if !ok || call.Op != "OR" {
		return nil, nil, nil
	}
	var disj []Expr
	var flat func(Expr)
	flat = func(x Expr) {
		if o, ok := x.(*Call); ok && o.Op == "OR" {
			flat(o.Args[0])
			flat(o.Args[1])
			return
		}
		disj = append(disj, x)
	}
	flat(c)
	imply := func(wantLeft bool) (Expr, error) {
		var parts []Expr
		for _, d := range disj {
			var mine []Expr
			for _, k := range Conjuncts(d) {
				cols := Columns(k)
				if len(cols) == 0 || isVolatile(k) {
					continue
				}
				all := true
				for _, col := range cols {
					all = all && ((col < nl) == wantLeft)
				}
				if all {
					mine = append(mine, k)
				}
			}
			if len(mine) == 0 {
				return nil, nil // a disjunct says nothing about this side
			}
			a, err := And(mine...)
			if err != nil {
				return nil, err
			}
			parts = append(parts, a)
		}
		return orAll(parts...)
	}
	if left, err = imply(true); err != nil {
		return nil, nil, err
	}
	right, err = imply(false)
	return left, right, err
}
