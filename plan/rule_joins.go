package plan

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
)

// extractJoinKeys splits each join's condition into equi-keys (left
// expression = right expression, or IS NOT DISTINCT FROM) and a residual.
// A key that is an expression rather than a column is computed by a
// projection under its side; keys of different types are cast to their
// common type. A batch join evaluates the residual on candidate pairs; a
// streaming join keeps only its keys: an inner one bounds its state by
// event-time conditions among the rest and filters by them above, an outer
// one cannot take any.
func extractJoinKeys(n Node) (Node, error) {
	return rewritePlan(n, func(x Node) (Node, error) {
		j, ok := x.(*Join)
		if !ok || j.On == nil {
			if ok && j.Stream && len(j.LeftKeys) == 0 {
				return nil, fmt.Errorf("a streaming JOIN needs at least one equality between the two sides")
			}
			return x, nil
		}
		return splitJoin(j)
	})
}

type keyPair struct {
	l, r     Expr // over the left input, over the right input
	nullSafe bool
}

func splitJoin(j *Join) (Node, error) {
	nl := j.Left.Schema().NumFields()
	var pairs []keyPair
	var rest []Expr
	for _, c := range Conjuncts(j.On) {
		if kp, ok := equiPair(c, nl); ok {
			pairs = append(pairs, kp)
		} else {
			rest = append(rest, c)
		}
	}
	if j.Stream {
		if len(pairs) == 0 {
			return nil, fmt.Errorf("a streaming JOIN needs at least one equality between the two sides (%s)", j.On)
		}
		if len(rest) > 0 && j.Kind != JoinInner {
			return nil, fmt.Errorf("outer JOIN ON conditions other than equalities between the two sides are not supported on streams yet: %s", rest[0])
		}
		for _, kp := range pairs {
			for _, e := range []Expr{kp.l, kp.r} {
				if c, ok := e.(*ColRef); ok && ((j.LeftOp >= 0 && c.Index == j.LeftOp && e == kp.l) || (j.RightOp >= 0 && c.Index == j.RightOp && e == kp.r)) {
					return nil, fmt.Errorf("JOIN ON: the row kind 'op' of an updating result is not a join key")
				}
			}
		}
	}
	// Computed keys and casts go into projections under the sides.
	lExtra, rExtra := identity(j.Left), identity(j.Right)
	lNames, rNames := fieldNames(j.Left.Schema()), fieldNames(j.Right.Schema())
	colOf := func(e Expr, exprs *[]Expr, names *[]string) int {
		if c, ok := e.(*ColRef); ok {
			return c.Index
		}
		for i, x := range *exprs {
			if Equal(x, e) {
				return i
			}
		}
		*exprs = append(*exprs, e)
		*names = append(*names, e.String())
		return len(*exprs) - 1
	}
	c := *j
	c.LeftKeys, c.RightKeys, c.NullSafe = nil, nil, nil
	for _, kp := range pairs {
		l, r := kp.l, kp.r
		if !arrow.TypeEqual(l.Type(), r.Type()) {
			t, err := expr.CommonType(l.Type(), r.Type())
			if err != nil {
				return nil, fmt.Errorf("join keys %s and %s: %v", l, r, err)
			}
			if l, err = coerce(l, t); err != nil {
				return nil, err
			}
			if r, err = coerce(r, t); err != nil {
				return nil, err
			}
		}
		c.LeftKeys = append(c.LeftKeys, colOf(l, &lExtra, &lNames))
		c.RightKeys = append(c.RightKeys, colOf(r, &rExtra, &rNames))
		c.NullSafe = append(c.NullSafe, kp.nullSafe)
	}
	addL, addR := len(lExtra)-nl, len(rExtra)-j.Right.Schema().NumFields()
	if addL > 0 {
		c.Left = NewProject(j.Left, lExtra, lNames)
	}
	if addR > 0 {
		c.Right = NewProject(j.Right, rExtra, rNames)
	}
	// The rest reads the inputs' columns: right ones move past the left's
	// added keys.
	var err error
	for i, e := range rest {
		rest[i] = shiftRight(e, nl, addL)
	}
	c.On = nil
	if !c.Stream {
		if c.Residual, err = And(rest...); err != nil {
			return nil, err
		}
	}
	c.schema = joinOutputSchema(&c)
	var out Node = &c
	if c.Stream && c.Kind == JoinInner && !c.Changelog {
		c.Time = timeBound(&c, rest)
	}
	if c.Stream && len(rest) > 0 {
		// A streaming join keeps no residual: the rest filters its output.
		m := joinOutput(&c)
		var preds []Expr
		for _, e := range rest {
			pe, err := Remap(e, m)
			if err != nil {
				return nil, fmt.Errorf("JOIN ON %s: %v", e, err)
			}
			preds = append(preds, pe)
		}
		if out, err = over(out, preds); err != nil {
			return nil, err
		}
	}
	if addL > 0 || addR > 0 {
		out = dropAdded(out, j, &c, addL)
	}
	return out, nil
}

