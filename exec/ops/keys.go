package ops

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/clink-sql/clink/exec"
)

// keyKind selects the hash table layout: a key of fixed-width columns that
// packs into one or two 64-bit words (see keyLayout) is looked up as
// integers, a single VARCHAR by its bytes, and every other shape by its
// general byte encoding (appendKeyValue / keyEncoder).
type keyKind struct {
	shape  keyShape
	layout *keyLayout // shapePacked
}

type keyShape uint8

const (
	shapeGeneral keyShape = iota
	shapeString
	shapePacked
)

var (
	keyString  = keyKind{shape: shapeString}
	keyGeneral = keyKind{shape: shapeGeneral}
)

func chooseKeyKind(types []arrow.DataType) keyKind {
	if len(types) == 1 && exec.PlainType(types[0]).ID() == arrow.STRING {
		return keyString
	}
	if l := newKeyLayout(types); l != nil {
		return keyKind{shape: shapePacked, layout: l}
	}
	return keyGeneral
}

// keyIndex maps key values to dense ids 0..n-1. The row path and the
// columnar path use the same table (an operator may see both kinds of
// batch), so both encodings of a key must agree: the general encoding is
// defined on row-form values and the typed array cases reproduce it, and
// a packed key packs the same bits from a value as from its array.
type keyIndex struct {
	kind keyKind
	// nullKeys: a NULL key is a key (GROUP BY) rather than a non-match
	// (equi-join). For several columns, any NULL component decides.
	nullKeys bool
	ints     *int64Table // shapePacked, one word
	pairs    *pairTable  // shapePacked, two words
	// gen holds the general encodings: every key of shapeGeneral, and the
	// keys of shapePacked that spill. strs holds shapeString's keys, as
	// their bytes.
	gen    *bytesTable
	strs   *bytesTable
	nullID int32 // shapeString's NULL key
	n      int32
	buf    []byte

	// Per-batch scratch of the columnar paths.
	enc    keyEncoder
	w0, w1 []uint64
	spill  []bool

	// interns are shapePacked's interners of its VARCHAR columns (nil
	// entries for the others).
	interns []*internCol

	// dict memoises shapeString's ids per entry of a dictionary-encoded
	// key column.
	dict dictMemo
}

func newKeyIndex(kind keyKind, nullKeys bool) *keyIndex {
	k := &keyIndex{kind: kind, nullKeys: nullKeys, nullID: -1}
	switch kind.shape {
	case shapePacked:
		if kind.layout.words == 1 {
			k.ints = newInt64Table()
		} else {
			k.pairs = newPairTable()
		}
		k.interns = newInterners(kind.layout)
	case shapeString:
		k.strs = newBytesTable()
	}
	return k
}

// len is the number of distinct keys.
func (k *keyIndex) len() int { return int(k.n) }

// idsColumnar fills ids[i] for rows 0..n-1 of the key columns: the key's id,
// inserting it when insert is set (onNew(row) is called for the row that
// created an id), or -1 for a missing key or a NULL that is no key.
func (k *keyIndex) idsColumnar(cols []arrow.Array, n int, insert bool, ids []int32, onNew func(row int)) ([]int32, error) {
	ids = growTo(ids[:0], n)[:n]
	for _, c := range cols {
		if c.Len() < n {
			return nil, fmt.Errorf("key column has %d rows, want %d", c.Len(), n)
		}
	}
	if k.kind.shape == shapeString {
		if d, ok := cols[0].(*array.Dictionary); ok {
			return k.idsDict(d, n, insert, ids, onNew)
		}
	} else {
		for i, c := range cols {
			if k.interns != nil && k.interns[i] != nil {
				continue // the interner checks its codes
			}
			if d, ok := c.(*array.Dictionary); ok {
				if err := checkCodes(d, n); err != nil {
					return nil, err
				}
			}
		}
	}
	switch k.kind.shape {
	case shapePacked:
		if err := k.idsPacked(cols, n, insert, ids, onNew); err != nil {
			return nil, err
		}
	case shapeString:
		a, ok := cols[0].(*array.String)
		if !ok {
			return nil, fmt.Errorf("key column is %s, expected VARCHAR", cols[0].DataType())
		}
		nulls := a.NullN() > 0
		t := k.strs
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				ids[i] = k.null(insert, onNew, i)
				continue
			}
			// Value aliases Arrow memory: the table copies what it keeps.
			ids[i] = k.lookup(t, a.Value(i), insert, onNew, i)
		}
	default:
		anyNull := k.enc.encode(cols, n)
		for i := 0; i < n; i++ {
			if anyNull && k.enc.nulls[i] && !k.nullKeys {
				ids[i] = -1
				continue
			}
			ids[i] = k.lookupGen(k.enc.row(i), insert, onNew, i)
		}
	}
	return ids, nil
}

