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

// keyKind selects the hash table layout. A single BIGINT or VARCHAR key is
// by far the common GROUP BY / join shape, and a map keyed by the value
// itself skips encoding; every other shape encodes the key into bytes.
type keyKind int

const (
	keyInt64 keyKind = iota
	keyString
	keyGeneral
)

func chooseKeyKind(types []arrow.DataType) keyKind {
	if len(types) == 1 {
		switch exec.PlainType(types[0]).ID() {
		case arrow.INT64:
			return keyInt64
		case arrow.STRING:
			return keyString
		}
	}
	return keyGeneral
}

// keyIndex maps key values to dense ids 0..n-1. The row path and the
// columnar path use the same table (an operator may see both kinds of
// batch), so both encodings of a key must agree: the general encoding is
// defined on row-form values and the typed array cases reproduce it.
type keyIndex struct {
	kind keyKind
	// nullKeys: a NULL key is a key (GROUP BY) rather than a non-match
	// (equi-join). For several columns, any NULL component decides.
	nullKeys bool
	ints     *int64Table
	strs     map[string]int32
	gen      map[string]int32
	nullID   int32
	n        int32
	buf      []byte
	// arena holds the bytes of the VARCHAR keys the table owns, in blocks
	// (see own): one allocation per block instead of one per key.
	arena []byte

	// The last dictionary seen in a dictionary-encoded VARCHAR key column
	// (retained, so its memory cannot come back as another dictionary) and
	// each entry's id, -1 until looked up.
	dict    arrow.ArrayData
	dictIDs []int32
}

func newKeyIndex(kind keyKind, nullKeys bool) *keyIndex {
	k := &keyIndex{kind: kind, nullKeys: nullKeys, nullID: -1}
	switch kind {
	case keyInt64:
		k.ints = newInt64Table()
	case keyString:
		k.strs = make(map[string]int32)
	default:
		k.gen = make(map[string]int32)
	}
	return k
}

// len is the number of distinct keys.
func (k *keyIndex) len() int { return int(k.n) }

// idsColumnar fills ids[i] for rows 0..n-1 of the key columns: the key's id,
// inserting it when insert is set (onNew(row) is called for the row that
// created an id), or -1 for a missing key or a NULL that is no key.
func (k *keyIndex) idsColumnar(cols []arrow.Array, n int, insert bool, ids []int32, onNew func(row int)) ([]int32, error) {
	ids = ids[:0]
	switch k.kind {
	case keyInt64:
		a, ok := cols[0].(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("key column is %s, expected BIGINT", cols[0].DataType())
		}
		vals := a.Int64Values()
		nulls := a.NullN() > 0
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				ids = append(ids, k.null(insert, onNew, i))
				continue
			}
			v := vals[i]
			id, found := k.ints.get(v)
			if !found {
				id = -1
				if insert {
					id = k.n
					k.n++
					k.ints.put(v, id)
					if onNew != nil {
						onNew(i)
					}
				}
			}
			ids = append(ids, id)
		}
	case keyString:
		if d, ok := cols[0].(*array.Dictionary); ok {
			return k.idsDict(d, n, insert, ids, onNew)
		}
		a, ok := cols[0].(*array.String)
		if !ok {
			return nil, fmt.Errorf("key column is %s, expected VARCHAR", cols[0].DataType())
		}
		nulls := a.NullN() > 0
		for i := 0; i < n; i++ {
			if nulls && a.IsNull(i) {
				ids = append(ids, k.null(insert, onNew, i))
				continue
			}
			// Value aliases Arrow memory: look up without copying, clone
			// only what the map keeps.
			v := a.Value(i)
			id, found := k.strs[v]
			if !found {
				id = k.addStr(v, insert, onNew, i)
			}
			ids = append(ids, id)
		}
	default:
		for _, c := range cols {
			if d, ok := c.(*array.Dictionary); ok {
				if err := checkCodes(d, n); err != nil {
					return nil, err
				}
			}
		}
		for i := 0; i < n; i++ {
			buf := k.buf[:0]
			isNull := false
			for _, c := range cols {
				var null bool
				buf, null = appendKeyArr(buf, c, i)
				isNull = isNull || null
			}
			k.buf = buf
			if isNull && !k.nullKeys {
				ids = append(ids, -1)
				continue
			}
			ids = append(ids, k.lookupGen(buf, insert, onNew, i))
		}
	}
	return ids, nil
}

