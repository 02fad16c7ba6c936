package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
)

// bindJoin binds a JOIN ... ON. Over bounded inputs it is a hash join
// (the right input built, the left streamed through). When the right input
// is unbounded, or the left one of a FULL join, or an input is a changelog,
// or the session plans streams, it is a streaming join (StreamJoin): both
// inputs held in state, a LEFT/FULL join's result then a changelog.
func (b *binder) bindJoin(j *sqlparser.JoinTableExpr) (Node, *scope, error) {
	var typ ops.JoinType
	swap := false
	switch j.Join {
	case sqlparser.JoinStr:
		typ = ops.Inner
	case sqlparser.LeftJoinStr:
		typ = ops.Left
	case sqlparser.RightJoinStr:
		typ, swap = ops.Left, true
	case sql.FullJoinStr:
		typ = ops.Full
	default:
		return nil, nil, fmt.Errorf("%s is not supported", strings.ToUpper(j.Join))
	}
	left, ls, err := b.bindTableExpr(j.LeftExpr)
	if err != nil {
		return nil, nil, err
	}
	right, rs, err := b.bindTableExpr(j.RightExpr)
	if err != nil {
		return nil, nil, err
	}
	if j.Condition.On == nil {
		return nil, nil, fmt.Errorf("JOIN needs an ON condition (USING and cross joins are not supported)")
	}
	both := join(ls, rs)
	var lk, rk []int
	var residual []sqlparser.Expr
	for _, c := range conjuncts(j.Condition.On) {
		a, bb, ok, err := b.equiKey(c, both, len(ls.cols))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			residual = append(residual, c)
			continue
		}
		if ls.changelog && a == 0 || rs.changelog && bb == 0 {
			return nil, nil, fmt.Errorf("JOIN ON: the row kind 'op' of an updating result is not a join key")
		}
		lk, rk = append(lk, a), append(rk, bb)
	}
	if len(lk) == 0 {
		return nil, nil, fmt.Errorf("JOIN ON needs at least one equality between the two sides (%s)", sqlparser.String(j.Condition.On))
	}
	if len(residual) > 0 && typ != ops.Inner {
		return nil, nil, fmt.Errorf("outer JOIN ON conditions other than equalities between the two sides are not supported yet: %s", sqlparser.String(residual[0]))
	}
	changelogIn := ls.changelog || rs.changelog
	if swap {
		left, right, ls, rs, lk, rk = right, left, rs, ls, rk, lk
	}
	jn := &Join{Left: left, Right: right, Type: typ, LeftKeys: lk, RightKeys: rk,
		LeftOp: -1, RightOp: -1, Cond: sqlparser.String(j.Condition.On)}
	jn.Stream = changelogIn || !b.finite(right) || (typ == ops.Full && !b.finite(left))
	out := both
	if jn.Stream {
		if ls.changelog {
			jn.LeftOp = 0
		}
		if rs.changelog {
			jn.RightOp = 0
		}
		jn.Changelog = typ != ops.Inner || changelogIn
		jn.lscope, jn.rscope = ls, rs
		if jn.Changelog {
			out = changelogJoinScope(ls, rs)
		} else {
			out = join(ls, rs)
		}
		// Event-time columns equal on both sides (a window join's window
		// ends) bound the state: rows expire once the watermark passes.
		for i := range lk {
			if !changelogIn && ls.cols[lk[i]].rowtime && rs.cols[rk[i]].rowtime && jn.Time == nil {
				jn.Time = &ops.TimeBound{LeftCol: lk[i], RightCol: rk[i], HasLo: true, HasHi: true}
			}
		}
		if typ == ops.Inner && !changelogIn {
			jn.boundBy(residual)
		}
		jn.out = out
		jn.markRowtime()
	} else {
		out = join(ls, rs)
	}
	jn.schema = out.schema()
	var n Node = jn
	if swap {
		n, out = swapBack(jn, ls, rs)
	}
	for _, r := range residual {
		pred, err := b.bindPredicate(r, out, "JOIN ON")
		if err != nil {
			return nil, nil, err
		}
		n = &Filter{Input: n, Pred: pred}
	}
	return n, out, nil
}

