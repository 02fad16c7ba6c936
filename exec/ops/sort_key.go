package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// Normalised sort keys (DuckDB's "normalized keys"): every row's ORDER BY
// values become one fixed-width byte string whose bytes.Compare order is
// the ORDER BY order, so a sort compares memory instead of switching on
// types per comparison, and can radix sort. Per key column: one byte that
// places NULLs (NULLS FIRST/LAST, never inverted), then the value in
// order-preserving bytes, all inverted for DESC.
//
// Strings keep a prefix: equal key bytes then only say "equal up to the
// prefix" when both strings were longer than it (see encodeString), and the
// sort breaks that tie on the full values (tieCompare). rowComparator stays
// the reference order, and the comparator of key types without a
// normalised form (ROW, ARRAY, INTERVAL, UBIGINT).

// normKind is the normalised form of one key column.
type normKind uint8

const (
	normNone    normKind = iota
	normInt64            // BIGINT, TIMESTAMP: big-endian, sign bit flipped
	normInt32            // INT, DATE (and SMALLINT, TINYINT)
	normFloat64          // IEEE bits made order-preserving, NaN above +Inf
	normFloat32          //
	normBool             // one byte
	normDecimal          // DECIMAL128: high word signed, low word unsigned
	normString           // VARCHAR, BINARY: prefix and a length byte
)

// strPrefix is how many bytes of a string its key keeps. One more byte
// holds the length (strPrefix+1 meaning "longer"). 15 makes a string key
// 17 bytes with its NULL byte, and most short strings (codes, phrases,
// names) exact.
const strPrefix = 15

func normKindOf(dt arrow.DataType) normKind {
	switch dt.ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.UINT32:
		return normInt64
	case arrow.INT32, arrow.DATE32, arrow.INT16, arrow.INT8, arrow.UINT16, arrow.UINT8:
		return normInt32
	case arrow.FLOAT64:
		return normFloat64
	case arrow.FLOAT32:
		return normFloat32
	case arrow.BOOL:
		return normBool
	case arrow.DECIMAL128:
		return normDecimal
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY:
		return normString
	case arrow.DICTIONARY:
		switch dt.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY:
			return normString
		}
	}
	return normNone
}

func (k normKind) width() int {
	switch k {
	case normInt64, normFloat64:
		return 8
	case normInt32, normFloat32:
		return 4
	case normBool:
		return 1
	case normDecimal:
		return 16
	case normString:
		return strPrefix + 1
	}
	return 0
}

// normCol is one key column's place in the key.
type normCol struct {
	SortKey
	kind normKind
	off  int // the NULL byte; the value bytes follow it
	// null and valid are the NULL byte of a NULL and of a value.
	null, valid byte
	// flip is XORed into the value bytes: all ones for DESC.
	flip uint64
}

// normKeys encodes the ORDER BY keys of rows into normalised keys.
type normKeys struct {
	cols  []normCol
	width int
	// strs are the indexes (into cols) of the string keys, the only ones
	// whose equal key bytes can hide different values.
	strs []int
}

// newNormKeys lays out the keys of schema's rows; false when a key's type
// has no normalised form.
func newNormKeys(schema *arrow.Schema, keys []SortKey) (*normKeys, bool) {
	nk := &normKeys{}
	for _, k := range keys {
		kind := normKindOf(schema.Field(k.Col).Type)
		if kind == normNone {
			return nil, false
		}
		c := normCol{SortKey: k, kind: kind, off: nk.width, null: 1}
		if k.NullsFirst {
			c.null, c.valid = 0, 1
		}
		if k.Desc {
			c.flip = math.MaxUint64
		}
		if kind == normString {
			nk.strs = append(nk.strs, len(nk.cols))
		}
		nk.cols = append(nk.cols, c)
		nk.width += 1 + kind.width()
	}
	return nk, true
}