// idsDict is idsColumnar's VARCHAR case for a dictionary-encoded column:
// the string table is consulted once per dictionary entry a row uses, not
// once per row, and ids are remembered per dictionary across batches (a
// Parquet scan shares one dictionary across a column chunk's batches).
func (k *keyIndex) idsDict(a *array.Dictionary, n int, insert bool, ids []int32, onNew func(row int)) ([]int32, error) {
	vals, ok := a.Dictionary().(*array.String)
	if !ok {
		return nil, fmt.Errorf("key column is %s, expected VARCHAR", a.DataType())
	}
	if d := a.Data().Dictionary(); d != k.dict {
		if k.dict != nil {
			k.dict.Release()
		}
		d.Retain()
		k.dict = d
		if len(k.strs) == 0 && vals.Len() > 8 {
			// Most of a first dictionary's entries become keys: size the
			// table once instead of growing it entry by entry.
			k.strs = make(map[string]int32, vals.Len())
		}
		k.dictIDs = growTo(k.dictIDs[:0], vals.Len())
		for i := range k.dictIDs {
			k.dictIDs[i] = -1
		}
	}
	memo := k.dictIDs
	codes, fast := a.Indices().(*array.Int32)
	var raw []int32
	if fast {
		raw = codes.Int32Values()
	}
	nulls := a.NullN() > 0
	for i := 0; i < n; i++ {
		if nulls && a.IsNull(i) {
			ids = append(ids, k.null(insert, onNew, i))
			continue
		}
		var c int
		if fast {
			c = int(raw[i])
		} else {
			c = a.GetValueIndex(i)
		}
		if uint(c) >= uint(len(memo)) {
			return nil, fmt.Errorf("dictionary code %d out of range (dictionary has %d values)", c, len(memo))
		}
		if id := memo[c]; id >= 0 {
			ids = append(ids, id)
			continue
		}
		if vals.IsNull(c) {
			ids = append(ids, k.null(insert, onNew, i))
			continue
		}
		v := vals.Value(c)
		id, found := k.strs[v]
		if !found {
			if id = k.addStr(v, insert, onNew, i); id < 0 {
				ids = append(ids, -1)
				continue
			}
		}
		memo[c] = id
		ids = append(ids, id)
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

// addStr is a VARCHAR key's miss: it is added (a copy: v may alias Arrow
// memory) when insert is set, else -1.
func (k *keyIndex) addStr(v string, insert bool, onNew func(row int), row int) int32 {
	if !insert {
		return -1
	}
	id := k.n
	k.n++
	k.strs[k.own(v)] = id
	if onNew != nil {
		onNew(row)
	}
	return id
}

// arenaBlock is the size of a key arena block; a longer key gets a block
// of its own.
const arenaBlock = 64 << 10

// own copies v into the table's arena (v may alias Arrow memory). A block
// is never written again where a key was copied, so the strings stay
// valid for the table's life.
func (k *keyIndex) own(v string) string {
	if len(v) == 0 {
		return ""
	}
	if len(v) > cap(k.arena)-len(k.arena) {
		k.arena = make([]byte, 0, max(arenaBlock, len(v)))
	}
	start := len(k.arena)
	k.arena = append(k.arena, v...)
	return unsafe.String(&k.arena[start], len(v))
}

// release lets go of the remembered dictionary.
func (k *keyIndex) release() {
	if k != nil && k.dict != nil {
		k.dict.Release()
		k.dict, k.dictIDs = nil, nil
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

func (k *keyIndex) lookupGen(buf []byte, insert bool, onNew func(int), row int) int32 {
	id, found := k.gen[string(buf)]
	if found {
		return id
	}
	if !insert {
		return -1
	}
	id = k.n
	k.n++
	k.gen[string(buf)] = id
	if onNew != nil {
		onNew(row)
	}
	return id
}

// idRow is idsColumnar for one row-form key; created reports an insert.
func (k *keyIndex) idRow(vals []any, insert bool) (id int32, created bool, err error) {
	before := k.n
	switch k.kind {
	case keyInt64:
		if vals[0] == nil {
			id = k.null(insert, nil, 0)
			return id, k.n > before, nil
		}
		v, ok := vals[0].(int64)
		if !ok {
			return -1, false, fmt.Errorf("key value %v (%T) is not a BIGINT", vals[0], vals[0])
		}
		id, found := k.ints.get(v)
		if found {
			return id, false, nil
		}
		if !insert {
			return -1, false, nil
		}
		k.ints.put(v, k.n)
		k.n++
		return k.n - 1, true, nil
	case keyString:
		if vals[0] == nil {
			id = k.null(insert, nil, 0)
			return id, k.n > before, nil
		}
		v, ok := vals[0].(string)
		if !ok {
			return -1, false, fmt.Errorf("key value %v (%T) is not a VARCHAR", vals[0], vals[0])
		}
		id, found := k.strs[v]
		if found {
			return id, false, nil
		}
		if !insert {
			return -1, false, nil
		}
		k.strs[v] = k.n
		k.n++
		return k.n - 1, true, nil
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
	id = k.lookupGen(buf, insert, nil, 0)
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
