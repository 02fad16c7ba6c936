package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
)

func (b *binder) bindSelect(s *sqlparser.Select) (Node, *scope, error) {
	s = commaJoin(s)
	n, in, err := b.bindFrom(s.From)
	if err != nil {
		return nil, nil, err
	}
	if s.Where != nil {
		whereBound(n, s.Where)
		pred, err := b.bindPredicate(s.Where.Expr, in, "WHERE")
		if err != nil {
			return nil, nil, err
		}
		n = &Filter{Input: n, Pred: pred}
		if sc, ok := n.(*Filter).Input.(*Scan); ok {
			sc.Filters = pushableFilters(s.Where.Expr, in, sc)
		}
	}

	// Aggregation: GROUP BY, aggregate calls anywhere, or HAVING.
	var aggs []*sqlparser.FuncExpr
	collect := func(node sqlparser.SQLNode) {
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if f, ok := n.(*sqlparser.FuncExpr); ok && isAggregate(f.Name.String()) {
				aggs = append(aggs, f)
				return false, nil
			}
			if _, ok := n.(*sqlparser.Subquery); ok {
				return false, nil
			}
			return true, nil
		}, node)
	}
	collect(s.SelectExprs)
	if s.Having != nil {
		collect(s.Having.Expr)
	}
	collect(s.OrderBy)

	var ac *aggContext
	projScope := in
	updating := false
	if len(s.GroupBy) > 0 || len(aggs) > 0 || s.Having != nil {
		if in.changelog {
			return nil, nil, errChangelogInput("GROUP BY or an aggregate")
		}
		n, ac, err = b.bindGroupBy(n, in, s, aggs) // windowed or not: bind_window.go
		if err != nil {
			return nil, nil, err
		}
		if agg, ok := n.(*Aggregate); ok && !b.finite(agg.Input) {
			// GROUP BY over an unbounded input: a changelog, emitted as
			// the groups change; the row kind travels in a last column.
			agg.Updating, updating = true, true
			agg.schema = arrow.NewSchema(append(append([]arrow.Field{}, agg.schema.Fields()...),
				arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)
		}
		projScope = ac.out
		if s.Having != nil {
			pred, err := b.bindExprIn(s.Having.Expr, in, ac)
			if err != nil {
				return nil, nil, err
			}
			if !arrow.TypeEqual(pred.Type(), arrow.FixedWidthTypes.Boolean) {
				return nil, nil, fmt.Errorf("HAVING must be a boolean expression, not %s", pred.Type())
			}
			n = &Filter{Input: n, Pred: pred}
		}
	}

	// The SELECT list. An updating result (GROUP BY over an unbounded
	// input, or a changelog read from a subquery) shows its row kind first,
	// as Flink's SQL client does.
	var exprs []expr.Expr
	var names []string
	rowtime := map[int]bool{} // output columns that stay event-time attributes
	switch {
	case updating:
		agg := n
		for {
			if f, ok := agg.(*Filter); ok { // HAVING
				agg = f.Input
				continue
			}
			break
		}
		op := agg.Schema().NumFields() - 1
		exprs, names = append(exprs, expr.Col(op, arrow.BinaryTypes.String, "op")), append(names, "op")
	case in.changelog && ac == nil:
		// A SELECT over an updating result keeps its row kind, the first
		// column of that result.
		exprs, names = append(exprs, expr.Col(0, arrow.BinaryTypes.String, "op")), append(names, "op")
	}
	for _, se := range s.SelectExprs {
		switch e := se.(type) {
		case *sqlparser.StarExpr:
			if ac != nil {
				return nil, nil, fmt.Errorf("SELECT * is not allowed with GROUP BY or aggregates")
			}
			q := e.TableName.Name.String()
			if q != "" && !in.hasQualifier(q) {
				return nil, nil, fmt.Errorf("unknown table '%s' in %s.*", q, q)
			}
			for i, c := range in.cols {
				if q != "" && !strings.EqualFold(c.qual, q) {
					continue
				}
				if in.changelog && i == 0 {
					continue // the row kind is already the first column
				}
				if c.use != nil {
					c.use()
				}
				rowtime[len(exprs)] = c.rowtime && ac == nil
				exprs = append(exprs, expr.Col(i, c.typ, c.name))
				names = append(names, c.name)
			}
		case *sqlparser.AliasedExpr:
			x, err := b.bindExprIn(e.Expr, in, ac)
			if err != nil {
				return nil, nil, err
			}
			rowtime[len(exprs)] = isRowtime(e.Expr, in, ac)
			exprs = append(exprs, x)
			names = append(names, outputName(e))
		default:
			return nil, nil, fmt.Errorf("unsupported select item %s", sqlparser.String(se))
		}
	}
	visible := len(exprs)
	out := &scope{changelog: updating || in.changelog}
	for i, x := range exprs {
		out.cols = append(out.cols, column{name: names[i], typ: x.Type(), rowtime: rowtime[i] && !out.changelog})
	}

	// ORDER BY: output columns by name or position, or other expressions
	// carried as hidden columns and dropped after the sort.
	var keys []sortKeySpec
	for _, o := range s.OrderBy {
		idx, err := outputIndex(o.Expr, out, exprs[:visible])
		if err != nil {
			return nil, nil, err
		}
		if idx < 0 {
			sc := in
			if in.changelog && ac == nil {
				// The input's row kind is no value to rank by: a -U would
				// then never match the row it retracts.
				sc = &scope{cols: slices.Clone(in.cols), changelog: true}
				sc.cols[0].name = ""
			}
			x, err := b.bindExprIn(o.Expr, sc, ac)
			if err != nil {
				return nil, nil, err
			}
			// The same value as a select item (ORDER BY COUNT(*), or b.price
			// for the item price): rank by that item, so EXPLAIN and a
			// top-n's display order name it, instead of a hidden copy.
			for i := range visible {
				if exprs[i].String() == x.String() && arrow.TypeEqual(exprs[i].Type(), x.Type()) && !(out.changelog && i == 0) {
					idx = i
					break
				}
			}
			if idx < 0 {
				idx = len(exprs)
				exprs = append(exprs, x)
				names = append(names, fmt.Sprintf("__order%d", idx))
			}
		}
		keys = append(keys, sortKeySpec{col: idx, desc: o.Direction == sqlparser.DescScr})
	}
	_ = projScope
	n = NewProject(n, exprs, names)
	if s.Distinct != "" {
		if out.changelog {
			return nil, nil, errChangelogInput("SELECT DISTINCT")
		}
		if len(exprs) > visible {
			return nil, nil, fmt.Errorf("for SELECT DISTINCT, ORDER BY expressions must appear in the select list")
		}
		group := make([]int, len(exprs))
		for i := range group {
			group[i] = i
		}
		n = &Aggregate{Input: n, GroupCols: group, schema: n.Schema()}
	}
	if len(keys) > 0 && (out.changelog || !Finite(n)) {
		// Sorting never ends over an unbounded input; with a LIMIT it is a
		// continuously updated top-n, itself a changelog (bind_topn.go).
		return bindUpdatingTopN(n, keys, s.Limit, out)
	}
	n, err = applySortLimit(n, keys, s.Limit)
	if err != nil {
		return nil, nil, err
	}
	if len(exprs) > visible {
		keep := make([]expr.Expr, visible)
		for i := range keep {
			keep[i] = expr.Col(i, exprs[i].Type(), names[i])
		}
		n = NewProject(n, keep, names[:visible])
	}
	return n, out, nil
}

