package ops

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// keyEncoder writes the general key encoding (appendKeyArr's bytes) of
// every row of a batch column by column: one type switch per column, not
// per value, and the rows end to end in one buffer. Sizes come first, so
// each column then writes straight to its place in every row.
type keyEncoder struct {
	buf   []byte
	ends  []int // row i is buf[ends[i-1]:ends[i]] (ends[-1] = 0)
	pos   []int // scratch: the write position of each row
	nulls []bool
	words []uint64 // scratch: a fixed-width column's values as words
	// A column of a type with no typed case is encoded row by row here
	// first (otherEnds as ends).
	other     []byte
	otherEnds []int
}

// row is row i's key; it aliases the buffer until the next encode.
func (e *keyEncoder) row(i int) string {
	start := 0
	if i > 0 {
		start = e.ends[i-1]
	}
	return unsafe.String(&e.buf[start], e.ends[i]-start)
}

// encode encodes rows 0..n-1 of cols; anyNull reports a row with a NULL
// component (e.nulls marks them).
func (e *keyEncoder) encode(cols []arrow.Array, n int) (anyNull bool) {
	e.ends = growTo(e.ends[:0], n)
	clear(e.ends)
	e.nulls = growTo(e.nulls[:0], n)
	clear(e.nulls)
	for _, c := range cols {
		e.addSizes(c, n)
	}
	total := 0
	e.pos = growTo(e.pos[:0], n)
	for i, sz := range e.ends[:n] {
		e.pos[i] = total
		total += sz
		e.ends[i] = total
	}
	e.buf = growTo(e.buf[:0], total)
	for _, c := range cols {
		if e.write(c, n) {
			anyNull = true
		}
	}
	return anyNull
}

// fixedWidth is the encoded width of a typed fixed-width column's value
// and its tag; width 0: not one.
func fixedWidth(arr arrow.Array) (tag byte, width int) {
	switch arr.(type) {
	case *array.Int64, *array.Uint32, *array.Uint64:
		return tagInt64, 8
	case *array.Int32, *array.Int16, *array.Int8, *array.Uint8, *array.Uint16:
		return tagInt32, 4
	case *array.Float64:
		return tagFloat64, 8
	case *array.Float32:
		return tagFloat32, 4
	case *array.Timestamp:
		return tagTimestamp, 8
	case *array.Date32:
		return tagDate32, 4
	case *array.Boolean:
		return tagBool, 1
	case *array.Decimal128:
		return tagDecimal, 16
	}
	return 0, 0
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// addSizes adds each row's encoded size of arr to e.ends.
func (e *keyEncoder) addSizes(arr arrow.Array, n int) {
	sizes := e.ends[:n]
	nulls := arr.NullN() > 0
	if _, w := fixedWidth(arr); w > 0 {
		for i := range sizes {
			if nulls && arr.IsNull(i) {
				sizes[i]++
			} else {
				sizes[i] += 1 + w
			}
		}
		return
	}
	switch a := arr.(type) {
	case *array.String:
		offs := a.ValueOffsets()
		for i := range sizes {
			if nulls && a.IsNull(i) {
				sizes[i]++
				continue
			}
			l := int(offs[i+1] - offs[i])
			sizes[i] += 1 + uvarintLen(uint64(l)) + l
		}
		return
	case *array.Dictionary:
		if vals, ok := a.Dictionary().(*array.String); ok {
			for i := range sizes {
				if nulls && a.IsNull(i) {
					sizes[i]++
					continue
				}
				j := a.GetValueIndex(i)
				if vals.IsNull(j) {
					sizes[i]++
					continue
				}
				l := vals.ValueLen(j)
				sizes[i] += 1 + uvarintLen(uint64(l)) + l
			}
			return
		}
	}
	// No typed case: encode the rows now, copy them in write.
	e.other, e.otherEnds = e.other[:0], e.otherEnds[:0]
	for i := range sizes {
		start := len(e.other)
		e.other, _ = appendKeyArr(e.other, arr, i)
		e.otherEnds = append(e.otherEnds, len(e.other))
		sizes[i] += len(e.other) - start
	}
}

// write writes arr's encoding of each row at e.pos and reports a NULL.
// A column without a typed case was encoded by the addSizes just before
// (encode calls addSizes for every column first, so it re-encodes here).
func (e *keyEncoder) write(arr arrow.Array, n int) (anyNull bool) {
	if tag, w := fixedWidth(arr); w > 0 {
		return e.writeFixed(arr, n, tag, w)
	}
	nulls := arr.NullN() > 0
	switch a := arr.(type) {
	case *array.String:
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				e.putNull(i)
				anyNull = true
				continue
			}
			e.putString(i, tagString, a.Value(i))
		}
		return anyNull
	case *array.Dictionary:
		if vals, ok := a.Dictionary().(*array.String); ok {
			for i := 0; i < n; i++ {
				if nulls && a.IsNull(i) {
					e.putNull(i)
					anyNull = true
					continue
				}
				j := a.GetValueIndex(i)
				if vals.IsNull(j) {
					e.putNull(i)
					anyNull = true
					continue
				}
				e.putString(i, tagString, vals.Value(j))
			}
			return anyNull
		}
	}
	e.other, e.otherEnds = e.other[:0], e.otherEnds[:0]
	for i := 0; i < n; i++ {
		var null bool
		start := len(e.other)
		e.other, null = appendKeyArr(e.other, arr, i)
		e.pos[i] += copy(e.buf[e.pos[i]:], e.other[start:])
		if null {
			e.nulls[i], anyNull = true, true
		}
	}
	return anyNull
}