// idsPacked is idsColumnar for a packed key: the batch's keys are packed
// column by column, then looked up as words.
func (k *keyIndex) idsPacked(cols []arrow.Array, n int, insert bool, ids []int32, onNew func(row int)) error {
	l := k.kind.layout
	k.spill = growTo(k.spill[:0], n)[:n]
	clear(k.spill)
	var w0, w1 []uint64
	if a, ok := cols[0].(*array.Int64); ok && len(l.cols) == 1 {
		// One BIGINT: its values are the words.
		vals := a.Int64Values()[:n]
		w0 = unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(vals))), n)
		if a.NullN() > 0 {
			for i := range n {
				k.spill[i] = a.IsNull(i)
			}
		}
	} else {
		k.w0 = growTo(k.w0[:0], n)[:n]
		clear(k.w0)
		w0 = k.w0
		if l.words == 2 {
			k.w1 = growTo(k.w1[:0], n)[:n]
			clear(k.w1)
			w1 = k.w1
		}
		if _, err := l.packBatch(cols, n, w0, w1, k.spill, k.interns, insert); err != nil {
			return err
		}
	}
	spill := k.spill
	if l.words == 1 {
		t := k.ints
		for i, w := range w0 {
			if spill[i] {
				ids[i] = k.spilled(cols, i, insert, onNew)
				continue
			}
			if !insert {
				ids[i], _ = t.get(int64(w))
				continue
			}
			id, isNew := t.findOrInsert(int64(w), k.n)
			if isNew {
				k.n++
				if onNew != nil {
					onNew(i)
				}
			}
			ids[i] = id
		}
		return nil
	}
	t := k.pairs
	for i, w := range w0 {
		if spill[i] {
			ids[i] = k.spilled(cols, i, insert, onNew)
			continue
		}
		if !insert {
			ids[i], _ = t.get(w, w1[i])
			continue
		}
		id, isNew := t.findOrInsert(w, w1[i], k.n)
		if isNew {
			k.n++
			if onNew != nil {
				onNew(i)
			}
		}
		ids[i] = id
	}
	return nil
}

// spilled looks up row i of a packed key that did not pack by its general
// encoding.
func (k *keyIndex) spilled(cols []arrow.Array, i int, insert bool, onNew func(int)) int32 {
	buf := k.buf[:0]
	isNull := false
	for _, c := range cols {
		var null bool
		buf, null = appendKeyArr(buf, c, i)
		isNull = isNull || null
	}
	k.buf = buf
	if isNull && !k.nullKeys {
		return -1
	}
	return k.lookupGen(unsafe.String(unsafe.SliceData(buf), len(buf)), insert, onNew, i)
}

// lookup finds key v in t, adding it when insert is set.
func (k *keyIndex) lookup(t *bytesTable, v string, insert bool, onNew func(int), row int) int32 {
	h := t.hash(v)
	if id := t.find(v, h); id >= 0 || !insert {
		return id
	}
	id := k.n
	k.n++
	t.insert(v, h, id)
	if onNew != nil {
		onNew(row)
	}
	return id
}

func (k *keyIndex) lookupGen(v string, insert bool, onNew func(int), row int) int32 {
	if k.gen == nil {
		k.gen = newBytesTable()
	}
	return k.lookup(k.gen, v, insert, onNew, row)
}

