package parquet

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clink-sql/clink/connectors"
)

// Row-group skipping. A group is dropped only when its column chunk
// statistics prove that no row can satisfy one of the conjuncts; any doubt
// (no statistics, a NaN bound, a value of an unexpected Go type, INT96)
// keeps the group. The planner evaluates the full predicate above the scan,
// so keeping a group is always correct.

// chunkStats are one column chunk's statistics in row form (exec.Row types
// of the column's Arrow type).
type chunkStats struct {
	min, max  any
	hasMinMax bool
	allNull   bool // every value is null (rows > 0)
	noNull    bool // known to hold no null
}

// groupMatches reports whether row group rg of f may hold a row passing
// every filter.
func groupMatches(f *fileInfo, rg *format.RowGroup, schema *arrow.Schema, filters []connectors.ColumnFilter) bool {
	for _, flt := range filters {
		if flt.Column < 0 || flt.Column >= len(f.cols) {
			continue
		}
		b := &f.cols[flt.Column]
		if b.leaf >= len(rg.Columns) {
			continue
		}
		st := readStats(b, &rg.Columns[b.leaf].MetaData, rg.NumRows, schema.Field(flt.Column).Type)
		if !mayMatch(st, flt) {
			return false
		}
	}
	return true
}

func readStats(b *binding, md *format.ColumnMetaData, rows int64, typ arrow.DataType) chunkStats {
	return statsOf(b, &md.Statistics, rows, typ)
}

// statsOf reads statistics s of rows values (a column chunk's or a page's).
func statsOf(b *binding, s *format.Statistics, rows int64, typ arrow.DataType) chunkStats {
	var st chunkStats
	// NullCount is not optional in parquet-go's struct (absent reads as 0),
	// so a zero is only trusted from writers that also wrote min_value /
	// max_value (every modern writer writes all three). A non-zero count
	// equal to the rows cannot come from an absent field.
	st.allNull = rows > 0 && s.NullCount == rows
	st.noNull = b.maxDef == 0 || (s.NullCount == 0 && (s.MinValue != nil || s.MaxValue != nil))
	minB, maxB := s.MinValue, s.MaxValue
	if minB == nil || maxB == nil {
		// Legacy min/max were written with signed comparison: right for
		// signed integers and floats only.
		if !legacyOrderOK(b.conv) {
			return st
		}
		minB, maxB = s.Min, s.Max
		if minB == nil || maxB == nil {
			return st
		}
	}
	lo, ok1 := statValue(b, minB, typ)
	hi, ok2 := statValue(b, maxB, typ)
	if ok1 && ok2 {
		st.min, st.max, st.hasMinMax = lo, hi, true
	}
	return st
}

func legacyOrderOK(c conv) bool {
	switch c {
	case convInt32, convInt64, convInt32ToInt64, convFloat32, convFloat64, convFloat32To64,
		convDecInt32, convDecInt64:
		return true
	}
	return false
}

// statValue decodes a plain-encoded statistic into the row-form value the
// scan would produce for it.
func statValue(b *binding, raw []byte, typ arrow.DataType) (any, bool) {
	le := binary.LittleEndian
	switch b.conv {
	case convBool:
		if len(raw) < 1 {
			return nil, false
		}
		return raw[0] != 0, true
	case convInt32:
		if len(raw) != 4 {
			return nil, false
		}
		v := int32(le.Uint32(raw))
		switch typ.ID() {
		case arrow.DATE32:
			return arrow.Date32(v), true
		case arrow.TIME32:
			return arrow.Time64(v), true
		}
		return v, true
	case convInt32ToInt64:
		if len(raw) != 4 {
			return nil, false
		}
		return int64(int32(le.Uint32(raw))), true
	case convUint32ToInt64:
		if len(raw) != 4 {
			return nil, false
		}
		return int64(le.Uint32(raw)), true
	case convInt64:
		if len(raw) != 8 {
			return nil, false
		}
		v := int64(le.Uint64(raw))
		switch typ.ID() {
		case arrow.TIMESTAMP:
			return arrow.Timestamp(scaleTS(v, b.mul, b.div)), true
		case arrow.TIME64:
			return arrow.Time64(v), true
		}
		return v, true
	case convFloat32:
		if len(raw) != 4 {
			return nil, false
		}
		v := math.Float32frombits(le.Uint32(raw))
		return v, !math.IsNaN(float64(v))
	case convFloat32To64:
		if len(raw) != 4 {
			return nil, false
		}
		v := float64(math.Float32frombits(le.Uint32(raw)))
		return v, !math.IsNaN(v)
	case convFloat64:
		if len(raw) != 8 {
			return nil, false
		}
		v := math.Float64frombits(le.Uint64(raw))
		return v, !math.IsNaN(v)
	case convDecInt32:
		if len(raw) != 4 {
			return nil, false
		}
		return decimal128.FromI64(int64(int32(le.Uint32(raw)))), true
	case convDecInt64:
		if len(raw) != 8 {
			return nil, false
		}
		return decimal128.FromI64(int64(le.Uint64(raw))), true
	case convDecFixed, convDecBytes:
		n, ok := decFromBE(raw)
		return n, ok
	case convBytes:
		if typ.ID() == arrow.STRING {
			return string(raw), true
		}
		return raw, true
	case convFixedBytes:
		return raw, true
	}
	return nil, false // INT96: no defined order
}

