package ops

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// minMaxCat is how MIN / MAX keep their state: integers, timestamps, dates,
// times and booleans as int64, floats as float64, then strings and decimals.
type minMaxCat int

const (
	mmInt minMaxCat = iota
	mmFloat
	mmString
	mmDecimal
)

// minMaxAcc is MIN(x) or MAX(x); the result has the input's type.
type minMaxAcc struct {
	max    bool
	typ    arrow.DataType
	cat    minMaxCat
	set    []bool // group has seen a non-NULL input
	ints   []int64
	floats []float64
	strs   []string
	decs   []decimal128.Num
	dict   minMaxDict // dictionary-encoded input (agg_minmax_dict.go)
}

func newMinMaxAcc(isMax bool, typ arrow.DataType) (*minMaxAcc, error) {
	m := &minMaxAcc{max: isMax, typ: typ}
	switch typ.ID() {
	case arrow.INT32, arrow.INT64, arrow.TIMESTAMP, arrow.DATE32, arrow.TIME32, arrow.TIME64, arrow.BOOL:
		m.cat = mmInt
	case arrow.FLOAT32, arrow.FLOAT64:
		m.cat = mmFloat
	case arrow.STRING:
		m.cat = mmString
	case arrow.DECIMAL128:
		m.cat = mmDecimal
	default:
		return nil, fmt.Errorf("MIN/MAX over %s is not supported", typ)
	}
	return m, nil
}

func (m *minMaxAcc) bind(in arrow.DataType) error {
	if !arrow.TypeEqual(in, m.typ) {
		return fmt.Errorf("input type %s differs from the result type %s", in, m.typ)
	}
	return nil
}

func (m *minMaxAcc) grow(n int) {
	m.set = growTo(m.set, n)
	switch m.cat {
	case mmInt:
		m.ints = growTo(m.ints, n)
	case mmFloat:
		m.floats = growTo(m.floats, n)
	case mmString:
		m.strs = growTo(m.strs, n)
	default:
		m.decs = growTo(m.decs, n)
	}
}

// better reports whether c should replace the current value (cmp is c
// compared to it).
func (m *minMaxAcc) better(cmp int) bool {
	if m.max {
		return cmp > 0
	}
	return cmp < 0
}

func (m *minMaxAcc) putInt(g int32, v int64) {
	if !m.set[g] || m.better(cmpOrdered(v, m.ints[g])) {
		m.ints[g] = v
		m.set[g] = true
	}
}

func (m *minMaxAcc) putFloat(g int32, v float64) {
	if !m.set[g] || m.better(cmpFloat(v, m.floats[g])) {
		m.floats[g] = v
		m.set[g] = true
	}
}

// putString keeps a copy: v may alias Arrow memory.
func (m *minMaxAcc) putString(g int32, v string) {
	if !m.set[g] || m.better(strings.Compare(v, m.strs[g])) {
		m.strs[g] = strings.Clone(v)
		m.set[g] = true
	}
}

func (m *minMaxAcc) putDec(g int32, v decimal128.Num) {
	if !m.set[g] || m.better(v.Cmp(m.decs[g])) {
		m.decs[g] = v
		m.set[g] = true
	}
}

// minMaxStrings updates the groups from a string column. It reads the
// values straight from the offsets (String.Value per row showed in the
// full-scan profile) and rejects most values on their first byte, so the
// full comparison runs only on ties there; a kept value is cloned, since
// it aliases the batch.
func (m *minMaxAcc) minMaxStrings(a *array.String, ids []int32, nulls bool) {
	offs := a.ValueOffsets() // absolute positions in the data buffer
	var data []byte
	if b := a.Data().Buffers()[2]; b != nil {
		data = b.Bytes() // not ValueBytes: it starts at the slice's first value
	}
	for i, g := range ids {
		if g < 0 || (nulls && a.IsNull(i)) {
			continue
		}
		v := data[offs[i]:offs[i+1]]
		if m.set[g] {
			cur := m.strs[g]
			if len(v) > 0 && len(cur) > 0 && v[0] != cur[0] {
				if (v[0] > cur[0]) != m.max {
					continue
				}
			} else if !m.better(bytes.Compare(v, unsafe.Slice(unsafe.StringData(cur), len(cur)))) {
				continue
			}
		}
		m.strs[g] = string(v)
		m.set[g] = true
	}
}

func minMaxInts[T int32 | int64](m *minMaxAcc, vals []T, arr arrow.Array, ids []int32) {
	nulls := arr.NullN() > 0
	for i, g := range ids {
		if g >= 0 && (!nulls || arr.IsValid(i)) {
			m.putInt(g, int64(vals[i]))
		}
	}
}

