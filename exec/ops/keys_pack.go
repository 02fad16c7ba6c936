package ops

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// A key of fixed-width columns whose widths add up to at most 128 bits is
// packed into one or two 64-bit words, looked up in int64Table or
// pairTable: one multiply-hash and an integer compare per row, whatever
// the columns, instead of encoding bytes and hashing them. A row that does
// not pack (a NULL component, a DECIMAL(p <= 18) value outside int64, an
// integer outside its column's width) spills to the general byte encoding
// in a table of its own; whether a row spills depends on its values only,
// so the row path and the columnar path agree on every key.

// packKind is how one column's value becomes bits.
type packKind uint8

const (
	packInt    packKind = iota // signed integers and integer-backed types
	packBool                   // 0 or 1
	packF32                    // normalised float32 bits (normF32)
	packF64                    // normalised float64 bits (normF64)
	packDec64                  // DECIMAL of precision <= 18: its value as int64
	packDec128                 // DECIMAL of precision > 18: both words
	packStr                    // VARCHAR: its id in the key index's interner for the column (keys_intern.go)
)

// packCol places one key column: width bits at shift of word.
type packCol struct {
	kind  packKind
	width uint
	word  int
	shift uint
}

// keyLayout is a packed key's columns; words is 1 or 2.
type keyLayout struct {
	cols  []packCol
	words int
}

// packWidth is how a column type packs; ok false: it does not.
func packWidth(t arrow.DataType) (packKind, uint, bool) {
	switch t.ID() {
	case arrow.BOOL:
		return packBool, 1, true
	case arrow.INT8:
		return packInt, 8, true
	case arrow.INT16, arrow.UINT8:
		return packInt, 16, true
	case arrow.INT32, arrow.UINT16, arrow.DATE32:
		return packInt, 32, true
	case arrow.INT64, arrow.UINT32, arrow.UINT64, arrow.TIMESTAMP:
		return packInt, 64, true
	case arrow.FLOAT32:
		return packF32, 32, true
	case arrow.FLOAT64:
		return packF64, 64, true
	case arrow.DECIMAL128:
		if t.(*arrow.Decimal128Type).Precision <= 18 {
			return packDec64, 64, true
		}
		return packDec128, 128, true
	case arrow.STRING:
		return packStr, 32, true
	}
	return 0, 0, false
}

// newKeyLayout places the columns in order, each in the first word with
// room (a column never straddles two words); nil when they do not fit.
func newKeyLayout(types []arrow.DataType) *keyLayout {
	var used [2]uint
	l := &keyLayout{}
	for _, t := range types {
		kind, w, ok := packWidth(exec.PlainType(t))
		if !ok {
			return nil
		}
		c := packCol{kind: kind, width: w}
		switch {
		case w == 128:
			if used[0] != 0 || used[1] != 0 || len(types) > 1 {
				return nil
			}
			used[0], used[1] = 64, 64
		case used[0]+w <= 64:
			c.word, c.shift = 0, used[0]
			used[0] += w
		case used[1]+w <= 64:
			c.word, c.shift = 1, used[1]
			used[1] += w
		default:
			return nil
		}
		l.cols = append(l.cols, c)
	}
	l.words = 1
	if used[1] > 0 {
		l.words = 2
	}
	return l
}

// fits reports whether v survives truncation to w bits (two's complement).
func fits(v int64, w uint) bool {
	return w >= 64 || v<<(64-w)>>(64-w) == v
}

func lowBits(v uint64, w uint) uint64 {
	if w >= 64 {
		return v
	}
	return v & (1<<w - 1)
}

// packBatch packs rows 0..n-1 of cols into w0 (and w1 for two words) and
// marks in spill the rows that do not pack; anySpill reports one. The
// words must come in zeroed. interns are the key index's interners of its
// VARCHAR columns, which intern new strings when insert is set.
func (l *keyLayout) packBatch(cols []arrow.Array, n int, w0, w1 []uint64, spill []bool, interns []*internCol, insert bool) (anySpill bool, err error) {
	for ci, c := range l.cols {
		arr := cols[ci]
		dst := w0
		if c.word == 1 {
			dst = w1
		}
		if arr.NullN() > 0 {
			for i := 0; i < n; i++ {
				if arr.IsNull(i) {
					spill[i], anySpill = true, true
				}
			}
		}
		if c.kind == packStr {
			spilled, err := interns[ci].pack(arr, c, n, dst, spill, insert)
			if err != nil {
				return false, err
			}
			anySpill = anySpill || spilled
			continue
		}
		if packColumn(arr, c, n, dst, w1, spill) {
			anySpill = true
		}
	}
	return anySpill, nil
}