// encode writes the keys of the rows listed in rows of cols, the key of
// rows[k] at dst[k*stride:]. It reports whether a string longer than
// strPrefix was written: only then can equal keys belong to different
// values.
func (nk *normKeys) encode(dst []byte, stride int, cols []arrow.Array, rows []int32) (long bool, err error) {
	for _, c := range nk.cols {
		arr := cols[c.Col]
		var l bool
		switch a := arr.(type) {
		case *array.Int64:
			encodeInt64(dst, stride, &c, arr, a.Int64Values(), rows)
		case *array.Timestamp:
			encodeInt64(dst, stride, &c, arr, a.TimestampValues(), rows)
		case *array.Int32:
			encodeInt32(dst, stride, &c, arr, a.Int32Values(), rows)
		case *array.Date32:
			encodeInt32(dst, stride, &c, arr, a.Date32Values(), rows)
		case *array.Float64:
			encodeFloat64(dst, stride, &c, arr, a.Float64Values(), rows)
		case *array.Float32:
			encodeFloat32(dst, stride, &c, arr, a.Float32Values(), rows)
		case *array.String:
			l = encodeStrings(dst, stride, &c, arr, a.ValueOffsets(), valueData(arr), rows)
		case *array.Binary:
			l = encodeStrings(dst, stride, &c, arr, a.ValueOffsets(), valueData(arr), rows)
		default:
			// Booleans, decimals, dictionaries, LARGE strings: value by
			// value (still no boxing).
			l, err = encodeEach(dst, stride, &c, arr, rows)
		}
		if err != nil {
			return false, err
		}
		long = long || l
	}
	return long, nil
}

// identity returns the rows 0..n-1, growing buf, which holds only such
// runs.
func identity(buf []int32, n int) []int32 {
	for i := len(buf); i < n; i++ {
		buf = append(buf, int32(i))
	}
	return buf[:n]
}

// encodeRow writes the key of a row-form row.
func (nk *normKeys) encodeRow(dst []byte, r exec.Row) (long bool, err error) {
	for _, c := range nk.cols {
		v := r[c.Col]
		d := dst[c.off : c.off+1+c.kind.width()]
		if v == nil {
			d[0] = c.null
			clear(d[1:])
			continue
		}
		d[0] = c.valid
		ok := true
		switch c.kind {
		case normInt64:
			switch x := v.(type) {
			case int64:
				putInt64(d[1:], x, c.flip)
			case arrow.Timestamp:
				putInt64(d[1:], int64(x), c.flip)
			default:
				ok = false
			}
		case normInt32:
			switch x := v.(type) {
			case int32:
				putInt32(d[1:], x, c.flip)
			case arrow.Date32:
				putInt32(d[1:], int32(x), c.flip)
			default:
				ok = false
			}
		case normFloat64:
			x, is := v.(float64)
			ok = is
			binary.BigEndian.PutUint64(d[1:], float64Key(x)^c.flip)
		case normFloat32:
			x, is := v.(float32)
			ok = is
			binary.BigEndian.PutUint32(d[1:], float32Key(x)^uint32(c.flip))
		case normBool:
			x, is := v.(bool)
			ok = is
			d[1] = byte(b2i(x)) ^ byte(c.flip)
		case normDecimal:
			x, is := v.(decimal128.Num)
			ok = is
			putDecimal(d[1:], x, c.flip)
		case normString:
			s, is := valueBytes(v)
			ok = is
			if encodeString(d[1:], s, c.flip) {
				long = true
			}
		}
		if !ok {
			return false, fmt.Errorf("sort: a %T in a %s key column", v, c.kindName())
		}
	}
	return long, nil
}

func (c *normCol) kindName() string {
	return [...]string{"?", "BIGINT", "INT", "DOUBLE", "FLOAT", "BOOLEAN", "DECIMAL", "VARCHAR"}[c.kind]
}

// nullBytes writes the NULL byte of every listed row, clears a NULL's
// value bytes (so NULLs tie), and reports whether any row was NULL.
func nullBytes(dst []byte, stride int, c *normCol, arr arrow.Array, rows []int32) bool {
	w := c.kind.width()
	if arr.NullN() == 0 {
		for k, o := 0, c.off; k < len(rows); k, o = k+1, o+stride {
			dst[o] = c.valid
		}
		return false
	}
	for k, o := 0, c.off; k < len(rows); k, o = k+1, o+stride {
		if arr.IsNull(int(rows[k])) {
			dst[o] = c.null
			clear(dst[o+1 : o+1+w])
		} else {
			dst[o] = c.valid
		}
	}
	return true
}

func putInt64(d []byte, x int64, flip uint64) {
	binary.BigEndian.PutUint64(d, uint64(x)^(1<<63)^flip)
}

func putInt32(d []byte, x int32, flip uint64) {
	binary.BigEndian.PutUint32(d, uint32(x)^(1<<31)^uint32(flip))
}