// shiftRight moves references to the right input (index >= nl) by d.
func shiftRight(e Expr, nl, d int) Expr {
	if d == 0 {
		return e
	}
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColRef); ok && c.Index >= nl {
			n := *c
			n.Index += d
			return &n, nil
		}
		return x, nil
	})
	return out
}

// dropAdded projects a join whose inputs gained key columns back to the
// columns of the original join j.
func dropAdded(out Node, j, c *Join, addL int) Node {
	old := j.schema
	nl := j.Left.Schema().NumFields()
	nlNew := c.Left.Schema().NumFields()
	var keep []int
	switch {
	case j.Changelog:
		// [op] + left (without its op) + right (without its op): the
		// left's added columns sit at the end of the left part.
		leftW := nl
		if j.LeftOp >= 0 {
			leftW--
		}
		for i := 0; i < old.NumFields(); i++ {
			if i <= leftW {
				keep = append(keep, i)
			} else {
				keep = append(keep, i+addL)
			}
		}
	default:
		for i := 0; i < old.NumFields(); i++ {
			switch {
			case i < nl:
				keep = append(keep, i)
			case j.Kind == JoinMark:
				keep = append(keep, nlNew)
			default:
				keep = append(keep, i+addL)
			}
		}
	}
	s := out.Schema()
	exprs := make([]Expr, len(keep))
	for i, k := range keep {
		exprs[i] = NewColRef(k, s.Field(k).Name, s.Field(k).Type)
	}
	return NewProject(out, exprs, fieldNames(old))
}

// equiPair reads c as an equality between an expression of the left input
// and one of the right (either order); IS NOT DISTINCT FROM is a null-safe
// one.
func equiPair(c Expr, nl int) (keyPair, bool) {
	call, ok := c.(*Call)
	if !ok || (call.Op != "=" && call.Op != "IS NOT DISTINCT FROM") {
		return keyPair{}, false
	}
	a, b := call.Args[0], call.Args[1]
	sa, sb := sideOf(a, nl), sideOf(b, nl)
	// A constant compared with the right side is a key computed on the
	// left (5 IN (SELECT x ...)).
	if sa == 0 && len(Columns(a)) == 0 && sb == 2 {
		sa = 1
	}
	if sb == 0 && len(Columns(b)) == 0 && sa == 2 {
		sb = 1
	}
	switch {
	case sa == 1 && sb == 2:
	case sa == 2 && sb == 1:
		a, b = b, a
	default:
		return keyPair{}, false
	}
	if isVolatile(a) || isVolatile(b) {
		return keyPair{}, false
	}
	return keyPair{l: a, r: Shift(b, -nl), nullSafe: call.Op == "IS NOT DISTINCT FROM"}, true
}

// sideOf: 1 when e reads only left columns, 2 only right ones, 0 both or
// none.
func sideOf(e Expr, nl int) int {
	l, r := false, false
	for _, k := range Columns(e) {
		if k < nl {
			l = true
		} else {
			r = true
		}
	}
	switch {
	case l && !r:
		return 1
	case r && !l:
		return 2
	}
	return 0
}

// joinOutputSchema is the schema of a join from its inputs and kind.
func joinOutputSchema(j *Join) *arrow.Schema {
	if !j.Changelog {
		return joinSchema(j.Left.Schema(), j.Right.Schema(), j.Kind)
	}
	fs := []arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String}}
	for i, f := range j.Left.Schema().Fields() {
		if i != j.LeftOp {
			fs = append(fs, f)
		}
	}
	for i, f := range j.Right.Schema().Fields() {
		if i != j.RightOp {
			f.Nullable = true
			fs = append(fs, f)
		}
	}
	return arrow.NewSchema(fs, nil)
}

