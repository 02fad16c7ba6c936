package plan

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/sql/ast"
)

// bindJoin binds JOIN ... ON | USING, NATURAL and CROSS joins. The ON
// condition stays whole on the Join (over the left columns followed by the
// right ones); the join rules split it into keys and a residual.
func (b *binder) bindJoin(j *ast.Join, outer *scope) (Node, *scope, error) {
	left, ls, err := b.bindTableExpr(j.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	rightExpr, asOf := j.Right, ast.Expr(nil)
	if tn, ok := j.Right.(*ast.TableName); ok && tn.AsOf != nil {
		c := *tn
		c.AsOf, asOf = nil, tn.AsOf
		rightExpr = &c
	}
	right, rs, err := b.bindTableExpr(rightExpr, outer)
	if err != nil {
		return nil, nil, err
	}
	var versioned *VersionedJoin
	if asOf != nil {
		if versioned, err = b.checkTemporalJoin(j, rightExpr.(*ast.TableName), asOf, ls, left, right, rs); err != nil {
			return nil, nil, err
		}
		if j.On == nil {
			return nil, nil, b.errAt(j, "a temporal join needs an ON condition with an equality on the table's columns")
		}
	}
	kind := map[ast.JoinKind]JoinKind{ast.InnerJoin: JoinInner, ast.CrossJoin: JoinInner, ast.LeftJoin: JoinLeft,
		ast.RightJoin: JoinRight, ast.FullJoin: JoinFull}[j.Kind]
	both := joinScopes(ls, rs)
	var using []ast.Ident
	switch {
	case j.Natural:
		for _, lc := range ls.cols {
			if lc.hidden || (ls.changelog && lc.name == "op") {
				continue
			}
			if _, err := rs.resolve("", lc.name); err == nil {
				using = append(using, ast.Ident{Span: j.Span, Name: lc.name})
			}
		}
		if len(using) == 0 {
			kind = JoinInner // no common column: a cross join, as in PostgreSQL
		}
	case j.Using != nil:
		using = j.Using
	}
	var on Expr
	switch {
	case using != nil:
		if ls.changelog || rs.changelog {
			return nil, nil, b.errAt(j, "USING and NATURAL joins of an updating result are not supported: write ON")
		}
		var conds []Expr
		for _, u := range using {
			li, err := ls.resolve("", u.Name)
			if err != nil {
				return nil, nil, b.errAt(&u, "column '%s' in USING is not in the left input: %v", u.Name, err)
			}
			ri, err := rs.resolve("", u.Name)
			if err != nil {
				return nil, nil, b.errAt(&u, "column '%s' in USING is not in the right input: %v", u.Name, err)
			}
			eq, err := binaryCall("=", NewColRef(li, ls.cols[li].name, ls.cols[li].typ),
				NewColRef(len(ls.cols)+ri, rs.cols[ri].name, rs.cols[ri].typ))
			if err != nil {
				return nil, nil, b.errAt(&u, "USING (%s): %v", u.Name, err)
			}
			conds = append(conds, eq)
		}
		if on, err = And(conds...); err != nil {
			return nil, nil, b.errAt(j, "%v", err)
		}
	case j.On != nil:
		if on, err = b.bindPredicate(j.On, both, "JOIN ON"); err != nil {
			return nil, nil, err
		}
		if hasSubquery(on) {
			return nil, nil, b.errAt(j.On, "subqueries in JOIN ON are not supported: move the condition to WHERE")
		}
	case j.Kind != ast.CrossJoin && j.Kind != ast.InnerJoin && !j.Natural:
		return nil, nil, b.errAt(j, "%s JOIN needs an ON or USING condition", kind)
	}
	n, sc, err := b.joinNodes(left, ls, right, rs, kind, on, j, asOf != nil)
	if jn, ok := n.(*Join); ok && err == nil && versioned != nil {
		jn.Lookup, jn.Versioned = false, versioned
	}
	if err != nil || len(using) == 0 {
		return n, sc, err
	}
	return b.usingColumns(n, sc, ls, rs, kind, using)
}

// usingColumns shapes a USING join's output as PostgreSQL does: each
// USING column once, first (the left's value, the right's for a RIGHT
// join, COALESCE of both for FULL), then the other columns of each side.
// The sides' own copies stay reachable qualified (t1.k) but not by * or
// an unqualified name.
func (b *binder) usingColumns(n Node, sc, ls, rs *scope, kind JoinKind, using []ast.Ident) (Node, *scope, error) {
	nl := len(ls.cols)
	isUsing := map[int]bool{}
	var exprs []Expr
	var names []string
	out := &scope{outer: sc.outer}
	for _, u := range using {
		li, _ := ls.resolve("", u.Name)
		ri, _ := rs.resolve("", u.Name)
		isUsing[li], isUsing[nl+ri] = true, true
		l := NewColRef(li, sc.cols[li].name, sc.cols[li].typ)
		r := NewColRef(nl+ri, sc.cols[nl+ri].name, sc.cols[nl+ri].typ)
		var x Expr = l
		var err error
		switch kind {
		case JoinRight:
			x = r
		case JoinFull:
			if x, err = funcCall("coalesce", l, r); err != nil {
				return nil, nil, b.errAt(&u, "USING (%s): %v", u.Name, err)
			}
		}
		exprs, names = append(exprs, x), append(names, ls.cols[li].name)
		out.cols = append(out.cols, column{name: ls.cols[li].name, typ: x.Type()})
	}
	for i, c := range sc.cols {
		if !isUsing[i] {
			exprs, names = append(exprs, NewColRef(i, c.name, c.typ)), append(names, c.name)
			out.cols = append(out.cols, c)
		}
	}
	for i, c := range sc.cols {
		if isUsing[i] {
			exprs, names = append(exprs, NewColRef(i, c.name, c.typ)), append(names, c.name)
			c.hidden = true
			out.cols = append(out.cols, c)
		}
	}
	return NewProject(n, exprs, names), out, nil
}

// joinNodes makes the Join of two bound inputs. Over bounded inputs it is
// a batch join (hash or nested loop, as the rules find keys). When the
// right input is unbounded, or the left one of a FULL join, or an input is
// a changelog, or the session plans streams, it is a streaming join: both
// inputs held in state, a LEFT/FULL join's result then a changelog. A
// RIGHT join is planned as a LEFT join of the swapped inputs. A lookup
// join (FOR SYSTEM_TIME AS OF) hashes its bounded right input in either
// mode, and its result is append-only.
func (b *binder) joinNodes(left Node, ls *scope, right Node, rs *scope, kind JoinKind, on Expr, at ast.Node, lookup bool) (Node, *scope, error) {
	swap := kind == JoinRight
	if swap {
		kind = JoinLeft
		left, right, ls, rs = right, left, rs, ls
		if on != nil {
			// The condition's columns: the user's left ones now follow the
			// planned left (the user's right).
			nr, nl := len(ls.cols), len(rs.cols)
			m := make([]int, nl+nr)
			for i := range m {
				if i < nl {
					m[i] = nr + i
				} else {
					m[i] = i - nl
				}
			}
			var err error
			if on, err = Remap(on, m); err != nil {
				return nil, nil, err
			}
		}
	}
	changelogIn := ls.changelog || rs.changelog
	jn := &Join{Left: left, Right: right, Kind: kind, On: on, LeftOp: -1, RightOp: -1, Lookup: lookup}
	if on != nil {
		jn.Cond = b.source(at)
		if j, ok := at.(*ast.Join); ok && j.On != nil {
			jn.Cond = b.source(j.On)
		}
	}
	jn.Stream = !lookup && (changelogIn || !b.finite(right) || (kind == JoinFull && !b.finite(left)))
	out := joinScopes(ls, rs)
	if jn.Stream {
		if ls.changelog {
			jn.LeftOp = 0
		}
		if rs.changelog {
			jn.RightOp = 0
		}
		jn.Changelog = kind != JoinInner || changelogIn
		if jn.Changelog {
			out = changelogJoinScope(ls, rs)
		}
	}
	out.outer = ls.outer
	jn.schema = out.schema()
	if !swap {
		return jn, out, nil
	}
	n, user := swapBack(jn, ls, rs)
	user.outer = ls.outer
	return n, user, nil
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
			out.cols = append(out.cols, c)
		}
	}
	return out
}

