package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/clink-sql/clink/sqlvalue"
)

// castArray converts a whole column. Numeric, temporal and to-VARCHAR
// conversions run typed loops; parsing strings (VARCHAR to anything) and
// the BOOLEAN conversions go element at a time through castValue. A typed
// loop that meets a value it cannot convert hands the column to the
// element path, which reports the first bad value exactly as the row path.
func castArray(mem memory.Allocator, in arrow.Array, from, to arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(from, to) {
		in.Retain()
		return in, nil
	}
	if in.DataType().ID() == arrow.NULL {
		return nullArray(mem, to, in.Len()), nil
	}
	if isExtension(from) || isExtension(to) {
		// Relabel: unwrap to the storage, then label with the target.
		st := storageArray(in)
		st.Retain()
		return label(mem, to, st)
	}
	if out, ok := castKernel(mem, in, from, to); ok {
		return out, nil
	}
	return mapValues(mem, in, to, func(v any) (any, error) { return castValue(v, from, to) })
}

// convert runs f over a fixed-width column; ok=false when f refused a value
// (the caller then takes the element path for the exact error).
func convert[I, O arrow.FixedWidthType](mem memory.Allocator, in arrow.Array, to arrow.DataType, f func(I) (O, bool)) (arrow.Array, bool) {
	src := values[I](in)
	n := in.Len()
	buf, dst := newValues[O](mem, n)
	good := true
	for i, x := range src {
		y, ok := f(x)
		dst[i] = y
		good = good && ok
	}
	if !good {
		buf.Release()
		return nil, false
	}
	valid, nulls := andValidity(mem, n, in)
	return finish(to, n, valid, nulls, buf), true
}

