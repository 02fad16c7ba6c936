package ops

import (
	"fmt"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// winLayout is the sorted input's structure: where partitions and peer
// groups (rows equal on the ORDER BY keys; without ORDER BY, the whole
// partition) start. Peer groups never span partitions.
type winLayout struct {
	n      int
	parts  []int32 // partition starts, then n
	groups []int32 // peer group starts, then n
	grp    []int32 // each row's peer group
}

func newLayout(src winSource, orderBy []SortKey) *winLayout {
	n := src.len()
	l := &winLayout{n: n, parts: src.partitions(), grp: make([]int32, n)}
	oc := src.comparator(orderBy)
	next := 0 // the next partition to start
	for i := 0; i < n; i++ {
		if int(l.parts[next]) == i {
			l.groups = append(l.groups, int32(i))
			next++
		} else if oc != nil && oc(i-1, i) != 0 {
			l.groups = append(l.groups, int32(i))
		}
		l.grp[i] = int32(len(l.groups) - 1)
	}
	l.groups = append(l.groups, int32(n))
	return l
}

// frameBounds is a frame evaluated for every row: rows start[i] up to
// (excluding) end[i], empty when start >= end, less the EXCLUDE clause's
// rows (see spans).
type frameBounds struct {
	start, end []int32
	excl       FrameExclude
}

// span is the sorted rows s up to (excluding) e.
type span struct{ s, e int32 }

// spans lists row i's frame as at most three ordered, disjoint runs: the
// frame before the excluded rows, the current row (EXCLUDE TIES keeps it),
// the frame after them.
func (f *frameBounds) spans(l *winLayout, i int, buf *[3]span) []span {
	s, e := f.start[i], f.end[i]
	if s >= e {
		return buf[:0]
	}
	if f.excl == ExcludeNoOthers {
		buf[0] = span{s, e}
		return buf[:1]
	}
	xs, xe := int32(i), int32(i+1)
	if f.excl != ExcludeCurrentRow {
		g := l.grp[i]
		xs, xe = l.groups[g], l.groups[g+1]
	}
	out := buf[:0]
	if a := min(e, xs); s < a {
		out = append(out, span{s, a})
	}
	if f.excl == ExcludeTies && s <= int32(i) && int32(i) < e {
		out = append(out, span{int32(i), int32(i + 1)})
	}
	if b := max(s, xe); b < e {
		out = append(out, span{b, e})
	}
	return out
}

// frame evaluates f for every row; rk is the ORDER BY key (RANGE with an
// offset only).
func (l *winLayout) frame(f Frame, rk *rangeKey) (*frameBounds, error) {
	fb := &frameBounds{start: make([]int32, l.n), end: make([]int32, l.n), excl: f.Exclude}
	var so, eo rangeOffset
	if f.Unit == FrameRange {
		var err error
		if isOffset(f.Start.Kind) {
			if so, err = newRangeOffset(rk.col.typ, f.Start.Offset); err != nil {
				return nil, err
			}
		}
		if isOffset(f.End.Kind) {
			if eo, err = newRangeOffset(rk.col.typ, f.End.Offset); err != nil {
				return nil, err
			}
		}
	}
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := int(l.parts[p]), int(l.parts[p+1])
		switch f.Unit {
		case FrameRows:
			for i := ps; i < pe; i++ {
				fb.start[i] = unitBound(f.Start, false, i, ps, pe, nil)
				fb.end[i] = unitBound(f.End, true, i, ps, pe, nil)
			}
		case FrameGroups:
			gs, ge := int(l.grp[ps]), int(l.grp[pe-1])+1
			for i := ps; i < pe; i++ {
				g := int(l.grp[i])
				fb.start[i] = unitBound(f.Start, false, g, gs, ge, l.groups)
				fb.end[i] = unitBound(f.End, true, g, gs, ge, l.groups)
			}
		default:
			var nnS, nnE int
			if rk != nil {
				nnS, nnE = rk.nonNull(ps, pe)
			}
			for i := ps; i < pe; i++ {
				fb.start[i] = l.rangeBound(f.Start, so, false, i, ps, pe, rk, nnS, nnE)
				fb.end[i] = l.rangeBound(f.End, eo, true, i, ps, pe, rk, nnS, nnE)
			}
		}
	}
	return fb, nil
}