// joinOutput maps a join's input columns (left then right, as its
// conditions see them) to its output columns: a changelog join moves the
// row kinds to one first column. -1: an input row kind, not in the output.
func joinOutput(j *Join) []int {
	nl, nr := j.Left.Schema().NumFields(), j.Right.Schema().NumFields()
	m := make([]int, nl+nr)
	if !j.Changelog {
		for i := range m {
			m[i] = i
		}
		return m
	}
	next := 1
	for i := range m {
		if (i == j.LeftOp) || (j.RightOp >= 0 && i == nl+j.RightOp) {
			m[i] = -1
			continue
		}
		m[i] = next
		next++
	}
	return m
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
		user = joinScopes(rs, ls)
	}
	width := func(sc *scope) int {
		if jn.Changelog && sc.changelog {
			return len(sc.cols) - 1
		}
		return len(sc.cols)
	}
	nPlannedLeft := width(ls)
	exprs := make([]Expr, 0, len(user.cols))
	names := make([]string, 0, len(user.cols))
	if jn.Changelog {
		exprs, names = append(exprs, NewColRef(0, "op", arrow.BinaryTypes.String)), append(names, "op")
	}
	nUserLeft := width(rs)
	for i := 0; i < len(user.cols)-off; i++ {
		c := user.cols[off+i]
		src := off + nPlannedLeft + i // the user's left columns sit after the planned left's
		if i >= nUserLeft {
			src = off + (i - nUserLeft)
		}
		exprs = append(exprs, NewColRef(src, c.name, c.typ))
		names = append(names, c.name)
	}
	return NewProject(jn, exprs, names), user
}