// equiKey reads c as left.col = right.col (in either order), giving the
// column of each side (right's counted from its first column).
func (b *binder) equiKey(c sqlparser.Expr, both *scope, nLeft int) (int, int, bool, error) {
	cmp, ok := c.(*sqlparser.ComparisonExpr)
	if !ok || cmp.Operator != sqlparser.EqualStr {
		return 0, 0, false, nil
	}
	l, err := b.bindExprIn(cmp.Left, both, nil)
	if err != nil {
		return 0, 0, false, err
	}
	r, err := b.bindExprIn(cmp.Right, both, nil)
	if err != nil {
		return 0, 0, false, err
	}
	li, lok := l.(*expr.ColRef)
	ri, rok := r.(*expr.ColRef)
	if !lok || !rok {
		return 0, 0, false, nil
	}
	a, bb := li.Index, ri.Index
	if a >= nLeft && bb < nLeft {
		a, bb = bb, a
	}
	if a >= nLeft || bb < nLeft {
		return 0, 0, false, nil
	}
	lc, rc := both.cols[a], both.cols[bb]
	if !arrow.TypeEqual(lc.typ, rc.typ) {
		return 0, 0, false, fmt.Errorf("join keys %s and %s have different types (%s, %s): CAST one of them",
			dotted(lc.qual, lc.name), dotted(rc.qual, rc.name), lc.typ, rc.typ)
	}
	return a, bb - nLeft, true, nil
}

// changelogJoinScope is a changelog join's output: the row kind first,
// then each side's columns without its own row kind.
func changelogJoinScope(ls, rs *scope) *scope {
	out := &scope{changelog: true, cols: []column{{name: "op", typ: arrow.BinaryTypes.String}}}
	for _, sc := range []*scope{ls, rs} {
		for i, c := range sc.cols {
			if sc.changelog && i == 0 {
				continue
			}
			c.rowtime = false // a retraction can come at any time
			out.cols = append(out.cols, c)
		}
	}
	return out
}

// swapBack puts the columns of a RIGHT join, planned as a LEFT join with
// its inputs swapped, back in the user's order (the row kind stays first).
func swapBack(jn *Join, ls, rs *scope) (Node, *scope) {
	// ls and rs are the planned (swapped) sides: the user's right, left.
	var user *scope
	off := 0
	if jn.Changelog {
		user = changelogJoinScope(rs, ls)
		off = 1
	} else {
		user = join(rs, ls)
	}
	width := func(sc *scope) int {
		if jn.Changelog && sc.changelog {
			return len(sc.cols) - 1
		}
		return len(sc.cols)
	}
	nPlannedLeft := width(ls)
	exprs := make([]expr.Expr, 0, len(user.cols))
	names := make([]string, 0, len(user.cols))
	if jn.Changelog {
		exprs, names = append(exprs, expr.Col(0, arrow.BinaryTypes.String, "op")), append(names, "op")
	}
	nUserLeft := width(rs)
	for i := 0; i < len(user.cols)-off; i++ {
		c := user.cols[off+i]
		src := off + nPlannedLeft + i // the user's left columns sit after the planned left's
		if i >= nUserLeft {
			src = off + (i - nUserLeft)
		}
		exprs = append(exprs, expr.Col(src, c.typ, c.name))
		names = append(names, c.name)
	}
	return NewProject(jn, exprs, names), user
}

// boundBy derives the join's TimeBound from conditions between the two
// sides' event-time columns: l BETWEEN r - x AND r + y, or l >= r - x and
// l <= r + y (either side first, <, <=, >, >=). The first pair of columns
// found decides; the conditions stay as a filter above the join, so the
// bound only decides when held rows can no longer match.
func (jn *Join) boundBy(conds []sqlparser.Expr) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	pair := [2]int{-1, -1}
	if jn.Time != nil {
		lo, hi, pair = jn.Time.Lo, jn.Time.Hi, [2]int{jn.Time.LeftCol, jn.Time.RightCol}
	}
	// add records right - left >= min (atLeast) or <= max.
	add := func(l, r int, d int64, atLeast bool) {
		if pair[0] < 0 {
			pair = [2]int{l, r}
		}
		if pair != [2]int{l, r} {
			return
		}
		if atLeast {
			lo = max(lo, d)
		} else {
			hi = min(hi, d)
		}
	}
	for _, c := range conds {
		switch x := c.(type) {
		case *sqlparser.RangeCond:
			if x.Operator != sqlparser.BetweenStr {
				continue
			}
			// a BETWEEN f AND t: a >= f and a <= t.
			jn.boundCmp(x.Left, x.From, sqlparser.GreaterEqualStr, add)
			jn.boundCmp(x.Left, x.To, sqlparser.LessEqualStr, add)
		case *sqlparser.ComparisonExpr:
			jn.boundCmp(x.Left, x.Right, x.Operator, add)
		}
	}
	if pair[0] < 0 || (lo == math.MinInt64 && hi == math.MaxInt64) {
		return
	}
	tb := &ops.TimeBound{LeftCol: pair[0], RightCol: pair[1]}
	if lo != math.MinInt64 {
		tb.Lo, tb.HasLo = lo, true
	}
	if hi != math.MaxInt64 {
		tb.Hi, tb.HasHi = hi, true
	}
	jn.Time = tb
}