func castKernel(mem memory.Allocator, in arrow.Array, from, to arrow.DataType) (arrow.Array, bool) {
	fid, tid := from.ID(), to.ID()
	switch {
	case fid == arrow.INT32 && tid == arrow.INT64:
		return convert(mem, in, to, func(x int32) (int64, bool) { return int64(x), true })
	case fid == arrow.INT64 && tid == arrow.INT32:
		return convert(mem, in, to, func(x int64) (int32, bool) { return int32(x), x == int64(int32(x)) })
	case fid == arrow.INT32 && tid == arrow.FLOAT64:
		return convert(mem, in, to, func(x int32) (float64, bool) { return float64(x), true })
	case fid == arrow.INT64 && tid == arrow.FLOAT64:
		return convert(mem, in, to, func(x int64) (float64, bool) { return float64(x), true })
	case fid == arrow.INT32 && tid == arrow.FLOAT32:
		return convert(mem, in, to, func(x int32) (float32, bool) { return float32(x), true })
	case fid == arrow.INT64 && tid == arrow.FLOAT32:
		return convert(mem, in, to, func(x int64) (float32, bool) { return float32(x), true })
	case fid == arrow.FLOAT32 && tid == arrow.FLOAT64:
		return convert(mem, in, to, func(x float32) (float64, bool) { return float64(x), true })
	case fid == arrow.FLOAT64 && tid == arrow.FLOAT32:
		return convert(mem, in, to, func(x float64) (float32, bool) {
			y := float32(x)
			return y, !math.IsInf(float64(y), 0) || math.IsInf(x, 0)
		})
	case fid == arrow.FLOAT64 && tid == arrow.INT64:
		return convert(mem, in, to, func(x float64) (int64, bool) {
			t := math.Trunc(x)
			return int64(t), t >= -9.223372036854775808e18 && t < 9.223372036854775808e18
		})
	case fid == arrow.FLOAT64 && tid == arrow.INT32:
		return convert(mem, in, to, func(x float64) (int32, bool) {
			t := math.Trunc(x)
			return int32(t), t >= math.MinInt32 && t <= math.MaxInt32
		})
	case fid == arrow.FLOAT32 && tid == arrow.INT64:
		return convert(mem, in, to, func(x float32) (int64, bool) {
			t := math.Trunc(float64(x))
			return int64(t), t >= -9.223372036854775808e18 && t < 9.223372036854775808e18
		})
	case fid == arrow.FLOAT32 && tid == arrow.INT32:
		return convert(mem, in, to, func(x float32) (int32, bool) {
			t := math.Trunc(float64(x))
			return int32(t), t >= math.MinInt32 && t <= math.MaxInt32
		})
	case isInt(from) && tid == arrow.DECIMAL128:
		d := to.(*arrow.Decimal128Type)
		m := pow10Num[d.Scale]
		mul := func(x int64) (decimal128.Num, bool) {
			n, ok := decMul(decimal128.FromI64(x), m)
			return n, ok && decFits(n, d.Precision)
		}
		if fid == arrow.INT32 {
			return convert(mem, in, to, func(x int32) (decimal128.Num, bool) { return mul(int64(x)) })
		}
		if d.Scale == 0 && d.Precision >= 19 {
			// Every BIGINT fits: the widening a BIGINT * DECIMAL does.
			return convert(mem, in, to, func(x int64) (decimal128.Num, bool) { return decimal128.FromI64(x), true })
		}
		return convert(mem, in, to, mul)
	case fid == arrow.DECIMAL128 && tid == arrow.DECIMAL128:
		fs := from.(*arrow.Decimal128Type).Scale
		d := to.(*arrow.Decimal128Type)
		return convert(mem, in, to, func(x decimal128.Num) (decimal128.Num, bool) {
			n, ok := decRescale(x, fs, d.Scale)
			return n, ok && decFits(n, d.Precision)
		})
	case fid == arrow.DECIMAL128 && tid == arrow.FLOAT64:
		fs := from.(*arrow.Decimal128Type).Scale
		return convert(mem, in, to, func(x decimal128.Num) (float64, bool) { return decToFloat(x, fs), true })
	case fid == arrow.DECIMAL128 && tid == arrow.INT64:
		fs := from.(*arrow.Decimal128Type).Scale
		return convert(mem, in, to, func(x decimal128.Num) (int64, bool) { return decTrunc(x, fs) })
	case fid == arrow.DECIMAL128 && tid == arrow.INT32:
		fs := from.(*arrow.Decimal128Type).Scale
		return convert(mem, in, to, func(x decimal128.Num) (int32, bool) {
			v, ok := decTrunc(x, fs)
			return int32(v), ok && v == int64(int32(v))
		})
	case fid == arrow.TIMESTAMP && tid == arrow.TIMESTAMP:
		f := unitsPerSecond(from.(*arrow.TimestampType).Unit)
		t := unitsPerSecond(to.(*arrow.TimestampType).Unit)
		if t >= f {
			m := t / f
			lim := math.MaxInt64 / m
			return convert(mem, in, to, func(x arrow.Timestamp) (arrow.Timestamp, bool) {
				return x * arrow.Timestamp(m), int64(x) <= lim && int64(x) >= -lim
			})
		}
		return convert(mem, in, to, func(x arrow.Timestamp) (arrow.Timestamp, bool) {
			return arrow.Timestamp(floorDiv(int64(x), f/t)), true
		})
	case fid == arrow.DATE32 && tid == arrow.TIMESTAMP:
		m := unitsPerSecond(to.(*arrow.TimestampType).Unit) * 86400
		lim := math.MaxInt64 / m
		return convert(mem, in, to, func(x arrow.Date32) (arrow.Timestamp, bool) {
			return arrow.Timestamp(int64(x) * m), int64(x) <= lim && int64(x) >= -lim
		})
	case fid == arrow.TIMESTAMP && tid == arrow.DATE32:
		m := unitsPerSecond(from.(*arrow.TimestampType).Unit) * 86400
		return convert(mem, in, to, func(x arrow.Timestamp) (arrow.Date32, bool) {
			return arrow.Date32(floorDiv(int64(x), m)), true
		})
	case isTime(to) && isTime(from):
		conv := timeOfDay(timeUnit(from), timeUnit(to))
		if fid == arrow.TIME32 {
			return timeColumn[arrow.Time32](mem, in, to, conv)
		}
		return timeColumn[arrow.Time64](mem, in, to, conv)
	case isTime(to) && fid == arrow.TIMESTAMP:
		return timeColumn[arrow.Timestamp](mem, in, to, timeOfDay(from.(*arrow.TimestampType).Unit, timeUnit(to)))
	case tid == arrow.STRING:
		return formatColumn(mem, in, from)
	}
	return nil, false
}

// timeColumn converts a TIME or TIMESTAMP column to the TIME type to
// (Time32 or Time64 storage) with conv, which always succeeds.
func timeColumn[I arrow.Time32 | arrow.Time64 | arrow.Timestamp](mem memory.Allocator, in arrow.Array, to arrow.DataType, conv func(int64) int64) (arrow.Array, bool) {
	if to.ID() == arrow.TIME32 {
		return convert(mem, in, to, func(x I) (arrow.Time32, bool) { return arrow.Time32(conv(int64(x))), true })
	}
	return convert(mem, in, to, func(x I) (arrow.Time64, bool) { return arrow.Time64(conv(int64(x))), true })
}

// formatColumn renders a column as VARCHAR into one string builder,
// formatting each value into a reused scratch buffer (no boxing) for the
// common types.
func formatColumn(mem memory.Allocator, in arrow.Array, from arrow.DataType) (arrow.Array, bool) {
	n := in.Len()
	if from.ID() == arrow.BINARY || from.ID() == arrow.NULL {
		return nil, false
	}
	fn := sqlvalue.Appender(from)
	appendOne := func(dst []byte, i int) []byte { return fn(in, i, dst) }
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	var scratch []byte
	for i := 0; i < n; i++ {
		if in.IsNull(i) {
			b.AppendNull()
			continue
		}
		scratch = appendOne(scratch[:0], i)
		b.BinaryBuilder.Append(scratch)
	}
	return b.NewArray(), true
}