func encodeInt64[T ~int64](dst []byte, stride int, c *normCol, arr arrow.Array, v []T, rows []int32) {
	nulls := nullBytes(dst, stride, c, arr, rows)
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := rows[k]
		if nulls && arr.IsNull(int(i)) {
			continue
		}
		putInt64(dst[o:o+8], int64(v[i]), c.flip)
	}
}

func encodeInt32[T ~int32](dst []byte, stride int, c *normCol, arr arrow.Array, v []T, rows []int32) {
	nulls := nullBytes(dst, stride, c, arr, rows)
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := rows[k]
		if nulls && arr.IsNull(int(i)) {
			continue
		}
		putInt32(dst[o:o+4], int32(v[i]), c.flip)
	}
}

// float64Key orders doubles as cmpFloat does: -0 equals 0, every NaN is
// one value above +Inf. Negative numbers have every bit inverted (a larger
// magnitude is smaller), the others only the sign bit.
func float64Key(f float64) uint64 {
	if f != f {
		return math.MaxUint64 // above +Inf's 0xFFF0...
	}
	if f == 0 {
		f = 0 // -0
	}
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

func float32Key(f float32) uint32 {
	if f != f {
		return math.MaxUint32
	}
	if f == 0 {
		f = 0
	}
	u := math.Float32bits(f)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

func encodeFloat64(dst []byte, stride int, c *normCol, arr arrow.Array, v []float64, rows []int32) {
	nulls := nullBytes(dst, stride, c, arr, rows)
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := rows[k]
		if nulls && arr.IsNull(int(i)) {
			continue
		}
		binary.BigEndian.PutUint64(dst[o:o+8], float64Key(v[i])^c.flip)
	}
}

func encodeFloat32(dst []byte, stride int, c *normCol, arr arrow.Array, v []float32, rows []int32) {
	nulls := nullBytes(dst, stride, c, arr, rows)
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := rows[k]
		if nulls && arr.IsNull(int(i)) {
			continue
		}
		binary.BigEndian.PutUint32(dst[o:o+4], float32Key(v[i])^uint32(c.flip))
	}
}

// putDecimal writes a 128-bit two's complement number: the high word
// signed (sign bit flipped), the low word unsigned.
func putDecimal(d []byte, x decimal128.Num, flip uint64) {
	binary.BigEndian.PutUint64(d, uint64(x.HighBits())^(1<<63)^flip)
	binary.BigEndian.PutUint64(d[8:], x.LowBits()^flip)
}

// encodeString writes a string's prefix, zero padded, and its length
// (strPrefix+1 for a longer one). It is order-preserving: strings that
// differ within the prefix differ at that byte, or a string that ends
// early is a prefix of the other and pads with zeros no byte is below;
// strings equal over the prefix differ in length, which the length byte
// orders, unless both are longer than the prefix. It reports that case's
// condition: the string was longer.
func encodeString(d []byte, s []byte, flip uint64) bool {
	m := min(len(s), strPrefix)
	copy(d, s[:m])
	clear(d[m:strPrefix])
	long := len(s) > strPrefix
	d[strPrefix] = byte(min(len(s), strPrefix+1))
	if flip != 0 {
		for j := range d[:strPrefix+1] {
			d[j] = ^d[j]
		}
	}
	return long
}

func encodeStrings[O int32 | int64](dst []byte, stride int, c *normCol, arr arrow.Array, offs []O, data []byte, rows []int32) bool {
	nulls := nullBytes(dst, stride, c, arr, rows)
	long := false
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := rows[k]
		if nulls && arr.IsNull(int(i)) {
			continue
		}
		if encodeString(dst[o:o+strPrefix+1], data[offs[i]:offs[i+1]], c.flip) {
			long = true
		}
	}
	return long
}

