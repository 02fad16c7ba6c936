package ops

import (
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// winResult is one function's result column in sorted order: typed values
// (ints, floats, decimals or bools, with validity), or for the functions
// that return one of the rows' values (lag, lead, first/last/nth_value,
// min, max) the sorted position of that row (pick), gathered at output.
type winResult struct {
	ints   []int64
	floats []float64
	decs   []decimal128.Num
	bools  []bool
	valid  []bool // nil: every value is valid
	pick   []int32
}

// winEval evaluates the functions over one sorted input.
type winEval struct {
	src     winSource
	lay     *winLayout
	orderBy []SortKey
	frames  map[string]*frameBounds
	rk      *rangeKey
}

// frameOf evaluates f once for every function that shares it.
func (e *winEval) frameOf(f Frame) (*frameBounds, error) {
	key := frameKey(f)
	if fb := e.frames[key]; fb != nil {
		return fb, nil
	}
	var rk *rangeKey
	if f.Unit == FrameRange && (isOffset(f.Start.Kind) || isOffset(f.End.Kind)) {
		if e.rk == nil {
			col, err := e.src.extract(e.orderBy[0].Col)
			if err != nil {
				return nil, err
			}
			e.rk = newRangeKey(e.orderBy[0], col)
		}
		rk = e.rk
	}
	fb, err := e.lay.frame(f, rk)
	if err != nil {
		return nil, err
	}
	e.frames[key] = fb
	return fb, nil
}

// eval computes one function.
func (e *winEval) eval(fn *winFn) (*winResult, error) {
	switch fn.kind {
	case fnRowNumber, fnRank, fnDenseRank, fnPercentRank, fnCumeDist, fnNtile:
		return e.ranking(fn), nil
	case fnLag:
		return e.lag(fn)
	}
	fb, err := e.frameOf(fn.frame)
	if err != nil {
		return nil, err
	}
	switch fn.kind {
	case fnFirst, fnLast, fnNth:
		return e.nth(fn, fb)
	case fnCountStar:
		return e.count(fn, fb)
	case fnMin, fnMax:
		return e.minMax(fn, fb)
	case fnBoolAnd, fnBoolOr:
		return e.boolAgg(fn, fb)
	case fnStat:
		return e.stat(fn, fb)
	}
	if fn.spec.Distinct {
		return e.distinct(fn, fb)
	}
	if fn.kind == fnCount {
		return e.count(fn, fb)
	}
	if fn.sum.dom == domFloat {
		return e.sumFloat(fn, fb)
	}
	return e.sumExact(fn, fb)
}

// ranking computes the functions of a row's place in its partition; they
// ignore the frame.
func (e *winEval) ranking(fn *winFn) *winResult {
	l := e.lay
	out := &winResult{}
	if fn.kind == fnPercentRank || fn.kind == fnCumeDist {
		out.floats = make([]float64, l.n)
	} else {
		out.ints = make([]int64, l.n)
	}
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := int(l.parts[p]), int(l.parts[p+1])
		size := pe - ps
		gs := l.grp[ps]
		for i := ps; i < pe; i++ {
			g := l.grp[i]
			switch fn.kind {
			case fnRowNumber:
				out.ints[i] = int64(i - ps + 1)
			case fnRank:
				out.ints[i] = int64(int(l.groups[g]) - ps + 1)
			case fnDenseRank:
				out.ints[i] = int64(g - gs + 1)
			case fnPercentRank:
				if size > 1 {
					out.floats[i] = float64(int(l.groups[g])-ps) / float64(size-1)
				}
			case fnCumeDist:
				out.floats[i] = float64(int(l.groups[g+1])-ps) / float64(size)
			case fnNtile:
				out.ints[i] = ntile(int64(i-ps), int64(size), fn.spec.Param)
			}
		}
	}
	return out
}

// ntile is PostgreSQL's bucket of the k-th row (0-based) of a partition of
// size rows: buckets as equal as possible, the first size%n one larger.
func ntile(k, size, n int64) int64 {
	q, r := size/n, size%n
	if big := r * (q + 1); k < big {
		return k/(q+1) + 1
	} else {
		return r + (k-big)/q + 1
	}
}

// lag computes lag and lead (a lead is a lag by the negated offset): the
// value fn.back rows before the current row in its partition (counting
// only non-NULL values under IGNORE NULLS), else the default.
func (e *winEval) lag(fn *winFn) (*winResult, error) {
	l := e.lay
	pick := make([]int32, l.n)
	var before, pos []int32
	if fn.spec.IgnoreNulls && fn.back != 0 {
		col, err := e.src.extract(fn.arg)
		if err != nil {
			return nil, err
		}
		before, pos = col.prefixValid(l.n)
	}
	back := fn.back
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := int(l.parts[p]), int(l.parts[p+1])
		for i := ps; i < pe; i++ {
			t := int32(pickDefault)
			switch {
			case back == 0:
				t = int32(i)
			case before == nil && back > 0:
				if back <= int64(i-ps) {
					t = int32(i - int(back))
				}
			case before == nil:
				if fwd := -back; fwd < int64(pe-i) {
					t = int32(i + int(fwd))
				}
			case back > 0:
				if back <= int64(before[i]-before[ps]) {
					t = pos[before[i]-int32(back)]
				}
			default:
				if fwd := -back; fwd <= int64(before[pe]-before[i+1]) {
					t = pos[before[i+1]+int32(fwd)-1]
				}
			}
			pick[i] = t
		}
	}
	return &winResult{pick: pick}, nil
}

// nth computes first_value, last_value and nth_value over the frame.
func (e *winEval) nth(fn *winFn, fb *frameBounds) (*winResult, error) {
	l := e.lay
	var before, pos []int32
	if fn.spec.IgnoreNulls {
		col, err := e.src.extract(fn.arg)
		if err != nil {
			return nil, err
		}
		before, pos = col.prefixValid(l.n)
	}
	pick := make([]int32, l.n)
	var buf [3]span
	for i := range pick {
		sp := fb.spans(l, i, &buf)
		switch fn.kind {
		case fnFirst:
			pick[i] = nthIn(sp, 1, before, pos)
		case fnNth:
			pick[i] = nthIn(sp, fn.spec.Param, before, pos)
		default:
			pick[i] = lastIn(sp, before, pos)
		}
	}
	return &winResult{pick: pick}, nil
}

// nthIn is the k-th row (1-based) of the spans, counting only non-NULL
// values when before is set, or pickNull.
func nthIn(sp []span, k int64, before, pos []int32) int32 {
	for _, s := range sp {
		cnt := int64(s.e - s.s)
		if before != nil {
			cnt = int64(before[s.e] - before[s.s])
		}
		if k <= cnt {
			if before == nil {
				return s.s + int32(k-1)
			}
			return pos[before[s.s]+int32(k-1)]
		}
		k -= cnt
	}
	return pickNull
}

// lastIn is the spans' last row (non-NULL when before is set), or pickNull.
func lastIn(sp []span, before, pos []int32) int32 {
	for j := len(sp) - 1; j >= 0; j-- {
		s := sp[j]
		if before == nil {
			return s.e - 1 // spans are never empty
		}
		if before[s.e] > before[s.s] {
			return pos[before[s.e]-1]
		}
	}
	return pickNull
}
