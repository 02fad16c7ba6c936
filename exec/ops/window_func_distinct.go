package ops

import "slices"

// distinct is count / sum / avg(DISTINCT x) over frames without EXCLUDE.
// A value counts in the frame [l, r) at its first row there: the rows k in
// [l, r) whose previous row with an equal value, prev[k], lies before l.
// Answered offline in O(n log n): frames are taken in order of their
// start l, and before answering those starting at l every row with
// prev < l is added to Fenwick trees of counts and sums over positions.
func (e *winEval) distinct(fn *winFn, fb *frameBounds) (*winResult, error) {
	n := e.lay.n
	col, err := e.src.extract(fn.arg)
	if err != nil {
		return nil, err
	}
	prev := prevEqual(col, n)
	// Rows by prev+1 and frames by start, both by counting sort.
	byPrev := bucketBy(n, func(k int) int { return int(prev[k]) + 1 }, func(k int) bool { return col.isValid(k) })
	byStart := bucketBy(n, func(i int) int { return int(fb.start[i]) }, func(i int) bool { return fb.start[i] < fb.end[i] })
	counts := make([]int32, n+1)
	var sums []i192
	var vals []i192
	if fn.kind != fnCount {
		sums = make([]i192, n+1)
		vals = exactValues(col, n)
	}
	var res *exactResult
	out := &winResult{}
	if fn.kind == fnCount {
		out.ints = make([]int64, n)
	} else {
		res = newExactResult(fn, n)
	}
	for at := 0; at <= n; at++ {
		for _, k := range byPrev.at(at) {
			for p := int(k) + 1; p <= n; p += p & -p {
				counts[p]++
				if sums != nil {
					sums[p] = sums[p].add(vals[k])
				}
			}
		}
		for _, i := range byStart.at(at) {
			lo, hi := int(fb.start[i]), int(fb.end[i])
			var c int32
			var s i192
			for p := hi; p > 0; p -= p & -p {
				c += counts[p]
				if sums != nil {
					s = s.add(sums[p])
				}
			}
			for p := lo; p > 0; p -= p & -p {
				c -= counts[p]
				if sums != nil {
					s = s.sub(sums[p])
				}
			}
			if res == nil {
				out.ints[i] = int64(c)
			} else if err := res.set(int(i), s, int64(c)); err != nil {
				return nil, err
			}
		}
	}
	if res != nil {
		return res.out, nil
	}
	return out, nil
}

// prevEqual returns, for each non-NULL row, the previous row with an equal
// value (-1 for none): equal values are adjacent once the rows are sorted
// by value (stably, so by position within a value).
func prevEqual(col *winCol, n int) []int32 {
	_, pos := col.prefixValid(n)
	order := slices.Clone(pos)
	cmp := col.compare()
	slices.SortStableFunc(order, cmp)
	prev := make([]int32, n)
	for k := range prev {
		prev[k] = -1
	}
	for j := 1; j < len(order); j++ {
		if cmp(order[j-1], order[j]) == 0 {
			prev[order[j]] = order[j-1]
		}
	}
	return prev
}

// buckets groups 0..n-1 by a key in [0, n] (counting sort).
type buckets struct {
	start []int32
	items []int32
}

func bucketBy(n int, key func(int) int, keep func(int) bool) buckets {
	b := buckets{start: make([]int32, n+2)}
	for k := 0; k < n; k++ {
		if keep(k) {
			b.start[key(k)+1]++
		}
	}
	for j := 1; j < len(b.start); j++ {
		b.start[j] += b.start[j-1]
	}
	b.items = make([]int32, b.start[n+1])
	fill := slices.Clone(b.start)
	for k := 0; k < n; k++ {
		if keep(k) {
			j := key(k)
			b.items[fill[j]] = int32(k)
			fill[j]++
		}
	}
	return b
}

func (b buckets) at(j int) []int32 { return b.items[b.start[j]:b.start[j+1]] }
