package plan

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Cardinality estimates for join ordering and build-side choice: a
// relation's rows and, per column, its number of distinct values. They
// come from what is known without reading data: a table's row count and a
// column's value range (Parquet footers), and the classic selectivity
// guesses for what is not (System R's: an equality 1/ndv, a range a third,
// LIKE a tenth). They only choose among plans that give the same answer.
type estimate struct {
	rows float64
	ndv  []float64 // per output column, never above rows; <= 0: unknown
}

// unknownRows stands for a relation whose size nothing tells (a stream, a
// table without metadata): large, so it is probed rather than built.
const unknownRows = 1e9

// columnRanger is a table that knows a column's smallest and largest value
// (Parquet statistics).
type columnRanger interface {
	ColumnRange(col int) (lo, hi any, ok bool)
}

// col is column i's distinct values for a join: unknown counts as every
// row distinct (a key).
func (e estimate) col(i int) float64 {
	if !e.known(i) {
		return math.Max(e.rows, 1)
	}
	return math.Min(e.ndv[i], math.Max(e.rows, 1))
}

func (e estimate) known(i int) bool { return i >= 0 && i < len(e.ndv) && e.ndv[i] > 0 }

// capped is e with every ndv at most rows.
func (e estimate) capped() estimate {
	for i := range e.ndv {
		if e.ndv[i] > 0 && e.ndv[i] > e.rows {
			e.ndv[i] = e.rows
		}
	}
	return e
}

func estimateOf(n Node) estimate {
	w := n.Schema().NumFields()
	flat := func(rows float64) estimate { return estimate{rows: rows, ndv: make([]float64, w)} }
	switch x := n.(type) {
	case *Scan:
		rows := float64(unknownRows)
		if c, ok := x.Table.(rowCounter); ok && c.NumRows() >= 0 {
			rows = float64(c.NumRows())
		}
		e := flat(rows)
		if r, ok := x.Table.(columnRanger); ok {
			for i, c := range x.Columns {
				if lo, hi, ok := r.ColumnRange(c); ok {
					if span, ok := valueSpan(lo, hi); ok {
						e.ndv[i] = math.Min(span, rows)
					}
				}
			}
		}
		return e
	case *Values:
		return flat(float64(len(x.Rows)))
	case *Filter:
		in := estimateOf(x.Input)
		in.rows = math.Max(in.rows*selectivity(x.Pred, in), 1)
		return in.capped()
	case *Project:
		in := estimateOf(x.Input)
		e := estimate{rows: in.rows, ndv: make([]float64, w)}
		for i, ex := range x.Exprs {
			if c, ok := ex.(*ColRef); ok && in.known(c.Index) {
				e.ndv[i] = in.col(c.Index)
			}
		}
		return e
	case *Aggregate:
		in := estimateOf(x.Input)
		groups := 1.0
		e := estimate{ndv: make([]float64, w)}
		for i, g := range x.GroupCols {
			if in.known(g) {
				groups *= in.col(g)
				e.ndv[i] = in.col(g)
			} else {
				groups *= math.Max(in.rows/10, 1) // a key of unknown spread
			}
		}
		e.rows = math.Min(groups, math.Max(in.rows, 1))
		return e.capped()
	case *Join:
		l, r := estimateOf(x.Left), estimateOf(x.Right)
		rows := joinRows(l, r, x.LeftKeys, x.RightKeys)
		switch x.Kind {
		case JoinSemi, JoinAnti:
			return estimate{rows: l.rows / 2, ndv: l.ndv}.capped()
		case JoinMark, JoinSingle:
			return estimate{rows: l.rows, ndv: append(append([]float64(nil), l.ndv...), make([]float64, w-len(l.ndv))...)}
		case JoinLeft:
			rows = math.Max(rows, l.rows)
		case JoinRight:
			rows = math.Max(rows, r.rows)
		case JoinFull:
			rows = math.Max(rows, l.rows+r.rows)
		}
		ndv := append(append([]float64(nil), l.ndv...), r.ndv...)
		if x.Changelog || len(ndv) != w {
			return flat(rows)
		}
		return estimate{rows: rows, ndv: ndv}.capped()
	case *Limit:
		in := estimateOf(x.Input)
		if x.N >= 0 {
			in.rows = math.Min(in.rows, float64(x.N))
		}
		return in.capped()
	case *Union:
		var rows float64
		for _, c := range x.Inputs {
			rows += estimateOf(c).rows
		}
		return flat(rows)
	}
	if ch := n.Children(); len(ch) == 1 && ch[0].Schema().NumFields() == w {
		return estimateOf(ch[0])
	}
	if ch := n.Children(); len(ch) >= 1 {
		return flat(estimateOf(ch[0]).rows)
	}
	return flat(unknownRows)
}