// timeBound derives a streaming inner join's state bound from its keys
// (equal event-time columns on both sides: a window join's window ends)
// or from conditions between the two sides' event-time columns: l BETWEEN
// r - x AND r + y, or l >= r - x and l <= r + y (either side first, <,
// <=, >, >=). The first pair of columns found decides; the conditions
// still filter above the join, so the bound only decides when held rows
// can no longer match.
func timeBound(j *Join, conds []Expr) *ops.TimeBound {
	lt, rt := rowtimes(j.Left), rowtimes(j.Right)
	for i := range j.LeftKeys {
		if lt[j.LeftKeys[i]] && rt[j.RightKeys[i]] {
			return &ops.TimeBound{LeftCol: j.LeftKeys[i], RightCol: j.RightKeys[i], HasLo: true, HasHi: true}
		}
	}
	nl := j.Left.Schema().NumFields()
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	pair := [2]int{-1, -1}
	// add records right - left >= d (atLeast) or <= d.
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
	term := func(e Expr) (side, col int, off int64, ok bool) {
		var d int64
		for {
			c, isCall := e.(*Call)
			if !isCall || (c.Op != "+" && c.Op != "-") {
				break
			}
			k, isConst := c.Args[1].(*Const)
			if !isConst {
				return 0, 0, 0, false
			}
			us, ok := intervalMicros(k)
			if !ok {
				return 0, 0, 0, false
			}
			if c.Op == "-" {
				us = -us
			}
			d += us
			e = c.Args[0]
		}
		c, isCol := e.(*ColRef)
		if !isCol {
			return 0, 0, 0, false
		}
		if c.Index < nl {
			return 0, c.Index, d, lt[c.Index]
		}
		return 1, c.Index - nl, d, rt[c.Index-nl]
	}
	cmp := func(a, b Expr, op string) {
		sa, ca, oa, okA := term(a)
		sb, cb, ob, okB := term(b)
		if !okA || !okB || sa == sb {
			return
		}
		// a + oa op b + ob. Put it as left op right + k.
		l, r, k := ca, cb, ob-oa
		if sa == 1 {
			l, r, k = cb, ca, oa-ob
			op = flip(op)
		}
		// left <= right + k  <=>  right - left >= -k.
		switch op {
		case "<", "<=":
			add(l, r, -k, true)
		case ">", ">=":
			add(l, r, -k, false)
		case "=":
			add(l, r, -k, true)
			add(l, r, -k, false)
		}
	}
	for _, c := range conds {
		call, ok := c.(*Call)
		if !ok {
			continue
		}
		switch call.Op {
		case "BETWEEN":
			cmp(call.Args[0], call.Args[1], ">=")
			cmp(call.Args[0], call.Args[2], "<=")
		case "<", "<=", ">", ">=", "=":
			cmp(call.Args[0], call.Args[1], call.Op)
		}
	}
	if pair[0] < 0 || (lo == math.MinInt64 && hi == math.MaxInt64) {
		return nil
	}
	tb := &ops.TimeBound{LeftCol: pair[0], RightCol: pair[1]}
	if lo != math.MinInt64 {
		tb.Lo, tb.HasLo = lo, true
	}
	if hi != math.MaxInt64 {
		tb.Hi, tb.HasHi = hi, true
	}
	return tb
}

// intervalMicros reads a constant interval of fixed length.
func intervalMicros(k *Const) (int64, bool) {
	switch v := k.Value().(type) {
	case arrow.MonthDayNanoInterval:
		if v.Months != 0 {
			return 0, false
		}
		return int64(v.Days)*86_400_000_000 + v.Nanoseconds/1000, true
	case arrow.Duration:
		dt, ok := k.Type().(*arrow.DurationType)
		if !ok {
			return 0, false
		}
		switch dt.Unit {
		case arrow.Second:
			return int64(v) * 1_000_000, true
		case arrow.Millisecond:
			return int64(v) * 1000, true
		case arrow.Microsecond:
			return int64(v), true
		case arrow.Nanosecond:
			return int64(v) / 1000, true
		}
	}
	return 0, false
}

// changelogNode reports whether n's result is a changelog (row kind first).
func changelogNode(n Node) bool {
	switch x := n.(type) {
	case *Aggregate:
		return x.Updating
	case *Join:
		return x.Changelog
	case *UpdatingTopN:
		return true
	case *StreamRank:
		return x.Changelog()
	case *WindowFuncs:
		return x.Retract
	case *Project, *Filter, *Limit, *Sort:
		return changelogNode(n.Children()[0])
	case *Union:
		return changelogNode(x.Inputs[0])
	}
	return false
}

// rowtimes says which of n's columns are event-time attributes: every row
// still to come has a value at or after the current watermark (a
// WATERMARK column, a window's end), so a join can expire state by it.
func rowtimes(n Node) []bool {
	out := make([]bool, n.Schema().NumFields())
	if changelogNode(n) {
		return out // a retraction can come at any time
	}
	switch x := n.(type) {
	case *WatermarkAssign:
		copy(out, rowtimes(x.Input))
		out[x.TimeCol] = true
	case *Filter, *Limit, *Sort:
		copy(out, rowtimes(n.Children()[0]))
	case *Project:
		in := rowtimes(x.Input)
		for i, e := range x.Exprs {
			if c, ok := e.(*ColRef); ok {
				out[i] = in[c.Index]
			}
		}
	case *WindowTable:
		in := rowtimes(x.Input)
		copy(out, in)
		out[len(in)+1] = in[x.TimeCol]
	case *WindowAggregate:
		out[len(out)-2] = true // window_end
	case *Join:
		if x.Stream && x.Time != nil && x.Time.HasLo && x.Time.HasHi {
			m := joinOutput(x)
			nl := x.Left.Schema().NumFields()
			if o := m[x.Time.LeftCol]; o >= 0 {
				out[o] = true
			}
			if o := m[nl+x.Time.RightCol]; o >= 0 {
				out[o] = true
			}
		}
	}
	return out
}