// idsDict is idsColumnar's VARCHAR case for a dictionary-encoded column:
// the string table is consulted once per dictionary entry a row uses, not
// once per row, and ids are remembered per dictionary across batches (a
// Parquet scan shares one dictionary across a column chunk's batches).
func (k *keyIndex) idsDict(a *array.Dictionary, n int, insert bool, ids []int32, onNew func(row int)) ([]int32, error) {
	vals, memo, err := k.dict.of(a)
	if err != nil {
		return nil, err
	}
	codes := codesOf(a)
	nulls := a.NullN() > 0
	for i := 0; i < n; i++ {
		if nulls && a.IsNull(i) {
			ids[i] = k.null(insert, onNew, i)
			continue
		}
		c := codes.at(i)
		if uint(c) >= uint(len(memo)) {
			return nil, fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", c, len(memo))
		}
		if id := memo[c]; id >= 0 {
			ids[i] = id
			continue
		}
		if vals.IsNull(c) {
			ids[i] = k.null(insert, onNew, i)
			continue
		}
		id := k.lookup(k.strs, vals.Value(c), insert, onNew, i)
		if id >= 0 {
			memo[c] = id
		}
		ids[i] = id
	}
	return ids, nil
}

// checkCodes reports a code of rows 0..n-1 of a that is past its
// dictionary: appendKeyArr would read past the dictionary's values (the
// buffers' padding) into a wrong key instead.
func checkCodes(a *array.Dictionary, n int) error {
	dictLen := a.Dictionary().Len()
	for i := 0; i < n; i++ {
		if a.IsValid(i) {
			if c := a.GetValueIndex(i); c < 0 || c >= dictLen {
				return fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", c, dictLen)
			}
		}
	}
	return nil
}

// release lets go of the remembered dictionary.
func (k *keyIndex) release() {
	if k == nil {
		return
	}
	k.dict.release()
	for _, ic := range k.interns {
		if ic != nil {
			ic.release()
		}
	}
}

func (k *keyIndex) null(insert bool, onNew func(int), row int) int32 {
	if !k.nullKeys {
		return -1
	}
	if k.nullID < 0 && insert {
		k.nullID = k.n
		k.n++
		if onNew != nil {
			onNew(row)
		}
	}
	return k.nullID
}

// idRow is idsColumnar for one row-form key; created reports an insert.
func (k *keyIndex) idRow(vals []any, insert bool) (id int32, created bool, err error) {
	before := k.n
	switch k.kind.shape {
	case shapeString:
		if vals[0] == nil {
			id = k.null(insert, nil, 0)
			return id, k.n > before, nil
		}
		v, ok := vals[0].(string)
		if !ok {
			return -1, false, fmt.Errorf("key value %v (%T) is not a VARCHAR", vals[0], vals[0])
		}
		id = k.lookup(k.strs, v, insert, nil, 0)
		return id, k.n > before, nil
	case shapePacked:
		if w0, w1, ok := k.kind.layout.packRow(vals, k.interns, insert); ok {
			if k.ints != nil {
				if !insert {
					id, _ = k.ints.get(int64(w0))
					return id, false, nil
				}
				id, created = k.ints.findOrInsert(int64(w0), k.n)
			} else {
				if !insert {
					id, _ = k.pairs.get(w0, w1)
					return id, false, nil
				}
				id, created = k.pairs.findOrInsert(w0, w1, k.n)
			}
			if created {
				k.n++
			}
			return id, created, nil
		}
	}
	buf := k.buf[:0]
	isNull := false
	for _, v := range vals {
		buf = appendKeyValue(buf, v)
		isNull = isNull || v == nil
	}
	k.buf = buf
	if isNull && !k.nullKeys {
		return -1, false, nil
	}
	id = k.lookupGen(unsafe.String(unsafe.SliceData(buf), len(buf)), insert, nil, 0)
	return id, k.n > before, nil
}

// Key encoding tags: one per row-form Go type (see exec.Row), so values of
// different types never collide.
const (
	tagNull byte = iota
	tagBool
	tagInt32
	tagInt64
	tagFloat32
	tagFloat64
	tagDecimal
	tagString
	tagBytes
	tagTimestamp
	tagDate32
	tagTime
	tagInterval
	tagOther
)

