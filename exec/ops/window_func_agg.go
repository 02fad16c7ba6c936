package ops

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// The aggregates over frames. A frame is at most three spans (see
// frameBounds.spans), so every aggregate is answered per span from
// structures built once over the sorted input: prefix sums and counts
// (O(1) a span) for count, exact sums and bool_and/or, a segment tree
// (O(log n) a span) for floating point sums, min/max and the variance
// family, and running values where the frame starts at the partition's
// start. Never a walk over the frame's rows.

// count is count(*), the frame's rows, and count(x), its non-NULL values
// (from prefix counts).
func (e *winEval) count(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	var before []int32
	if fn.kind == fnCount {
		col, err := e.src.extract(fn.arg)
		if err != nil {
			return nil, err
		}
		before, _ = col.prefixValid(l.n)
	}
	out := &winResult{ints: make([]int64, l.n)}
	var buf [3]span
	for i := range out.ints {
		var c int64
		for _, s := range fb.spans(l, i, &buf) {
			if before == nil {
				c += int64(s.e - s.s)
			} else {
				c += int64(before[s.e] - before[s.s])
			}
		}
		out.ints[i] = c
	}
	return out, nil
}

// exactValues are an integer or decimal column's values as i192 (NULL: 0).
func exactValues(col *winCol, n int) []i192 {
	v := make([]i192, n)
	for k := range v {
		if !col.isValid(k) {
			continue
		}
		if col.ints != nil {
			v[k] = i192From64(col.ints[k])
		} else {
			v[k] = i192FromDec(col.decs[k])
		}
	}
	return v
}

// sumExact is sum / avg over integers and decimals: a frame's sum is a
// difference of exact prefix sums, so it is exact and its overflow does
// not depend on the order rows were added in.
func (e *winEval) sumExact(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	before, _ := col.prefixValid(l.n)
	prefix := make([]i192, l.n+1)
	var acc i192
	for k := 0; k < l.n; k++ {
		prefix[k] = acc
		switch {
		case !col.isValid(k):
		case col.ints != nil:
			acc = acc.add(i192From64(col.ints[k]))
		default:
			acc = acc.add(i192FromDec(col.decs[k]))
		}
	}
	prefix[l.n] = acc
	res := newExactResult(fn, l.n)
	var buf [3]span
	for i := 0; i < l.n; i++ {
		var s i192
		var c int64
		for _, sp := range fb.spans(l, i, &buf) {
			s = s.add(prefix[sp.e].sub(prefix[sp.s]))
			c += int64(before[sp.e] - before[sp.s])
		}
		if err := res.set(i, s, c); err != nil {
			return nil, err
		}
	}
	return res.out, nil
}

// exactResult turns exact sums into sum / avg's result type.
type exactResult struct {
	plan   sumPlan
	out    *winResult
	scale  int32 // DECIMAL result's scale and precision
	prec   int32
	intOut bool
}

func newExactResult(fn *winFn, n int) *exactResult {
	r := &exactResult{plan: fn.sum, out: &winResult{valid: make([]bool, n)}}
	switch t := fn.typ.(type) {
	case *arrow.Int64Type:
		r.out.ints = make([]int64, n)
	case *arrow.Float64Type:
		r.out.floats = make([]float64, n)
	case *arrow.Decimal128Type:
		r.out.decs = make([]decimal128.Num, n)
		r.scale, r.prec = t.Scale, t.Precision
	}
	return r
}

// set stores row i's result from the frame's sum s of c values.
func (r *exactResult) set(i int, s i192, c int64) error {
	if c == 0 {
		return nil // NULL
	}
	r.out.valid[i] = true
	switch {
	case r.out.ints != nil:
		v, ok := s.int64()
		if !ok {
			return fmt.Errorf("BIGINT out of range (the frame's sum does not fit)")
		}
		r.out.ints[i] = v
	case r.out.floats != nil:
		f := s.float64()
		if r.plan.avg {
			f /= float64(c)
		}
		r.out.floats[i] = f
	default:
		if r.scale >= r.plan.inScale {
			s = s.mulPow10(r.scale - r.plan.inScale)
		} else {
			s = s.divPow10Round(r.plan.inScale - r.scale)
		}
		if r.plan.avg {
			s = s.quoRound(uint64(c))
		}
		v, ok := s.dec(r.prec)
		if !ok {
			return fmt.Errorf("DECIMAL out of range (the frame's result does not fit %d digits)", r.prec)
		}
		r.out.decs[i] = v
	}
	return nil
}