func (m *minMaxAcc) updateColumnar(arr arrow.Array, ids []int32) error {
	if a, ok := arr.(*array.Dictionary); ok && m.cat == mmString {
		return m.minMaxDictionary(a, ids)
	}
	if !arrow.TypeEqual(arr.DataType(), m.typ) {
		return fmt.Errorf("input column is %s, expected %s", arr.DataType(), m.typ)
	}
	nulls := arr.NullN() > 0
	d := arr.Data()
	switch a := arr.(type) {
	case *array.Int64:
		minMaxInts(m, a.Int64Values(), arr, ids)
	case *array.Timestamp:
		minMaxInts(m, arrow.GetValues[int64](d, 1), arr, ids)
	case *array.Int32:
		minMaxInts(m, a.Int32Values(), arr, ids)
	case *array.Date32:
		minMaxInts(m, arrow.GetValues[int32](d, 1), arr, ids)
	case *array.Time64:
		minMaxInts(m, arrow.GetValues[int64](d, 1), arr, ids)
	case *array.Time32:
		minMaxInts(m, arrow.GetValues[int32](d, 1), arr, ids)
	case *array.Boolean:
		for i, g := range ids {
			if g >= 0 && (!nulls || arr.IsValid(i)) {
				m.putInt(g, b2i(a.Value(i)))
			}
		}
	case *array.Float64:
		for i, g := range ids {
			if g >= 0 && (!nulls || arr.IsValid(i)) {
				m.putFloat(g, a.Value(i))
			}
		}
	case *array.Float32:
		for i, g := range ids {
			if g >= 0 && (!nulls || arr.IsValid(i)) {
				m.putFloat(g, float64(a.Value(i)))
			}
		}
	case *array.String:
		m.minMaxStrings(a, ids, nulls)
	case *array.Decimal128:
		for i, g := range ids {
			if g >= 0 && (!nulls || arr.IsValid(i)) {
				m.putDec(g, a.Value(i))
			}
		}
	default:
		return fmt.Errorf("MIN/MAX over %s is not supported", arr.DataType())
	}
	return nil
}

func (m *minMaxAcc) updateRow(v any, g int32) error {
	switch x := v.(type) {
	case nil:
	case int64:
		m.putInt(g, x)
	case int32:
		m.putInt(g, int64(x))
	case arrow.Timestamp:
		m.putInt(g, int64(x))
	case arrow.Date32:
		m.putInt(g, int64(x))
	case arrow.Time64:
		m.putInt(g, int64(x))
	case bool:
		m.putInt(g, b2i(x))
	case float64:
		m.putFloat(g, x)
	case float32:
		m.putFloat(g, float64(x))
	case string:
		m.putString(g, x)
	case decimal128.Num:
		m.putDec(g, x)
	default:
		return fmt.Errorf("MIN/MAX over %v (%T) is not supported", v, v)
	}
	return nil
}

// value converts the state back to the row-form Go type of m.typ.
func (m *minMaxAcc) value(g int) any {
	if !m.set[g] {
		return nil
	}
	switch m.cat {
	case mmFloat:
		if m.typ.ID() == arrow.FLOAT32 {
			return float32(m.floats[g])
		}
		return m.floats[g]
	case mmString:
		return m.strs[g]
	case mmDecimal:
		return m.decs[g]
	}
	v := m.ints[g]
	switch m.typ.ID() {
	case arrow.INT32:
		return int32(v)
	case arrow.TIMESTAMP:
		return arrow.Timestamp(v)
	case arrow.DATE32:
		return arrow.Date32(v)
	case arrow.TIME32, arrow.TIME64:
		return arrow.Time64(v)
	case arrow.BOOL:
		return v != 0
	}
	return v
}

func (m *minMaxAcc) build(mem memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewBuilder(mem, m.typ)
	defer b.Release()
	b.Reserve(n)
	// The common types without boxing (a final aggregate builds a value
	// per group, often as many as it had rows).
	set := m.set[:n]
	switch bb := b.(type) {
	case *array.Int64Builder:
		buildMinMax(bb, set, m.ints, func(v int64) int64 { return v })
		return b.NewArray(), nil
	case *array.Int32Builder:
		buildMinMax(bb, set, m.ints, func(v int64) int32 { return int32(v) })
		return b.NewArray(), nil
	case *array.Date32Builder:
		buildMinMax(bb, set, m.ints, func(v int64) arrow.Date32 { return arrow.Date32(v) })
		return b.NewArray(), nil
	case *array.TimestampBuilder:
		buildMinMax(bb, set, m.ints, func(v int64) arrow.Timestamp { return arrow.Timestamp(v) })
		return b.NewArray(), nil
	case *array.Float64Builder:
		buildMinMax(bb, set, m.floats, func(v float64) float64 { return v })
		return b.NewArray(), nil
	case *array.Decimal128Builder:
		buildMinMax(bb, set, m.decs, func(v decimal128.Num) decimal128.Num { return v })
		return b.NewArray(), nil
	case *array.StringBuilder:
		for g, ok := range set {
			if ok {
				bb.Append(m.strs[g])
			} else {
				bb.AppendNull()
			}
		}
		return b.NewArray(), nil
	}
	for g := 0; g < n; g++ {
		if err := exec.AppendValue(b, m.value(g)); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// buildMinMax appends each group's state, converted to the column's type,
// or NULL for a group that saw no value; b has room for every group.
func buildMinMax[S, T any](b typedBuilder[T], set []bool, state []S, conv func(S) T) {
	for g, ok := range set {
		if ok {
			b.UnsafeAppend(conv(state[g]))
		} else {
			b.UnsafeAppendBoolToBitmap(false)
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T int64 | int32 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders NaN above every number (as PostgreSQL does), so MIN/MAX
// and ORDER BY agree on it.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case a != a && b != b:
		return 0
	case a != a:
		return 1
	}
	return -1
}