func isOffset(k BoundKind) bool { return k == OffsetPreceding || k == OffsetFollowing }

// unitBound is a ROWS or GROUPS frame's start (or exclusive end) for a
// row in unit u (its row, or its peer group) of a partition made of the
// units [us, ue); first[v] is unit v's first row (nil: v itself, for
// ROWS), first[ue] the partition's end. Offsets may be as large as an
// int64 holds.
func unitBound(b FrameBound, isEnd bool, u, us, ue int, first []int32) int32 {
	at := func(v int) int32 {
		if first == nil {
			return int32(v)
		}
		return first[v]
	}
	if isEnd {
		u++ // an end is exclusive: the unit after the last one inside
	}
	switch b.Kind {
	case UnboundedPreceding:
		return at(us)
	case UnboundedFollowing:
		return at(ue)
	case CurrentRow:
		return at(u)
	case OffsetPreceding:
		if n := b.Offset.(int64); n <= int64(u-us) {
			return at(u - int(n))
		}
		return at(us)
	default:
		if n := b.Offset.(int64); n < int64(ue-u) {
			return at(u + int(n))
		}
		return at(ue)
	}
}

// rangeBound is a RANGE frame's start (or exclusive end) for row i. With
// an offset, PostgreSQL's rules: a row whose key is NULL gets its peer
// group (the NULLs); otherwise the bound is searched among the
// partition's non-NULL keys [nnS, nnE), so NULLs are never within an
// offset of a value.
func (l *winLayout) rangeBound(b FrameBound, off rangeOffset, isEnd bool, i, ps, pe int, rk *rangeKey, nnS, nnE int) int32 {
	g := l.grp[i]
	switch b.Kind {
	case UnboundedPreceding:
		return int32(ps)
	case UnboundedFollowing:
		return int32(pe)
	case CurrentRow:
		if isEnd {
			return l.groups[g+1]
		}
		return l.groups[g]
	}
	if !rk.col.isValid(i) {
		if isEnd {
			return l.groups[g+1]
		}
		return l.groups[g]
	}
	// PostgreSQL's in_range flags: the bound is key ± offset (sub), and a
	// row is inside when its key is >= the bound (a start) or <= it (an
	// end); DESC turns both around.
	sub, less := b.Kind == OffsetPreceding, isEnd
	if rk.desc {
		sub, less = !sub, !less
	}
	in := rk.inRange(i, off, sub, less)
	if isEnd {
		// The end is the first row past the ones inside.
		return int32(nnS + sort.Search(nnE-nnS, func(x int) bool { return !in(nnS + x) }))
	}
	return int32(nnS + sort.Search(nnE-nnS, func(x int) bool { return in(nnS + x) }))
}

// rangeKey is the single ORDER BY key of a RANGE frame with an offset, in
// the arithmetic its offsets take.
type rangeKey struct {
	desc, nullsFirst bool
	col              *winCol
	exact            []i192 // integers, decimals; dates and timestamps in nanoseconds
	unitNs           int64  // DATE / TIMESTAMP: nanoseconds per unit of the key
	floats           []float64
}

func newRangeKey(k SortKey, col *winCol) *rangeKey {
	rk := &rangeKey{desc: k.Desc, nullsFirst: k.NullsFirst, col: col}
	switch t := col.typ.(type) {
	case *arrow.Float32Type, *arrow.Float64Type:
		rk.floats = col.floats
		return rk
	case *arrow.Date32Type:
		rk.unitNs = nanosPerDay
	case *arrow.TimestampType:
		rk.unitNs = int64(time.Duration(t.Unit.Multiplier()))
	}
	rk.exact = make([]i192, len(col.ints)+len(col.decs))
	for j, v := range col.ints {
		rk.exact[j] = i192From64(v)
		if rk.unitNs != 0 {
			rk.exact[j] = rk.exact[j].mulSmall(uint64(rk.unitNs))
		}
	}
	for j, v := range col.decs {
		rk.exact[j] = i192FromDec(v)
	}
	return rk
}