// valueData is a string or binary array's whole data buffer, which its
// ValueOffsets index. Not ValueBytes: that starts at the array's first
// value, so it misreads a slice whose first offset is not 0.
func valueData(arr arrow.Array) []byte {
	if b := arr.Data().Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

// encodeEach is the value-by-value encoder of the other array types.
func encodeEach(dst []byte, stride int, c *normCol, arr arrow.Array, rows []int32) (bool, error) {
	nulls := nullBytes(dst, stride, c, arr, rows)
	long := false
	for k, o := 0, c.off+1; k < len(rows); k, o = k+1, o+stride {
		i := int(rows[k])
		if nulls && arr.IsNull(i) {
			continue
		}
		d := dst[o : o+c.kind.width()]
		switch a := arr.(type) {
		case *array.Boolean:
			d[0] = byte(b2i(a.Value(i))) ^ byte(c.flip)
		case *array.Decimal128:
			putDecimal(d, a.Value(i), c.flip)
		// The small and unsigned integers are INT or BIGINT in row form
		// (exec.Value), and ordered as those.
		case *array.Int16:
			putInt32(d, int32(a.Value(i)), c.flip)
		case *array.Int8:
			putInt32(d, int32(a.Value(i)), c.flip)
		case *array.Uint16:
			putInt32(d, int32(a.Value(i)), c.flip)
		case *array.Uint8:
			putInt32(d, int32(a.Value(i)), c.flip)
		case *array.Uint32:
			putInt64(d, int64(a.Value(i)), c.flip)
		default:
			s, ok := arrayString(arr, i)
			if !ok || c.kind != normString {
				return false, fmt.Errorf("sort: a %s column as a %s key", arr.DataType(), c.kindName())
			}
			if encodeString(d, s, c.flip) {
				long = true
			}
		}
	}
	return long, nil
}

// arrayString is arr[i] of a string-like array, borrowed.
func arrayString(arr arrow.Array, i int) ([]byte, bool) {
	switch a := arr.(type) {
	case *array.String:
		s := a.Value(i)
		return unsafe.Slice(unsafe.StringData(s), len(s)), true
	case *array.LargeString:
		s := a.Value(i)
		return unsafe.Slice(unsafe.StringData(s), len(s)), true
	case *array.Binary:
		return a.Value(i), true
	case *array.Dictionary:
		return arrayString(a.Dictionary(), a.GetValueIndex(i))
	}
	return nil, false
}

// valueBytes is a row-form VARCHAR or BINARY value's bytes, borrowed.
func valueBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return unsafe.Slice(unsafe.StringData(x), len(x)), true
	case []byte:
		return x, true
	}
	return nil, false
}

// compareKeys orders two rows by their keys a and b exactly. Bytes after
// a string that was longer than its prefix say nothing (the strings may
// differ after the prefix), so the keys compare in segments, each ending
// with a string key: equal segments whose string is long compare the full
// strings (str returns row r's value of a column, nil for NULL) before the
// next segment's bytes. pos, when not nil, says where each string key's
// bytes start in the strings (a radix sort's window, radixSorter): the
// rows share what comes before.
func compareKeys[R any](nk *normKeys, a, b []byte, ra, rb R, str func(r R, col int) []byte, pos []int) int {
	start := 0
	for k, j := range nk.strs {
		c := &nk.cols[j]
		end := c.strEnd()
		if r := bytes.Compare(a[start:end], b[start:end]); r != 0 {
			return r
		}
		start = end
		if c.long(a) {
			x, y := str(ra, c.Col), str(rb, c.Col)
			if pos != nil {
				x, y = x[min(pos[k], len(x)):], y[min(pos[k], len(y)):]
			}
			r := bytes.Compare(x, y)
			if c.Desc {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
	}
	return bytes.Compare(a[start:], b[start:])
}

// strEnd is where a string key's bytes end.
func (c *normCol) strEnd() int { return c.off + 1 + strPrefix + 1 }

// long reports whether key holds a string longer than its prefix in c.
func (c *normCol) long(key []byte) bool {
	return key[c.off] == c.valid && key[c.strEnd()-1]^byte(c.flip) == strPrefix+1
}

// exactEnd is how many leading key bytes order rows exactly on their own:
// up to the end of the first string key (the whole key without one).
func (nk *normKeys) exactEnd() int {
	if len(nk.strs) == 0 {
		return nk.width
	}
	return nk.cols[nk.strs[0]].strEnd()
}

// longEndsAt returns which string key (an index into strs) ends at byte
// d of key holding a string longer than its window, or -1: keys equal up
// to d are then not ordered by their further bytes.
func (nk *normKeys) longEndsAt(key []byte, d int) int {
	for k, j := range nk.strs {
		if c := &nk.cols[j]; c.strEnd() == d {
			if c.long(key) {
				return k
			}
			return -1
		}
	}
	return -1
}

// encodeWindow writes the window of s that starts at pos in place of a
// string key's bytes: the same encoding as of a whole string, applied to
// what follows pos. Among strings that share their first pos bytes it
// orders as the strings do, so a sort goes on window by window.
func (c *normCol) encodeWindow(key []byte, s []byte, pos int) {
	encodeString(key[c.off+1:c.strEnd()], s[min(pos, len(s)):], c.flip)
}