type sortKeySpec struct {
	col  int
	desc bool
}

// applySortLimit adds ORDER BY (a top-n when there is a LIMIT) and LIMIT.
func applySortLimit(n Node, keys []sortKeySpec, lim *sqlparser.Limit) (Node, error) {
	count, offset, err := limitOffset(lim)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		top := int64(-1)
		if count >= 0 {
			top = count + offset
		}
		n = &Sort{Input: n, Keys: opsSortKeys(keys), Limit: top}
	}
	if count >= 0 || offset > 0 {
		n = &Limit{Input: n, N: count, Offset: offset}
	}
	return n, nil
}

// limitOffset reads LIMIT and OFFSET: count < 0 when there is no LIMIT.
func limitOffset(lim *sqlparser.Limit) (count, offset int64, err error) {
	count = -1
	if lim == nil {
		return count, 0, nil
	}
	if lim.Rowcount != nil {
		if count, err = constInt(lim.Rowcount, "LIMIT"); err != nil {
			return 0, 0, err
		}
	}
	if lim.Offset != nil {
		if offset, err = constInt(lim.Offset, "OFFSET"); err != nil {
			return 0, 0, err
		}
	}
	return count, offset, nil
}

func opsSortKeys(keys []sortKeySpec) []ops.SortKey {
	sk := make([]ops.SortKey, len(keys))
	for i, k := range keys {
		// SQL default: NULLs sort as the largest value (last ascending,
		// first descending), as in Flink and PostgreSQL.
		sk[i] = ops.SortKey{Col: k.col, Desc: k.desc, NullsFirst: k.desc}
	}
	return sk
}

func constInt(e sqlparser.Expr, what string) (int64, error) {
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.IntVal {
		return 0, fmt.Errorf("%s must be a non-negative integer constant, not %s", what, sqlparser.String(e))
	}
	n, err := strconv.ParseInt(string(v.Val), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a non-negative integer constant, not %s", what, string(v.Val))
	}
	return n, nil
}

// outputIndex resolves an ORDER BY item against the select list: a position
// (ORDER BY 2), an output name or alias, or an expression identical to a
// select item. It returns -1 when the item is none of these.
func outputIndex(e sqlparser.Expr, out *scope, items []expr.Expr) (int, error) {
	// An updating result's first column is its row kind, which is no
	// SELECT item: positions and names start after it.
	first := 0
	if out.changelog {
		first = 1
	}
	switch x := e.(type) {
	case *sqlparser.SQLVal:
		if x.Type == sqlparser.IntVal {
			pos, err := strconv.Atoi(string(x.Val))
			if err != nil || pos < 1 || pos > len(out.cols)-first {
				return -1, fmt.Errorf("ORDER BY position %s is not in the select list (1..%d)", string(x.Val), len(out.cols)-first)
			}
			return pos - 1 + first, nil
		}
	case *sqlparser.ColName:
		if x.Qualifier.IsEmpty() {
			for i := first; i < len(out.cols); i++ {
				if strings.EqualFold(out.cols[i].name, x.Name.String()) {
					return i, nil
				}
			}
		}
	}
	return -1, nil
}