// nonNull is the run of non-NULL keys of the partition [ps, pe): the NULLs
// are one peer group at its start or its end.
func (rk *rangeKey) nonNull(ps, pe int) (int, int) {
	if rk.col.valid == nil {
		return ps, pe
	}
	v := rk.col.valid
	if rk.nullsFirst {
		return ps + sort.Search(pe-ps, func(x int) bool { return v[ps+x] }), pe
	}
	return ps, ps + sort.Search(pe-ps, func(x int) bool { return !v[ps+x] })
}

// inRange returns PostgreSQL's in_range test against row i's bound: is row
// j's key <= (less) or >= key(i) ± off? Over sorted non-NULL keys it is
// true then false (an end) or false then true (a start).
func (rk *rangeKey) inRange(i int, off rangeOffset, sub, less bool) func(j int) bool {
	if rk.floats != nil {
		return floatInRange(rk.floats, rk.floats[i], off.flt, sub, less)
	}
	var bound i192
	switch {
	case off.interval != nil:
		bound = rk.timeBound(rk.col.ints[i], *off.interval, sub)
	case sub:
		bound = rk.exact[i].sub(off.exact)
	default:
		bound = rk.exact[i].add(off.exact)
	}
	keys := rk.exact
	if less {
		return func(j int) bool { return keys[j].cmp(bound) <= 0 }
	}
	return func(j int) bool { return keys[j].cmp(bound) >= 0 }
}

// floatInRange is PostgreSQL's in_range_float8_float8: NaN sorts after
// every number and equals NaN; a bound infinitely far past an infinite key
// takes every row.
func floatInRange(keys []float64, base, off float64, sub, less bool) func(j int) bool {
	baseNaN := base != base
	if baseNaN {
		return func(j int) bool {
			if keys[j] != keys[j] {
				return true
			}
			return less
		}
	}
	if off > maxFloat && (base > maxFloat && sub || base < -maxFloat && !sub) {
		return func(j int) bool { return keys[j] == keys[j] || !less }
	}
	bound := base + off
	if sub {
		bound = base - off
	}
	if less {
		return func(j int) bool { v := keys[j]; return v == v && v <= bound }
	}
	return func(j int) bool { v := keys[j]; return v != v || v >= bound }
}

const maxFloat = 1.7976931348623157e308

// timeBound is the DATE or TIMESTAMP key v (in the key's unit) plus or
// minus iv, in nanoseconds: months first (clamped to the month's last
// day, as PostgreSQL's timestamp + interval), then days, then the time.
func (rk *rangeKey) timeBound(v int64, iv arrow.MonthDayNanoInterval, sub bool) i192 {
	months, days, nanos := int64(iv.Months), int64(iv.Days), iv.Nanoseconds
	if sub {
		months, days, nanos = -months, -days, -nanos
	}
	unit := uint64(rk.unitNs)
	var t i192
	if months != 0 {
		perDay := nanosPerDay / rk.unitNs
		day := floorDiv(v, perDay)
		tod := v - day*perDay
		t = i192From64(addMonths(day, months)).mulSmall(nanosPerDay).add(i192From64(tod).mulSmall(unit))
	} else {
		t = i192From64(v).mulSmall(unit)
	}
	return t.add(i192From64(days).mulSmall(nanosPerDay)).add(i192From64(nanos))
}

// addMonths adds m calendar months to a day number (days since the Unix
// epoch), clamping the day of month to the new month's length.
func addMonths(day, m int64) int64 {
	y, mo, d := time.Unix(day*86400, 0).UTC().Date()
	total := int64(y)*12 + int64(mo-1) + m
	ny := floorDiv(total, 12)
	nm := time.Month(total-ny*12) + 1
	last := time.Date(int(ny), nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(int(ny), nm, min(d, last), 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// frameKey identifies a frame for sharing its bounds between functions.
func frameKey(f Frame) string {
	return fmt.Sprintf("%d|%d:%#v|%d:%#v|%d", f.Unit, f.Start.Kind, f.Start.Offset, f.End.Kind, f.End.Offset, f.Exclude)
}
