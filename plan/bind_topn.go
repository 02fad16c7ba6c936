package plan

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/ops"
)

// bindUpdatingTopN binds ORDER BY keys LIMIT over n, an unbounded input
// whose first visible columns are the SELECT list (hidden ORDER BY columns
// follow); when out is an updating result, the first of them is its row
// kind. The result is a changelog, as Flink's continuous top-n: the row
// kind first, then the SELECT list, out's columns.
func bindUpdatingTopN(n Node, keys []ops.SortKey, count, offset int64, out *scope, visible int) (Node, *scope, error) {
	in := n.Schema()
	fields := append([]arrow.Field{}, in.Fields()...)
	cols := out.cols
	sortKeys := append([]ops.SortKey(nil), keys...)
	if out.changelog {
		// Over an updating result (a streaming GROUP BY): its row kind is
		// the first column; the top-n keeps the rest and its own kind.
		fields, cols = fields[1:], cols[1:]
		for i := range sortKeys {
			sortKeys[i].Col--
		}
	}
	top := &UpdatingTopN{Input: n, Keys: sortKeys, N: count, Offset: offset, Changelog: out.changelog,
		schema: arrow.NewSchema(append(fields, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String}), nil)}
	exprs := []Expr{NewColRef(len(fields), "op", arrow.BinaryTypes.String)}
	names := []string{"op"}
	res := &scope{changelog: true, outer: out.outer, cols: []column{{name: "op", typ: arrow.BinaryTypes.String}}}
	for i, c := range cols {
		exprs = append(exprs, NewColRef(i, c.name, fields[i].Type))
		names = append(names, c.name)
		res.cols = append(res.cols, column{name: c.name, typ: c.typ})
	}
	_ = visible
	return NewProject(top, exprs, names), res, nil
}

// resultOrder is the rank order of root's rows when root is a continuous
// top-n (as bindUpdatingTopN builds it: a projection of the top-n's
// columns) and every ORDER BY column is in the SELECT list: the keys by
// root's columns. A display applying the changelog keeps its table in that
// order, as Flink's SQL client shows a top-n.
func resultOrder(root Node) []ops.SortKey {
	p, ok := root.(*Project)
	if !ok {
		return nil
	}
	top, ok := p.Input.(*UpdatingTopN)
	if !ok {
		return nil
	}
	keys := make([]ops.SortKey, 0, len(top.Keys))
	for _, k := range top.Keys {
		at := -1
		for j, e := range p.Exprs {
			if c, ok := e.(*ColRef); ok && c.Index == k.Col {
				at = j
				break
			}
		}
		if at < 0 {
			return nil // ordered by a column the result does not show
		}
		k.Col = at
		keys = append(keys, k)
	}
	return keys
}