// boundCmp reads `a op b` where each side is an event-time column of one
// input, the other plus or minus an interval, and reports the bound it puts
// on right - left.
func (jn *Join) boundCmp(a, b sqlparser.Expr, op string, add func(l, r int, d int64, atLeast bool)) {
	ca, offA, okA := jn.timeTerm(a)
	cb, offB, okB := jn.timeTerm(b)
	if !okA || !okB || ca.side == cb.side {
		return
	}
	// a + offA op b + offB. Put it as left op' right + k.
	l, r := ca, cb
	k := offB - offA
	if ca.side == 1 {
		l, r = cb, ca
		k = offA - offB
		switch op {
		case sqlparser.LessThanStr:
			op = sqlparser.GreaterThanStr
		case sqlparser.LessEqualStr:
			op = sqlparser.GreaterEqualStr
		case sqlparser.GreaterThanStr:
			op = sqlparser.LessThanStr
		case sqlparser.GreaterEqualStr:
			op = sqlparser.LessEqualStr
		}
	}
	// left <= right + k  <=>  right - left >= -k.
	switch op {
	case sqlparser.LessThanStr, sqlparser.LessEqualStr:
		add(l.col, r.col, -k, true)
	case sqlparser.GreaterThanStr, sqlparser.GreaterEqualStr:
		add(l.col, r.col, -k, false)
	case sqlparser.EqualStr:
		add(l.col, r.col, -k, true)
		add(l.col, r.col, -k, false)
	}
}

type sideCol struct{ side, col int }

// timeTerm reads col, col + INTERVAL or col - INTERVAL where col is an
// event-time column of one input; the offset is in microseconds.
func (jn *Join) timeTerm(e sqlparser.Expr) (sideCol, int64, bool) {
	for {
		p, ok := e.(*sqlparser.ParenExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	if be, ok := e.(*sqlparser.BinaryExpr); ok && (be.Operator == sqlparser.PlusStr || be.Operator == sqlparser.MinusStr) {
		sc, off, ok := jn.timeTerm(be.Left)
		iv, isIv, err := intervalArg(be.Right)
		if !ok || !isIv || err != nil {
			return sideCol{}, 0, false
		}
		d, err := iv.Duration()
		if err != nil {
			return sideCol{}, 0, false
		}
		if be.Operator == sqlparser.MinusStr {
			return sc, off - d.Microseconds(), true
		}
		return sc, off + d.Microseconds(), true
	}
	cn, ok := e.(*sqlparser.ColName)
	if !ok {
		return sideCol{}, 0, false
	}
	q, name := cn.Qualifier.Name.String(), cn.Name.String()
	found := sideCol{side: -1}
	for side, sc := range []*scope{jn.lscope, jn.rscope} {
		for i, c := range sc.cols {
			if !strings.EqualFold(c.name, name) || (q != "" && !strings.EqualFold(c.qual, q)) {
				continue
			}
			if found.side >= 0 {
				return sideCol{}, 0, false // ambiguous
			}
			found = sideCol{side: side, col: i}
		}
	}
	if found.side < 0 {
		return sideCol{}, 0, false
	}
	sc := []*scope{jn.lscope, jn.rscope}[found.side]
	if !sc.cols[found.col].rowtime {
		return sideCol{}, 0, false
	}
	return found, 0, true
}

// whereBound lets a WHERE clause over a streaming INNER join bound its
// state (Nexmark q7 writes its interval condition there).
func whereBound(n Node, where *sqlparser.Where) {
	if where == nil {
		return
	}
	var jn *Join
	switch x := n.(type) {
	case *Join:
		jn = x
	case *Filter:
		whereBound(x.Input, where)
		return
	}
	if jn == nil || !jn.Stream || jn.Type != ops.Inner || jn.Changelog || jn.lscope == nil {
		return
	}
	jn.boundBy(conjuncts(where.Expr))
	jn.markRowtime()
}

// markRowtime decides which output columns of a streaming join stay
// event-time attributes: only the two columns of a two-sided time bound,
// for which the join's output watermark (its input's, held back by the
// bound) still holds. A regular join's pairs can carry rows of any age: its
// output has none, as in Flink.
func (jn *Join) markRowtime() {
	if jn.out == nil {
		return
	}
	for i := range jn.out.cols {
		jn.out.cols[i].rowtime = false
	}
	tb := jn.Time
	if jn.Changelog || tb == nil || !tb.HasLo || !tb.HasHi {
		return
	}
	jn.out.cols[tb.LeftCol].rowtime = true
	jn.out.cols[len(jn.lscope.cols)+tb.RightCol].rowtime = true
}