func outputName(e *sqlparser.AliasedExpr) string {
	if !e.As.IsEmpty() {
		return e.As.String()
	}
	if c, ok := e.Expr.(*sqlparser.ColName); ok {
		return c.Name.String()
	}
	return userText(sqlparser.String(e.Expr))
}

var intervalCall = regexp.MustCompile(`__clink_interval\('([^']*)', '([A-Z]+)'\)`)

// userText puts back what the dialect layer rewrote, so an output column
// is named as the user wrote it: TUMBLE_START(ts, INTERVAL '10' SECOND) and
// CAST(SUM(price) AS DOUBLE), not the internal calls.
func userText(s string) string {
	s = intervalCall.ReplaceAllString(s, "INTERVAL '$1' $2")
	const cast = sql.CastFunc + "("
	for {
		i := strings.Index(s, cast)
		if i < 0 {
			return s
		}
		// Find the call's closing parenthesis and its last argument, the
		// quoted type, skipping nested calls and quoted strings.
		depth, quoted, lastComma, end := 0, false, -1, -1
		for j := i + len(cast); j < len(s) && end < 0; j++ {
			switch c := s[j]; {
			case c == '\'':
				quoted = !quoted
			case quoted:
			case c == '(':
				depth++
			case c == ')' && depth == 0:
				end = j
			case c == ')':
				depth--
			case c == ',' && depth == 0:
				lastComma = j
			}
		}
		if end < 0 || lastComma < 0 {
			return s
		}
		arg := s[i+len(cast) : lastComma]
		typ := strings.Trim(strings.TrimSpace(s[lastComma+1:end]), "'")
		s = s[:i] + "CAST(" + arg + " AS " + typ + ")" + s[end+1:]
	}
}

// NewProject projects exprs over in under names.
func NewProject(in Node, exprs []expr.Expr, names []string) *Project {
	fs := make([]arrow.Field, len(exprs))
	for i, x := range exprs {
		fs[i] = arrow.Field{Name: names[i], Type: x.Type(), Nullable: true}
	}
	return &Project{Input: in, Exprs: exprs, schema: arrow.NewSchema(fs, nil)}
}

func (b *binder) bindPredicate(e sqlparser.Expr, sc *scope, clause string) (expr.Expr, error) {
	pred, err := b.bindExprIn(e, sc, nil)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(pred.Type(), arrow.FixedWidthTypes.Boolean) && pred.Type().ID() != arrow.NULL {
		return nil, fmt.Errorf("%s must be a boolean expression, not %s", clause, pred.Type())
	}
	if pred.Type().ID() == arrow.NULL {
		// An untyped NULL (WHERE NULL): a BOOLEAN NULL, which the columnar
		// filter reads as a mask like any other predicate.
		return expr.Lit(nil, arrow.FixedWidthTypes.Boolean), nil
	}
	return pred, nil
}

func conjuncts(e sqlparser.Expr) []sqlparser.Expr {
	switch x := e.(type) {
	case *sqlparser.AndExpr:
		return append(conjuncts(x.Left), conjuncts(x.Right)...)
	case *sqlparser.ParenExpr:
		if _, ok := x.Expr.(*sqlparser.AndExpr); ok {
			return conjuncts(x.Expr)
		}
	}
	return []sqlparser.Expr{e}
}

// isRowtime reports whether a select item keeps event time: a bare
// reference to an event-time column (outside an aggregate, or a window
// aggregate's window_end), or a group window's end (TUMBLE_END, HOP_END,
// SESSION_END), which fires when the watermark reaches it.
func isRowtime(e sqlparser.Expr, in *scope, ac *aggContext) bool {
	switch x := e.(type) {
	case *sqlparser.ColName:
		i, err := in.resolve(x.Qualifier.Name.String(), x.Name.String())
		if err != nil || !in.cols[i].rowtime {
			return false
		}
		return ac == nil || (ac.window && strings.EqualFold(x.Name.String(), "window_end"))
	case *sqlparser.FuncExpr:
		switch strings.ToUpper(x.Name.String()) {
		case "TUMBLE_END", "HOP_END", "SESSION_END":
			return ac != nil && ac.window
		}
	case *sqlparser.ParenExpr:
		return isRowtime(x.Expr, in, ac)
	}
	return false
}

// errChangelogInput rejects an operator over an updating result: it would
// read the retractions (-U, -D) as data.
func errChangelogInput(what string) error {
	return fmt.Errorf("%s over an updating result (a GROUP BY over an unbounded input) is not supported yet", what)
}
