package ops

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// The estimates below are what an operator reserves against its query's
// memory budget. They count the large allocations (table slots, key
// arenas, per-group state, builders' buffers) by capacity, not every
// header, and are computed per batch, not per row.

// memBytes estimates the key index's tables.
func (k *keyIndex) memBytes() int64 {
	if k == nil {
		return 0
	}
	var b int64
	if k.ints != nil {
		b += int64(cap(k.ints.keys))*8 + int64(cap(k.ints.ids))*4
	}
	if k.pairs != nil {
		b += int64(cap(k.pairs.keys))*8 + int64(cap(k.pairs.ids))*4
	}
	b += k.gen.memBytes() + k.strs.memBytes()
	b += int64(cap(k.dict.ids)) * 4
	for _, ic := range k.interns {
		if ic != nil {
			b += ic.t.memBytes() + int64(cap(ic.dict.ids))*4
		}
	}
	return b
}

func (t *bytesTable) memBytes() int64 {
	if t == nil {
		return 0
	}
	b := int64(cap(t.slots))*8 + int64(cap(t.ents))*int64(unsafe.Sizeof(bytesEnt{})) + int64(cap(t.hashes))*8
	for _, blk := range t.blocks {
		b += int64(cap(blk))
	}
	return b
}

// accGroupBytes estimates one group's state in a, without what grows
// apart from the group count (a DISTINCT set: distinctAcc.memBytes).
func accGroupBytes(a accumulator) int64 {
	switch x := a.(type) {
	case *countAcc:
		return 8
	case *sumAcc:
		return 40 // a 128-bit or decimal sum and a count
	case *minMaxAcc:
		return 40 // a set flag and a value; a string's bytes counted at 16
	case *statAcc:
		return int64(unsafe.Sizeof(moments{}))
	case *boolAcc:
		return 2
	case *distinctAcc:
		return accGroupBytes(x.inner)
	}
	return 32
}

// memBytes estimates the DISTINCT set: each entry's key bytes and a Go map
// entry's overhead.
func (d *distinctAcc) memBytes() int64 { return int64(len(d.seen)) * (48 + 16) }

// builderBytes estimates a builder's buffers.
func builderBytes(b array.Builder) int64 {
	n := int64(b.Cap())
	switch x := b.(type) {
	case *array.StringBuilder:
		return n*4 + int64(x.DataCap())
	case *array.BinaryBuilder:
		return n*4 + int64(x.DataCap())
	}
	return n * 8
}