// packColumn packs one column (NULL rows pack garbage: they are spilled
// already); it reports rows it spilled.
func packColumn(arr arrow.Array, c packCol, n int, dst, w1 []uint64, spill []bool) bool {
	switch c.kind {
	case packInt:
		switch a := arr.(type) {
		case *array.Int64:
			return packInts(a.Int64Values()[:n], c, dst, spill)
		case *array.Int32:
			return packInts(a.Int32Values()[:n], c, dst, spill)
		case *array.Int16:
			return packInts(a.Int16Values()[:n], c, dst, spill)
		case *array.Int8:
			return packInts(a.Int8Values()[:n], c, dst, spill)
		case *array.Uint8:
			return packInts(a.Uint8Values()[:n], c, dst, spill)
		case *array.Uint16:
			return packInts(a.Uint16Values()[:n], c, dst, spill)
		case *array.Uint32:
			return packInts(a.Uint32Values()[:n], c, dst, spill)
		case *array.Uint64:
			return packInts(a.Uint64Values()[:n], c, dst, spill)
		case *array.Date32:
			return packInts(a.Date32Values()[:n], c, dst, spill)
		case *array.Timestamp:
			return packInts(a.TimestampValues()[:n], c, dst, spill)
		}
	case packBool:
		if a, ok := arr.(*array.Boolean); ok {
			for i := 0; i < n; i++ {
				if a.Value(i) {
					dst[i] |= 1 << c.shift
				}
			}
			return false
		}
	case packF64:
		if a, ok := arr.(*array.Float64); ok {
			for i, f := range a.Float64Values()[:n] {
				dst[i] |= math.Float64bits(normF64(f))
			}
			return false
		}
	case packF32:
		if a, ok := arr.(*array.Float32); ok {
			for i, f := range a.Float32Values()[:n] {
				dst[i] |= uint64(math.Float32bits(normF32(f))) << c.shift
			}
			return false
		}
	case packDec64, packDec128:
		if a, ok := arr.(*array.Decimal128); ok {
			spilled := false
			for i, v := range a.Values()[:n] {
				lo, hi := v.LowBits(), v.HighBits()
				if c.kind == packDec128 {
					dst[i], w1[i] = lo, uint64(hi)
				} else if hi == int64(lo)>>63 {
					dst[i] |= lo
				} else {
					spill[i], spilled = true, true
				}
			}
			return spilled
		}
	}
	// Another array type (a dictionary of numbers, a wider or narrower
	// integer than planned): pack its row-form values.
	spilled := false
	for i := 0; i < n; i++ {
		if arr.IsNull(i) {
			continue
		}
		lo, hi, ok := packValue(exec.Value(arr, i), c)
		if !ok {
			spill[i], spilled = true, true
			continue
		}
		dst[i] |= lo << c.shift
		if c.kind == packDec128 {
			w1[i] = hi
		}
	}
	return spilled
}

type packable interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func packInts[T packable](vals []T, c packCol, dst []uint64, spill []bool) bool {
	if c.width == 64 && c.shift == 0 {
		for i, v := range vals {
			dst[i] = uint64(int64(v))
		}
		return false
	}
	spilled := false
	for i, v := range vals {
		x := int64(v)
		if !fits(x, c.width) {
			spill[i], spilled = true, true
			continue
		}
		dst[i] |= lowBits(uint64(x), c.width) << c.shift
	}
	return spilled
}

// packValue is one row-form value's bits for column c (hi: the second
// word of a 128-bit DECIMAL); ok false: the value does not pack (NULL, or
// out of the column's range) and the key spills.
func packValue(v any, c packCol) (lo, hi uint64, ok bool) {
	var x int64
	switch c.kind {
	case packInt:
		switch t := v.(type) {
		case int64:
			x = t
		case int32:
			x = int64(t)
		case arrow.Date32:
			x = int64(t)
		case arrow.Timestamp:
			x = int64(t)
		default:
			return 0, 0, false
		}
		if !fits(x, c.width) {
			return 0, 0, false
		}
		return lowBits(uint64(x), c.width), 0, true
	case packBool:
		b, isBool := v.(bool)
		if !isBool {
			return 0, 0, false
		}
		if b {
			return 1, 0, true
		}
		return 0, 0, true
	case packF64:
		f, isF := v.(float64)
		return math.Float64bits(normF64(f)), 0, isF
	case packF32:
		f, isF := v.(float32)
		return uint64(math.Float32bits(normF32(f))), 0, isF
	case packDec64, packDec128:
		d, isDec := v.(decimal128.Num)
		if !isDec {
			return 0, 0, false
		}
		lo, h := d.LowBits(), d.HighBits()
		if c.kind == packDec128 {
			return lo, uint64(h), true
		}
		return lo, 0, h == int64(lo)>>63
	}
	return 0, 0, false
}

// packRow packs one row-form key into two words; ok false: it spills.
func (l *keyLayout) packRow(vals []any, interns []*internCol, insert bool) (w0, w1 uint64, ok bool) {
	for ci, c := range l.cols {
		var lo, hi uint64
		fine := false
		if c.kind == packStr {
			if s, isStr := vals[ci].(string); isStr {
				var id int32
				id, fine = interns[ci].id(s, insert)
				lo = uint64(uint32(id))
			}
		} else {
			lo, hi, fine = packValue(vals[ci], c)
		}
		if !fine {
			return 0, 0, false
		}
		if c.kind == packDec128 {
			return lo, hi, true
		}
		if c.word == 0 {
			w0 |= lo << c.shift
		} else {
			w1 |= lo << c.shift
		}
	}
	return w0, w1, true
}