// appendKeyValue encodes one row-form value. Strings carry their length so
// ("ab","c") and ("a","bc") differ. Values that SQL calls equal encode
// equally: -0 as 0, every NaN as one, and an INTERVAL by its normalised
// key (exec.IntervalKey: '1 month', '30 days' and '720 hours' are one
// group, one DISTINCT value, one join key, as in PostgreSQL).
func appendKeyValue(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, tagNull)
	case bool:
		if x {
			return append(buf, tagBool, 1)
		}
		return append(buf, tagBool, 0)
	case int32:
		return binary.LittleEndian.AppendUint32(append(buf, tagInt32), uint32(x))
	case int64:
		return binary.LittleEndian.AppendUint64(append(buf, tagInt64), uint64(x))
	case float32:
		return binary.LittleEndian.AppendUint32(append(buf, tagFloat32), math.Float32bits(normF32(x)))
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(normF64(x)))
	case decimal128.Num:
		buf = binary.LittleEndian.AppendUint64(append(buf, tagDecimal), x.LowBits())
		return binary.LittleEndian.AppendUint64(buf, uint64(x.HighBits()))
	case string:
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(x)))
		return append(buf, x...)
	case []byte:
		buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(x)))
		return append(buf, x...)
	case arrow.Timestamp:
		return binary.LittleEndian.AppendUint64(append(buf, tagTimestamp), uint64(x))
	case arrow.Date32:
		return binary.LittleEndian.AppendUint32(append(buf, tagDate32), uint32(x))
	case arrow.Time64:
		return binary.LittleEndian.AppendUint64(append(buf, tagTime), uint64(x))
	case arrow.MonthDayNanoInterval:
		return appendIntervalKey(buf, x)
	default:
		s := fmt.Sprintf("%v", x)
		buf = binary.AppendUvarint(append(buf, tagOther), uint64(len(s)))
		return append(buf, s...)
	}
}

// appendKeyArr encodes arr[i] exactly as appendKeyValue(exec.Value(arr, i)),
// without boxing for the common types.
func appendKeyArr(buf []byte, arr arrow.Array, i int) ([]byte, bool) {
	if arr.IsNull(i) {
		return append(buf, tagNull), true
	}
	switch a := arr.(type) {
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(append(buf, tagInt64), uint64(a.Value(i))), false
	case *array.Int32:
		return binary.LittleEndian.AppendUint32(append(buf, tagInt32), uint32(a.Value(i))), false
	case *array.String:
		s := a.Value(i)
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(s)))
		return append(buf, s...), false
	case *array.Dictionary:
		if vals, ok := a.Dictionary().(*array.String); ok {
			j := a.GetValueIndex(i)
			if vals.IsNull(j) {
				return append(buf, tagNull), true
			}
			s := vals.Value(j)
			buf = binary.AppendUvarint(append(buf, tagString), uint64(len(s)))
			return append(buf, s...), false
		}
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(normF64(a.Value(i)))), false
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(append(buf, tagTimestamp), uint64(a.Value(i))), false
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(append(buf, tagDate32), uint32(a.Value(i))), false
	case *array.Time64:
		return binary.LittleEndian.AppendUint64(append(buf, tagTime), uint64(a.Value(i))), false
	case *array.Time32:
		return binary.LittleEndian.AppendUint64(append(buf, tagTime), uint64(int64(a.Value(i)))), false
	case *array.MonthDayNanoInterval:
		return appendIntervalKey(buf, a.Value(i)), false
	}
	return appendKeyValue(buf, exec.Value(arr, i)), false
}

// appendIntervalKey encodes an interval by its normalised key.
func appendIntervalKey(buf []byte, v arrow.MonthDayNanoInterval) []byte {
	days, rem := exec.IntervalKey(v)
	buf = binary.LittleEndian.AppendUint64(append(buf, tagInterval), uint64(days))
	return binary.LittleEndian.AppendUint64(buf, uint64(rem))
}

// normF64 makes -0 equal 0 and every NaN one NaN, so equal SQL values
// encode equally.
func normF64(f float64) float64 {
	if f == 0 {
		return 0
	}
	if f != f {
		return math.NaN()
	}
	return f
}

func normF32(f float32) float32 {
	if f == 0 {
		return 0
	}
	if f != f {
		return float32(math.NaN())
	}
	return f
}
