package ops

import (
	"bytes"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// preselect lists the rows of a batch that may enter the full heap: those
// whose first key is not worse than that of the heap's worst row (ties
// included, for the other keys to decide). The worst only gets better
// while the batch is ranked, so every row that will enter is listed; the
// others are turned away by one typed compare of one column, without
// building their keys. A first key of another type lists every row.
func (t *TopN) preselect(cols []arrow.Array, n int, sel []int32) []int32 {
	c := &t.nk.cols[0]
	top := t.heap[0]
	tk := t.slotKey(top)
	arr := cols[c.Col]
	sel = sel[:0]
	switch a := arr.(type) {
	case *array.Int64:
		return selectFixed(sel, arr, c, tk, a.Int64Values()[:n], func(v int64) uint64 { return uint64(v) ^ 1<<63 })
	case *array.Timestamp:
		return selectFixed(sel, arr, c, tk, a.TimestampValues()[:n], func(v arrow.Timestamp) uint64 { return uint64(v) ^ 1<<63 })
	case *array.Int32:
		return selectFixed(sel, arr, c, tk, a.Int32Values()[:n], func(v int32) uint64 { return uint64(uint32(v) ^ 1<<31) })
	case *array.Date32:
		return selectFixed(sel, arr, c, tk, a.Date32Values()[:n], func(v arrow.Date32) uint64 { return uint64(uint32(v) ^ 1<<31) })
	case *array.Float64:
		return selectFixed(sel, arr, c, tk, a.Float64Values()[:n], float64Key)
	case *array.Float32:
		return selectFixed(sel, arr, c, tk, a.Float32Values()[:n], func(v float32) uint64 { return uint64(float32Key(v)) })
	case *array.String:
		return selectStrings(sel, arr, c, tk, t.refString(t.refs[top], c.Col), a.ValueOffsets(), valueData(arr), n)
	case *array.Binary:
		return selectStrings(sel, arr, c, tk, t.refString(t.refs[top], c.Col), a.ValueOffsets(), valueData(arr), n)
	}
	return selectAll(sel, n)
}

// selectAll lists rows 0..n-1.
func selectAll(sel []int32, n int) []int32 {
	for i := 0; i < n; i++ {
		sel = append(sel, int32(i))
	}
	return sel
}

// selectFixed lists the rows whose normalised first key (NULL byte, then
// key(v) flipped for DESC, compared as a number) is at most tk's.
func selectFixed[T any](sel []int32, arr arrow.Array, c *normCol, tk []byte, v []T, key func(T) uint64) []int32 {
	tn := tk[c.off]
	var tv uint64
	w := c.kind.width()
	if w == 8 {
		tv = binary.BigEndian.Uint64(tk[c.off+1:])
	} else {
		tv = uint64(binary.BigEndian.Uint32(tk[c.off+1:]))
	}
	flip := c.flip
	if w == 4 {
		flip &= 1<<32 - 1
	}
	if arr.NullN() == 0 {
		switch {
		case c.valid < tn:
			return selectAll(sel, len(v))
		case c.valid > tn:
			return sel
		}
		for i, x := range v {
			if key(x)^flip <= tv {
				sel = append(sel, int32(i))
			}
		}
		return sel
	}
	for i, x := range v {
		rn := c.valid
		if arr.IsNull(i) {
			rn = c.null
		}
		if rn < tn || rn == tn && (rn == c.null || key(x)^flip <= tv) {
			sel = append(sel, int32(i))
		}
	}
	return sel
}

// selectStrings lists the rows whose first key, a string, is not worse
// than thr, the threshold row's full value.
func selectStrings(sel []int32, arr arrow.Array, c *normCol, tk []byte, thr []byte, offs []int32, data []byte, n int) []int32 {
	tn := tk[c.off]
	nulls := arr.NullN() > 0
	if !nulls {
		switch {
		case c.valid < tn:
			return selectAll(sel, n)
		case c.valid > tn:
			return sel
		}
	}
	for i := 0; i < n; i++ {
		rn := c.valid
		if nulls && arr.IsNull(i) {
			rn = c.null
		}
		if rn != tn {
			if rn < tn {
				sel = append(sel, int32(i))
			}
			continue
		}
		if rn == c.null {
			sel = append(sel, int32(i))
			continue
		}
		r := bytes.Compare(data[offs[i]:offs[i+1]], thr)
		if c.Desc {
			r = -r
		}
		if r <= 0 {
			sel = append(sel, int32(i))
		}
	}
	return sel
}