func mayMatch(st chunkStats, f connectors.ColumnFilter) bool {
	switch f.Op {
	case "IS NULL":
		return !st.noNull
	case "IS NOT NULL":
		return !st.allNull
	case "=", "<", "<=", ">", ">=", "IN", "LIKE":
	default:
		return true
	}
	if st.allNull {
		return false // a comparison with NULL is never true
	}
	if !st.hasMinMax {
		return true
	}
	switch f.Op {
	case "IN":
		for _, v := range f.Values {
			if mayMatch(st, connectors.ColumnFilter{Column: f.Column, Op: "=", Value: v}) {
				return true
			}
		}
		return false
	case "LIKE":
		// Every match starts with the prefix p: it lies in [p, the first
		// string after all those starting with p).
		p, ok1 := f.Value.(string)
		lo, ok2 := st.min.(string)
		hi, ok3 := st.max.(string)
		if !ok1 || !ok2 || !ok3 {
			return true
		}
		return hi >= p && (lo <= p || strings.HasPrefix(lo, p))
	}
	if f.Value == nil {
		return true
	}
	cmpMin, ok1 := compare(f.Value, st.min)
	cmpMax, ok2 := compare(f.Value, st.max)
	if !ok1 || !ok2 {
		return true
	}
	switch f.Op {
	case "=":
		return cmpMin >= 0 && cmpMax <= 0
	case "<":
		return cmpMin > 0 // some value < v needs min < v
	case "<=":
		return cmpMin >= 0
	case ">":
		return cmpMax < 0 // needs max > v
	case ">=":
		return cmpMax <= 0
	}
	return true
}

// compare orders two row-form values of the same Go type. ok is false when
// they are not comparable (different types, NaN).
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case int32:
		y, ok := b.(int32)
		return cmpOrdered(x, y), ok
	case int64:
		y, ok := b.(int64)
		return cmpOrdered(x, y), ok
	case float32:
		y, ok := b.(float32)
		return cmpOrdered(x, y), ok && !math.IsNaN(float64(x))
	case float64:
		y, ok := b.(float64)
		return cmpOrdered(x, y), ok && !math.IsNaN(x)
	case string:
		y, ok := b.(string)
		return cmpOrdered(x, y), ok
	case []byte:
		y, ok := b.([]byte)
		return bytes.Compare(x, y), ok
	case bool:
		y, ok := b.(bool)
		xi, yi := 0, 0
		if x {
			xi = 1
		}
		if y {
			yi = 1
		}
		return xi - yi, ok
	case arrow.Timestamp:
		y, ok := b.(arrow.Timestamp)
		return cmpOrdered(x, y), ok
	case arrow.Date32:
		y, ok := b.(arrow.Date32)
		return cmpOrdered(x, y), ok
	case arrow.Time64:
		y, ok := b.(arrow.Time64)
		return cmpOrdered(x, y), ok
	case decimal128.Num:
		y, ok := b.(decimal128.Num)
		if !ok {
			return 0, false
		}
		return x.Cmp(y), true
	}
	return 0, false
}

func cmpOrdered[T int32 | int64 | float32 | float64 | string | arrow.Timestamp | arrow.Date32 | arrow.Time64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
