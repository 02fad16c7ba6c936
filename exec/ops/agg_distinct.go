package ops

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// distinctAcc feeds its inner aggregate only the first occurrence of each
// (group, value) pair: COUNT(DISTINCT x), SUM(DISTINCT x) ... NULLs never
// reach the inner aggregate, which ignores them anyway. The set is keyed by
// the group id and the key encoding of the value, which the row and the
// columnar path produce identically.
type distinctAcc struct {
	inner accumulator
	seen  map[string]struct{}
	buf   []byte
	ids   []int32
}

func newDistinctAcc(inner accumulator) *distinctAcc {
	return &distinctAcc{inner: inner, seen: make(map[string]struct{})}
}

func (d *distinctAcc) bind(in arrow.DataType) error { return d.inner.bind(in) }
func (d *distinctAcc) grow(n int)                   { d.inner.grow(n) }
func (d *distinctAcc) value(g int) any              { return d.inner.value(g) }

func (d *distinctAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	return d.inner.build(mem, n)
}

// first reports whether the encoded pair in d.buf is new, and records it.
func (d *distinctAcc) first() bool {
	if _, ok := d.seen[string(d.buf)]; ok {
		return false
	}
	d.seen[string(d.buf)] = struct{}{}
	return true
}

func (d *distinctAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	keep := d.ids[:0]
	for i, g := range ids {
		if g < 0 || arr.IsNull(i) {
			keep = append(keep, -1)
			continue
		}
		d.buf = binary.LittleEndian.AppendUint32(d.buf[:0], uint32(g))
		d.buf, _ = appendKeyArr(d.buf, arr, i)
		if d.first() {
			keep = append(keep, g)
		} else {
			keep = append(keep, -1)
		}
	}
	d.ids = keep
	return d.inner.updateColumnar(arr, keep)
}

func (d *distinctAcc) updateRow(v any, g int32) error {
	if v == nil {
		return nil
	}
	d.buf = binary.LittleEndian.AppendUint32(d.buf[:0], uint32(g))
	d.buf = appendKeyValue(d.buf, v)
	if !d.first() {
		return nil
	}
	return d.inner.updateRow(v, g)
}