// startsAtPartition reports whether every frame starts at its partition's
// start with nothing excluded: then a running value over the partition
// answers it, in the rows' order.
func startsAtPartition(f Frame) bool {
	return f.Start.Kind == UnboundedPreceding && f.Exclude == ExcludeNoOthers
}

// sumFloat is sum / avg over floating point values. Differences of prefix
// sums would lose a frame's small values next to a large one outside it,
// so frames are summed from a segment tree of partial sums (only values
// inside the frame meet), or running sums when they start at the
// partition's start.
func (e *winEval) sumFloat(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	before, _ := col.prefixValid(l.n)
	vals := make([]float64, l.n)
	for k, v := range col.floats {
		if col.isValid(k) {
			vals[k] = v
		}
	}
	out := &winResult{floats: make([]float64, l.n), valid: make([]bool, l.n)}
	set := func(i int, s float64, c int32) {
		if c == 0 {
			return
		}
		if fn.sum.avg {
			s /= float64(c)
		}
		out.floats[i], out.valid[i] = s, true
	}
	if startsAtPartition(fn.frame) {
		running := make([]float64, l.n+1)
		for p := 0; p+1 < len(l.parts); p++ {
			ps, pe := int(l.parts[p]), int(l.parts[p+1])
			var acc float64
			for k := ps; k < pe; k++ {
				running[k] = acc
				acc += vals[k]
			}
			running[pe] = acc
			for i := ps; i < pe; i++ {
				if s, e := fb.start[i], fb.end[i]; s < e {
					set(i, running[e], before[e]-before[s])
				}
			}
		}
		return out, nil
	}
	tree := newSumTree(vals)
	var buf [3]span
	for i := 0; i < l.n; i++ {
		var s float64
		var c int32
		for _, sp := range fb.spans(l, i, &buf) {
			s += tree.sum(int(sp.s), int(sp.e))
			c += before[sp.e] - before[sp.s]
		}
		set(i, s, c)
	}
	return out, nil
}

// sumTree is a bottom-up segment tree of float64 partial sums.
type sumTree struct {
	n int
	t []float64
}

func newSumTree(vals []float64) *sumTree {
	n := len(vals)
	t := make([]float64, 2*n)
	copy(t[n:], vals)
	for p := n - 1; p >= 1; p-- {
		t[p] = t[2*p] + t[2*p+1]
	}
	return &sumTree{n: n, t: t}
}

// sum adds the values of [lo, hi), left part then right part, always in
// the same order for the same range.
func (s *sumTree) sum(lo, hi int) float64 {
	var left, right float64
	for lo, hi = lo+s.n, hi+s.n; lo < hi; lo, hi = lo>>1, hi>>1 {
		if lo&1 == 1 {
			left += s.t[lo]
			lo++
		}
		if hi&1 == 1 {
			hi--
			right = s.t[hi] + right
		}
	}
	return left + right
}

// minMax picks the frame's least or greatest non-NULL value's row.
func (e *winEval) minMax(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	cmp := col.compare()
	isMax := fn.kind == fnMax
	// better returns the row holding the better value; ties keep the
	// earlier row, so the pick does not depend on how the rows were met.
	better := func(a, b int32) int32 {
		if a < 0 {
			return b
		}
		if b < 0 {
			return a
		}
		c := cmp(a, b)
		if isMax {
			c = -c
		}
		if c < 0 || (c == 0 && a < b) {
			return a
		}
		return b
	}
	pick := make([]int32, l.n)
	if startsAtPartition(fn.frame) {
		running := make([]int32, l.n+1)
		for p := 0; p+1 < len(l.parts); p++ {
			ps, pe := int(l.parts[p]), int(l.parts[p+1])
			best := int32(pickNull)
			for k := ps; k < pe; k++ {
				running[k] = best
				if col.isValid(k) {
					best = better(best, int32(k))
				}
			}
			running[pe] = best
			for i := ps; i < pe; i++ {
				pick[i] = pickNull
				if s, e := fb.start[i], fb.end[i]; s < e {
					pick[i] = running[e]
				}
			}
		}
		return &winResult{pick: pick}, nil
	}
	n := l.n
	tree := make([]int32, 2*n)
	for k := 0; k < n; k++ {
		tree[n+k] = pickNull
		if col.isValid(k) {
			tree[n+k] = int32(k)
		}
	}
	for p := n - 1; p >= 1; p-- {
		tree[p] = better(tree[2*p], tree[2*p+1])
	}
	var buf [3]span
	for i := range pick {
		best := int32(pickNull)
		for _, sp := range fb.spans(l, i, &buf) {
			for lo, hi := int(sp.s)+n, int(sp.e)+n; lo < hi; lo, hi = lo>>1, hi>>1 {
				if lo&1 == 1 {
					best = better(best, tree[lo])
					lo++
				}
				if hi&1 == 1 {
					hi--
					best = better(best, tree[hi])
				}
			}
		}
		pick[i] = best
	}
	return &winResult{pick: pick}, nil
}