// joinRows is the classic equi-join estimate |L| x |R| / max(ndv(l),
// ndv(r)) for the most selective key (several keys are mostly one
// composite key, not independent ones); no key: the product.
func joinRows(l, r estimate, lk, rk []int) float64 {
	div := 1.0
	for i := range lk {
		div = math.Max(div, math.Max(l.col(lk[i]), r.col(rk[i])))
	}
	return math.Max(l.rows*r.rows/div, 1)
}

// valueSpan is how many distinct values fit between lo and hi for the
// integer-like types (integers, dates, decimals by their unscaled value);
// false otherwise.
func valueSpan(lo, hi any) (float64, bool) {
	switch a := lo.(type) {
	case int32:
		return float64(hi.(int32)) - float64(a) + 1, true
	case int64:
		return float64(hi.(int64)) - float64(a) + 1, true
	case arrow.Date32:
		return float64(hi.(arrow.Date32)) - float64(a) + 1, true
	case bool:
		return 2, true
	}
	return 0, false
}

// selectivity guesses the share of rows a predicate keeps.
func selectivity(p Expr, in estimate) float64 {
	switch x := p.(type) {
	case *Const:
		if v, ok := x.Value().(bool); ok && v {
			return 1
		}
		return 0
	case *Call:
		switch x.Op {
		case "AND":
			return selectivity(x.Args[0], in) * selectivity(x.Args[1], in)
		case "OR":
			return math.Min(1, selectivity(x.Args[0], in)+selectivity(x.Args[1], in))
		case "NOT":
			return 1 - selectivity(x.Args[0], in)
		case "=", "IS NOT DISTINCT FROM":
			if c := colOf(x.Args[0], x.Args[1]); c >= 0 && in.known(c) {
				return 1 / in.col(c)
			}
			return 0.1 // a column of unknown spread (a VARCHAR): a tenth
		case "<>":
			if c := colOf(x.Args[0], x.Args[1]); c >= 0 && in.known(c) {
				return 1 - 1/in.col(c)
			}
			return 0.9
		case "<", "<=", ">", ">=":
			return 1.0 / 3
		case "BETWEEN":
			return 0.25
		case "NOT BETWEEN":
			return 0.75
		case "IN", "NOT IN":
			k := float64(len(x.Args) - 1)
			sel := 0.1 * k
			if c, ok := x.Args[0].(*ColRef); ok && in.known(c.Index) {
				sel = k / in.col(c.Index)
			}
			sel = math.Min(sel, 1)
			if x.Op == "NOT IN" {
				return 1 - sel
			}
			return sel
		case "LIKE":
			return 0.1
		case "NOT LIKE":
			return 0.9
		case "IS NULL":
			return 0.05
		case "IS NOT NULL":
			return 0.95
		}
		if strings.HasPrefix(x.Op, "fn:") {
			return 1.0 / 3
		}
	}
	return 1.0 / 3
}

// colOf is the column of `col op constant` (either order), or -1.
func colOf(a, b Expr) int {
	if c, ok := a.(*ColRef); ok && len(Columns(b)) == 0 {
		return c.Index
	}
	if c, ok := b.(*ColRef); ok && len(Columns(a)) == 0 {
		return c.Index
	}
	return -1
}
