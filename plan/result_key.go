package plan

import "slices"

// resultKey is the upsert key of an updating result: the result columns
// (the row kind "op" is column 0) that identify one row of the table its
// changelog describes, as an updating GROUP BY's keys do (a HAVING filter
// keeps them unique). nil when the plan knows none, or the result does not
// show every key column.
func resultKey(root Node) []int {
	p, ok := root.(*Project)
	if !ok {
		return nil
	}
	in := p.Input
	for {
		f, ok := in.(*Filter)
		if !ok {
			break
		}
		in = f.Input
	}
	agg, ok := in.(*Aggregate)
	if !ok || !agg.Updating || len(agg.GroupCols) == 0 {
		return nil
	}
	// The aggregate's output starts with its group columns, in order.
	key := make([]int, 0, len(agg.GroupCols))
	for g := range agg.GroupCols {
		at := slices.IndexFunc(p.Exprs, func(e Expr) bool {
			c, ok := e.(*ColRef)
			return ok && c.Index == g
		})
		if at < 0 {
			return nil
		}
		key = append(key, at)
	}
	return key
}