// boolAgg is bool_and / bool_or from prefix counts of TRUE values.
func (e *winEval) boolAgg(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	before, _ := col.prefixValid(l.n)
	trues := make([]int32, l.n+1)
	for k := 0; k < l.n; k++ {
		trues[k+1] = trues[k]
		if col.isValid(k) && col.ints[k] != 0 {
			trues[k+1]++
		}
	}
	out := &winResult{bools: make([]bool, l.n), valid: make([]bool, l.n)}
	var buf [3]span
	for i := range out.bools {
		var c, t int32
		for _, sp := range fb.spans(l, i, &buf) {
			c += before[sp.e] - before[sp.s]
			t += trues[sp.e] - trues[sp.s]
		}
		if c == 0 {
			continue
		}
		out.valid[i] = true
		if fn.kind == fnBoolAnd {
			out.bools[i] = t == c
		} else {
			out.bools[i] = t > 0
		}
	}
	return out, nil
}

// stat is the variance family (var_samp, var_pop, stddev_samp,
// stddev_pop) over DOUBLE values: Welford states, running from the
// partition's start when every frame starts there, else from a segment
// tree of states merged pairwise (moments.merge), so no frame subtracts
// one sum of squares from another.
func (e *winEval) stat(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	var scale int32
	if d, ok := col.typ.(*arrow.Decimal128Type); ok {
		scale = d.Scale
	}
	value := func(k int) float64 {
		switch {
		case col.floats != nil:
			return col.floats[k]
		case col.ints != nil:
			return float64(col.ints[k])
		}
		return col.decs[k].ToFloat64(scale)
	}
	out := &winResult{floats: make([]float64, l.n), valid: make([]bool, l.n)}
	set := func(i int, m moments) {
		out.floats[i], out.valid[i] = m.result(fn.stat)
	}
	if startsAtPartition(fn.frame) {
		running := make([]moments, l.n+1)
		for p := 0; p+1 < len(l.parts); p++ {
			ps, pe := int(l.parts[p]), int(l.parts[p+1])
			var acc moments
			for k := ps; k < pe; k++ {
				running[k] = acc
				if col.isValid(k) {
					acc.add(value(k))
				}
			}
			running[pe] = acc
			for i := ps; i < pe; i++ {
				if s, e := fb.start[i], fb.end[i]; s < e {
					set(i, running[e])
				}
			}
		}
		return out, nil
	}
	n := l.n
	tree := make([]moments, 2*n)
	for k := 0; k < n; k++ {
		if col.isValid(k) {
			tree[n+k].add(value(k))
		}
	}
	for p := n - 1; p >= 1; p-- {
		tree[p] = tree[2*p].merge(tree[2*p+1])
	}
	var buf [3]span
	for i := 0; i < n; i++ {
		var acc moments
		for _, sp := range fb.spans(l, i, &buf) {
			// The span's pieces, merged in row order: left ones onto
			// left, right ones before right.
			var sl, sr moments
			for lo, hi := int(sp.s)+n, int(sp.e)+n; lo < hi; lo, hi = lo>>1, hi>>1 {
				if lo&1 == 1 {
					sl = sl.merge(tree[lo])
					lo++
				}
				if hi&1 == 1 {
					hi--
					sr = tree[hi].merge(sr)
				}
			}
			acc = acc.merge(sl.merge(sr))
		}
		set(i, acc)
	}
	return out, nil
}