// joinKindText names a join in SQL terms for errors.
func joinKindText(k JoinKind) string { return strings.ToUpper(k.String()) + " JOIN" }

// checkTemporalJoin checks JOIN t FOR SYSTEM_TIME AS OF x. When x is a
// processing-time attribute of the left input, t is a bounded table the
// join looks rows up in (a lookup join: nil is returned). When x is an
// event-time attribute, t must be a versioned table: a PRIMARY KEY and a
// WATERMARK; the join is an event-time temporal join.
func (b *binder) checkTemporalJoin(j *ast.Join, tn *ast.TableName, asOf ast.Expr, ls *scope, left, right Node, rs *scope) (*VersionedJoin, error) {
	if j.Kind != ast.InnerJoin && j.Kind != ast.LeftJoin {
		return nil, b.errAt(j, "a temporal join (FOR SYSTEM_TIME AS OF) is an INNER or LEFT JOIN")
	}
	if j.Natural || j.Using != nil {
		return nil, b.errAt(j, "a temporal join (FOR SYSTEM_TIME AS OF) takes an ON condition, not NATURAL or USING")
	}
	x, err := b.bindExpr(asOf, ls, &exprCtx{clause: "FOR SYSTEM_TIME AS OF"})
	if err != nil {
		return nil, err
	}
	if isProcTime(x, ls) {
		if rs.changelog || !Finite(right) {
			return nil, b.errAt(j.Right, "FOR SYSTEM_TIME AS OF %s: a lookup join reads a bounded table, and this one is unbounded", asOf)
		}
		return nil, nil
	}
	c, isCol := x.(*ColRef)
	if !isCol || !rowtimes(left)[c.Index] {
		return nil, b.errAt(asOf, "FOR SYSTEM_TIME AS OF %s: expected a PROCTIME() attribute (a lookup join) or an event-time attribute "+
			"(a column with a WATERMARK: a versioned table join) of the left input", asOf)
	}
	name := tn.Name.Parts[len(tn.Name.Parts)-1].Name
	e, ok := b.cat.Lookup(name)
	if !ok || e.IsView() || len(e.PrimaryKey) == 0 || e.Watermark == nil {
		return nil, b.errAt(j.Right, "FOR SYSTEM_TIME AS OF %s: '%s' is not a versioned table: declare a PRIMARY KEY (...) NOT ENFORCED and a WATERMARK", asOf, name)
	}
	if rs.changelog {
		return nil, b.errAt(j.Right, "FOR SYSTEM_TIME AS OF %s: a versioned table read as an updating result is not supported yet", asOf)
	}
	v := &VersionedJoin{LeftTime: c.Index, RightTime: -1}
	for i, rt := range rowtimes(right) {
		if rt && strings.EqualFold(rs.cols[i].name, e.Watermark.Column) {
			v.RightTime = i
		}
	}
	if v.RightTime < 0 {
		return nil, b.errAt(j.Right, "FOR SYSTEM_TIME AS OF %s: '%s' has no event-time column", asOf, name)
	}
	for _, k := range e.PrimaryKey {
		i, err := rs.resolve("", k)
		if err != nil {
			return nil, b.errAt(j.Right, "FOR SYSTEM_TIME AS OF %s: PRIMARY KEY column '%s': %v", asOf, k, err)
		}
		v.PrimaryKey = append(v.PrimaryKey, i)
	}
	return v, nil
}
