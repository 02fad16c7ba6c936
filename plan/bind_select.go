package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql/ast"
)

// selItem is one column of a SELECT list, bound over the FROM relation.
type selItem struct {
	x    Expr
	name string
	node ast.Node
}

// orderItem is an ORDER BY item: a select item (by position, name or
// equal expression) or an expression bound over the FROM relation.
type orderItem struct {
	item       int // select item, or -1
	x          Expr
	desc       bool
	nullsFirst bool
	node       ast.Node
}

// bindSelect binds one SELECT block with the ORDER BY, LIMIT and OFFSET of
// its query (q, nil when the block has none). The clauses apply in SQL's
// order: FROM, WHERE, GROUP BY and aggregates, HAVING, window functions,
// QUALIFY, the SELECT list, DISTINCT, ORDER BY, LIMIT.
func (b *binder) bindSelect(s *ast.Select, q *ast.Query, outer *scope) (Node, *scope, error) {
	n, in, err := b.bindFrom(s.From, outer)
	if err != nil {
		return nil, nil, err
	}
	// A Top-N or deduplication over an unbounded input: ROW_NUMBER in the
	// derived table, its bound in this WHERE.
	if n, in, err = b.bindStreamRank(s, q, n, in); err != nil {
		return nil, nil, err
	}
	if s.Where != nil {
		pred, err := b.bindPredicate(s.Where, in, "WHERE")
		if err != nil {
			return nil, nil, err
		}
		n = &Filter{Input: n, Pred: pred}
	}
	named := map[string]*ast.WindowSpec{}
	for _, w := range s.Windows {
		key := strings.ToLower(w.Name.Name)
		if _, dup := named[key]; dup {
			return nil, nil, b.errAt(w, "window '%s' is already defined", w.Name.Name)
		}
		named[key] = w.Spec
	}
	aggs, wins := &aggCollector{}, &winCollector{}
	ctx := &exprCtx{clause: "SELECT", aggs: aggs, wins: wins, windows: named}

	// The SELECT list, bound over the FROM relation.
	var items []selItem
	for _, it := range s.Items {
		switch e := it.(type) {
		case *ast.Star:
			q := ""
			if e.Table != nil {
				q = e.Table.Parts[len(e.Table.Parts)-1].Name
				if !in.hasQualifier(q) {
					return nil, nil, b.errAt(e, "missing FROM-clause entry for table '%s' in %s", q, e)
				}
			}
			before := len(items)
			for i, c := range in.cols {
				if c.hidden || (q != "" && !strings.EqualFold(c.qual, q)) || (in.changelog && i == 0) {
					continue
				}
				items = append(items, selItem{x: &ColRef{Index: i, Name: c.name, T: c.typ, Pos: e.Pos()}, name: c.name, node: e})
			}
			if len(items) == before && len(s.From) > 0 {
				return nil, nil, b.errAt(e, "%s selects no columns", e)
			}
		case *ast.SelectExpr:
			x, err := b.bindExpr(e.Expr, in, ctx)
			if err != nil {
				return nil, nil, err
			}
			name := ""
			switch {
			case e.Alias != nil:
				name = e.Alias.Name
			default:
				if c, ok := e.Expr.(*ast.ColumnRef); ok {
					name = c.Parts[len(c.Parts)-1].Name
				} else {
					name = b.source(e.Expr)
				}
			}
			items = append(items, selItem{x: x, name: name, node: e})
		}
	}

	keys, sets, legacy, err := b.bindGroupBy(s.GroupBy, in, items)
	if err != nil {
		return nil, nil, err
	}
	var having, qualify Expr
	if s.Having != nil {
		h, err := b.bindExpr(s.Having, in, &exprCtx{clause: "HAVING", aggs: aggs, windows: named, aliases: items})
		if err != nil {
			return nil, nil, err
		}
		if having, err = b.asPredicate(h, s.Having, "HAVING"); err != nil {
			return nil, nil, err
		}
	}
	if s.Qualify != nil {
		qx, err := b.bindExpr(s.Qualify, in, &exprCtx{clause: "QUALIFY", aggs: aggs, wins: wins, windows: named, aliases: items})
		if err != nil {
			return nil, nil, err
		}
		if qualify, err = b.asPredicate(qx, s.Qualify, "QUALIFY"); err != nil {
			return nil, nil, err
		}
	}
	var orders []orderItem
	if q != nil {
		if orders, err = b.bindOrderBy(q.OrderBy, in, items, ctx); err != nil {
			return nil, nil, err
		}
	}

	// Aggregation: rewrite everything above it over its output.
	updating := false
	aggregating := len(s.GroupBy) > 0 || len(aggs.calls) > 0 || having != nil || len(aggs.grouping) > 0 || len(aggs.aux) > 0
	if aggregating {
		if in.changelog {
			return nil, nil, b.errAt(s, "%s over an updating result (a GROUP BY over an unbounded input) is not supported yet", "GROUP BY or an aggregate")
		}
		ag, err := b.planAggregate(n, in, keys, sets, legacy, aggs)
		if err != nil {
			return nil, nil, err
		}
		n, updating = ag.node, ag.updating
		rw := func(x Expr) (Expr, error) { return ag.rewrite(b, x) }
		for i := range items {
			if items[i].x, err = rw(items[i].x); err != nil {
				return nil, nil, err
			}
		}
		for i := range orders {
			if orders[i].x != nil {
				if orders[i].x, err = rw(orders[i].x); err != nil {
					return nil, nil, err
				}
			}
		}
		if qualify != nil {
			if qualify, err = rw(qualify); err != nil {
				return nil, nil, err
			}
		}
		for _, w := range wins.calls {
			for k, a := range w.Args {
				if w.Args[k], err = rw(a); err != nil {
					return nil, nil, err
				}
			}
			for k, p := range w.Partition {
				if w.Partition[k], err = rw(p); err != nil {
					return nil, nil, err
				}
			}
			for k, o := range w.Order {
				if w.Order[k].X, err = rw(o.X); err != nil {
					return nil, nil, err
				}
			}
		}
		if having != nil {
			h, err := rw(having)
			if err != nil {
				return nil, nil, err
			}
			n = &Filter{Input: n, Pred: h}
		}
	}

	// Window functions, then QUALIFY.
	if len(wins.calls) > 0 {
		if updating {
			return nil, nil, b.errAt(wins.calls[0].node, "%s over an updating GROUP BY result is not supported yet", wins.calls[0].Text)
		}
		wn, repl, err := b.planWindows(n, wins.calls, in.changelog)
		if err != nil {
			return nil, nil, err
		}
		n = wn
		rw := func(x Expr) (Expr, error) { return replaceWindows(x, repl) }
		for i := range items {
			if items[i].x, err = rw(items[i].x); err != nil {
				return nil, nil, err
			}
		}
		for i := range orders {
			if orders[i].x != nil {
				if orders[i].x, err = rw(orders[i].x); err != nil {
					return nil, nil, err
				}
			}
		}
		if qualify != nil {
			if qualify, err = rw(qualify); err != nil {
				return nil, nil, err
			}
		}
	}
	if qualify != nil {
		if len(wins.calls) == 0 {
			return nil, nil, b.errAt(s.Qualify, "QUALIFY needs a window function in the query")
		}
		n = &Filter{Input: n, Pred: qualify}
	}

	// The SELECT list. An updating result (GROUP BY over an unbounded
	// input, or a changelog read from a subquery) shows its row kind
	// first, as Flink's SQL client does.
	var exprs []Expr
	var names []string
	switch {
	case updating:
		op := aggOpColumn(n)
		exprs, names = append(exprs, NewColRef(op, "op", arrow.BinaryTypes.String)), append(names, "op")
	case in.changelog && !aggregating:
		exprs, names = append(exprs, NewColRef(0, "op", arrow.BinaryTypes.String)), append(names, "op")
	}
	first := len(exprs)
	for _, it := range items {
		exprs, names = append(exprs, it.x), append(names, it.name)
	}
	visible := len(exprs)
	out := &scope{changelog: updating || in.changelog, outer: outer}
	for i, x := range exprs {
		out.cols = append(out.cols, column{name: names[i], typ: x.Type()})
	}

	// ORDER BY: select items by position, name or equal expression, or
	// other expressions carried as hidden columns and dropped after the
	// sort.
	var keys2 []ops.SortKey
	for _, o := range orders {
		idx := -1
		if o.item >= 0 {
			idx = first + o.item
		} else {
			for i := first; i < visible; i++ {
				if Equal(exprs[i], o.x) {
					idx = i
					break
				}
			}
		}
		if idx < 0 {
			if out.changelog && !aggregating {
				if c, ok := o.x.(*ColRef); ok && c.Index == 0 {
					return nil, nil, b.errAt(o.node, "ORDER BY the row kind of an updating result is not supported")
				}
			}
			idx = len(exprs)
			exprs = append(exprs, o.x)
			names = append(names, fmt.Sprintf("__order%d", idx))
		}
		keys2 = append(keys2, ops.SortKey{Col: idx, Desc: o.desc, NullsFirst: o.nullsFirst})
	}
	n = NewProject(n, exprs, names)
	if s.Distinct {
		if out.changelog {
			return nil, nil, b.errAt(s, "SELECT DISTINCT over an updating result (a GROUP BY over an unbounded input) is not supported yet")
		}
		if len(exprs) > visible {
			return nil, nil, b.errAt(s, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		if !b.finite(n) {
			return nil, nil, b.errAt(s, "SELECT DISTINCT over an unbounded input is not supported yet")
		}
		n = distinct(n)
	}
	var limit, offset ast.Expr
	if q != nil {
		limit, offset = q.Limit, q.Offset
	}
	count, off, err := b.limitOffset(limit, offset)
	if err != nil {
		return nil, nil, err
	}
	if len(keys2) > 0 && (out.changelog || !Finite(n)) {
		// Sorting never ends over an unbounded input; with a LIMIT it is a
		// continuously updated top-n, itself a changelog (bind_topn.go).
		if count < 0 {
			return nil, nil, b.errAt(q.OrderBy[0], "ORDER BY over an unbounded input needs a LIMIT: the sort would never end (ORDER BY ... LIMIT n is a continuously updated top-n)")
		}
		return bindUpdatingTopN(n, keys2, count, off, out, visible)
	}
	n = applySortLimit(n, keys2, count, off)
	if len(exprs) > visible {
		keep := make([]Expr, visible)
		for i := range keep {
			keep[i] = NewColRef(i, names[i], exprs[i].Type())
		}
		n = NewProject(n, keep, names[:visible])
	}
	return n, out, nil
}

// aggOpColumn is the row-kind column of an updating aggregate under n
// (HAVING filters may sit above it): its last column.
func aggOpColumn(n Node) int {
	for {
		if f, ok := n.(*Filter); ok {
			n = f.Input
			continue
		}
		return n.Schema().NumFields() - 1
	}
}

// replaceWindows puts each window call's result column in its place.
func replaceWindows(x Expr, repl map[*winCall]Expr) (Expr, error) {
	return TransformDown(x, func(e Expr) (Expr, bool, error) {
		if w, ok := e.(*winCall); ok {
			return repl[w], true, nil
		}
		return e, false, nil
	})
}

// bindOrderBy binds ORDER BY items: a position (ORDER BY 2), an output
// name or alias (before input columns, as in PostgreSQL), or an expression
// over the FROM relation (aggregates and window functions allowed).
func (b *binder) bindOrderBy(order []*ast.OrderItem, in *scope, items []selItem, ctx *exprCtx) ([]orderItem, error) {
	var out []orderItem
	for _, o := range order {
		oi := orderItem{item: -1, desc: o.Desc, nullsFirst: nullsFirst(o.Desc, o.Nulls), node: o}
		switch x := o.Expr.(type) {
		case *ast.NumberLit:
			pos, ok := ordinal(x)
			if !ok || pos < 1 || pos > len(items) {
				return nil, b.errAt(x, "ORDER BY position %s is not in select list (1..%d)", x.Text, len(items))
			}
			oi.item = pos - 1
		case *ast.ColumnRef:
			if len(x.Parts) == 1 {
				for i, it := range items {
					if strings.EqualFold(it.name, x.Parts[0].Name) {
						if oi.item >= 0 && !Equal(items[oi.item].x, it.x) {
							return nil, b.errAt(x, "ORDER BY \"%s\" is ambiguous", x.Parts[0].Name)
						}
						if oi.item < 0 {
							oi.item = i
						}
					}
				}
			}
		}
		if oi.item < 0 {
			v, err := b.bindExpr(o.Expr, in, &exprCtx{clause: "ORDER BY", aggs: ctx.aggs, wins: ctx.wins, windows: ctx.windows})
			if err != nil {
				return nil, err
			}
			oi.x = v
		}
		out = append(out, oi)
	}
	return out, nil
}

func ordinal(x *ast.NumberLit) (int, bool) {
	n := 0
	for _, c := range x.Text {
		if c < '0' || c > '9' || n > 1<<20 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, x.Text != ""
}

// orderLimitOutput applies ORDER BY (over the output columns) and LIMIT
// to a set operation, VALUES or a parenthesised query.
func (b *binder) orderLimitOutput(n Node, out *scope, q *ast.Query) (Node, *scope, error) {
	var keys []ops.SortKey
	for _, o := range q.OrderBy {
		idx := -1
		switch x := o.Expr.(type) {
		case *ast.NumberLit:
			pos, ok := ordinal(x)
			if !ok || pos < 1 || pos > len(out.cols) {
				return nil, nil, b.errAt(x, "ORDER BY position %s is not in select list (1..%d)", x.Text, len(out.cols))
			}
			idx = pos - 1
		default:
			v, err := b.bindExpr(o.Expr, out, &exprCtx{clause: "ORDER BY"})
			if err != nil {
				return nil, nil, err
			}
			c, ok := v.(*ColRef)
			if !ok {
				return nil, nil, b.errAt(o.Expr, "ORDER BY of a UNION, INTERSECT, EXCEPT or VALUES must name an output column or position")
			}
			idx = c.Index
		}
		keys = append(keys, ops.SortKey{Col: idx, Desc: o.Desc, NullsFirst: nullsFirst(o.Desc, o.Nulls)})
	}
	count, off, err := b.limitOffset(q.Limit, q.Offset)
	if err != nil {
		return nil, nil, err
	}
	if len(keys) > 0 && (out.changelog || !Finite(n)) {
		if count < 0 {
			return nil, nil, b.errAt(q.OrderBy[0], "ORDER BY over an unbounded input needs a LIMIT")
		}
		return bindUpdatingTopN(n, keys, count, off, out, len(out.cols))
	}
	return applySortLimit(n, keys, count, off), out, nil
}

// limitOffset reads LIMIT and OFFSET: count < 0 when there is no LIMIT.
func (b *binder) limitOffset(limit, offset ast.Expr) (count, off int64, err error) {
	read := func(e ast.Expr, what string) (int64, error) {
		v, err := b.bindExpr(e, &scope{}, &exprCtx{clause: what})
		if err != nil {
			return 0, err
		}
		c, ok := fold(v).(*Const)
		if !ok {
			return 0, b.errAt(e, "%s must be a constant, not %s", what, b.source(e))
		}
		if c.IsNull() && what == "LIMIT" {
			return -1, nil // LIMIT NULL: no limit, as in PostgreSQL
		}
		n, ok := asInt64(c.Value())
		if !ok || n < 0 {
			return 0, b.errAt(e, "%s must be a non-negative integer, not %s", what, b.source(e))
		}
		return n, nil
	}
	count = -1
	if limit != nil {
		if count, err = read(limit, "LIMIT"); err != nil {
			return 0, 0, err
		}
	}
	if offset != nil {
		if off, err = read(offset, "OFFSET"); err != nil {
			return 0, 0, err
		}
	}
	return count, off, nil
}

// applySortLimit adds ORDER BY (a top-n when there is a LIMIT) and LIMIT.
func applySortLimit(n Node, keys []ops.SortKey, count, offset int64) Node {
	if len(keys) > 0 {
		top := int64(-1)
		if count >= 0 {
			top = count + offset
		}
		n = &Sort{Input: n, Keys: keys, Limit: top}
	}
	if count >= 0 || offset > 0 {
		n = &Limit{Input: n, N: count, Offset: offset}
	}
	return n
}