func (e *keyEncoder) putNull(i int) {
	e.buf[e.pos[i]] = tagNull
	e.pos[i]++
	e.nulls[i] = true
}

func (e *keyEncoder) putString(i int, tag byte, s string) {
	p := e.pos[i]
	e.buf[p] = tag
	p++
	p += binary.PutUvarint(e.buf[p:], uint64(len(s)))
	p += copy(e.buf[p:], s)
	e.pos[i] = p
}

// writeFixed writes a fixed-width column: its values are first gathered as
// words by a typed loop, then written with their tag.
func (e *keyEncoder) writeFixed(arr arrow.Array, n int, tag byte, w int) (anyNull bool) {
	nulls := arr.NullN() > 0
	if a, ok := arr.(*array.Decimal128); ok {
		vals := a.Values()
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				e.putNull(i)
				anyNull = true
				continue
			}
			p := e.pos[i]
			e.buf[p] = tag
			binary.LittleEndian.PutUint64(e.buf[p+1:], vals[i].LowBits())
			binary.LittleEndian.PutUint64(e.buf[p+9:], uint64(vals[i].HighBits()))
			e.pos[i] = p + 17
		}
		return anyNull
	}
	e.words = growTo(e.words[:0], n)
	words := e.words[:n]
	switch a := arr.(type) {
	case *array.Int64:
		gatherWords(a.Int64Values(), words)
	case *array.Int32:
		gatherWords(a.Int32Values(), words)
	case *array.Int16:
		gatherWords(a.Int16Values(), words)
	case *array.Int8:
		gatherWords(a.Int8Values(), words)
	case *array.Uint8:
		gatherWords(a.Uint8Values(), words)
	case *array.Uint16:
		gatherWords(a.Uint16Values(), words)
	case *array.Uint32:
		gatherWords(a.Uint32Values(), words)
	case *array.Uint64:
		gatherWords(a.Uint64Values(), words)
	case *array.Timestamp:
		gatherWords(a.TimestampValues(), words)
	case *array.Date32:
		gatherWords(a.Date32Values(), words)
	case *array.Float64:
		for i, f := range a.Float64Values()[:n] {
			words[i] = math.Float64bits(normF64(f))
		}
	case *array.Float32:
		for i, f := range a.Float32Values()[:n] {
			words[i] = uint64(math.Float32bits(normF32(f)))
		}
	case *array.Boolean:
		for i := range words {
			words[i] = 0
			if a.Value(i) {
				words[i] = 1
			}
		}
	}
	for i, v := range words {
		if nulls && arr.IsNull(i) {
			e.putNull(i)
			anyNull = true
			continue
		}
		p := e.pos[i]
		e.buf[p] = tag
		switch w {
		case 8:
			binary.LittleEndian.PutUint64(e.buf[p+1:], v)
		case 4:
			binary.LittleEndian.PutUint32(e.buf[p+1:], uint32(v))
		default:
			e.buf[p+1] = byte(v)
		}
		e.pos[i] = p + 1 + w
	}
	return anyNull
}

func gatherWords[T packable](vals []T, words []uint64) {
	for i := range words {
		words[i] = uint64(int64(vals[i]))
	}
}
